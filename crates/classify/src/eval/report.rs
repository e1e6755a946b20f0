//! What an evaluation reports: precision/recall/F1, category scores, usage and extraction
//! accuracy, in machine-readable (JSON) and human-readable form.

use std::collections::BTreeMap;
use std::fmt;

use jobwire_core::PostKind;
use serde_json::{Value, json};

/// Precision, recall and F1 of one binary decision.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Prf {
    /// Of the positives predicted, the share that were right (0 when none predicted).
    pub precision: f64,
    /// Of the true positives, the share that were found (0 when there were none).
    pub recall: f64,
    /// Harmonic mean of precision and recall (0 when both are 0).
    pub f1: f64,
}

impl Prf {
    /// From true-positive, false-positive and false-negative counts.
    pub fn from_counts(tp: usize, fp: usize, fn_: usize) -> Self {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        Self {
            precision,
            recall,
            f1,
        }
    }
}

/// Category quality over the posts that truly are jobs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CategoryScores {
    /// Micro-averaged F1 over all (job post, category) decisions.
    pub micro_f1: f64,
    /// F1 per category (every configured category and every category seen in the labels or
    /// the predictions).
    pub per_category: BTreeMap<String, f64>,
}

/// What a classifier got right and wrong on a labeled dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReport {
    /// The job / not-job decision (a job is the positive class).
    pub is_job: Prf,
    /// Categories, over true job posts.
    pub categories: CategoryScores,
    /// Confusion of kinds: `kinds[truth][predicted]` = number of posts.
    pub kinds: BTreeMap<PostKind, BTreeMap<PostKind, usize>>,
    /// Labeled posts evaluated.
    pub n_posts: usize,
    /// Posts of the evaluated file the classifier was trained on (0 for an LLM).
    pub trained_on_eval_posts: usize,
    /// `Some(k)` when the numbers come from k-fold cross-validation.
    pub cross_validated: Option<usize>,
    /// Brier score of `confidence` as a probability that `is_job` is right (lower is better).
    pub confidence_brier: f64,
    /// Expected calibration error of `confidence` over 10 equal-width bins.
    pub confidence_ece: f64,
    /// What reaching the answers took (posts sent to the LLM, requests, tokens, cost).
    pub usage: Usage,
    /// Extraction accuracy, for datasets that carry the fields.
    pub extraction: Option<ExtractionScores>,
}

/// What classifying the evaluated posts cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// Posts that went to the LLM.
    pub llm_posts: usize,
    /// LLM requests answered with usable content (requests that carried re-asked posts
    /// included).
    pub llm_requests: u64,
    /// LLM attempts that failed: 429, 5xx, timeouts, refused 4xx, unusable content (the last
    /// is billed by providers too).
    pub llm_failed_requests: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
}

impl Usage {
    /// Sets the LLM request counts from two readings of the LLM's counters (answered
    /// requests, failed attempts): the one before the posts were classified and the one after.
    pub(crate) fn count_requests_since(&mut self, before: (u64, u64), after: (u64, u64)) {
        self.llm_requests = after.0.saturating_sub(before.0);
        self.llm_failed_requests = after.1.saturating_sub(before.1);
    }
}

/// Share of extracted fields that match the dataset's, per field, over the jobs that have
/// the field labeled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtractionScores {
    /// `(field, correct, labeled)`.
    pub fields: Vec<(String, usize, usize)>,
}

impl ExtractionScores {
    pub fn accuracy(&self, field: &str) -> Option<f64> {
        self.fields
            .iter()
            .find(|(f, _, _)| f == field)
            .filter(|(_, _, n)| *n > 0)
            .map(|(_, ok, n)| *ok as f64 / *n as f64)
    }
}

impl EvalReport {
    /// The machine-readable form:
    /// `{"is_job": {"precision", "recall", "f1"}, "categories": {"micro_f1", "per_category"},
    /// "kinds": {truth: {predicted: n}}, "n_posts", "trained_on_eval_posts", "cross_validated"}`.
    pub fn to_json(&self) -> Value {
        let kinds: serde_json::Map<String, Value> = self
            .kinds
            .iter()
            .map(|(truth, row)| {
                let row: serde_json::Map<String, Value> = row
                    .iter()
                    .map(|(pred, n)| (pred.as_str().to_owned(), json!(n)))
                    .collect();
                (truth.as_str().to_owned(), Value::Object(row))
            })
            .collect();
        json!({
            "is_job": {
                "precision": self.is_job.precision,
                "recall": self.is_job.recall,
                "f1": self.is_job.f1,
            },
            "categories": {
                "micro_f1": self.categories.micro_f1,
                "per_category": self.categories.per_category,
            },
            "kinds": kinds,
            "n_posts": self.n_posts,
            "trained_on_eval_posts": self.trained_on_eval_posts,
            "cross_validated": self.cross_validated,
            "llm_share": self.llm_share(),
            "llm_requests_per_1000": self.llm_requests_per_1000(),
            "llm_requests_per_100_llm_posts": self.llm_requests_per_100_llm_posts(),
            "llm_failed_requests_per_1000": if self.n_posts == 0 {
                0.0
            } else {
                self.usage.llm_failed_requests as f64 * 1000.0 / self.n_posts as f64
            },
            "tokens_per_post": self.tokens_per_post(),
            "cost_usd": self.usage.cost_usd,
            "extraction": self.extraction.as_ref().map(|e| {
                e.fields
                    .iter()
                    .map(|(f, ok, n)| {
                        (
                            f.clone(),
                            json!({ "accuracy": if *n == 0 { 0.0 } else { *ok as f64 / *n as f64 }, "labeled": n }),
                        )
                    })
                    .collect::<serde_json::Map<String, Value>>()
            }),
        })
    }

