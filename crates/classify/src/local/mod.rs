//! The local classifier: a small linear model trained in pure Rust.
//!
//! # Model
//!
//! Text is normalized line by line ([`jobwire_core::normalize::normalize`]) and turned into
//! sparse features: character 3–4-grams inside words (robust to Russian inflection and typos),
//! words and word bigrams (digits collapsed, handles and links replaced by placeholders), all
//! keyed by a stable 32-bit FNV hash and weighted by sublinear TF-IDF with L2 normalization;
//! plus generic "kind of text" cues (money and rates, contacts, hiring words, someone offering
//! themselves or describing their own work, first person, promotion, easy-money and scam
//! signs, channel rules, questions, lists, length). Only features seen in at least `min_df`
//! training posts are kept, so the model stores a small vocabulary instead of a full hash
//! space.
//!
//! Each category also has a domain lexicon (`lexicon.rs`, RU + EN stems a freelancer would
//! recognise: `логотип`, `figma`, `монтаж`, `озвучк`, `{lang} на {lang}`, …). Its evidence in a
//! post becomes five dense features that only that category's head sees: whether the lexicon
//! matched, how much (log), its share of all lexicon evidence in the post, whether it is the
//! strongest, and whether it is mentioned first. With a few dozen examples per category the
//! n-grams alone cannot learn the vocabulary of a trade; the lexicon carries it, the n-grams
//! correct it.
//!
//! Three kinds of heads share the features, each a logistic regression with L2 penalty
//! trained by AdaGrad SGD (seeded shuffling, so training is deterministic), every example's
//! gradient scaled by its weight ([`LocalModel::train_weighted`]):
//!
//! * `is_job` — binary, over n-grams and cues;
//! * `kind` — softmax over job / resume / ad / chatter; names the kind of a non-job, and its
//!   P(job) is blended with the `is_job` head's into the raw job score;
//! * one-vs-rest per configured category, over n-grams and that category's lexicon features,
//!   trained on job posts only.
//!
//! # Calibration and decisions
//!
//! [`LocalModel::train`] also runs an inner k-fold cross-validation on its own training set
//! (`calibration_folds`, dup groups and identical texts kept in one fold, folds trained in
//! parallel). On the out-of-fold scores it fits Platt scaling of the raw job score, so
//! [`LocalModel::job_probability`] is a calibrated P(job) and a verdict's `confidence` —
//! `max(p, 1 − p)` — is the probability that its `is_job` is right (what the cascade compares
//! with its threshold). On the same out-of-fold scores it chooses the category thresholds: one
//! common threshold, and a category's own one only where that clearly pays off. A job always
//! gets its most likely category, then every other one at or above its threshold, at most
//! `max_categories`. Calibration and thresholds are saved with the model.
//!
//! # Why hand-written
//!
//! The model is a few thousand features times seventeen outputs and trains on a few hundred
//! posts in a fraction of a second (a couple of seconds for two thousand, calibration
//! included). An ML crate (linfa, smartcore, candle, tch) would add minutes of build time,
//! native dependencies or a large dependency tree for what is a few hundred lines of
//! arithmetic, and would make the saved format and determinism someone else's decision.
//! Everything here is plain `f32` arithmetic with no unsafe code.

mod calibrate;
mod features;
mod lexicon;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;

use jobwire_core::dataset::{Label, LabeledPost};
use jobwire_core::{CategorySlug, PostKind, Verdict};
use serde::{Deserialize, Serialize};

pub use features::{FeatureOptions, default_topic_words};

use crate::ClassifyError;
use calibrate::{CategoryPoint, Platt, logit, sigmoid};
use lexicon::{LEX_DIM, Lexicon};

/// The format tag written into saved models and reported as `prompt_version`.
pub const MODEL_FORMAT: &str = "local.v1";

/// Hyper-parameters of [`LocalModel::train`]. The defaults were chosen by 5-fold
/// cross-validation on the development set (see `jobwire_classify::eval::cross_validate`);
/// fields missing from a serialized form take their default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainOptions {
    /// Seed of the example shuffling (training is deterministic for a given seed).
    pub seed: u64,
    /// Passes over the training data.
    pub epochs: u32,
    /// AdaGrad base learning rate.
    pub learning_rate: f32,
    /// L2 penalty on weights (not on biases).
    pub l2: f32,
    /// Keep only features present in at least this many training posts.
    pub min_df: u32,
    /// Weigh classes inversely to their frequency (binary heads).
    pub balance_classes: bool,
    /// Share of the kind head's P(job) in the job score (0 = binary head only).
    pub kind_blend: f32,
    /// Calibrated probability at which a post is called a job.
    pub job_threshold: f32,
    /// Probability at which a job gets a category besides its most likely one, when no
    /// thresholds could be chosen by inner cross-validation (too few examples).
    pub category_threshold: f32,
    /// At most this many categories per job.
    pub max_categories: usize,
    /// Folds of the inner cross-validation on the training set that calibrates the job
    /// probability and chooses the category thresholds (below 2: no calibration, the
    /// probability is the raw score and every category uses `category_threshold`).
    pub calibration_folds: usize,
    /// Micro-F1 a category's own threshold must gain over the common one on the inner
    /// cross-validation to be used.
    pub threshold_min_gain: f32,
    /// How text becomes features.
    pub features: FeatureOptions,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            seed: 7,
            epochs: 15,
            learning_rate: 0.2,
            l2: 1e-4,
            min_df: 2,
            balance_classes: true,
            kind_blend: 0.5,
            job_threshold: 0.5,
            category_threshold: 0.45,
            max_categories: 3,
            calibration_folds: 4,
            threshold_min_gain: 0.03,
            features: FeatureOptions::default(),
        }
    }
}

