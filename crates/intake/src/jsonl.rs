//! Replays a labeled JSONL dataset (the format of `data/dev.jsonl`, see `data/SCHEMA.md`) as a
//! source. Labels are optional and ignored here; the file is streamed line by line.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use jobwire_core::IncomingPost;
use jobwire_core::dataset::{DatasetError, LabeledPost};
use tokio::fs::File;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::source::{MAX_BATCH, Source, SourceError};

/// The longest line accepted, in bytes. A record's text is at most 64 KiB once stored, but
/// JSON escapes can make it several times longer in the file.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// A JSONL file of dataset records, read as a [`Source`].
///
/// Each record becomes an [`IncomingPost`]: `external_id` = the record's `id`, `channel` =
/// its `channel`, `url` = `https://t.me/<username>/<id>` when the channel is an `@username`
/// and the id is numeric (else none), `posted_at` = the clock time given to [`Self::open`],
/// no author.
///
/// A bad line (invalid JSON, unknown kind or category, not UTF-8, over [`MAX_LINE_BYTES`])
/// ends the source with [`SourceError::BadLine`] naming the line: the posts before it are
/// returned first, the error by the next call. With [`Self::skip_bad_lines`] it is skipped
/// instead. Blank lines are ignored; `\r\n` line ends are accepted.
#[derive(Debug)]
pub struct JsonlSource {
    path: PathBuf,
    reader: BufReader<File>,
    clock_now: DateTime<Utc>,
    line_no: usize,
    skip_bad_lines: bool,
    skipped: usize,
    done: bool,
    /// An error found after some posts of a batch: reported by the next call.
    pending_error: Option<SourceError>,
    line: Vec<u8>,
}

impl JsonlSource {
    /// Opens the file. `clock_now` becomes every post's `posted_at` (the records carry no
    /// dates).
    pub async fn open(
        path: impl AsRef<Path>,
        clock_now: DateTime<Utc>,
    ) -> Result<Self, SourceError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).await.map_err(|source| SourceError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(Self {
            path,
            reader: BufReader::with_capacity(64 * 1024, file),
            clock_now,
            line_no: 0,
            skip_bad_lines: false,
            skipped: 0,
            done: false,
            pending_error: None,
            line: Vec::new(),
        })
    }

    /// With `true`, a bad line is logged (`tracing::warn!`), counted in
    /// [`Self::skipped_lines`] and skipped; with `false` (the default) it ends the source
    /// with [`SourceError::BadLine`].
    pub fn skip_bad_lines(mut self, skip: bool) -> Self {
        self.skip_bad_lines = skip;
        self
    }

    /// How many bad lines were skipped so far.
    pub fn skipped_lines(&self) -> usize {
        self.skipped
    }

    /// Reads the next line into `self.line` (without the line break). Returns `Ok(false)` at
    /// the end of the file and `Ok(true)` with an empty buffer plus `too_long` for a line
    /// over [`MAX_LINE_BYTES`], whose bytes are discarded rather than kept.
    async fn read_line(&mut self) -> Result<Option<bool>, std::io::Error> {
        self.line.clear();
        let mut too_long = false;
        let mut read_any = false;
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                return Ok(read_any.then_some(too_long));
            }
            read_any = true;
            let (chunk, found_newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            if !too_long {
                if self.line.len() + chunk.len() > MAX_LINE_BYTES {
                    too_long = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let consumed = chunk.len() + usize::from(found_newline);
            self.reader.consume(consumed);
            if found_newline {
                return Ok(Some(too_long));
            }
        }
    }

    fn bad_line(&self, reason: String) -> SourceError {
        SourceError::BadLine {
            path: self.path.clone(),
            line: self.line_no,
            reason,
        }
    }

    /// Parses the line in `self.line`; `Ok(None)` for a blank line.
    fn parse_current(&self, too_long: bool) -> Result<Option<IncomingPost>, SourceError> {
        if too_long {
            return Err(self.bad_line(format!("line is longer than {MAX_LINE_BYTES} bytes")));
        }
        let text = std::str::from_utf8(&self.line)
            .map_err(|e| self.bad_line(format!("not UTF-8: {e}")))?;
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            return Ok(None);
        }
        let record = LabeledPost::parse_line(text, self.line_no)
            .map_err(|e| self.bad_line(dataset_reason(e)))?;
        let url = post_url(&record.channel, &record.id);
        let mut post = IncomingPost {
            channel: record.channel,
            external_id: record.id,
            text: record.text,
            author: None,
            url,
            posted_at: self.clock_now,
        };
        post.bound_text();
        Ok(Some(post))
    }
}

/// The reason of a dataset error, without the `line N:` prefix its `Display` adds.
fn dataset_reason(err: DatasetError) -> String {
    match err {
        DatasetError::Json { source, .. } => format!("not a dataset record: {source}"),
        DatasetError::Kind { kind, .. } => {
            format!("unknown kind {kind:?} (expected job, resume, ad or chatter)")
        }
        DatasetError::Category { source, .. } => source.to_string(),
    }
}

/// `https://t.me/<username>/<id>` for an `@username` channel and a numeric id.
fn post_url(channel: &str, id: &str) -> Option<String> {
    let username = channel.strip_prefix('@')?;
    let valid_username = !username.is_empty()
        && username
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let numeric_id = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    (valid_username && numeric_id).then(|| format!("https://t.me/{username}/{id}"))
}

#[async_trait]
impl Source for JsonlSource {
    fn describe(&self) -> String {
        format!("JSONL file {}", self.path.display())
    }

    async fn next_batch(&mut self) -> Result<Option<Vec<IncomingPost>>, SourceError> {
        if let Some(err) = self.pending_error.take() {
            return Err(err);
        }
        if self.done {
            return Ok(None);
        }
        let mut batch = Vec::new();
        while batch.len() < MAX_BATCH {
            let too_long = match self.read_line().await {
                Ok(Some(too_long)) => too_long,
                Ok(None) => {
                    self.done = true;
                    break;
                }
                Err(source) => {
                    self.done = true;
                    self.pending_error = Some(SourceError::Io {
                        path: self.path.clone(),
                        source,
                    });
                    break;
                }
            };
            self.line_no += 1;
            match self.parse_current(too_long) {
                Ok(Some(post)) => batch.push(post),
                Ok(None) => {}
                Err(err) if self.skip_bad_lines => {
                    self.skipped += 1;
                    tracing::warn!(error = %err, "skipping a bad JSONL line");
                }
                Err(err) => {
                    self.done = true;
                    self.pending_error = Some(err);
                    break;
                }
            }
        }
        if batch.is_empty() {
            // Only at the end of the file or at an error (a full batch is never empty).
            return match self.pending_error.take() {
                Some(err) => Err(err),
                None => Ok(None),
            };
        }
        Ok(Some(batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_only_for_usernames_and_numeric_ids() {
        assert_eq!(
            post_url("@remote_jobs", "123").as_deref(),
            Some("https://t.me/remote_jobs/123")
        );
        assert_eq!(post_url("@remote_jobs", "d001"), None);
        assert_eq!(post_url("Remote Jobs", "123"), None);
        assert_eq!(post_url("@", "123"), None);
        assert_eq!(post_url("@a/b", "1"), None);
        assert_eq!(post_url("@chan", ""), None);
    }
}
