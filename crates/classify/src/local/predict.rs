//! Prediction: a text's feature vectors, the raw scores of the heads, the calibrated job
//! probability and the verdict.

use jobwire_core::{PostKind, Verdict};

use super::calibrate::{self, logit, sigmoid};
use super::features::{self, FeatureOptions};
use super::lexicon::{LEX_DIM, Lexicon};
use super::{Dense, Head, KINDS, LocalModel, ROW_CUE, ROW_TERM, ROW_TOPIC, Sparse};

/// The vectors of one text: for the job and kind heads (n-grams and cues), for the category
/// heads (n-grams and topics), and the dense lexicon features of each category head.
pub(crate) struct Vectors {
    pub(crate) x: Sparse,
    pub(crate) xc: Sparse,
    pub(crate) dense: Vec<Dense>,
}

/// Raw outputs for one text: (logit of the uncalibrated job score, P(kind) in
/// [`PostKind::ALL`] order, P(category) per category head).
pub(crate) struct Scores {
    pub(crate) job_logit: f32,
    pub(crate) kinds: [f32; 4],
    pub(crate) categories: Vec<f32>,
}

impl LocalModel {
    /// The feature vectors of one text. Cues describe the genre of a text and only add noise
    /// to the topic decision, topics the other way round.
    pub(super) fn vectorize(&self, raw: &features::RawFeatures) -> Vectors {
        let mut v: Sparse = Vec::with_capacity(raw.terms.len() + raw.cues.len());
        let mut norm = 0.0f32;
        for &(h, tf) in &raw.terms {
            if let Some(&row) = self.index.get(&h)
                && self.row_kind[row as usize] == ROW_TERM
            {
                let x = (1.0 + tf.ln()) * self.idf[row as usize];
                norm += x * x;
                v.push((row, x));
            }
        }
        if norm > 0.0 {
            let inv = norm.sqrt().recip();
            for (_, x) in &mut v {
                *x *= inv;
            }
        }
        let mut cat = v.clone();
        let extend = |out: &mut Sparse, hashes: &[u32], kind: u8, value: f32| {
            for h in hashes {
                if let Some(&row) = self.index.get(h)
                    && self.row_kind[row as usize] == kind
                {
                    out.push((row, value));
                }
            }
        };
        extend(&mut v, &raw.cues, ROW_CUE, self.features.cue_weight);
        extend(&mut cat, &raw.topics, ROW_TOPIC, self.features.topic_weight);
        let scale = self.features.lexicon_weight;
        let per_lexicon = Lexicon::dense(&raw.lex);
        let dense = self
            .category_lexicon
            .iter()
            .map(|l| {
                l.and_then(|j| per_lexicon.get(j))
                    .map_or([0.0; LEX_DIM], |d| d.map(|x| x * scale))
            })
            .collect();
        Vectors {
            x: v,
            xc: cat,
            dense,
        }
    }

    pub(super) fn score(head: &Head, x: &Sparse, dense: Option<&Dense>) -> f32 {
        let mut z = head.bias;
        for &(r, v) in x {
            z += head.weights[r as usize] * v;
        }
        if let Some(d) = dense {
            for (w, v) in head.dense.iter().zip(d) {
                z += w * v;
            }
        }
        z
    }

    pub(super) fn scores_raw(&self, raw: &features::RawFeatures) -> Scores {
        let v = self.vectorize(raw);
        let p_bin = sigmoid(Self::score(&self.heads[0], &v.x, None));
        let mut zs = [0.0f32; 4];
        for (k, z) in zs.iter_mut().enumerate() {
            *z = Self::score(&self.heads[1 + k], &v.x, None);
        }
        let kinds = softmax4(zs);
        let p_job = (1.0 - self.kind_blend) * p_bin + self.kind_blend * kinds[0];
        let categories = self.heads[1 + KINDS.len()..]
            .iter()
            .zip(&v.dense)
            .map(|(h, d)| sigmoid(Self::score(h, &v.xc, Some(d))))
            .collect();
        Scores {
            job_logit: logit(p_job),
            kinds,
            categories,
        }
    }

