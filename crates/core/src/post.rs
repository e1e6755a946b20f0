//! A post as it arrives from a source, and the verdict a classifier gives it.

use chrono::{DateTime, Utc};

use crate::CategorySlug;

/// The largest post text jobwire keeps, in bytes. Longer texts are cut at a character
/// boundary (and marked as cut) so one hostile post cannot bloat the database or a prompt.
pub const MAX_POST_BYTES: usize = 64 * 1024;

/// One message from a channel, chat or feed, before any decision was made about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingPost {
    /// The source channel as configured: `@username`, a chat title, or a feed URL.
    pub channel: String,
    /// The message id inside the channel (unique per channel).
    pub external_id: String,
    /// The text exactly as posted (bounded by [`MAX_POST_BYTES`]).
    pub text: String,
    /// Who wrote it, when the source says (`@username` or a display name).
    pub author: Option<String>,
    /// A link to the original (`https://t.me/...`).
    pub url: Option<String>,
    pub posted_at: DateTime<Utc>,
}

impl IncomingPost {
    /// Cuts `text` to [`MAX_POST_BYTES`] at a character boundary. Returns whether it was cut.
    pub fn bound_text(&mut self) -> bool {
        if self.text.len() <= MAX_POST_BYTES {
            return false;
        }
        let mut end = MAX_POST_BYTES;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        self.text.truncate(end);
        self.text.push('…');
        true
    }
}

/// What a message is, beyond job or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PostKind {
    Job,
    Resume,
    Ad,
    Chatter,
}

impl PostKind {
    pub const ALL: [PostKind; 4] = [Self::Job, Self::Resume, Self::Ad, Self::Chatter];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Job => "job",
            Self::Resume => "resume",
            Self::Ad => "ad",
            Self::Chatter => "chatter",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == raw)
    }
}

/// A classifier's decision about one post. Categories are always members of the configured
/// set: classifiers drop anything else before building a `Verdict`.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub is_job: bool,
    pub kind: PostKind,
    pub categories: Vec<CategorySlug>,
    /// Calibrated probability that `is_job` is right, in `0.0..=1.0`.
    pub confidence: f32,
    /// How sure the categories are, in `0.0..=1.0`: for the local model, the calibrated
    /// probability that the whole category set is right (the product over the categories of
    /// the probability that choosing, or not choosing, each one is right), so one category
    /// on the edge of being chosen (or dropped) makes it low, and several lower still. 1.0
    /// when there is nothing to decide (not a job) and for answers taken as right (the LLM's).
    pub category_confidence: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_at_a_char_boundary() {
        let mut post = IncomingPost {
            channel: "@c".into(),
            external_id: "1".into(),
            text: "ж".repeat(MAX_POST_BYTES),
            author: None,
            url: None,
            posted_at: DateTime::UNIX_EPOCH,
        };
        assert!(post.bound_text());
        assert!(post.text.len() <= MAX_POST_BYTES + '…'.len_utf8());
        assert!(post.text.ends_with('…'));
    }
}
