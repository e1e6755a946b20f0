//! Sources as an admin manages them: a Telegram channel or chat, or an RSS/Atom feed, with
//! its keyword rules. [`SourceInput::parse`] and [`SourceEdit::check`] are the one
//! validation of what an admin typed (the admin panel, the configuration file's seed), each
//! error naming the form field it is about.

use std::fmt;

use crate::channel_ref::ChannelRef;
use crate::placement::DIRECT_SOURCE;
use crate::rules::{ChannelRules, RuleError};

/// Seconds between two polls of a feed unless the admin says otherwise.
pub const DEFAULT_FEED_INTERVAL_SECS: u64 = 600;
/// The shortest interval between two polls of a feed.
pub const MIN_FEED_INTERVAL_SECS: u64 = 30;
/// Random extra seconds added to every feed interval unless the admin says otherwise.
pub const DEFAULT_FEED_JITTER_SECS: u64 = 60;
/// The longest source name or title accepted, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The longest feed URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// What a source is, and so who reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// A Telegram channel or chat, read by the parser's user accounts. Its handle is
    /// [`ChannelRef::handle`]: `@username` or `https://t.me/+HASH`.
    Telegram,
    /// An RSS or Atom feed, polled by the parser. Its handle is the name its posts carry
    /// (`feed:larajobs`); the URL is in [`FeedSettings`].
    Feed,
    /// Posts came from it (an import, a replay, a paid placement) but nothing reads it: a
    /// channel intake met, never declared a source.
    External,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Telegram => "telegram",
            Self::Feed => "feed",
            Self::External => "external",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::Telegram, Self::Feed, Self::External]
            .into_iter()
            .find(|k| k.as_str() == raw)
    }
}

/// How a feed is polled. Its `Debug` shows the URL's host only: the URL may hold a token
/// (Upwork's `securityToken`).
#[derive(Clone, PartialEq, Eq)]
pub struct FeedSettings {
    /// The feed URL (`http` or `https`).
    pub url: String,
    /// Seconds between polls (at least [`MIN_FEED_INTERVAL_SECS`]).
    pub interval_secs: u64,
    /// Up to this many seconds are added at random to every interval.
    pub jitter_secs: u64,
    /// Deliver what the feed already holds on its first poll (default: mark it seen).
    pub backfill: bool,
}

impl FeedSettings {
    /// A feed polled at the default pace, without backfill.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            interval_secs: DEFAULT_FEED_INTERVAL_SECS,
            jitter_secs: DEFAULT_FEED_JITTER_SECS,
            backfill: false,
        }
    }

    /// The URL's host (with its port when one is written), fit for logs and pages; never
    /// the path or query. `invalid URL` when it does not parse.
    pub fn host(&self) -> String {
        url_host(&self.url).unwrap_or_else(|| "invalid URL".to_owned())
    }
}

impl fmt::Debug for FeedSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FeedSettings")
            .field("host", &self.host())
            .field("interval_secs", &self.interval_secs)
            .field("jitter_secs", &self.jitter_secs)
            .field("backfill", &self.backfill)
            .finish()
    }
}

fn url_host(raw: &str) -> Option<String> {
    let url = url::Url::parse(raw).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// A source as it is stored: checked and normalized (see [`SourceInput::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    pub kind: SourceKind,
    /// The name posts carry: [`ChannelRef::handle`] for Telegram, the feed's name for feeds.
    pub handle: String,
    pub title: Option<String>,
    pub enabled: bool,
    /// Keyword rules, as the admin wrote them ([`ChannelRules::parse`] accepts them).
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// `Some` exactly for [`SourceKind::Feed`].
    pub feed: Option<FeedSettings>,
}

impl SourceSpec {
    /// A Telegram channel or chat read without rules, enabled.
    pub fn telegram(reference: &ChannelRef) -> Self {
        Self {
            kind: SourceKind::Telegram,
            handle: reference.handle(),
            title: None,
            enabled: true,
            include: Vec::new(),
            exclude: Vec::new(),
            feed: None,
        }
    }

