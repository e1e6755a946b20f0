//! Messages into posts: the fields each post takes from its message and its chat, and the
//! batches they are sent in.

use chrono::{DateTime, NaiveDateTime, Utc};
use jobwire_core::IncomingPost;
use tokio::sync::mpsc;

use super::events::{Event, ImportStats};
use super::message::{IdLike, RawMessage};
use crate::source::MAX_BATCH;

/// The parsing state shared by all visitors.
pub(super) struct Ctx<'a> {
    pub(super) tx: &'a mpsc::Sender<Event>,
    pub(super) batch: Vec<IncomingPost>,
    pub(super) stats: ImportStats,
    pub(super) hung_up: bool,
    /// Whether a `messages` array or a `chats`/`left_chats` list was seen.
    pub(super) recognized: bool,
    /// Whether a malformed message ends the import (else it is reported and skipped).
    pub(super) strict: bool,
}

/// Why a message did not become a post.
#[derive(Debug)]
pub(super) enum Refused {
    /// The message is malformed: skipped (reported), or the end of a strict import.
    Malformed(String),
    /// The consumer went away: the import ends.
    Cancelled,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Malformed(reason) => f.write_str(reason),
            Refused::Cancelled => f.write_str("the import was cancelled"),
        }
    }
}

impl Ctx<'_> {
    /// Sends the current batch. `Err` when the consumer hung up.
    pub(super) fn flush(&mut self) -> Result<(), ()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(MAX_BATCH));
        if self.tx.blocking_send(Event::Batch(batch)).is_err() {
            self.hung_up = true;
            return Err(());
        }
        Ok(())
    }

    /// Takes one message as parsed JSON: a post, a counted skip, or — when it is malformed
    /// (fields of the wrong type, no id, a bad date) — a warning naming the chat, the message
    /// (its id, else its position) and the reason, then the next message. In a strict import
    /// a malformed message ends the import instead (`Err`).
    pub(super) fn take(
        &mut self,
        chat: &ChatMeta,
        position: usize,
        value: serde_json::Value,
    ) -> Result<(), Refused> {
        let shown_id = match value.get("id") {
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(serde_json::Value::String(s)) => s.chars().take(40).collect(),
            _ => format!("#{position} (no id)"),
        };
        let outcome = match serde::Deserialize::deserialize(value) {
            Ok(msg) => self.handle(chat, msg),
            Err(e) => {
                self.stats.messages += 1;
                Err(Refused::Malformed(format!("{e}")))
            }
        };
        match outcome {
            Err(Refused::Malformed(reason)) => {
                let reason = format!("{}, message {shown_id}: {reason}", chat.channel_name());
                if self.strict {
                    return Err(Refused::Malformed(reason));
                }
                tracing::warn!(%reason, "skipped a malformed message of the export");
                self.stats.skipped_malformed += 1;
                Ok(())
            }
            other => other,
        }
    }

    /// Turns one message into a post (or counts it as skipped).
    fn handle(&mut self, chat: &ChatMeta, msg: RawMessage) -> Result<(), Refused> {
        self.stats.messages += 1;
        if msg.kind.as_deref().unwrap_or("message") != "message" {
            self.stats.skipped_service += 1;
            return Ok(());
        }
        let text = msg.text.map(|t| t.0).unwrap_or_default();
        if text.trim().is_empty() {
            self.stats.skipped_without_text += 1;
            return Ok(());
        }
        let id = msg
            .id
            .ok_or_else(|| Refused::Malformed("a message without an \"id\"".into()))?
            .0;
        let posted_at = posted_at(msg.date_unixtime.as_ref(), msg.date.as_deref())
            .map_err(Refused::Malformed)?;
        let author = msg
            .from
            .filter(|f| !f.trim().is_empty())
            .or(msg.from_id.map(|f| f.0));
        let url = chat.post_url(&id);
        let mut post = IncomingPost {
            channel: chat.channel_name(),
            external_id: id,
            text,
            author,
            url,
            posted_at,
        };
        post.bound_text();
        self.stats.posts += 1;
        self.batch.push(post);
        if self.batch.len() >= MAX_BATCH && self.flush().is_err() {
            return Err(Refused::Cancelled);
        }
        Ok(())
    }
}

fn posted_at(unix: Option<&IdLike>, date: Option<&str>) -> Result<DateTime<Utc>, String> {
    if let Some(unix) = unix {
        let secs: i64 = unix
            .0
            .parse()
            .map_err(|_| format!("bad date_unixtime {:?}", unix.0))?;
        return DateTime::from_timestamp(secs, 0)
            .ok_or_else(|| format!("date_unixtime {secs} is out of range"));
    }
    let date = date.ok_or("no \"date\" and no \"date_unixtime\"")?;
    NaiveDateTime::parse_from_str(date, "%Y-%m-%dT%H:%M:%S")
        .map(|d| d.and_utc())
        .map_err(|e| format!("bad date {date:?}: {e}"))
}

/// What is known about a chat when its messages are read.
#[derive(Debug, Default)]
pub(super) struct ChatMeta {
    pub(super) name: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) id: Option<String>,
}

impl ChatMeta {
    fn channel_name(&self) -> String {
        match (&self.name, &self.id) {
            (Some(name), _) if !name.trim().is_empty() => name.clone(),
            (_, Some(id)) => format!("channel{id}"),
            _ => "unnamed chat".into(),
        }
    }

    fn post_url(&self, message_id: &str) -> Option<String> {
        let kind = self.kind.as_deref()?;
        if !(kind.ends_with("channel") || kind.ends_with("supergroup")) {
            return None;
        }
        let id = self.id.as_deref()?;
        let bare = id.strip_prefix("-100").unwrap_or(id);
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (numeric(bare) && numeric(message_id))
            .then(|| format!("https://t.me/c/{bare}/{message_id}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_prefer_unixtime_and_read_old_dates_as_utc() {
        let unix = IdLike("1769936400".into());
        let got = posted_at(Some(&unix), Some("2000-01-01T00:00:00")).expect("valid");
        assert_eq!(got.to_rfc3339(), "2026-02-01T09:00:00+00:00");
        let got = posted_at(None, Some("2020-11-12T12:54:07")).expect("valid");
        assert_eq!(got.to_rfc3339(), "2020-11-12T12:54:07+00:00");
        assert!(posted_at(None, None).is_err());
        assert!(posted_at(None, Some("yesterday")).is_err());
        assert!(posted_at(Some(&IdLike("soon".into())), None).is_err());
    }

    #[test]
    fn urls_only_for_channels_and_supergroups() {
        let meta = |kind: &str, id: &str| ChatMeta {
            name: Some("x".into()),
            kind: Some(kind.into()),
            id: Some(id.into()),
        };
        assert_eq!(
            meta("private_channel", "1292077344")
                .post_url("2")
                .as_deref(),
            Some("https://t.me/c/1292077344/2")
        );
        assert_eq!(
            meta("public_supergroup", "-1001234")
                .post_url("7")
                .as_deref(),
            Some("https://t.me/c/1234/7")
        );
        assert_eq!(meta("personal_chat", "10001").post_url("1"), None);
        assert_eq!(meta("private_group", "10001").post_url("1"), None);
    }
}
