//! Imports a Telegram Desktop JSON export (`result.json`) as a [`Source`].
//!
//! Three shapes are understood:
//! - a single-chat export: `{"name", "type", "id", "messages": [...]}`, in the current format
//!   (`date_unixtime`, `text_entities`, `from_id: "user123"`) and the 2020-21 one (`from_id`
//!   as a number or `"channel…"`, no `date_unixtime`);
//! - a full-account export: `{"chats": {"list": [chat, ...]}, "left_chats": {"list": [...]}}`,
//!   every chat shaped like a single-chat export.
//!
//! The file is streamed: a blocking task parses it with serde visitors over a buffered reader
//! and hands batches to [`TdesktopExport::next_batch`] through a bounded channel, so a 1 GB
//! export never sits in memory whole and the parser waits while the consumer is busy.
//!
//! Each message of type `message` with non-blank text becomes an [`IncomingPost`]:
//! - `text`: the `text` field (a string, or an array of strings and `{type, text, ...}`
//!   parts, concatenated; links keep their visible text only);
//! - `author`: `from` (the display name), else `from_id`;
//! - `channel`: the chat's `name`, else `channel<id>`;
//! - `external_id`: the message id;
//! - `posted_at`: `date_unixtime`, else `date`. The old format's `date` is the exporting
//!   computer's local time without a zone; it is read **as if it were UTC**, which can be off
//!   by that computer's UTC offset;
//! - `url`: `https://t.me/c/<chat id>/<message id>` for channels and supergroups, else none.
//!
//! Service messages, unsupported ones and messages without text (photos, stickers, voice) are
//! skipped and counted in [`ImportStats`].

use std::cell::Cell;
use std::fmt;
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use jobwire_core::IncomingPost;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use tokio::sync::mpsc;

use crate::source::{MAX_BATCH, Source, SourceError};

/// How many finished batches may wait for the consumer before the parser pauses.
const CHANNEL_DEPTH: usize = 4;

/// How often (in bytes) the progress bar is moved.
const PROGRESS_STEP: u64 = 1 << 20;

/// What an import saw, available from [`TdesktopExport::stats`] once it finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportStats {
    /// Chats with a `messages` array.
    pub chats: usize,
    /// Messages of any type.
    pub messages: usize,
    /// Posts produced (messages of type `message` with text).
    pub posts: usize,
    /// Service messages (joins, pins, calls...) and messages of other non-`message` types.
    pub skipped_service: usize,
    /// Messages without text (media only).
    pub skipped_without_text: usize,
}

enum Event {
    Batch(Vec<IncomingPost>),
    Done(ImportStats),
    Failed(SourceError),
}

/// A Telegram Desktop export being read. See the [module docs](self).
#[derive(Debug)]
pub struct TdesktopExport {
    path: PathBuf,
    rx: mpsc::Receiver<Event>,
    stats: Option<ImportStats>,
    finished: bool,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Batch(b) => write!(f, "Batch({} posts)", b.len()),
            Event::Done(s) => write!(f, "Done({s:?})"),
            Event::Failed(e) => write!(f, "Failed({e})"),
        }
    }
}

impl TdesktopExport {
    /// Opens the export and starts reading it in the background. With `progress`, a progress
    /// bar (by bytes read) is drawn on stderr when stderr is a terminal.
    pub async fn open(path: impl AsRef<Path>, progress: bool) -> Result<Self, SourceError> {
        let path = path.as_ref().to_path_buf();
        let io_err = |source| SourceError::Io {
            path: path.clone(),
            source,
        };
        let file = tokio::fs::File::open(&path).await.map_err(io_err)?;
        let len = file.metadata().await.map_err(io_err)?.len();
        let file = file.into_std().await;

        let bar = if progress && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message("importing");
            bar
        } else {
            ProgressBar::hidden()
        };

        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let task_path = path.clone();
        tokio::task::spawn_blocking(move || {
            let outcome = parse_export(file, &task_path, &tx, &bar);
            bar.finish_and_clear();
            let event = match outcome {
                Ok(stats) => Event::Done(stats),
                Err(None) => return, // the consumer went away
                Err(Some(err)) => Event::Failed(err),
            };
            // If the consumer is gone nobody needs the outcome.
            let _ = tx.blocking_send(event);
        });
        Ok(Self {
            path,
            rx,
            stats: None,
            finished: false,
        })
    }

    /// What the import saw; `None` until [`Source::next_batch`] returned `Ok(None)`.
    pub fn stats(&self) -> Option<ImportStats> {
        self.stats
    }
}

