//! Rows to types and back, once for both backends: timestamps are milliseconds since the
//! epoch in `BIGINT`/`INTEGER` columns, lists and documents are JSON, statuses are words.

use chrono::{DateTime, Utc};
use jobwire_core::{CategorySlug, PostKind};

use crate::sql::{Cols, Dialect};
use crate::*;

pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn from_ms(v: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(v).unwrap_or(DateTime::UNIX_EPOCH)
}

/// A stored count as `u32`: negative is 0, too large is `u32::MAX`.
pub(crate) fn clamp_u32(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// A stored count or sum as `u64` (negative is 0).
pub(crate) fn clamp_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

pub(crate) fn channel_row<DB: Dialect>(row: &DB::Row) -> Result<ChannelRow> {
    let c = Cols::<DB>::new(row);
    let kind = c.word("kind", SourceKind::parse)?;
    let feed = match c.opt_text("feed_url")? {
        Some(url) if kind == SourceKind::Feed => Some(FeedSettings {
            url,
            interval_secs: clamp_u64(c.opt_int("feed_interval_secs")?.unwrap_or(0)),
            jitter_secs: clamp_u64(c.opt_int("feed_jitter_secs")?.unwrap_or(0)),
            backfill: c.flag("feed_backfill")?,
        }),
        _ => None,
    };
    Ok(ChannelRow {
        id: c.id()?.into(),
        handle: c.text("handle")?,
        title: c.opt_text("title")?,
        kind,
        enabled: c.flag("enabled")?,
        include: c.json("include_terms")?,
        exclude: c.json("exclude_terms")?,
        feed,
        removed_at: c.opt_time("removed_at")?,
        created_at: c.time("created_at")?,
        updated_at: c.time("updated_at")?,
    })
}

/// A post joined with its channel's `handle AS channel_handle, title AS channel_title`.
pub(crate) fn post_row<DB: Dialect>(row: &DB::Row) -> Result<PostRow> {
    let c = Cols::<DB>::new(row);
    Ok(PostRow {
        id: c.id()?.into(),
        channel_id: c.int("channel_id")?.into(),
        channel_handle: c.text("channel_handle")?,
        channel_title: c.opt_text("channel_title")?,
        external_id: c.text("external_id")?,
        text: c.text("text")?,
        author: c.opt_text("author")?,
        url: c.opt_text("url")?,
        posted_at: c.time("posted_at")?,
        received_at: c.time("received_at")?,
        status: c.word("status", PostStatus::parse)?,
        attempts: c.count("attempts")?,
    })
}

pub(crate) fn classification_row<DB: Dialect>(row: &DB::Row) -> Result<ClassificationRecord> {
    let c = Cols::<DB>::new(row);
    Ok(ClassificationRecord {
        is_job: c.flag("is_job")?,
        kind: c.word("kind", PostKind::parse)?,
        categories: known_categories(c.int("post_id")?, c.json("categories")?),
        confidence: c.real("confidence")? as f32,
        model: c.text("model")?,
        prompt_version: c.opt_text("prompt_version")?,
        tokens_in: c.count("tokens_in")?,
        tokens_out: c.count("tokens_out")?,
        latency_ms: c.count("latency_ms")?,
        extraction: c.opt_json("extraction")?,
        cost_usd: c.real("cost_usd")?,
    })
}

/// A row's categories that are valid slugs. One bad value (written by hand into the
/// database) costs that category, not the list every reader loads.
pub(crate) fn known_categories(row: i64, raw: Vec<String>) -> Vec<CategorySlug> {
    raw.iter()
        .filter_map(|c| {
            CategorySlug::parse(c)
                .map_err(|e| tracing::warn!(row, error = %e, "ignoring a bad category"))
                .ok()
        })
        .collect()
}

pub(crate) fn subscriber_row<DB: Dialect>(row: &DB::Row) -> Result<SubscriberRow> {
    let c = Cols::<DB>::new(row);
    let quiet_hours = match (c.opt_text("quiet_start")?, c.opt_text("quiet_end")?) {
        (Some(start), Some(end)) => Some(QuietHoursSpec {
            start,
            end,
            time_zone: c.opt_text("time_zone")?.unwrap_or_else(|| "UTC".to_owned()),
        }),
        _ => None,
    };
    let id = c.id()?;
    Ok(SubscriberRow {
        id: id.into(),
        chat_id: c.int("chat_id")?,
        name: c.opt_text("name")?,
        categories: known_categories(id, c.json("categories")?),
        include: c.json("include_terms")?,
        exclude: c.json("exclude_terms")?,
        paused: c.flag("paused")?,
        blocked: c.flag("blocked")?,
        quiet_hours,
        min_budget: c
            .opt_json::<serde_json::Value>("min_budget")?
            .and_then(|raw| {
                serde_json::from_value(raw)
                    .map_err(|e| tracing::warn!(subscriber = id, error = %e, "ignoring a bad minimum budget"))
                    .ok()
            }),
    })
}

pub(crate) fn delivery_row<DB: Dialect>(row: &DB::Row) -> Result<DeliveryRow> {
    let c = Cols::<DB>::new(row);
    Ok(DeliveryRow {
        id: c.id()?.into(),
        post_id: c.int("post_id")?.into(),
        subscriber_id: c.int("subscriber_id")?.into(),
        chat_id: c.int("chat_id")?,
        bot: c.text("bot")?,
        status: c.word("status", DeliveryStatus::parse)?,
        not_before: c.opt_time("not_before")?,
        parts_sent: c.count("parts_sent")?,
        message_ids: c.json("message_ids")?,
        attempts: c.count("attempts")?,
        error: c.opt_text("error")?,
        lang: c.opt_text("lang")?,
    })
}

pub(crate) fn example_row<DB: Dialect>(row: &DB::Row) -> Result<ExampleRow> {
    let c = Cols::<DB>::new(row);
    let id = c.id()?;
    Ok(ExampleRow {
        id: id.into(),
        post_id: c.opt_int("post_id")?.map(PostId),
        text: c.text("text")?,
        is_job: c.flag("is_job")?,
        kind: c.word("kind", PostKind::parse)?,
        categories: known_categories(id, c.json("categories")?),
        source: c.word("source", ExampleSource::parse)?,
        created_at: c.time("created_at")?,
    })
}

pub(crate) fn report_row<DB: Dialect>(row: &DB::Row) -> Result<ReportRow> {
    let c = Cols::<DB>::new(row);
    Ok(ReportRow {
        id: c.id()?.into(),
        chat_id: c.int("chat_id")?,
        post_id: c.opt_int("post_id")?.map(PostId),
        kind: c.word("kind", ReportKind::parse)?,
        text: c.text("text")?,
        link: c.opt_text("link")?,
        status: c.word("status", ReportStatus::parse)?,
        created_at: c.time("created_at")?,
        decided_at: c.opt_time("decided_at")?,
        example_id: c.opt_int("example_id")?.map(ExampleId),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_clamp_instead_of_wrapping() {
        assert_eq!(clamp_u32(-5), 0);
        assert_eq!(clamp_u32(7), 7);
        assert_eq!(clamp_u32(i64::from(u32::MAX) + 10), u32::MAX);
        assert_eq!(clamp_u64(-1), 0);
        assert_eq!(clamp_u64(42), 42);
    }

    #[test]
    fn timestamps_round_trip_in_milliseconds() {
        let t = from_ms(1_700_000_000_123);
        assert_eq!(ms(t), 1_700_000_000_123);
    }
}