    /// Checks a spec built by hand as [`SourceInput::parse`] would: a Telegram handle must
    /// be in [`ChannelRef::handle`] form, a feed must have an http(s) URL and a name, the
    /// rules must parse.
    pub fn check(&self) -> Result<(), SourceErrors> {
        let mut errors = SourceErrors::default();
        match self.kind {
            SourceKind::Telegram => match ChannelRef::parse(&self.handle) {
                Ok(r) if r.handle() == self.handle => {}
                Ok(r) => errors.push(
                    "address",
                    format!("{:?} is stored as {:?}", self.handle, r.handle()),
                ),
                Err(e) => errors.push("address", e.to_string()),
            },
            SourceKind::Feed => {
                if let Err(message) = check_feed_name(&self.handle) {
                    errors.push("name", message);
                }
                match &self.feed {
                    None => errors.push("address", "a feed needs its URL"),
                    Some(feed) => {
                        if let Err(message) = check_feed_url(&feed.url) {
                            errors.push("address", message);
                        }
                        if feed.interval_secs < MIN_FEED_INTERVAL_SECS {
                            errors.push(
                                "interval_secs",
                                format!("at least {MIN_FEED_INTERVAL_SECS} seconds"),
                            );
                        }
                    }
                }
            }
            SourceKind::External => errors.push("kind", "only Telegram sources and feeds are read"),
        }
        if self.kind != SourceKind::Feed && self.feed.is_some() {
            errors.push("address", "only a feed has a URL to poll");
        }
        check_title(self.title.as_deref(), &mut errors);
        check_rules(&self.include, &self.exclude, &mut errors);
        errors.into_result()
    }
}

/// A source as an admin typed it in the panel's form (or the configuration file names it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceInput {
    /// `@username`, a `t.me` link, an invite link (`https://t.me/+…`,
    /// `https://t.me/joinchat/…`), or the URL of an RSS/Atom feed.
    pub address: String,
    /// For a feed: the name its posts carry (`feed:larajobs`); empty: `feed:` and the host.
    pub name: String,
    /// A title to show; empty: none.
    pub title: String,
    pub enabled: bool,
    /// Keyword rules, one per entry (see [`terms`] for a text area).
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// For a feed: seconds between polls; `None`: [`DEFAULT_FEED_INTERVAL_SECS`].
    pub interval_secs: Option<u64>,
    /// For a feed: random extra seconds per interval; `None`: [`DEFAULT_FEED_JITTER_SECS`].
    pub jitter_secs: Option<u64>,
    /// For a feed: deliver what it already holds on the first poll.
    pub backfill: bool,
}

impl SourceInput {
    /// Checks and normalizes what the admin typed: the kind comes from the address (an
    /// http(s) URL that is not a `t.me` link is a feed), a Telegram address becomes its
    /// [`ChannelRef::handle`] (`t.me/RustJobs` → `@rustjobs`), rules must parse. Every
    /// wrong field is reported, each under its form field name (`address`, `name`, `title`,
    /// `include`, `exclude`, `interval_secs`).
    pub fn parse(&self) -> Result<SourceSpec, SourceErrors> {
        let mut errors = SourceErrors::default();
        let address = self.address.trim();
        let title = Some(self.title.trim())
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let include = clean_terms(&self.include);
        let exclude = clean_terms(&self.exclude);
        let spec = if is_feed_url(address) {
            let name = match self.name.trim() {
                "" => url_host(address)
                    .map(|h| format!("feed:{h}"))
                    .unwrap_or_default(),
                name => name.to_owned(),
            };
            if let Err(message) = check_feed_url(address) {
                errors.push("address", message);
            } else if let Err(message) = check_feed_name(&name) {
                errors.push("name", message);
            }
            let interval_secs = self.interval_secs.unwrap_or(DEFAULT_FEED_INTERVAL_SECS);
            if interval_secs < MIN_FEED_INTERVAL_SECS {
                errors.push(
                    "interval_secs",
                    format!("at least {MIN_FEED_INTERVAL_SECS} seconds"),
                );
            }
            SourceSpec {
                kind: SourceKind::Feed,
                handle: name,
                title,
                enabled: self.enabled,
                include,
                exclude,
                feed: Some(FeedSettings {
                    url: address.to_owned(),
                    interval_secs,
                    jitter_secs: self.jitter_secs.unwrap_or(DEFAULT_FEED_JITTER_SECS),
                    backfill: self.backfill,
                }),
            }
        } else {
            let handle = match ChannelRef::parse(address) {
                Ok(r) => r.handle(),
                Err(e) => {
                    errors.push(
                        "address",
                        format!(
                            "{e} (expected @username, a t.me invite link or a feed's http(s) URL)"
                        ),
                    );
                    String::new()
                }
            };
            SourceSpec {
                kind: SourceKind::Telegram,
                handle,
                title,
                enabled: self.enabled,
                include,
                exclude,
                feed: None,
            }
        };
        check_title(spec.title.as_deref(), &mut errors);
        check_rules(&spec.include, &spec.exclude, &mut errors);
        errors.into_result().map(|()| spec)
    }
}