#[async_trait]
impl Source for TdesktopExport {
    fn describe(&self) -> String {
        format!("Telegram Desktop export {}", self.path.display())
    }

    async fn next_batch(&mut self) -> Result<Option<Vec<IncomingPost>>, SourceError> {
        if self.finished {
            return Ok(None);
        }
        match self.rx.recv().await {
            Some(Event::Batch(batch)) => Ok(Some(batch)),
            Some(Event::Done(stats)) => {
                self.finished = true;
                self.stats = Some(stats);
                Ok(None)
            }
            Some(Event::Failed(err)) => {
                self.finished = true;
                Err(err)
            }
            None => {
                self.finished = true;
                Err(SourceError::Interrupted {
                    path: self.path.clone(),
                    reason: "the parser task ended without a result".into(),
                })
            }
        }
    }
}

/// Counts the bytes read from the file (in buffer-sized steps) and moves the progress bar.
struct Counting<R> {
    inner: R,
    count: Rc<Cell<u64>>,
    bar: ProgressBar,
    next_tick: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let count = self.count.get() + n as u64;
        self.count.set(count);
        if count >= self.next_tick {
            self.bar.set_position(count);
            self.next_tick = count + PROGRESS_STEP;
        }
        Ok(n)
    }
}

/// Parses the whole export, sending batches. `Err(None)` means the consumer hung up.
fn parse_export(
    file: std::fs::File,
    path: &Path,
    tx: &mpsc::Sender<Event>,
    bar: &ProgressBar,
) -> Result<ImportStats, Option<SourceError>> {
    let count = Rc::new(Cell::new(0));
    let reader = BufReader::with_capacity(
        256 * 1024,
        Counting {
            inner: file,
            count: Rc::clone(&count),
            bar: bar.clone(),
            next_tick: PROGRESS_STEP,
        },
    );
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut ctx = Ctx {
        tx,
        batch: Vec::with_capacity(MAX_BATCH),
        stats: ImportStats::default(),
        hung_up: false,
        recognized: false,
    };
    let parsed = ChatSeed {
        ctx: &mut ctx,
        top_level: true,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    if ctx.hung_up {
        return Err(None);
    }
    if let Err(err) = parsed {
        let reason = match err.classify() {
            serde_json::error::Category::Eof => {
                format!("the file ends too early (truncated?): {err}")
            }
            serde_json::error::Category::Io => format!("read error: {err}"),
            _ => err.to_string(),
        };
        let offset = byte_offset(path, err.line(), err.column()).unwrap_or(count.get());
        return Err(Some(SourceError::BadDocument {
            path: path.to_path_buf(),
            line: err.line(),
            column: err.column(),
            offset,
            reason,
        }));
    }
    if !ctx.recognized {
        return Err(Some(SourceError::Unrecognized {
            path: path.to_path_buf(),
            reason: "not a Telegram Desktop JSON export: no \"messages\" array and no \
                     \"chats\" list found"
                .into(),
        }));
    }
    let stats = ctx.stats;
    ctx.flush().map_err(|()| None)?;
    Ok(stats)
}

/// The byte offset of serde_json's (1-based line, byte column) position, found by reading
/// the file again (only done for an error, so the parser itself need not count bytes).
fn byte_offset(path: &Path, line: usize, column: usize) -> Option<u64> {
    let mut reader = BufReader::with_capacity(256 * 1024, std::fs::File::open(path).ok()?);
    let mut newlines_left = line.checked_sub(1)?;
    let mut offset = 0u64;
    while newlines_left > 0 {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return None;
        }
        let mut used = buf.len();
        for (i, _) in buf.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
            newlines_left -= 1;
            if newlines_left == 0 {
                used = i + 1;
                break;
            }
        }
        offset += used as u64;
        reader.consume(used);
    }
    Some(offset + column as u64)
}

/// The parsing state shared by all visitors.
struct Ctx<'a> {
    tx: &'a mpsc::Sender<Event>,
    batch: Vec<IncomingPost>,
    stats: ImportStats,
    hung_up: bool,
    /// Whether a `messages` array or a `chats`/`left_chats` list was seen.
    recognized: bool,
}

