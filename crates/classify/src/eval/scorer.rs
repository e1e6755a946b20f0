//! Turning (truth, verdict) pairs into an [`EvalReport`].

use std::collections::{BTreeMap, BTreeSet};

use jobwire_core::dataset::Label;
use jobwire_core::{CategorySlug, PostKind, Verdict};

use super::{CategoryScores, EvalReport, Prf, Usage};

/// Accumulates (truth, verdict) pairs into an [`EvalReport`].
#[derive(Debug, Clone, Default)]
pub struct Scorer {
    categories: BTreeSet<String>,
    job: (usize, usize, usize),
    cat_micro: (usize, usize, usize),
    per_cat: BTreeMap<String, (usize, usize, usize)>,
    kinds: BTreeMap<PostKind, BTreeMap<PostKind, usize>>,
    n: usize,
    trained_on: usize,
    confidence: Vec<(f64, bool)>,
}

impl Scorer {
    /// A scorer that reports at least these categories (even when never seen).
    pub fn new(categories: &[CategorySlug]) -> Self {
        Self {
            categories: categories.iter().map(|c| c.as_str().to_owned()).collect(),
            ..Self::default()
        }
    }

    /// Adds one decision. `trained_on` marks a post the classifier was trained on.
    pub fn add(&mut self, truth: &Label, verdict: &Verdict, trained_on: bool) {
        self.n += 1;
        self.trained_on += usize::from(trained_on);
        match (truth.is_job, verdict.is_job) {
            (true, true) => self.job.0 += 1,
            (false, true) => self.job.1 += 1,
            (true, false) => self.job.2 += 1,
            (false, false) => {}
        }
        self.confidence.push((
            f64::from(verdict.confidence),
            truth.is_job == verdict.is_job,
        ));
        *self
            .kinds
            .entry(truth.kind)
            .or_default()
            .entry(verdict.kind)
            .or_default() += 1;
        if truth.is_job {
            let t: BTreeSet<&str> = truth.categories.iter().map(|c| c.as_str()).collect();
            let p: BTreeSet<&str> = verdict.categories.iter().map(|c| c.as_str()).collect();
            for c in t.union(&p) {
                let e = self.per_cat.entry((*c).to_owned()).or_default();
                match (t.contains(c), p.contains(c)) {
                    (true, true) => {
                        e.0 += 1;
                        self.cat_micro.0 += 1;
                    }
                    (false, true) => {
                        e.1 += 1;
                        self.cat_micro.1 += 1;
                    }
                    (true, false) => {
                        e.2 += 1;
                        self.cat_micro.2 += 1;
                    }
                    (false, false) => {}
                }
            }
        }
    }

    /// The report so far.
    pub fn report(&self, cross_validated: Option<usize>) -> EvalReport {
        let mut kinds = BTreeMap::new();
        for truth in PostKind::ALL {
            let row: BTreeMap<PostKind, usize> = PostKind::ALL
                .into_iter()
                .map(|p| {
                    let n = self
                        .kinds
                        .get(&truth)
                        .and_then(|r| r.get(&p))
                        .copied()
                        .unwrap_or(0);
                    (p, n)
                })
                .collect();
            kinds.insert(truth, row);
        }
        let mut per_category: BTreeMap<String, f64> =
            self.categories.iter().map(|c| (c.clone(), 0.0)).collect();
        for (c, &(tp, fp, fn_)) in &self.per_cat {
            per_category.insert(c.clone(), Prf::from_counts(tp, fp, fn_).f1);
        }
        let (brier, ece) = calibration(&self.confidence);
        EvalReport {
            is_job: Prf::from_counts(self.job.0, self.job.1, self.job.2),
            categories: CategoryScores {
                micro_f1: Prf::from_counts(self.cat_micro.0, self.cat_micro.1, self.cat_micro.2).f1,
                per_category,
            },
            kinds,
            n_posts: self.n,
            trained_on_eval_posts: self.trained_on,
            cross_validated,
            confidence_brier: brier,
            confidence_ece: ece,
            usage: Usage::default(),
            extraction: None,
        }
    }
}