    /// Share of the posts that went to the LLM.
    pub fn llm_share(&self) -> f64 {
        if self.n_posts == 0 {
            0.0
        } else {
            self.usage.llm_posts as f64 / self.n_posts as f64
        }
    }

    /// LLM requests per 1,000 evaluated posts.
    pub fn llm_requests_per_1000(&self) -> f64 {
        if self.n_posts == 0 {
            0.0
        } else {
            self.usage.llm_requests as f64 * 1000.0 / self.n_posts as f64
        }
    }

    /// Answered LLM requests per 100 posts that reached the LLM (how full the requests were:
    /// 100 / the mean posts per request; failed attempts are counted apart).
    pub fn llm_requests_per_100_llm_posts(&self) -> f64 {
        if self.usage.llm_posts == 0 {
            0.0
        } else {
            self.usage.llm_requests as f64 * 100.0 / self.usage.llm_posts as f64
        }
    }

    /// LLM tokens (in + out) per evaluated post.
    pub fn tokens_per_post(&self) -> f64 {
        if self.n_posts == 0 {
            0.0
        } else {
            (self.usage.tokens_in + self.usage.tokens_out) as f64 / self.n_posts as f64
        }
    }
}

impl fmt::Display for EvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cross_validated {
            Some(k) => writeln!(f, "{} posts, {k}-fold cross-validation", self.n_posts)?,
            None => writeln!(
                f,
                "{} posts ({} of them in the training set)",
                self.n_posts, self.trained_on_eval_posts
            )?,
        }
        writeln!(
            f,
            "is_job      precision {:.3}  recall {:.3}  F1 {:.3}",
            self.is_job.precision, self.is_job.recall, self.is_job.f1
        )?;
        writeln!(
            f,
            "confidence  Brier {:.3}  ECE {:.3}",
            self.confidence_brier, self.confidence_ece
        )?;
        writeln!(f, "categories  micro-F1 {:.3}", self.categories.micro_f1)?;
        for (slug, f1) in &self.categories.per_category {
            writeln!(f, "  {slug:<12} F1 {f1:.3}")?;
        }
        write!(f, "kinds (rows: truth, columns: predicted)\n  {:<8}", "")?;
        for k in PostKind::ALL {
            write!(f, "{:>8}", k.as_str())?;
        }
        writeln!(f)?;
        for (truth, row) in &self.kinds {
            write!(f, "  {:<8}", truth.as_str())?;
            for k in PostKind::ALL {
                write!(f, "{:>8}", row.get(&k).copied().unwrap_or(0))?;
            }
            writeln!(f)?;
        }
        writeln!(
            f,
            "LLM         {:.1}% of posts, {:.1} answered requests per 1000 posts ({:.1} per 100 posts sent to it; {} failed attempts), {:.1} tokens per post, ${:.4}",
            self.llm_share() * 100.0,
            self.llm_requests_per_1000(),
            self.llm_requests_per_100_llm_posts(),
            self.usage.llm_failed_requests,
            self.tokens_per_post(),
            self.usage.cost_usd
        )?;
        if let Some(x) = &self.extraction {
            for (field, ok, n) in &x.fields {
                if *n > 0 {
                    writeln!(
                        f,
                        "extraction  {field:<10} {:.3} ({ok}/{n})",
                        *ok as f64 / *n as f64
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prf_matches_hand_computation() {
        // tp 3, fp 1, fn 2: P = 3/4, R = 3/5, F1 = 2*0.75*0.6/1.35 = 2/3.
        let m = Prf::from_counts(3, 1, 2);
        assert!((m.precision - 0.75).abs() < 1e-12);
        assert!((m.recall - 0.6).abs() < 1e-12);
        assert!((m.f1 - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Prf::from_counts(0, 0, 0), Prf::default());
    }
}
