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
//! skipped and counted in [`ImportStats`]. A malformed message (a field of the wrong type, no
//! id, an unreadable date) is reported with a warning naming its chat, id and reason, counted
//! and skipped; with [`ImportOptions::strict`] it ends the import with an error instead. A
//! file that is not JSON at all (or is truncated) ends the import with its line and column.

mod chats;
mod events;
mod message;
mod parser;
mod posts;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use jobwire_core::IncomingPost;
use tokio::sync::mpsc;

use self::events::Event;
pub use self::events::ImportStats;
use self::parser::parse_export;
use crate::source::{Source, SourceError};

/// How many finished batches may wait for the consumer before the parser pauses.
const CHANNEL_DEPTH: usize = 4;

/// How to read an export.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions {
    /// Draw a progress bar (by bytes read) on stderr when stderr is a terminal.
    pub progress: bool,
    /// Stop at the first malformed message (default: report it, skip it, read on).
    pub strict: bool,
}

/// A Telegram Desktop export being read. See the [module docs](self).
#[derive(Debug)]
pub struct TdesktopExport {
    path: PathBuf,
    rx: mpsc::Receiver<Event>,
    stats: Option<ImportStats>,
    finished: bool,
}

impl TdesktopExport {
    /// Opens the export and starts reading it in the background, skipping malformed
    /// messages. With `progress`, a progress bar (by bytes read) is drawn on stderr when
    /// stderr is a terminal.
    pub async fn open(path: impl AsRef<Path>, progress: bool) -> Result<Self, SourceError> {
        let options = ImportOptions {
            progress,
            strict: false,
        };
        Self::open_with(path, options).await
    }

    /// [`Self::open`] with every option.
    pub async fn open_with(
        path: impl AsRef<Path>,
        options: ImportOptions,
    ) -> Result<Self, SourceError> {
        let progress = options.progress;
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
            let outcome = parse_export(file, &task_path, &tx, &bar, options.strict);
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