const KINDS: [PostKind; 4] = PostKind::ALL;
const ROW_TERM: u8 = 0;
const ROW_CUE: u8 = 1;
const ROW_TOPIC: u8 = 2;

/// A trained local model. Cheap to share behind an `Arc`; prediction takes `&self`.
#[derive(Debug, Clone)]
pub struct LocalModel {
    format: String,
    categories: Vec<CategorySlug>,
    features: FeatureOptions,
    job_threshold: f32,
    kind_blend: f32,
    /// Maps the logit of the raw job score to a calibrated probability.
    calibration: Platt,
    category_thresholds: Vec<f32>,
    max_categories: usize,
    /// Feature hash of each row, in row order.
    vocab: Vec<u32>,
    /// Inverse document frequency of each row (for n-gram rows; cue rows use `cue_weight`).
    idf: Vec<f32>,
    /// What each row is: [`ROW_TERM`], [`ROW_CUE`] or [`ROW_TOPIC`].
    row_kind: Vec<u8>,
    /// Heads: `is_job`, then the four kinds, then one per category.
    heads: Vec<Head>,
    /// Fingerprints of the training texts, sorted.
    fingerprints: Vec<u64>,
    index: HashMap<u32, u32, IdHash>,
    lexicon: Arc<Lexicon>,
    /// For each category head, the position of its lexicon in `lexicon` (if it has one).
    category_lexicon: Vec<Option<usize>>,
}

/// Hasher for keys that already are hashes: one multiply instead of SipHash.
#[derive(Debug, Clone, Copy, Default)]
struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

#[derive(Debug, Clone, Copy)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Head {
    bias: f32,
    weights: Vec<f32>,
    /// Weights of the dense lexicon features (category heads only; empty elsewhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dense: Vec<f32>,
}

/// A sparse, weighted feature vector: (row, value).
type Sparse = Vec<(u32, f32)>;
/// The dense lexicon features one category head sees for one text.
type Dense = [f32; LEX_DIM];

/// A labeled training example after feature extraction.
struct Prepared<'a> {
    raw: features::RawFeatures,
    label: &'a Label,
    weight: f32,
    /// Examples with the same key stay in the same inner fold (dup group or text).
    group: String,
}

/// The vectors of one text: for the job and kind heads (n-grams and cues), for the category
/// heads (n-grams and topics), and the dense lexicon features of each category head.
struct Vectors {
    x: Sparse,
    xc: Sparse,
    dense: Vec<Dense>,
}

/// Raw outputs for one text: (logit of the uncalibrated job score, P(kind) in
/// [`PostKind::ALL`] order, P(category) per category head).
struct Scores {
    job_logit: f32,
    kinds: [f32; 4],
    categories: Vec<f32>,
}

impl LocalModel {
    /// Trains a model on the labeled examples (unlabeled ones are skipped), each counting
    /// once. Categories of the labels outside `categories` are ignored. Deterministic for a
    /// given `opts.seed`. See [`LocalModel::train_weighted`].
    pub fn train(
        examples: &[LabeledPost],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        let weighted: Vec<(&LabeledPost, f32)> = examples.iter().map(|e| (e, 1.0)).collect();
        Self::train_inner(&weighted, categories, opts)
    }

    /// Trains a model on weighted examples: an example of weight 2 counts like two copies,
    /// one of weight 0.5 like half a copy (LLM-labeled posts may count less than human
    /// labels, admin relabels more). Weights must be finite and non-negative; examples of
    /// weight 0 and unlabeled ones are skipped.
    ///
    /// Besides the final model, trains `opts.calibration_folds` models on parts of the
    /// examples to get out-of-fold scores, on which it fits the calibration of the job
    /// probability (Platt scaling) and chooses the category thresholds.
    pub fn train_weighted(
        examples: &[(LabeledPost, f32)],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        let weighted: Vec<(&LabeledPost, f32)> = examples.iter().map(|(e, w)| (e, *w)).collect();
        Self::train_inner(&weighted, categories, opts)
    }

    fn train_inner(
        examples: &[(&LabeledPost, f32)],
        categories: &[CategorySlug],
        opts: &TrainOptions,
    ) -> Result<LocalModel, ClassifyError> {
        if let Some((e, w)) = examples.iter().find(|(_, w)| !w.is_finite() || *w < 0.0) {
            return Err(ClassifyError::Invalid(format!(
                "example {:?} has weight {w}; weights must be finite and >= 0",
                e.id
            )));
        }
        if categories.is_empty() {
            return Err(ClassifyError::Invalid("no categories configured".into()));
        }
        let lexicon = Arc::new(Lexicon::new(&opts.features.topic_words));
        let prepared: Vec<Prepared> = examples
            .iter()
            .filter(|(_, w)| *w > 0.0)
            .filter_map(|(e, w)| {
                e.label.as_ref().map(|label| Prepared {
                    raw: features::extract(
                        &prepare(&e.text, &opts.features),
                        &opts.features,
                        &lexicon,
                    ),
                    label,
                    weight: *w,
                    group: match &e.dup_group {
                        Some(g) => format!("g:{g}"),
                        None => format!("t:{:016x}", features::fingerprint(&e.text)),
                    },
                })
            })
            .collect();
        if prepared.is_empty() {
            return Err(ClassifyError::Invalid(
                "no labeled examples to train on".into(),
            ));
        }
        let all: Vec<usize> = (0..prepared.len()).collect();
        // The final model and the inner folds are independent: train them side by side.
        let (mut model, calibration) = std::thread::scope(|s| {
            let calibration = s.spawn(|| Self::calibrate(&prepared, categories, opts, &lexicon));
            let model = Self::fit(&prepared, &all, categories, opts, &lexicon);
            (model, calibration.join().ok().flatten())
        });
        if let Some((calibration, thresholds)) = calibration {
            model.calibration = calibration;
            model.category_thresholds = thresholds;
        }
        let mut fps: Vec<u64> = examples
            .iter()
            .filter(|(e, w)| *w > 0.0 && e.label.is_some())
            .map(|(e, _)| features::fingerprint(&e.text))
            .collect();
        fps.sort_unstable();
        fps.dedup();
        model.fingerprints = fps;
        Ok(model)
    }