impl Ctx<'_> {
    /// Sends the current batch. `Err` when the consumer hung up.
    fn flush(&mut self) -> Result<(), ()> {
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

    /// Turns one message into a post (or counts it as skipped).
    fn handle(&mut self, chat: &ChatMeta, msg: RawMessage) -> Result<(), String> {
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
        let id = msg.id.ok_or("a message without an \"id\"")?.0;
        let posted_at = posted_at(msg.date_unixtime.as_ref(), msg.date.as_deref())
            .map_err(|reason| format!("message {id}: {reason}"))?;
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
            return Err("the import was cancelled".into());
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
struct ChatMeta {
    name: Option<String>,
    kind: Option<String>,
    id: Option<String>,
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

/// Visits a chat object (or the top level of the file, which is either a chat or a
/// full-account export holding `chats` and `left_chats`).
struct ChatSeed<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    top_level: bool,
}

impl<'de> DeserializeSeed<'de> for ChatSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ChatSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.top_level {
            f.write_str("a Telegram Desktop export (a JSON object)")
        } else {
            f.write_str("a chat object")
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut meta = ChatMeta::default();
        // Messages that came before the chat's type and id (Telegram Desktop always writes
        // those first; other writers may sort keys): kept until the chat object ends so they
        // get the right channel and links.
        let mut early: Vec<RawMessage> = Vec::new();
        let mut saw_messages = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => meta.name = map.next_value()?,
                "type" => meta.kind = map.next_value()?,
                "id" => meta.id = map.next_value::<Option<IdLike>>()?.map(|i| i.0),
                "messages" => {
                    saw_messages = true;
                    self.ctx.recognized = true;
                    if meta.id.is_some() && meta.kind.is_some() {
                        map.next_value_seed(MessagesSeed {
                            ctx: &mut *self.ctx,
                            chat: &meta,
                        })?;
                    } else {
                        early = map.next_value()?;
                    }
                }
                "chats" | "left_chats" if self.top_level => {
                    self.ctx.recognized = true;
                    map.next_value_seed(ChatListHolder {
                        ctx: &mut *self.ctx,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if saw_messages {
            self.ctx.stats.chats += 1;
        }
        for msg in early {
            self.ctx.handle(&meta, msg).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// Visits `{"about": ..., "list": [chat, ...]}`.
struct ChatListHolder<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
}

impl<'de> DeserializeSeed<'de> for ChatListHolder<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ChatListHolder<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with a \"list\" of chats")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "list" {
                map.next_value_seed(ChatList {
                    ctx: &mut *self.ctx,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// Visits `[chat, ...]`.
struct ChatList<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
}

impl<'de> DeserializeSeed<'de> for ChatList<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ChatList<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of chats")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(ChatSeed {
                ctx: &mut *self.ctx,
                top_level: false,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// Visits a chat's `messages` array, one message at a time.
struct MessagesSeed<'c, 'a, 'm> {
    ctx: &'c mut Ctx<'a>,
    chat: &'m ChatMeta,
}

impl<'de> DeserializeSeed<'de> for MessagesSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MessagesSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(msg) = seq.next_element::<RawMessage>()? {
            self.ctx.handle(self.chat, msg).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// The fields of a message jobwire uses; everything else is skipped unparsed.
#[derive(Debug, Deserialize)]
struct RawMessage {
    id: Option<IdLike>,
    #[serde(rename = "type")]
    kind: Option<String>,
    date: Option<String>,
    date_unixtime: Option<IdLike>,
    from: Option<String>,
    from_id: Option<IdLike>,
    text: Option<Text>,
}

/// A number or a string, kept as a string (`id`, `from_id`, `date_unixtime` vary by version).
#[derive(Debug)]
struct IdLike(String);

impl<'de> Deserialize<'de> for IdLike {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IdLike;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IdLike, E> {
                Ok(IdLike(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdLike, E> {
                Ok(IdLike(v.to_string()))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<IdLike, E> {
                Ok(IdLike(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<IdLike, E> {
                Ok(IdLike(v))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A message's `text`: a string, or an array of strings and `{type, text, ...}` objects,
/// concatenated.
#[derive(Debug)]
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a text: a string or an array of text parts")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
        Ok(Text(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
        Ok(Text(String::new()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
        let mut out = String::new();
        while let Some(part) = seq.next_element::<TextPart>()? {
            out.push_str(&part.0);
        }
        Ok(Text(out))
    }
}

/// One element of a text array: a string or an object whose `text` is the visible text.
struct TextPart(String);

impl<'de> Deserialize<'de> for TextPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextPart;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a {\"type\", \"text\"} object")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<TextPart, E> {
                Ok(TextPart(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<TextPart, E> {
                Ok(TextPart(v))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextPart, A::Error> {
                let mut text = String::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "text" {
                        text = map.next_value::<Option<String>>()?.unwrap_or_default();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(TextPart(text))
            }
        }
        deserializer.deserialize_any(V)
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
