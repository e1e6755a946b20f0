//! What an operator's Prometheus and Grafana meet: `/metrics` of a running pipeline (a HELP
//! and a TYPE for each metric, histograms with the buckets jobwire chose), and the dashboard
//! and alert rules under `deploy/` naming only metrics jobwire exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use jobwire::telemetry;
use jobwire_core::metric::MetricKind;

/// The metric a sample line belongs to: its name without labels and, for histograms, without
/// the `_bucket`/`_sum`/`_count` suffix.
fn family(sample: &str) -> String {
    let name = sample
        .split(['{', ' '])
        .next()
        .unwrap_or_default()
        .to_owned();
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix)
            && telemetry::find(base).is_some_and(|m| m.kind == MetricKind::Histogram)
        {
            return base.to_owned();
        }
    }
    name
}

/// Checks a `/metrics` exposition against the catalog.
pub fn check_exposition(text: &str) {
    let (mut help, mut types) = (BTreeSet::new(), BTreeMap::new());
    let mut buckets: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut families = BTreeSet::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("#"), Some("HELP"), Some(name), Some(_)) => {
                help.insert(name.to_owned());
            }
            (Some("#"), Some("TYPE"), Some(name), Some(kind)) => {
                types.insert(name.to_owned(), kind.to_owned());
            }
            (Some(first), ..) if !first.starts_with('#') => {
                let f = family(line);
                if line.starts_with(&format!("{f}_bucket"))
                    && let Some(le) = line.split("le=\"").nth(1).and_then(|r| r.split('"').next())
                {
                    let le = match le.parse::<f64>() {
                        Ok(v) if v.is_finite() => v.to_string(),
                        _ => le.to_owned(),
                    };
                    buckets.entry(f.clone()).or_default().insert(le);
                }
                families.insert(f);
            }
            _ => {}
        }
    }
    for must in [
        "jobwire_posts_ingested_total",
        "jobwire_classified_total",
        "jobwire_deliveries_total",
        "jobwire_send_latency_seconds",
        "jobwire_end_to_end_latency_seconds",
        "jobwire_classify_latency_seconds",
        "jobwire_component_ready",
    ] {
        assert!(
            families.contains(must),
            "{must} is missing from /metrics of a pipeline that delivered:\n{text}"
        );
    }
    for f in &families {
        let Some(def) = telemetry::find(f) else {
            panic!("/metrics shows {f}, which no crate's METRICS table defines");
        };
        assert!(help.contains(f), "{f} has no # HELP line");
        let expected = match def.kind {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
        };
        assert_eq!(
            types.get(f).map(String::as_str),
            Some(expected),
            "# TYPE of {f}"
        );
        if def.kind == MetricKind::Histogram {
            let want: BTreeSet<String> = def
                .buckets
                .iter()
                .map(f64::to_string)
                .chain(["+Inf".to_owned()])
                .collect();
            assert_eq!(
                buckets.get(f).cloned().unwrap_or_default(),
                want,
                "the buckets of {f}"
            );
        }
    }
}

/// The `jobwire_…` metric names a deployment file mentions.
pub fn named_in(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut names = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("jobwire_") {
        let word: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        rest = &rest[at + word.len()..];
        names.insert(family(&word));
    }
    names
}

/// `promtool` from `JOBWIRE_TEST_PROMTOOL` (`.ci/run` installs Debian's prometheus package and
/// sets it): its own checks of the rules and the scrape configuration.
#[cfg(jobwire_promtool_tests)]
pub fn promtool(args: &[&str]) -> String {
    let tool = std::env::var("JOBWIRE_TEST_PROMTOOL").expect("JOBWIRE_TEST_PROMTOOL");
    let out = std::process::Command::new(&tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?} failed:\n{text}");
    text
}