/// What an admin changes of a source: its title, whether it is read, and its rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceEdit {
    pub title: Option<String>,
    pub enabled: bool,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl SourceEdit {
    /// The edit with blank rule entries dropped and the title trimmed (blank: none), or
    /// why it cannot be saved (`title`, `include`, `exclude`).
    pub fn check(&self) -> Result<SourceEdit, SourceErrors> {
        let edit = SourceEdit {
            title: self
                .title
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
            enabled: self.enabled,
            include: clean_terms(&self.include),
            exclude: clean_terms(&self.exclude),
        };
        let mut errors = SourceErrors::default();
        check_title(edit.title.as_deref(), &mut errors);
        check_rules(&edit.include, &edit.exclude, &mut errors);
        errors.into_result().map(|()| edit)
    }
}

/// The keywords of a text area: one per line, trimmed, blank lines skipped.
pub fn terms(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn clean_terms(raw: &[String]) -> Vec<String> {
    raw.iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// One wrong form field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The form field: `address`, `name`, `title`, `include`, `exclude`, `interval_secs`.
    pub field: &'static str,
    /// What is wrong, for the admin.
    pub message: String,
}

/// Everything wrong with a source as typed, by field.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.summary())]
pub struct SourceErrors(pub Vec<FieldError>);

impl SourceErrors {
    fn push(&mut self, field: &'static str, message: impl Into<String>) {
        self.0.push(FieldError {
            field,
            message: message.into(),
        });
    }

    fn into_result(self) -> Result<(), Self> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }

    /// The message about `field`, if it is wrong.
    pub fn field(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }

    /// `address: …; include: …` on one line.
    pub fn summary(&self) -> String {
        self.0
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn is_feed_url(address: &str) -> bool {
    let lower = address.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        && ChannelRef::parse(address).is_err()
        && !matches!(
            url_host(address).as_deref(),
            Some("t.me" | "telegram.me" | "telegram.dog" | "www.t.me" | "www.telegram.me")
        )
}

fn check_feed_url(raw: &str) -> Result<(), String> {
    if raw.len() > MAX_URL_BYTES {
        return Err(format!("a URL of at most {MAX_URL_BYTES} bytes"));
    }
    match url::Url::parse(raw) {
        Ok(u) if (u.scheme() == "http" || u.scheme() == "https") && u.host_str().is_some() => {
            Ok(())
        }
        _ => Err("not an http(s) URL".to_owned()),
    }
}

fn check_feed_name(name: &str) -> Result<(), String> {
    let name = name.trim();
    if name.is_empty() {
        return Err("a feed needs a name".to_owned());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("at most {MAX_NAME_CHARS} characters"));
    }
    if name.starts_with('@') || ChannelRef::parse(name).is_ok_and(|r| r.handle() == name) {
        return Err(format!(
            "{name:?} names a Telegram channel; choose another name"
        ));
    }
    if name == DIRECT_SOURCE {
        return Err(format!("{DIRECT_SOURCE:?} is reserved for paid placements"));
    }
    Ok(())
}

fn check_title(title: Option<&str>, errors: &mut SourceErrors) {
    if title.is_some_and(|t| t.chars().count() > MAX_NAME_CHARS) {
        errors.push("title", format!("at most {MAX_NAME_CHARS} characters"));
    }
}

fn check_rules(include: &[String], exclude: &[String], errors: &mut SourceErrors) {
    if let Err(e) = ChannelRules::parse(include, exclude) {
        let field = match &e {
            RuleError::InList { list, .. } => list,
            _ => "include",
        };
        errors.push(field, e.to_string());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn input(address: &str) -> SourceInput {
        SourceInput {
            address: address.to_owned(),
            enabled: true,
            ..SourceInput::default()
        }
    }

    #[test]
    fn telegram_addresses_are_stored_as_the_handle_posts_carry() {
        for (typed, handle) in [
            ("@RustJobs", "@rustjobs"),
            ("https://t.me/rustjobs", "@rustjobs"),
            ("https://t.me/+AbCdEf123", "https://t.me/+AbCdEf123"),
            ("https://t.me/joinchat/AbCdEf123", "https://t.me/+AbCdEf123"),
        ] {
            let spec = input(typed)
                .parse()
                .unwrap_or_else(|e| panic!("{typed}: {e}"));
            assert_eq!(spec.kind, SourceKind::Telegram, "{typed}");
            assert_eq!(spec.handle, handle, "{typed}");
            assert_eq!(spec.feed, None);
            assert_eq!(spec.check(), Ok(()));
        }
    }

    #[test]
    fn a_feed_url_is_a_feed_named_after_its_host_unless_named() {
        let spec = input("https://larajobs.com/feed?token=SECRET")
            .parse()
            .unwrap();
        assert_eq!(spec.kind, SourceKind::Feed);
        assert_eq!(spec.handle, "feed:larajobs.com");
        let feed = spec.feed.clone().unwrap();
        assert_eq!(feed.interval_secs, DEFAULT_FEED_INTERVAL_SECS);
        assert!(!format!("{spec:?}").contains("SECRET"), "{spec:?}");
        let named = SourceInput {
            name: "feed:lara".into(),
            interval_secs: Some(120),
            ..input("https://larajobs.com/feed")
        }
        .parse()
        .unwrap();
        assert_eq!(named.handle, "feed:lara");
        assert_eq!(named.feed.unwrap().interval_secs, 120);
    }

    #[test]
    fn every_wrong_field_is_named_with_its_reason() {
        let errors = SourceInput {
            include: vec!["rust".into(), "#bad tag".into()],
            exclude: vec!["#".into()],
            title: "x".repeat(MAX_NAME_CHARS + 1),
            ..input("https://t.me/c/123/4")
        }
        .parse()
        .unwrap_err();
        assert!(
            errors.field("address").unwrap().contains("invite link"),
            "{errors}"
        );
        assert!(errors.field("title").is_some(), "{errors}");
        assert!(errors.field("include").unwrap().contains("#2"), "{errors}");
        let errors = SourceInput {
            interval_secs: Some(5),
            ..input("ftp://example.com/feed")
        }
        .parse()
        .unwrap_err();
        assert!(errors.field("address").is_some(), "{errors}");
        let errors = SourceInput {
            name: "@rustjobs".into(),
            interval_secs: Some(5),
            ..input("https://example.com/feed")
        }
        .parse()
        .unwrap_err();
        assert!(errors.field("name").is_some(), "{errors}");
        assert!(errors.field("interval_secs").is_some(), "{errors}");
        assert!(!errors.to_string().contains('\n'));
    }

    #[test]
    fn an_edit_drops_blank_terms_and_refuses_bad_ones() {
        let edit = SourceEdit {
            title: Some("  ".into()),
            enabled: false,
            include: terms("rust\n\n  go  \n"),
            exclude: vec![],
        }
        .check()
        .unwrap();
        assert_eq!(edit.title, None);
        assert_eq!(edit.include, ["rust", "go"]);
        let bad = SourceEdit {
            exclude: vec!["#no way".into()],
            ..SourceEdit::default()
        }
        .check()
        .unwrap_err();
        assert!(bad.field("exclude").is_some(), "{bad}");
    }
}
