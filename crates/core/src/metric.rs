//! What a metric is, written once beside the code that records it.
//!
//! Each crate that records metrics lists them in a `METRICS` table of [`MetricDef`]s (name,
//! kind, labels, help text and, for histograms, the bucket bounds chosen for what it
//! measures). The binary hands every table to its Prometheus recorder, so `/metrics` carries a
//! `# HELP` line for each and histograms come out with buckets, and the deployment's
//! dashboards and alert rules are checked against the same tables.

/// How a metric behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Only goes up; the name ends in `_total`.
    Counter,
    /// A value that goes up and down.
    Gauge,
    /// A distribution; the name ends in its unit (`_seconds`, `_microusd`).
    Histogram,
}

/// One metric of jobwire: what `/metrics` shows under this name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricDef {
    /// The full name, `jobwire_` prefix and unit included.
    pub name: &'static str,
    pub kind: MetricKind,
    /// The label names it carries (documentation; the recorder takes what is recorded).
    pub labels: &'static [&'static str],
    /// The `# HELP` text: what one unit of it is.
    pub help: &'static str,
    /// Upper bounds of a histogram's buckets, ascending (empty for counters and gauges).
    pub buckets: &'static [f64],
}

impl MetricDef {
    /// A counter.
    pub const fn counter(
        name: &'static str,
        labels: &'static [&'static str],
        help: &'static str,
    ) -> Self {
        Self::plain(name, MetricKind::Counter, labels, help)
    }

    /// A counter or a gauge: no buckets.
    const fn plain(
        name: &'static str,
        kind: MetricKind,
        labels: &'static [&'static str],
        help: &'static str,
    ) -> Self {
        Self {
            name,
            kind,
            labels,
            help,
            buckets: &[],
        }
    }

    /// A gauge.
    pub const fn gauge(
        name: &'static str,
        labels: &'static [&'static str],
        help: &'static str,
    ) -> Self {
        Self::plain(name, MetricKind::Gauge, labels, help)
    }

    /// A histogram with its buckets.
    pub const fn histogram(
        name: &'static str,
        labels: &'static [&'static str],
        help: &'static str,
        buckets: &'static [f64],
    ) -> Self {
        Self {
            name,
            kind: MetricKind::Histogram,
            labels,
            help,
            buckets,
        }
    }

    /// What is wrong with this definition, if anything: the `jobwire_` prefix, a counter
    /// ending in `_total`, a histogram naming its unit and having ascending buckets, a help
    /// text.
    pub fn problem(&self) -> Option<String> {
        let name = self.name;
        if !name.starts_with("jobwire_")
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Some(format!("{name}: not a jobwire_ snake_case name"));
        }
        if self.help.trim().is_empty() {
            return Some(format!("{name}: no help text"));
        }
        match self.kind {
            MetricKind::Counter if !name.ends_with("_total") => {
                Some(format!("{name}: a counter's name ends in _total"))
            }
            MetricKind::Histogram if !UNITS.iter().any(|u| name.ends_with(u)) => Some(format!(
                "{name}: a histogram's name ends in its unit ({})",
                UNITS.join(", ")
            )),
            MetricKind::Histogram
                if self.buckets.is_empty() || self.buckets.windows(2).any(|w| w[0] >= w[1]) =>
            {
                Some(format!("{name}: a histogram needs ascending buckets"))
            }
            MetricKind::Counter | MetricKind::Gauge if !self.buckets.is_empty() => {
                Some(format!("{name}: only histograms have buckets"))
            }
            _ => None,
        }
    }
}

/// The units a histogram's name may end in.
pub const UNITS: &[&str] = &["_seconds", "_microusd", "_bytes"];

/// Buckets for a Telegram Bot API call: milliseconds to a few seconds.
pub const TELEGRAM_CALL_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Buckets for an LLM answer: a tenth of a second to a minute.
pub const LLM_BUCKETS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0,
];
/// Buckets for work measured end to end (a post read to its cards sent, a job's fan-out):
/// tens of milliseconds to ten minutes.
pub const END_TO_END_BUCKETS: &[f64] = &[
    0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];
/// Buckets for handling one bot update: a millisecond to ten seconds.
pub const HANDLER_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_definition_is_named() {
        let ok = MetricDef::counter("jobwire_x_total", &[], "things");
        assert_eq!(ok.problem(), None);
        let no_total = MetricDef::counter("jobwire_x", &[], "things");
        assert!(no_total.problem().is_some_and(|p| p.contains("_total")));
        let no_unit = MetricDef::histogram("jobwire_latency", &[], "time", LLM_BUCKETS);
        assert!(no_unit.problem().is_some_and(|p| p.contains("unit")));
        let unsorted = MetricDef::histogram("jobwire_x_seconds", &[], "time", &[1.0, 0.5]);
        assert!(unsorted.problem().is_some_and(|p| p.contains("ascending")));
        let no_help = MetricDef::gauge("jobwire_depth", &[], " ");
        assert!(no_help.problem().is_some_and(|p| p.contains("help")));
        let capital = MetricDef::gauge("jobwire_Depth", &[], "x");
        assert!(capital.problem().is_some());
    }

    #[test]
    fn the_shared_buckets_ascend() {
        for b in [
            TELEGRAM_CALL_BUCKETS,
            LLM_BUCKETS,
            END_TO_END_BUCKETS,
            HANDLER_BUCKETS,
        ] {
            assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
        }
    }
}