/// (Brier score, expected calibration error over 10 bins) of confidences.
fn calibration(points: &[(f64, bool)]) -> (f64, f64) {
    if points.is_empty() {
        return (0.0, 0.0);
    }
    let n = points.len() as f64;
    let brier = points
        .iter()
        .map(|&(p, ok)| (p - f64::from(u8::from(ok))).powi(2))
        .sum::<f64>()
        / n;
    let mut bins = [(0.0f64, 0.0f64, 0usize); 10];
    for &(p, ok) in points {
        let b = ((p * 10.0) as usize).min(9);
        bins[b].0 += p;
        bins[b].1 += f64::from(u8::from(ok));
        bins[b].2 += 1;
    }
    let ece = bins
        .iter()
        .filter(|b| b.2 > 0)
        .map(|&(sp, so, _)| (sp - so).abs() / n)
        .sum::<f64>();
    (brier, ece)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::Value;

    fn slug(s: &str) -> CategorySlug {
        CategorySlug::parse(s).unwrap()
    }

    fn label(is_job: bool, kind: PostKind, cats: &[&str]) -> Label {
        Label {
            is_job,
            kind,
            categories: cats.iter().map(|c| slug(c)).collect(),
        }
    }

    fn verdict(is_job: bool, kind: PostKind, cats: &[&str]) -> Verdict {
        Verdict {
            is_job,
            kind,
            categories: cats.iter().map(|c| slug(c)).collect(),
            confidence: 0.9,
            category_confidence: 1.0,
        }
    }

    #[test]
    fn scorer_counts_jobs_categories_and_kinds() {
        let mut s = Scorer::new(&[slug("web"), slug("bots"), slug("audio")]);
        use PostKind::*;
        // job, right, categories {web,bots} vs {web}: tp web, fn bots.
        s.add(
            &label(true, Job, &["web", "bots"]),
            &verdict(true, Job, &["web"]),
            false,
        );
        // job missed: fn for design.
        s.add(
            &label(true, Job, &["design"]),
            &verdict(false, Resume, &[]),
            true,
        );
        // resume called a job: fp for is_job; its categories are not scored.
        s.add(
            &label(false, Resume, &[]),
            &verdict(true, Job, &["web"]),
            false,
        );
        // ad right.
        s.add(&label(false, Ad, &[]), &verdict(false, Ad, &[]), false);
        let r = s.report(None);
        // is_job: tp 1, fp 1, fn 1.
        assert!((r.is_job.precision - 0.5).abs() < 1e-12);
        assert!((r.is_job.recall - 0.5).abs() < 1e-12);
        // categories over jobs: tp 1 (web), fp 0, fn 2 (bots, design): P 1, R 1/3, F1 0.5.
        assert!((r.categories.micro_f1 - 0.5).abs() < 1e-12);
        assert_eq!(r.categories.per_category["web"], 1.0);
        assert_eq!(r.categories.per_category["bots"], 0.0);
        assert_eq!(r.categories.per_category["audio"], 0.0);
        assert_eq!(r.categories.per_category["design"], 0.0);
        assert_eq!(r.kinds[&Job][&Resume], 1);
        assert_eq!(r.kinds[&Resume][&Job], 1);
        assert_eq!(r.kinds[&Chatter][&Chatter], 0);
        assert_eq!(r.n_posts, 4);
        assert_eq!(r.trained_on_eval_posts, 1);

        let j = r.to_json();
        assert_eq!(j["is_job"]["f1"], 0.5);
        assert_eq!(j["categories"]["per_category"]["web"], 1.0);
        assert_eq!(j["kinds"]["job"]["resume"], 1);
        assert_eq!(j["kinds"]["chatter"]["ad"], 0);
        assert_eq!(j["n_posts"], 4);
        assert_eq!(j["cross_validated"], Value::Null);
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "categories",
                "cost_usd",
                "cross_validated",
                "extraction",
                "is_job",
                "kinds",
                "llm_failed_requests_per_1000",
                "llm_requests_per_1000",
                "llm_requests_per_100_llm_posts",
                "llm_share",
                "n_posts",
                "tokens_per_post",
                "trained_on_eval_posts"
            ]
        );
        let text = r.to_string();
        assert!(text.contains("micro-F1 0.500"), "{text}");
    }

    #[test]
    fn calibration_of_perfect_and_overconfident_predictions() {
        let (b, e) = calibration(&[(1.0, true), (1.0, true)]);
        assert_eq!((b, e), (0.0, 0.0));
        // Always 0.9 sure, right half the time: ECE 0.4, Brier (0.01 + 0.81) / 2.
        let (b, e) = calibration(&[(0.9, true), (0.9, false)]);
        assert!((e - 0.4).abs() < 1e-9);
        assert!((b - 0.41).abs() < 1e-9);
    }
}
