//! Subscribers from a TOML file (`[[subscriber]]` entries): how the embedded mode and the
//! demo get subscribers until the main bot manages them. Every entry is checked first; one
//! bad entry rejects the file with its position, and nothing is half-loaded.

use std::path::Path;

use anyhow::Context;
use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_core::quiet::QuietHours;
use jobwire_core::rules::Term;
use jobwire_store::{QuietHoursSpec, Store, SubscriberSpec};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    subscriber: Vec<Entry>,
}

/// One subscriber as written in the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub chat_id: i64,
    pub name: Option<String>,
    pub categories: Vec<String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub paused: bool,
    /// `"23:00-08:00"`, in `time_zone`.
    pub quiet_hours: Option<String>,
    pub time_zone: Option<String>,
}

impl Entry {
    /// Checks the entry and turns it into what the store keeps.
    pub fn to_spec(&self) -> anyhow::Result<SubscriberSpec> {
        let categories = self
            .categories
            .iter()
            .map(|c| CategorySlug::parse(c))
            .collect::<Result<Vec<_>, _>>()?;
        for t in self.include.iter().chain(&self.exclude) {
            Term::parse(t).with_context(|| format!("keyword {t:?}"))?;
        }
        let quiet_hours = match &self.quiet_hours {
            Some(range) => {
                let tz = self.time_zone.clone().unwrap_or_else(|| "UTC".to_owned());
                QuietHours::parse(range, &tz)?;
                let (start, end) = range
                    .split_once('-')
                    .context("quiet_hours must look like 23:00-08:00")?;
                Some(QuietHoursSpec {
                    start: start.trim().to_owned(),
                    end: end.trim().to_owned(),
                    time_zone: tz,
                })
            }
            None => None,
        };
        Ok(SubscriberSpec {
            chat_id: self.chat_id,
            name: self.name.clone(),
            categories,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            paused: self.paused,
            quiet_hours,
            min_budget: None,
        })
    }
}

/// Parses a subscribers document, checking every entry.
pub fn parse(doc: &str) -> anyhow::Result<Vec<SubscriberSpec>> {
    let file: File = toml::from_str(doc).context("not a subscribers file")?;
    file.subscriber
        .iter()
        .enumerate()
        .map(|(i, e)| {
            e.to_spec()
                .with_context(|| format!("subscriber[{i}] (chat {})", e.chat_id))
        })
        .collect()
}

/// Loads (upserts) every subscriber of the file at `path`.
pub async fn load_file(store: &dyn Store, path: &Path) -> anyhow::Result<usize> {
    let doc = std::fs::read_to_string(path)
        .with_context(|| format!("subscribers_file: cannot read {}", path.display()))?;
    let specs = parse(&doc).with_context(|| format!("subscribers_file: {}", path.display()))?;
    store_all(store, &specs).await
}

pub async fn store_all(store: &dyn Store, specs: &[SubscriberSpec]) -> anyhow::Result<usize> {
    for spec in specs {
        store.upsert_subscriber(spec, Utc::now()).await?;
    }
    Ok(specs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked_with_their_position() {
        let ok = "[[subscriber]]\nchat_id = 1\ncategories = [\"web\"]\nquiet_hours = \"23:00-08:00\"\ntime_zone = \"Europe/Moscow\"\n";
        let specs = parse(ok).expect("valid");
        assert_eq!(
            specs[0].quiet_hours.as_ref().map(|q| q.time_zone.as_str()),
            Some("Europe/Moscow")
        );

        let bad = format!("{ok}[[subscriber]]\nchat_id = 2\ncategories = [\"Web!\"]\n");
        let err = format!("{:#}", parse(&bad).expect_err("bad slug"));
        assert!(err.contains("subscriber[1]"), "{err}");

        let bad_tz = "[[subscriber]]\nchat_id = 3\ncategories = [\"web\"]\nquiet_hours = \"23:00-08:00\"\ntime_zone = \"Mars/Base\"\n";
        assert!(parse(bad_tz).is_err());
        let unknown = "[[subscriber]]\nchat_id = 3\ncategories = []\ncolour = 1\n";
        assert!(format!("{:#}", parse(unknown).expect_err("unknown key")).contains("colour"));
    }
}