    /// Inner cross-validation on the training examples: the Platt calibration of the job
    /// score and the category thresholds, from out-of-fold scores. `None` when there are too
    /// few examples (or only one class) to do this honestly.
    fn calibrate(
        prepared: &[Prepared],
        categories: &[CategorySlug],
        opts: &TrainOptions,
        lexicon: &Arc<Lexicon>,
    ) -> Option<(Platt, Vec<f32>)> {
        let k = opts.calibration_folds;
        let n_jobs = prepared.iter().filter(|p| p.label.is_job).count();
        if k < 2 || n_jobs < 2 * k || prepared.len() - n_jobs < 2 * k {
            tracing::debug!(
                folds = k,
                jobs = n_jobs,
                examples = prepared.len(),
                "too few examples for inner cross-validation; job score left uncalibrated"
            );
            return None;
        }
        let folds = inner_folds(prepared, k, opts.seed);
        let out: Vec<Vec<(usize, Scores)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..k)
                .map(|f| {
                    let folds = &folds;
                    s.spawn(move || {
                        let train: Vec<usize> =
                            (0..prepared.len()).filter(|&i| folds[i] != f).collect();
                        let model = Self::fit(prepared, &train, categories, opts, lexicon);
                        (0..prepared.len())
                            .filter(|&i| folds[i] == f)
                            .map(|i| (i, model.scores_raw(&prepared[i].raw)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let mut job_points = Vec::with_capacity(prepared.len());
        let mut cat_points = Vec::new();
        for (i, scores) in out.into_iter().flatten() {
            let p = &prepared[i];
            job_points.push((scores.job_logit, p.label.is_job, p.weight));
            if p.label.is_job {
                cat_points.push(CategoryPoint {
                    truth: categories
                        .iter()
                        .map(|c| p.label.categories.contains(c))
                        .collect(),
                    p: scores.categories,
                    weight: p.weight,
                });
            }
        }
        if job_points.len() != prepared.len() {
            // A fold's thread failed; better uncalibrated than calibrated on a part.
            tracing::warn!("an inner training fold failed; job score left uncalibrated");
            return None;
        }
        let platt = Platt::fit(&job_points)?;
        let thresholds = calibrate::category_thresholds(
            &cat_points,
            categories.len(),
            opts.max_categories.max(1),
            opts.category_threshold,
            f64::from(opts.threshold_min_gain),
        );
        Some((platt, thresholds))
    }

    /// Trains the heads on the examples `idx` (sorted) of `prepared`, vocabulary and IDF from
    /// those examples only. No calibration, no fingerprints.
    fn fit(
        prepared: &[Prepared],
        idx: &[usize],
        categories: &[CategorySlug],
        opts: &TrainOptions,
        lexicon: &Arc<Lexicon>,
    ) -> LocalModel {
        debug_assert!(idx.windows(2).all(|w| w[0] < w[1]), "idx must be sorted");
        // Vocabulary: features present in at least `min_df` posts.
        // Key: the feature hash, then its row kind in the low byte.
        let key = |h: u32, kind: u8| (u64::from(h) << 8) | u64::from(kind);
        let mut df: HashMap<u64, u32, IdHash> = HashMap::default();
        for &i in idx {
            let r = &prepared[i].raw;
            for &(h, _) in &r.terms {
                *df.entry(key(h, ROW_TERM)).or_default() += 1;
            }
            for &h in &r.cues {
                *df.entry(key(h, ROW_CUE)).or_default() += 1;
            }
            if opts.features.topic_weight != 0.0 {
                for &h in &r.topics {
                    *df.entry(key(h, ROW_TOPIC)).or_default() += 1;
                }
            }
        }
        let mut kept: Vec<(u64, u32)> = df
            .into_iter()
            .filter(|(_, n)| *n >= opts.min_df.max(1))
            .collect();
        kept.sort_unstable();
        let n_docs = idx.len() as f32;
        let category_lexicon: Vec<Option<usize>> = categories
            .iter()
            .map(|c| lexicon.slugs().iter().position(|s| s == c.as_str()))
            .collect();
        let mut model = LocalModel {
            format: MODEL_FORMAT.to_owned(),
            categories: categories.to_vec(),
            features: opts.features.clone(),
            job_threshold: opts.job_threshold,
            kind_blend: opts.kind_blend.clamp(0.0, 1.0),
            calibration: Platt::default(),
            category_thresholds: vec![opts.category_threshold; categories.len()],
            max_categories: opts.max_categories.max(1),
            vocab: Vec::with_capacity(kept.len()),
            idf: Vec::with_capacity(kept.len()),
            row_kind: Vec::with_capacity(kept.len()),
            heads: Vec::new(),
            fingerprints: Vec::new(),
            index: HashMap::default(),
            lexicon: Arc::clone(lexicon),
            category_lexicon,
        };
        // Cue and n-gram hashes live in different namespaces of one hash, so a collision
        // between a cue and an n-gram key is as unlikely as any other; keep the first.
        for (k, n) in kept {
            let (h, kind) = ((k >> 8) as u32, (k & 0xff) as u8);
            if model.index.contains_key(&h) {
                continue;
            }
            model.index.insert(h, model.vocab.len() as u32);
            model.vocab.push(h);
            model.row_kind.push(kind);
            model
                .idf
                .push(round4(((1.0 + n_docs) / (1.0 + n as f32)).ln() + 1.0));
        }
        // Vectors of all prepared examples (those outside `idx` are never read).
        let mut xs: Vec<Sparse> = Vec::with_capacity(prepared.len());
        let mut xcs: Vec<Sparse> = Vec::with_capacity(prepared.len());
        let mut dense: Vec<Vec<Dense>> = vec![Vec::with_capacity(prepared.len()); categories.len()];
        for (i, p) in prepared.iter().enumerate() {
            let v = if idx.binary_search(&i).is_ok() {
                model.vectorize(&p.raw)
            } else {
                Vectors {
                    x: Vec::new(),
                    xc: Vec::new(),
                    dense: vec![[0.0; LEX_DIM]; categories.len()],
                }
            };
            xs.push(v.x);
            xcs.push(v.xc);
            for (c, d) in v.dense.into_iter().enumerate() {
                dense[c].push(d);
            }
        }
        let n_rows = model.vocab.len();
        let n_heads = 1 + KINDS.len() + categories.len();
        let use_dense = model.features.lexicon_weight != 0.0;
        model.heads = (0..n_heads)
            .map(|h| Head {
                bias: 0.0,
                weights: vec![0.0; n_rows],
                dense: if h > KINDS.len() && use_dense {
                    vec![0.0; LEX_DIM]
                } else {
                    Vec::new()
                },
            })
            .collect();

        let weights: Vec<f32> = prepared.iter().map(|p| p.weight).collect();
        let is_job: Vec<bool> = prepared.iter().map(|p| p.label.is_job).collect();
        let kinds: Vec<usize> = prepared
            .iter()
            .map(|p| KINDS.iter().position(|k| *k == p.label.kind).unwrap_or(3))
            .collect();
        let jobs: Vec<usize> = idx.iter().copied().filter(|&i| is_job[i]).collect();

        let mut rng = SplitMix64(opts.seed);
        let mut trainer = Trainer::new(opts, n_rows);
        // is_job head.
        let w = class_weights(idx, &is_job, &weights, opts.balance_classes);
        trainer.binary(
            &mut model.heads[0],
            Input {
                xs: &xs,
                dense: None,
                weights: &weights,
            },
            idx,
            &is_job,
            w,
            &mut rng,
        );
        // kind head (softmax over four rows of heads).
        {
            let (kind_heads, _) = model.heads[1..].split_at_mut(KINDS.len());
            trainer.softmax(kind_heads, &xs, &weights, idx, &kinds, &mut rng);
        }
        // category heads, trained on job posts.
        if !jobs.is_empty() {
            for (c, head) in model.heads[1 + KINDS.len()..].iter_mut().enumerate() {
                let target: Vec<bool> = prepared
                    .iter()
                    .map(|p| p.label.categories.contains(&categories[c]))
                    .collect();
                let w = class_weights(&jobs, &target, &weights, opts.balance_classes);
                trainer.binary(
                    head,
                    Input {
                        xs: &xcs,
                        dense: use_dense.then_some(dense[c].as_slice()),
                        weights: &weights,
                    },
                    &jobs,
                    &target,
                    w,
                    &mut rng,
                );
            }
        }
        // Four decimals are far below what changes a decision and halve the saved size.
        for head in &mut model.heads {
            head.bias = round4(head.bias);
            for w in head.weights.iter_mut().chain(head.dense.iter_mut()) {
                *w = round4(*w);
            }
        }
        model
    }

    /// The feature vectors of one text. Cues describe the genre of a text and only add noise
    /// to the topic decision, topics the other way round.
    fn vectorize(&self, raw: &features::RawFeatures) -> Vectors {
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

    fn score(head: &Head, x: &Sparse, dense: Option<&Dense>) -> f32 {
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

    fn scores_raw(&self, raw: &features::RawFeatures) -> Scores {
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

    fn scores(&self, text: &str) -> Scores {
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
        let categories = if is_job {
            calibrate::choose_categories(
                &s.categories,
                &self.category_thresholds,
                self.max_categories,
            )
            .into_iter()
            .map(|c| self.categories[c].clone())
            .collect()
        } else {
            Vec::new()
        };
        let confidence = if is_job { p_job } else { 1.0 - p_job };
        Verdict {
            is_job,
            kind,
            categories,
            confidence: confidence.clamp(0.0, 1.0),
        }
    }

    /// The categories this model was trained for, in head order.
    pub fn categories(&self) -> &[CategorySlug] {
        &self.categories
    }

    /// The threshold of each category (in [`LocalModel::categories`] order) a job's
    /// probability of that category must reach for it to be given besides the most likely one.
    pub fn category_thresholds(&self) -> &[f32] {
        &self.category_thresholds
    }

    /// Sorted fingerprints of the training texts (see [`LocalModel::fingerprint`]).
    pub fn training_fingerprints(&self) -> &[u64] {
        &self.fingerprints
    }

    /// Whether this exact text (up to surrounding whitespace) was in the training set.
    pub fn was_trained_on(&self, text: &str) -> bool {
        self.fingerprints
            .binary_search(&features::fingerprint(text))
            .is_ok()
    }

    /// The fingerprint [`LocalModel::training_fingerprints`] holds for a text: the first
    /// 8 bytes of SHA-256 of the trimmed text, little-endian.
    pub fn fingerprint(text: &str) -> u64 {
        features::fingerprint(text)
    }

    /// Number of features kept (rows of the weight matrix).
    pub fn n_features(&self) -> usize {
        self.vocab.len()
    }

    /// A short id of this model's weights and calibration, for `Classified::model`
    /// (`local:<8 hex>`).
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for head in &self.heads {
            h.update(head.bias.to_le_bytes());
            for w in head.weights.iter().chain(&head.dense) {
                h.update(w.to_le_bytes());
            }
        }
        h.update(self.calibration.a.to_le_bytes());
        h.update(self.calibration.b.to_le_bytes());
        for t in &self.category_thresholds {
            h.update(t.to_le_bytes());
        }
        format!("local:{}", hex::encode(&h.finalize()[..4]))
    }

    /// Writes the model as JSON.
    pub fn save(&self, w: impl Write) -> Result<(), ClassifyError> {
        serde_json::to_writer(w, &self.to_wire()).map_err(|e| {
            if e.is_io() {
                ClassifyError::Io(std::io::Error::other(e))
            } else {
                ClassifyError::Invalid(format!("cannot encode model: {e}"))
            }
        })
    }

    /// Reads a model written by [`LocalModel::save`], checking its consistency.
    pub fn load(r: impl Read) -> Result<LocalModel, ClassifyError> {
        let wire: WireModel = serde_json::from_reader(r)
            .map_err(|e| ClassifyError::Invalid(format!("not a local model file: {e}")))?;
        Self::from_wire(wire)
    }
}

/// Inner folds for [`LocalModel::calibrate`]: examples of one group (dup group, or the same
/// text) share a fold; groups are dealt out kind by kind in a seeded random order, each to
/// the fold with the fewest examples of that kind (then the fewest overall), so every fold
/// gets its share of each kind.
fn inner_folds(prepared: &[Prepared], k: usize, seed: u64) -> Vec<usize> {
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, p) in prepared.iter().enumerate() {
        groups.entry(p.group.as_str()).or_default().push(i);
    }
    let kind_of = |i: usize| {
        KINDS
            .iter()
            .position(|k| *k == prepared[i].label.kind)
            .unwrap_or(3)
    };
    // Sorted first, so the shuffle (and the folds) do not depend on hash-map order.
    let mut units: Vec<(&str, Vec<usize>)> = groups.into_iter().collect();
    units.sort_unstable();
    SplitMix64(seed ^ 0x0ca1_1b7a_7e5e_ed00).shuffle(&mut units);
    units.sort_by_key(|(_, members)| kind_of(members[0]));
    let mut folds = vec![0usize; prepared.len()];
    let mut sizes = vec![0usize; k];
    let mut per_kind = vec![[0usize; 4]; k];
    for (_, members) in units {
        let kind = kind_of(members[0]);
        let f = (0..k)
            .min_by_key(|&f| (per_kind[f][kind], sizes[f], f))
            .unwrap_or(0);
        per_kind[f][kind] += members.len();
        sizes[f] += members.len();
        for i in members {
            folds[i] = f;
        }
    }
    folds
}

/// The saved form: categories as strings, the rest as is.
#[derive(Serialize, Deserialize)]
struct WireModel {
    format: String,
    categories: Vec<String>,
    features: FeatureOptions,
    job_threshold: f32,
    kind_blend: f32,
    /// Absent in files of older versions: the identity (no calibration).
    #[serde(default)]
    calibration: Platt,
    category_thresholds: Vec<f32>,
    max_categories: usize,
    vocab: Vec<u32>,
    idf: Vec<f32>,
    row_kind: Vec<u8>,
    heads: Vec<Head>,
    fingerprints: Vec<u64>,
}

impl LocalModel {
    fn to_wire(&self) -> WireModel {
        WireModel {
            format: self.format.clone(),
            categories: self
                .categories
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect(),
            features: self.features.clone(),
            job_threshold: self.job_threshold,
            kind_blend: self.kind_blend,
            calibration: self.calibration,
            category_thresholds: self.category_thresholds.clone(),
            max_categories: self.max_categories,
            vocab: self.vocab.clone(),
            idf: self.idf.clone(),
            row_kind: self.row_kind.clone(),
            heads: self.heads.clone(),
            fingerprints: self.fingerprints.clone(),
        }
    }

    fn from_wire(w: WireModel) -> Result<LocalModel, ClassifyError> {
        let bad = |m: &str| Err(ClassifyError::Invalid(format!("corrupt local model: {m}")));
        if w.format != MODEL_FORMAT {
            return bad(&format!("format {:?}, expected {MODEL_FORMAT:?}", w.format));
        }
        let categories = w
            .categories
            .iter()
            .map(|c| CategorySlug::parse(c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ClassifyError::Invalid(format!("corrupt local model: {e}")))?;
        let n = w.vocab.len();
        if w.idf.len() != n || w.row_kind.len() != n || w.row_kind.iter().any(|&k| k > ROW_TOPIC) {
            return bad("vocabulary arrays differ in length");
        }
        if w.heads.len() != 1 + KINDS.len() + categories.len()
            || w.heads.iter().any(|h| h.weights.len() != n)
            || w.heads
                .iter()
                .any(|h| !h.dense.is_empty() && h.dense.len() != LEX_DIM)
        {
            return bad("weight matrix does not match the vocabulary and categories");
        }
        if w.category_thresholds.len() != categories.len() {
            return bad("one threshold per category expected");
        }
        if !(w.calibration.a.is_finite() && w.calibration.b.is_finite()) {
            return bad("calibration is not finite");
        }
        let index = w
            .vocab
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i as u32))
            .collect();
        let lexicon = Arc::new(Lexicon::new(&w.features.topic_words));
        let category_lexicon = categories
            .iter()
            .map(|c| lexicon.slugs().iter().position(|s| s == c.as_str()))
            .collect();
        Ok(LocalModel {
            format: w.format,
            categories,
            features: w.features,
            job_threshold: w.job_threshold,
            kind_blend: w.kind_blend,
            calibration: w.calibration,
            category_thresholds: w.category_thresholds,
            max_categories: w.max_categories.max(1),
            vocab: w.vocab,
            idf: w.idf,
            row_kind: w.row_kind,
            heads: w.heads,
            fingerprints: w.fingerprints,
            index,
            lexicon,
            category_lexicon,
        })
    }
}

/// Bounds and normalizes a text before feature extraction, line by line (the line structure
/// is a cue: vacancies and résumés come in lists, chat messages in one line).
fn prepare(text: &str, opts: &FeatureOptions) -> String {
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

fn round4(x: f32) -> f32 {
    let r = (x * 1e4).round() / 1e4;
    if r == 0.0 { 0.0 } else { r }
}

fn softmax4(z: [f32; 4]) -> [f32; 4] {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut e = z.map(|v| (v - m).exp());
    let s: f32 = e.iter().sum();
    for v in &mut e {
        *v /= s;
    }
    e
}

/// (weight of a negative example, weight of a positive one), on top of the example weights.
fn class_weights(idx: &[usize], y: &[bool], weights: &[f32], balance: bool) -> (f32, f32) {
    let pos: f32 = idx.iter().filter(|&&i| y[i]).map(|&i| weights[i]).sum();
    let total: f32 = idx.iter().map(|&i| weights[i]).sum();
    let neg = total - pos;
    if !balance || pos <= 0.0 || neg <= 0.0 {
        return (1.0, 1.0);
    }
    (total / (2.0 * neg), total / (2.0 * pos))
}

/// SplitMix64: a tiny, stable PRNG for shuffling (stable across crate versions, unlike
/// `rand`'s `StdRng`, so a seed always means the same model).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// What a binary head is trained on: sparse vectors, optional dense lexicon features, and
/// the weight of each example (all indexed by example).
#[derive(Clone, Copy)]
struct Input<'a> {
    xs: &'a [Sparse],
    dense: Option<&'a [Dense]>,
    weights: &'a [f32],
}

/// AdaGrad SGD for logistic and softmax heads.
struct Trainer {
    epochs: u32,
    lr: f32,
    l2: f32,
    /// Squared-gradient accumulators, reused between heads.
    acc: Vec<Vec<f32>>,
}

impl Trainer {
    fn new(opts: &TrainOptions, n_rows: usize) -> Self {
        Self {
            epochs: opts.epochs.max(1),
            lr: opts.learning_rate,
            l2: opts.l2,
            acc: vec![vec![0.0; n_rows]; KINDS.len()],
        }
    }

    fn reset(&mut self) {
        for a in &mut self.acc {
            a.fill(0.0);
        }
    }

    fn binary(
        &mut self,
        head: &mut Head,
        input: Input,
        idx: &[usize],
        y: &[bool],
        (w_neg, w_pos): (f32, f32),
        rng: &mut SplitMix64,
    ) {
        self.reset();
        let mut order = idx.to_vec();
        let mut bias_acc = 0.0f32;
        let mut dense_acc = [0.0f32; LEX_DIM];
        let acc = &mut self.acc[0];
        for _ in 0..self.epochs {
            rng.shuffle(&mut order);
            for &i in &order {
                let x = &input.xs[i];
                let d = input.dense.map(|d| &d[i]);
                let p = sigmoid(LocalModel::score(head, x, d));
                let (t, cw) = if y[i] { (1.0, w_pos) } else { (0.0, w_neg) };
                let g = (p - t) * cw * input.weights[i];
                step(&mut head.weights, acc, x, g, self.lr, self.l2);
                if let Some(d) = d {
                    for ((w, a), &v) in head.dense.iter_mut().zip(&mut dense_acc).zip(d) {
                        let grad = g * v + self.l2 * *w;
                        *a += grad * grad;
                        *w -= self.lr * grad / (a.sqrt() + 1e-6);
                    }
                }
                bias_acc += g * g;
                head.bias -= self.lr * g / (bias_acc.sqrt() + 1e-6);
            }
        }
    }

    fn softmax(
        &mut self,
        heads: &mut [Head],
        xs: &[Sparse],
        weights: &[f32],
        idx: &[usize],
        y: &[usize],
        rng: &mut SplitMix64,
    ) {
        self.reset();
        let mut order = idx.to_vec();
        let mut bias_acc = [0.0f32; 4];
        for _ in 0..self.epochs {
            rng.shuffle(&mut order);
            for &i in &order {
                let x = &xs[i];
                let mut z = [0.0f32; 4];
                for (k, zk) in z.iter_mut().enumerate() {
                    *zk = LocalModel::score(&heads[k], x, None);
                }
                let p = softmax4(z);
                for k in 0..4 {
                    let g = (p[k] - if y[i] == k { 1.0 } else { 0.0 }) * weights[i];
                    step(
                        &mut heads[k].weights,
                        &mut self.acc[k],
                        x,
                        g,
                        self.lr,
                        self.l2,
                    );
                    bias_acc[k] += g * g;
                    heads[k].bias -= self.lr * g / (bias_acc[k].sqrt() + 1e-6);
                }
            }
        }
    }
}

/// One AdaGrad step on the rows present in `x` (lazy L2: only touched rows decay).
fn step(w: &mut [f32], acc: &mut [f32], x: &Sparse, g: f32, lr: f32, l2: f32) {
    for &(r, v) in x {
        let r = r as usize;
        let grad = g * v + l2 * w[r];
        acc[r] += grad * grad;
        w[r] -= lr * grad / (acc[r].sqrt() + 1e-6);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::eval::assign_folds;

    fn categories() -> Vec<CategorySlug> {
        jobwire_core::category::standard()
    }

    fn dev_set() -> Vec<LabeledPost> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
        LabeledPost::parse_all(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn post(id: &str, text: &str, is_job: bool) -> LabeledPost {
        LabeledPost {
            id: id.to_owned(),
            channel: "@test".to_owned(),
            text: text.to_owned(),
            label: Some(Label {
                is_job,
                kind: if is_job {
                    PostKind::Job
                } else {
                    PostKind::Chatter
                },
                categories: if is_job {
                    vec![CategorySlug::parse("web").unwrap()]
                } else {
                    Vec::new()
                },
            }),
            dup_group: None,
        }
    }

    /// (confidence, is_job right) of every dev post, each scored by a model that did not
    /// see it (5 folds).
    fn held_out_confidences() -> Vec<(f32, bool)> {
        let data = dev_set();
        let cats = categories();
        let folds = assign_folds(&data, 5, 7);
        let mut out = Vec::new();
        for fold in 0..5 {
            let train: Vec<LabeledPost> = data
                .iter()
                .zip(&folds)
                .filter(|(_, f)| f.is_some_and(|f| f != fold))
                .map(|(p, _)| p.clone())
                .collect();
            let model = LocalModel::train(&train, &cats, &TrainOptions::default()).unwrap();
            for (p, f) in data.iter().zip(&folds) {
                if *f == Some(fold) {
                    let v = model.predict(&p.text);
                    let truth = p.label.as_ref().unwrap().is_job;
                    out.push((v.confidence, v.is_job == truth));
                }
            }
        }
        out
    }

    #[test]
    fn confident_verdicts_are_right_far_more_often_than_unsure_ones() {
        let points = held_out_confidences();
        assert_eq!(points.len(), 240);
        let bucket = |keep: &dyn Fn(f32) -> bool| {
            let b: Vec<&(f32, bool)> = points.iter().filter(|(c, _)| keep(*c)).collect();
            let right = b.iter().filter(|(_, ok)| *ok).count() as f32;
            let mean_conf = b.iter().map(|(c, _)| c).sum::<f32>() / b.len().max(1) as f32;
            (b.len(), right / b.len().max(1) as f32, mean_conf)
        };
        let (n_high, acc_high, conf_high) = bucket(&|c| c >= 0.9);
        let (n_low, acc_low, conf_low) = bucket(&|c| c < 0.7);
        println!(
            "confidence >= 0.9: {n_high} posts, {acc_high:.3} right (mean confidence \
             {conf_high:.3}); < 0.7: {n_low} posts, {acc_low:.3} right (mean {conf_low:.3})"
        );
        // Most posts are easy and the model says so.
        assert!(n_high >= 120, "only {n_high} confident verdicts");
        assert!(acc_high >= 0.97, "confident verdicts right {acc_high:.3}");
        // The unsure ones exist, are wrong often, and are the ones to send to the LLM.
        assert!(n_low >= 8, "only {n_low} unsure verdicts");
        assert!(acc_low <= 0.85, "unsure verdicts right {acc_low:.3}");
        assert!(
            1.0 - acc_low >= 5.0 * (1.0 - acc_high),
            "unsure verdicts are not wrong much more often"
        );
        // Calibrated: in both buckets the stated confidence is close to the observed accuracy.
        assert!(
            (acc_high - conf_high).abs() < 0.06,
            "{acc_high} vs {conf_high}"
        );
        assert!((acc_low - conf_low).abs() < 0.2, "{acc_low} vs {conf_low}");
    }

    #[test]
    fn job_probability_is_what_predict_decides_on() {
        let data = dev_set();
        let model = LocalModel::train(&data, &categories(), &TrainOptions::default()).unwrap();
        assert_ne!(
            model.calibration,
            Platt::default(),
            "calibration was fitted"
        );
        for text in [
            "Нужен лендинг на Тильде, бюджет 20к, пишите в лс",
            "Делаю лендинги на Тильде, портфолио в профиле",
            "Подскажите, где искать заказчиков?",
            "",
        ] {
            let p = model.job_probability(text);
            let v = model.predict(text);
            assert!((0.0..=1.0).contains(&p));
            assert_eq!(v.is_job, p >= 0.5, "{text}: {p}");
            assert!((v.confidence - p.max(1.0 - p)).abs() < 1e-6, "{text}");
        }
        assert!(model.job_probability("Нужен лендинг на Тильде, бюджет 20к, пишите в лс") > 0.8);
        assert!(model.job_probability("Делаю лендинги на Тильде, портфолио в профиле") < 0.5);
    }

    #[test]
    fn calibration_and_thresholds_survive_save_and_load_and_old_files_still_load() {
        let data = dev_set();
        let model = LocalModel::train(&data, &categories(), &TrainOptions::default()).unwrap();
        let mut bytes = Vec::new();
        model.save(&mut bytes).unwrap();
        let loaded = LocalModel::load(bytes.as_slice()).unwrap();
        assert_eq!(loaded.calibration, model.calibration);
        assert_eq!(loaded.category_thresholds(), model.category_thresholds());
        let text = "Need a logo and a banner for our coffee shop, $200";
        assert_eq!(loaded.job_probability(text), model.job_probability(text));
        // A file written before calibration existed loads with the identity calibration.
        let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        json.as_object_mut().unwrap().remove("calibration");
        let old = LocalModel::load(json.to_string().as_bytes()).unwrap();
        assert_eq!(old.calibration, Platt::default());
        let raw = sigmoid(model.scores(text).job_logit);
        assert!((old.job_probability(text) - raw).abs() < 1e-5);
    }

    #[test]
    fn weights_decide_between_conflicting_labels() {
        let data = dev_set();
        let cats = categories();
        let opts = TrainOptions::default();
        // The same post, labeled a job by one source and chatter by another.
        let text = "Коллеги, кто-нибудь делал выгрузку фида для Яндекс Маркета из самописной CMS?";
        let with = |w_job: f32, w_chat: f32| {
            let mut set: Vec<(LabeledPost, f32)> = data.iter().map(|p| (p.clone(), 1.0)).collect();
            set.push((post("x-job", text, true), w_job));
            set.push((post("x-chat", text, false), w_chat));
            LocalModel::train_weighted(&set, &cats, &opts).unwrap()
        };
        let admin_says_job = with(2.0, 0.5);
        let admin_says_chatter = with(0.5, 2.0);
        let (p_job, p_chat) = (
            admin_says_job.job_probability(text),
            admin_says_chatter.job_probability(text),
        );
        assert!(p_job > p_chat + 0.2, "{p_job} vs {p_chat}");
        assert!(admin_says_job.predict(text).is_job);
        assert!(!admin_says_chatter.predict(text).is_job);
    }

    #[test]
    fn unit_weights_are_plain_training_and_zero_weights_are_skipped() {
        let data = dev_set();
        let cats = categories();
        let opts = TrainOptions::default();
        let plain = LocalModel::train(&data, &cats, &opts).unwrap();
        let mut set: Vec<(LabeledPost, f32)> = data.iter().map(|p| (p.clone(), 1.0)).collect();
        assert_eq!(
            LocalModel::train_weighted(&set, &cats, &opts).unwrap().id(),
            plain.id()
        );
        let ignored = "Нужен бот, который будет отвечать в чате вместо меня, бюджет 5000₽";
        set.push((post("x0", ignored, false), 0.0));
        let with_zero = LocalModel::train_weighted(&set, &cats, &opts).unwrap();
        assert_eq!(with_zero.id(), plain.id());
        assert!(!with_zero.was_trained_on(ignored));
        for bad in [-1.0, f32::NAN, f32::INFINITY] {
            set.push((post("bad", "text", true), bad));
            assert!(matches!(
                LocalModel::train_weighted(&set, &cats, &opts),
                Err(ClassifyError::Invalid(_))
            ));
            set.pop();
        }
    }

    #[test]
    fn fresh_orders_get_the_category_a_freelancer_would_give() {
        // Posts written for this test (not in the dev set), one per category.
        let model = LocalModel::train(&dev_set(), &categories(), &TrainOptions::default()).unwrap();
        let cases = [
            (
                "web",
                "Требуется доработать интернет-магазин на Битриксе: корзина и личный кабинет. Бюджет 40к, пишите @shop_owner",
            ),
            (
                "bots",
                "Нужен парсер цен конкурентов с выгрузкой в телеграм раз в день, оплата 7000₽, пишите в лс",
            ),
            (
                "mobile",
                "Need an Android developer to fix crashes in our Kotlin app before release, $30/h, DM me",
            ),
            (
                "design",
                "Ищу дизайнера: нарисовать логотип и фирменный стиль для студии йоги, бюджет 12 000₽",
            ),
            (
                "video",
                "Нужен монтажер для еженедельных роликов на ютуб, 15 минут, 2000₽ за ролик, пишите",
            ),
            (
                "texts",
                "Ищем копирайтера: 10 статей в месяц для блога клиники, 4-5 тыс. знаков, 150₽ за 1000 знаков",
            ),
            (
                "marketing",
                "Нужен таргетолог: запустить рекламу в VK для школы танцев, бюджет на рекламу 30к, оплата 15к",
            ),
            (
                "ai",
                "Looking for someone to set up Stable Diffusion with a custom LoRA for product photos, $300 fixed, DM",
            ),
            (
                "assistant",
                "Ищу ассистента на 3 часа в день: вести календарь, отвечать клиентам в директе, 20к/мес, пишите",
            ),
            (
                "translation",
                "Need a translator from German to English for a 30-page technical manual, $0.06/word, DM",
            ),
            (
                "audio",
                "Ищу диктора с приятным женским голосом для озвучки аудиокниги, 8 часов, оплата договорная, пишите",
            ),
            (
                "data",
                "Нужно свести данные из 12 Excel-файлов в одну таблицу и сделать дашборд в Google Sheets, 5000₽",
            ),
        ];
        let mut wrong = Vec::new();
        for (want, text) in cases {
            let v = model.predict(text);
            if !v.is_job || v.categories.first().map(CategorySlug::as_str) != Some(want) {
                wrong.push(format!("{want}: {v:?}"));
            }
        }
        assert!(wrong.len() <= 1, "wrong: {wrong:#?}");
    }
}
