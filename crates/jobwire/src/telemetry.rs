//! jobwire's metrics as a whole: the binary's own (queues, supervised tasks, recovery,
//! readiness, the LLM spend limit) and every crate's `METRICS` table, installed in the
//! Prometheus recorder with their `# HELP` texts and histogram buckets.

use jobwire_core::metric::{MetricDef, MetricKind};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder};

/// `jobwire_queue_depth{topic}`.
pub const QUEUE_DEPTH: &str = "jobwire_queue_depth";
/// `jobwire_task_restarts_total{task}`.
pub const TASK_RESTARTS_TOTAL: &str = "jobwire_task_restarts_total";
/// `jobwire_republished_total`.
pub const REPUBLISHED_TOTAL: &str = "jobwire_republished_total";
/// `jobwire_dead_letters_total{topic}` (named in jobwire-queue: intake records it too).
pub use jobwire_queue::DEAD_LETTERS_TOTAL;
/// `jobwire_component_ready{component}`.
pub const COMPONENT_READY: &str = "jobwire_component_ready";
/// `jobwire_llm_daily_spend_limit_microusd`.
pub const LLM_DAILY_SPEND_LIMIT_MICROUSD: &str = "jobwire_llm_daily_spend_limit_microusd";

/// The binary's own metrics.
pub const METRICS: &[MetricDef] = &[
    MetricDef::gauge(
        QUEUE_DEPTH,
        &["topic"],
        "Messages waiting in each queue topic (posts to classify, jobs to fan out, deliveries to send).",
    ),
    MetricDef::counter(
        TASK_RESTARTS_TOTAL,
        &["task"],
        "Restarts of a supervised long-running task after it failed or panicked.",
    ),
    MetricDef::counter(
        REPUBLISHED_TOTAL,
        &[],
        "Work published again by recovery because its queue message was lost.",
    ),
    MetricDef::counter(
        DEAD_LETTERS_TOTAL,
        &["topic"],
        "Messages moved to the dead letters (failed for good), by queue topic.",
    ),
    MetricDef::gauge(
        COMPONENT_READY,
        &["component"],
        "1 while a dependency of this process (database, queue, redis, pipeline, a task) is ready, 0 while it is not.",
    ),
    MetricDef::gauge(
        LLM_DAILY_SPEND_LIMIT_MICROUSD,
        &[],
        "The configured daily LLM spend limit in millionths of a US dollar (absent when there is none).",
    ),
];

/// Every metric jobwire can export, crate by crate.
pub fn catalog() -> impl Iterator<Item = &'static MetricDef> {
    [
        METRICS,
        jobwire_intake::stage::METRICS,
        jobwire_mtproto::events::METRICS,
        jobwire_classify::events::METRICS,
        jobwire_fanout::METRICS,
        jobwire_deliver::events::METRICS,
        jobwire_bot::events::METRICS,
        jobwire_admin::panel::METRICS,
    ]
    .into_iter()
    .flatten()
}

/// The catalog's definition of `name`, if it has one.
pub fn find(name: &str) -> Option<&'static MetricDef> {
    catalog().find(|m| m.name == name)
}

/// A recorder builder with each histogram's buckets set.
pub fn builder() -> Result<PrometheusBuilder, BuildError> {
    let mut builder = PrometheusBuilder::new();
    for m in catalog().filter(|m| m.kind == MetricKind::Histogram) {
        builder = builder.set_buckets_for_metric(Matcher::Full(m.name.to_owned()), m.buckets)?;
    }
    Ok(builder)
}

/// Gives the installed recorder every metric's help text (the `# HELP` lines).
pub fn describe() {
    for m in catalog() {
        let help = m.help;
        match m.kind {
            MetricKind::Counter => metrics::describe_counter!(m.name, help),
            MetricKind::Gauge => metrics::describe_gauge!(m.name, help),
            MetricKind::Histogram => metrics::describe_histogram!(m.name, help),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_well_formed_and_named_once() {
        let mut seen = std::collections::HashSet::new();
        for m in catalog() {
            assert_eq!(m.problem(), None);
            assert!(seen.insert(m.name), "{} is defined twice", m.name);
        }
        assert!(
            seen.len() > 40,
            "only {} metrics in the catalog",
            seen.len()
        );
    }

    #[test]
    fn the_builder_takes_every_histogram() {
        assert!(builder().is_ok());
    }
}
