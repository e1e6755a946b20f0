//! `[dedup]`: whether near-duplicate detection runs, and how far back it looks.

use serde::Deserialize;

use super::DedupConfig;

/// `[dedup]` as the file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(default)]
pub struct DedupSection {
    /// Recognise re-posts of an earlier vacancy (in any channel) and deliver them once.
    pub enabled: bool,
    /// How far back an earlier post counts, in hours.
    pub window_hours: u64,
}

impl Default for DedupSection {
    fn default() -> Self {
        Self {
            enabled: true,
            window_hours: 168,
        }
    }
}

impl DedupSection {
    /// The detector's settings; `None` when it is off. A window under an hour is an hour.
    pub fn resolve(&self) -> Option<DedupConfig> {
        let hours = i64::try_from(self.window_hours.max(1)).unwrap_or(i64::MAX / 3_600_000);
        self.enabled.then(|| DedupConfig {
            window: chrono::Duration::try_hours(hours).unwrap_or(chrono::Duration::days(365 * 100)),
            ..DedupConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_by_default_with_a_week() {
        let c = DedupSection::default().resolve().expect("on by default");
        assert_eq!(c.window, chrono::Duration::days(7));
        let off = DedupSection {
            enabled: false,
            ..DedupSection::default()
        };
        assert!(off.resolve().is_none());
    }
}