    pub(super) fn scores(&self, text: &str) -> Scores {
        let raw = features::extract(
            &prepare(text, &self.features),
            &self.features,
            &self.lexicon,
        );
        self.scores_raw(&raw)
    }

    /// The calibrated probability that a text is a job: on posts like the training posts, of
    /// the texts given probability p about a share p are jobs.
    pub fn job_probability(&self, text: &str) -> f32 {
        self.calibration.apply(self.scores(text).job_logit)
    }

    /// The categories of the work a résumé offers: the category head, trained on jobs,
    /// read on the résumé's text (it names the same skills and tools a vacancy asks for).
    /// Used to route résumés to the subscribers who asked for them; not part of
    /// [`LocalModel::predict`], whose verdicts the evaluations score.
    pub fn resume_categories(&self, text: &str) -> Vec<jobwire_core::CategorySlug> {
        let s = self.scores(text);
        calibrate::choose_categories(
            &s.categories,
            &self.category_thresholds,
            self.max_categories,
        )
        .into_iter()
        .map(|c| self.categories[c].clone())
        .collect()
    }

    /// How sure the category decision is: `sigmoid` of the smallest |logit(p) − logit(t)|
    /// over the category heads (`p` the head's probability, `t` its threshold), in
    /// `0.5..=1.0`. One category near its threshold is enough to make the set unsure.
    pub(crate) fn category_margin(&self, probabilities: &[f32]) -> f32 {
        let margin = probabilities
            .iter()
            .zip(&self.category_thresholds)
            .map(|(&p, &t)| (logit(p) - logit(t)).abs())
            .fold(f32::INFINITY, f32::min);
        if margin.is_finite() {
            sigmoid(margin).clamp(0.5, 1.0)
        } else {
            1.0
        }
    }

    /// How likely the whole category decision is right. With calibrated heads: the product,
    /// over the categories, of the calibrated probability that the decision on that category
    /// (chosen or not) is right, so several categories near their thresholds doubt the set
    /// more than one. Without (model files from before the calibration):
    /// [`LocalModel::category_margin`].
    /// `chosen`: the indices of the categories decided on.
    pub(crate) fn category_certainty(&self, probabilities: &[f32], chosen: &[usize]) -> f32 {
        if self.category_calibration.len() != probabilities.len() {
            return self.category_margin(probabilities);
        }
        let certainty = set_certainty(
            probabilities,
            &self.category_calibration,
            &self.category_thresholds,
            chosen,
        );
        // The traffic examples are the posts the LLM was asked about: those under the
        // cascade's threshold. Where they show the certainty too low, it is raised; above
        // them there is no evidence, so it is never lowered.
        match &self.traffic_calibration {
            Some(t) => t.apply(logit(certainty)).max(certainty).clamp(0.0, 1.0),
            None => certainty,
        }
    }

    /// Classifies one text. Never fails and never panics; categories are always members of
    /// the configured set, and only jobs get categories. `confidence` is the calibrated
    /// probability that `is_job` is right: `max(p, 1 - p)` of [`LocalModel::job_probability`].
    pub fn predict(&self, text: &str) -> Verdict {
        let s = self.scores(text);
        let p_job = self.calibration.apply(s.job_logit);
        let is_job = p_job >= self.job_threshold;
        let kind = if is_job {
            PostKind::Job
        } else {
            let pk = s.kinds;
            let mut best = 1;
            for k in 2..4 {
                if pk[k] > pk[best] {
                    best = k;
                }
            }
            KINDS[best]
        };
        let (categories, category_confidence) = if is_job {
            let mut chosen = calibrate::choose_categories(
                &s.categories,
                &self.category_thresholds,
                self.max_categories,
            );
            let certainty = match self.digest_categories(text, &mut chosen) {
                Some(least_sure_item) => least_sure_item,
                None => self.category_certainty(&s.categories, &chosen),
            };
            let slugs = chosen.iter().map(|&c| self.categories[c].clone()).collect();
            (slugs, certainty)
        } else {
            (Vec::new(), 1.0)
        };
        let confidence = if is_job { p_job } else { 1.0 - p_job };
        Verdict {
            is_job,
            kind,
            categories,
            confidence: confidence.clamp(0.0, 1.0),
            category_confidence,
        }
    }

