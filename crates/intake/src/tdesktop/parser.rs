//! The blocking parse of an export file: reads it through a buffer (moving the progress
//! bar), drives the visitors of [`super::chats`] over it, and turns a serde_json error into a
//! [`SourceError`] that names the line, column and byte.

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use indicatif::ProgressBar;
use serde::de::DeserializeSeed;
use tokio::sync::mpsc;

use super::chats::{Chat, Object};
use super::events::{Event, ImportStats};
use super::posts::Ctx;
use crate::source::{MAX_BATCH, SourceError};

/// How often (in bytes) the progress bar is moved.
const PROGRESS_STEP: u64 = 1 << 20;

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
pub(super) fn parse_export(
    file: std::fs::File,
    path: &Path,
    tx: &mpsc::Sender<Event>,
    bar: &ProgressBar,
    strict: bool,
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
        strict,
    };
    let parsed = Object(Chat {
        ctx: &mut ctx,
        top_level: true,
    })
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
