//! What the classify stage and the cascade report. Each outcome is one event that logs and
//! counts itself, so a metric's name and labels are written once.

use std::time::Duration;

use crate::{Classified, ClassifyError};

/// `jobwire_classified_total{verdict, route}`: posts classified (or put back to wait).
pub const CLASSIFIED_TOTAL: &str = "jobwire_classified_total";
/// `jobwire_classify_latency_seconds{model}`.
pub const CLASSIFY_LATENCY_SECONDS: &str = "jobwire_classify_latency_seconds";
/// `jobwire_llm_tokens_total{model, direction}`.
pub const LLM_TOKENS_TOTAL: &str = "jobwire_llm_tokens_total";
/// `jobwire_llm_cost_microusd_total{model}`.
pub const LLM_COST_MICROUSD_TOTAL: &str = "jobwire_llm_cost_microusd_total";
/// `jobwire_llm_post_cost_microusd{model}`: what each post the LLM classified cost (its
/// share of the requests it took part in; for a streamed answer, estimated when its item
/// arrived). `_sum / _count` is the cost per LLM post.
pub const LLM_POST_COST_MICROUSD: &str = "jobwire_llm_post_cost_microusd";
/// `jobwire_classify_route_total{route}`: where the cascade sent posts.
pub const CLASSIFY_ROUTE_TOTAL: &str = "jobwire_classify_route_total";

/// A post got its verdict (`llm`: whether the LLM gave it, with tokens and cost).
#[derive(Debug)]
pub(crate) struct PostClassified<'a> {
    pub classified: &'a Classified,
    pub llm: bool,
}

impl PostClassified<'_> {
    pub(crate) fn emit(self) {
        let c = self.classified;
        let route = if self.llm { "llm" } else { "local" };
        metrics::histogram!(CLASSIFY_LATENCY_SECONDS, "model" => c.model.clone())
            .record(f64::from(c.latency_ms) / 1000.0);
        if self.llm {
            metrics::counter!(LLM_TOKENS_TOTAL, "model" => c.model.clone(), "direction" => "in")
                .increment(u64::from(c.tokens_in));
            metrics::counter!(LLM_TOKENS_TOTAL, "model" => c.model.clone(), "direction" => "out")
                .increment(u64::from(c.tokens_out));
            metrics::counter!(LLM_COST_MICROUSD_TOTAL, "model" => c.model.clone())
                .increment((c.cost_usd * 1e6).round().max(0.0) as u64);
            metrics::histogram!(LLM_POST_COST_MICROUSD, "model" => c.model.clone())
                .record((c.cost_usd * 1e6).max(0.0));
        }
        let verdict = if c.verdict.is_job { "job" } else { "not_job" };
        metrics::counter!(CLASSIFIED_TOTAL, "verdict" => verdict, "route" => route).increment(1);
    }
}

/// A post could not be classified now and waits `retry_in`.
#[derive(Debug)]
pub(crate) struct PostWaits<'a> {
    pub post: i64,
    pub error: &'a ClassifyError,
    pub retry_in: Duration,
}

impl PostWaits<'_> {
    pub(crate) fn emit(self) {
        metrics::counter!(CLASSIFIED_TOTAL, "verdict" => "waiting", "route" => "none").increment(1);
        let (post, error, retry_in_s) = (self.post, self.error, self.retry_in.as_secs());
        if error.is_retryable() {
            tracing::warn!(post, %error, retry_in_s, "classifier unavailable; post waits");
        } else {
            tracing::error!(post, %error, retry_in_s, "classifier refused the post; it waits for a fix");
        }
    }
}

/// The cascade routed `posts` posts one way.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Routed {
    Local(u64),
    Llm(u64),
    SpendLimited,
}

impl Routed {
    pub(crate) fn emit(self) {
        let (route, n) = match self {
            Self::Local(n) => ("local", n),
            Self::Llm(n) => ("llm", n),
            Self::SpendLimited => ("spend_limited", 1),
        };
        metrics::counter!(CLASSIFY_ROUTE_TOTAL, "route" => route).increment(n);
    }
}

/// `jobwire_retrain_total`: retrains of the local model.
pub const RETRAIN_TOTAL: &str = "jobwire_retrain_total";
/// `jobwire_training_examples{source}`: stored examples the last retrain learned from.
pub const TRAINING_EXAMPLES: &str = "jobwire_training_examples";

/// Classification's metrics, for `/metrics`' `# HELP` lines and buckets.
pub const METRICS: &[jobwire_core::metric::MetricDef] = &[
    jobwire_core::metric::MetricDef::counter(
        CLASSIFIED_TOTAL,
        &["verdict", "route"],
        "Posts classified, by verdict (job, not_job, or waiting: the classifier failed and the post waits) and route (llm, local, none).",
    ),
    jobwire_core::metric::MetricDef::histogram(
        CLASSIFY_LATENCY_SECONDS,
        &["model"],
        "Time to a post's verdict from the classifier that gave it (an LLM's answer or the local model), in seconds.",
        jobwire_core::metric::LLM_BUCKETS,
    ),
    jobwire_core::metric::MetricDef::counter(
        LLM_TOKENS_TOTAL,
        &["model", "direction"],
        "LLM tokens used, direction in (prompt) or out (completion).",
    ),
    jobwire_core::metric::MetricDef::counter(
        LLM_COST_MICROUSD_TOTAL,
        &["model"],
        "LLM spend in millionths of a US dollar, at the configured prices.",
    ),
    jobwire_core::metric::MetricDef::histogram(
        LLM_POST_COST_MICROUSD,
        &["model"],
        "What one LLM-classified post cost, in millionths of a US dollar.",
        &[
            1.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 10000.0,
        ],
    ),
    jobwire_core::metric::MetricDef::counter(
        CLASSIFY_ROUTE_TOTAL,
        &["route"],
        "Posts the cascade routed: local (the local model was sure), llm, spend_limited (the daily LLM spend limit was reached).",
    ),
    jobwire_core::metric::MetricDef::counter(RETRAIN_TOTAL, &[], "Retrains of the local model."),
    jobwire_core::metric::MetricDef::gauge(
        TRAINING_EXAMPLES,
        &["source"],
        "Stored examples the last retrain learned from, by source (llm verdicts, human labels).",
    ),
];

/// The local model was retrained.
#[derive(Debug)]
pub(crate) struct Retrained<'a>(pub &'a crate::retrain::RetrainReport);

impl Retrained<'_> {
    pub(crate) fn emit(self) {
        let report = self.0;
        metrics::counter!(RETRAIN_TOTAL).increment(1);
        metrics::gauge!(TRAINING_EXAMPLES, "source" => "llm").set(report.llm_examples as f64);
        metrics::gauge!(TRAINING_EXAMPLES, "source" => "human").set(report.human_examples as f64);
        tracing::info!(
            trained_on = report.trained_on,
            llm = report.llm_examples,
            human = report.human_examples,
            model = %report.model_id,
            took_ms = report.took.as_millis() as u64,
            "local model retrained"
        );
    }
}