    /// A digest's categories: each numbered item is a gig of its own, read by the heads on
    /// its own, so `chosen` (the whole text's set) gains every category an item's heads put
    /// at or above its threshold (the most likely first, at most `max_categories` in all);
    /// returns the set's certainty, the least sure item's. On the whole text the heads see
    /// one trade's words drown the others', and a digest of three trades got one. `None`
    /// (and `chosen` untouched) when `text` is not a digest (see [`digest_items`]).
    fn digest_categories(&self, text: &str, chosen: &mut Vec<usize>) -> Option<f32> {
        let items = digest_items(text);
        if items.is_empty() {
            return None;
        }
        let mut certainty = 1.0f32;
        for item in items {
            let s = self.scores(item);
            let own = calibrate::choose_categories(
                &s.categories,
                &self.category_thresholds,
                self.max_categories,
            );
            certainty = certainty.min(self.category_certainty(&s.categories, &own));
            // `own` is likeliest first; its first entry may be under its threshold.
            for c in own {
                if s.categories[c] >= self.category_thresholds[c] && !chosen.contains(&c) {
                    chosen.push(c);
                }
            }
        }
        chosen.truncate(self.max_categories.max(1));
        Some(certainty)
    }
}

/// The items of a digest: at least two lines numbered `1.` / `2)` … (up to two digits), each
/// with a contact or a price of its own (`@`, a link, a currency), as a channel's roundup of
/// several gigs has. A vacancy's numbered duties or requirements carry no contact or price
/// each, so they are not a digest. Empty when `text` is not a digest.
pub(crate) fn digest_items(text: &str) -> Vec<&str> {
    let items: Vec<&str> = text
        .lines()
        .filter_map(|line| {
            let t = line.trim_start();
            let digits = t.chars().take_while(char::is_ascii_digit).count();
            let rest = t.get(digits..)?;
            let item = rest
                .strip_prefix(". ")
                .or_else(|| rest.strip_prefix(") "))?;
            (1..=2).contains(&digits).then_some(item)
        })
        .collect();
    let priced_or_reachable = |item: &str| {
        let lower = item.to_lowercase();
        ["@", "http", "t.me/", "$", "€", "₽", "руб", "usd", "eur"]
            .iter()
            .any(|cue| lower.contains(cue))
    };
    if items.len() >= 2 && items.iter().all(|i| priced_or_reachable(i)) {
        items
    } else {
        Vec::new()
    }
}

/// The product, over the category heads, of the calibrated probability (`calibration`, of
/// the distance to `thresholds`) that the decision on that category is right; `chosen`: the
/// indices of the categories decided on. See [`LocalModel::category_certainty`].
pub(crate) fn set_certainty(
    probabilities: &[f32],
    calibration: &[calibrate::Platt],
    thresholds: &[f32],
    chosen: &[usize],
) -> f32 {
    probabilities
        .iter()
        .zip(calibration)
        .zip(thresholds)
        .enumerate()
        .map(|(c, ((&p, cal), &t))| {
            let q = cal.apply(logit(p) - logit(t));
            if chosen.contains(&c) { q } else { 1.0 - q }
        })
        .product::<f32>()
        .clamp(0.0, 1.0)
}

/// Bounds and normalizes a text before feature extraction, line by line (the line structure
/// is a cue: vacancies and résumés come in lists, chat messages in one line).
pub(crate) fn prepare(text: &str, opts: &FeatureOptions) -> String {
    let end = text
        .char_indices()
        .nth(opts.max_chars)
        .map_or(text.len(), |(i, _)| i);
    let mut out = String::with_capacity(end + 16);
    for line in text[..end].lines() {
        let line = jobwire_core::normalize::normalize(line);
        if !line.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&line);
        }
    }
    out
}

pub(crate) fn softmax4(z: [f32; 4]) -> [f32; 4] {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut e = z.map(|v| (v - m).exp());
    let s: f32 = e.iter().sum();
    for v in &mut e {
        *v /= s;
    }
    e
}
