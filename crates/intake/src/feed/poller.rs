//! One HTTP poll of one feed, and what it does to the feed's state.

use std::time::Duration;

use chrono::{DateTime, Utc};
use feed_rs::parser::{ParseErrorKind, ParseFeedError};
use jobwire_core::IncomingPost;
use rand::Rng;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest012 as reqwest;
use sha2::{Digest, Sha256};

use super::facts::FeedJobFacts;
use super::raw::{RawItem, raw_items};
use super::state::FeedState;
use super::text::html_to_text;
use super::{FeedConfig, FeedError, FeedItem, upwork};

/// The most items read from one feed document (the rest are ignored).
pub const MAX_ITEMS_PER_POLL: usize = 1_000;

const USER_AGENT: &str = concat!("jobwire/", env!("CARGO_PKG_VERSION"), " (feed poller)");
const ACCEPT: &str = "application/rss+xml, application/atom+xml, application/feed+json;q=0.9, \
                      application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5";

/// What one fetch brought.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// `304 Not Modified`: nothing changed since the validators were issued.
    NotModified,
    /// A parsed feed.
    Feed {
        /// Every item of the document (up to [`MAX_ITEMS_PER_POLL`]), oldest first, seen or
        /// not.
        items: Vec<FeedItem>,
        /// The answer's `ETag`.
        etag: Option<String>,
        /// The answer's `Last-Modified`.
        last_modified: Option<String>,
    },
}

/// Polls one feed over HTTP. Holds its own client, configured with the feed's timeout and
/// redirect limit. Its `Debug` names the feed and its host, never the URL.
#[derive(Clone)]
pub struct FeedPoller {
    config: FeedConfig,
    url: reqwest::Url,
    client: reqwest::Client,
}

impl FeedPoller {
    /// A poller for `config`. Fails if the URL is not `http(s)` or the client cannot be
    /// built (the error names the feed, not its URL).
    pub fn new(config: FeedConfig) -> Result<Self, FeedError> {
        let url = reqwest::Url::parse(&config.url).map_err(|e| {
            FeedError::Config(format!(
                "feed {:?}: the URL does not parse: {e}",
                config.name
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FeedError::Config(format!(
                "feed {:?}: only http and https feeds are supported",
                config.name
            )));
        }
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::limited(config.max_redirects))
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| FeedError::Config(config.scrub(&error_chain(&e.without_url()))))?;
        Ok(Self {
            config,
            url,
            client,
        })
    }

    /// The feed's configuration.
    pub fn config(&self) -> &FeedConfig {
        &self.config
    }

    /// Fetches and parses the feed, sending the validators of the previous answer. `now` is
    /// the `posted_at` of items without a date (and the latest one allowed).
    ///
    /// Errors: an error status (with `Retry-After`), network errors, the timeout, too many
    /// redirects, a body over `max_bytes` (read as a stream and cut there, never buffered
    /// whole), an HTML page, and a document feed-rs cannot parse.
    pub async fn fetch(
        &self,
        etag: Option<&str>,
        last_modified: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Fetched, FeedError> {
        let mut request = self
            .client
            .get(self.url.clone())
            .header(header::ACCEPT, ACCEPT);
        if let Some(value) = etag.and_then(|v| HeaderValue::from_str(v).ok()) {
            request = request.header(header::IF_NONE_MATCH, value);
        }
        if let Some(value) = last_modified.and_then(|v| HeaderValue::from_str(v).ok()) {
            request = request.header(header::IF_MODIFIED_SINCE, value);
        }
        let mut response = request.send().await.map_err(|e| self.map_error(e))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        if !status.is_success() {
            return Err(FeedError::Status {
                status: status.as_u16(),
                retry_after: retry_after(response.headers(), now),
            });
        }
        let headers = response.headers();
        let new_etag = header_string(headers, header::ETAG);
        let new_last_modified = header_string(headers, header::LAST_MODIFIED);
        let content_type = header_string(headers, header::CONTENT_TYPE).unwrap_or_default();

        let limit = self.config.max_bytes;
        if response.content_length().is_some_and(|len| len > limit) {
            return Err(FeedError::TooLarge(limit));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.map_error(e))? {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(FeedError::TooLarge(limit));
            }
            body.extend_from_slice(&chunk);
        }
        let items = parse_feed(&body, &content_type, &self.config, now)?;
        Ok(Fetched::Feed {
            items,
            etag: new_etag,
            last_modified: new_last_modified,
        })
    }

    /// One complete poll at `now`: fetches with `state`'s validators, records the outcome
    /// in `state` (seen keys, validators, schedule, failure streak or stop) and returns the
    /// new items, oldest first. On a feed's first successful poll the existing items are
    /// marked as seen and none is returned, unless `backfill` is configured.
    pub async fn poll<R: Rng + ?Sized>(
        &self,
        state: &mut FeedState,
        now: DateTime<Utc>,
        rng: &mut R,
    ) -> Result<Vec<FeedItem>, FeedError> {
        let fetched = self
            .fetch(state.etag.as_deref(), state.last_modified.as_deref(), now)
            .await;
        match fetched {
            Ok(fetched) => Ok(apply_fetched(state, &self.config, fetched, now, rng)),
            Err(error) => {
                state.record_failure(now, &self.config, &error, rng);
                Err(error)
            }
        }
    }

    /// The [`FeedError`] of a reqwest error. reqwest puts the request URL in its errors'
    /// `Display` and `Debug`: it is removed first, and the message scrubbed of the URL's
    /// secret parts in case a cause quotes them.
    fn map_error(&self, error: reqwest::Error) -> FeedError {
        let error = error.without_url();
        let message = || self.config.scrub(&error_chain(&error));
        if error.is_timeout() {
            FeedError::Timeout(self.config.timeout)
        } else if error.is_redirect() {
            FeedError::TooManyRedirects(self.config.max_redirects)
        } else if error.is_builder() {
            FeedError::Config(message())
        } else {
            FeedError::Network(message())
        }
    }
}

impl std::fmt::Debug for FeedPoller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedPoller")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Records a successful fetch in `state` and returns the items not seen before (none on
/// a first run without backfill).
pub(crate) fn apply_fetched<R: Rng + ?Sized>(
    state: &mut FeedState,
    config: &FeedConfig,
    fetched: Fetched,
    now: DateTime<Utc>,
    rng: &mut R,
) -> Vec<FeedItem> {
    let mut new = Vec::new();
    if let Fetched::Feed {
        items,
        etag,
        last_modified,
    } = fetched
    {
        let total = items.len();
        new = items
            .into_iter()
            .filter(|item| state.seen.insert(&item.post.external_id))
            .collect();
        if !state.first_run_done {
            state.first_run_done = true;
            if !config.backfill {
                tracing::info!(
                    feed = %config.name,
                    marked_seen = new.len(),
                    "first poll of the feed: existing items marked as seen, not delivered"
                );
                new.clear();
            }
        }
        state.etag = etag;
        state.last_modified = last_modified;
        state.delivered_total += new.len() as u64;
        tracing::debug!(feed = %config.name, total, new = new.len(), "feed polled");
    } else {
        tracing::debug!(feed = %config.name, "feed not modified");
    }
    state.record_success(now, config, rng);
    new
}

/// Parses a feed body into items (oldest first), rejecting HTML pages.
pub(crate) fn parse_feed(
    body: &[u8],
    content_type: &str,
    config: &FeedConfig,
    now: DateTime<Utc>,
) -> Result<Vec<FeedItem>, FeedError> {
    let root = first_element(body);
    let is_feed_root = matches!(root.as_deref(), Some("rss" | "feed" | "rdf:rdf"));
    let html_type = content_type
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("text/html");
    if root.as_deref() == Some("html") || (html_type && !is_feed_root && root.is_some()) {
        return Err(FeedError::NotAFeed("HTML page".to_owned()));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(FeedError::NotAFeed("empty body".to_owned()));
    }
    // Relative links are resolved against the feed URL without its query, user info and
    // fragment: an empty or `#…` link must not come out as the URL with its token.
    let base = public_base(&config.url);
    let parser = feed_rs::parser::Builder::new()
        .base_uri(base.as_deref())
        .id_generator(|_, _, _| String::new())
        .build();
    let feed = parser.parse(body).map_err(|e| match e {
        ParseFeedError::ParseError(ParseErrorKind::NoFeedRoot) => {
            FeedError::NotAFeed("no RSS or Atom root element".to_owned())
        }
        other => FeedError::BrokenXml(config.scrub(&other.to_string())),
    })?;
    let raw = raw_items(body, MAX_ITEMS_PER_POLL);
    let entries: Vec<_> = feed.entries.into_iter().take(MAX_ITEMS_PER_POLL).collect();
    let aligned = raw.len() == entries.len();
    let mut items: Vec<FeedItem> = entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let raw_item = if aligned {
                raw.get(index)
            } else {
                find_raw(&raw, &entry)
            };
            build_item(entry, raw_item, config, now)
        })
        .collect();
    // Feeds list the newest first; deliver the oldest first, by date where known.
    items.reverse();
    items.sort_by_key(|item| item.post.posted_at);
    Ok(items)
}

fn find_raw<'a>(raw: &'a [RawItem], entry: &feed_rs::model::Entry) -> Option<&'a RawItem> {
    let link = entry_link(entry);
    raw.iter().find(|r| {
        (!entry.id.is_empty() && r.guid.as_deref() == Some(entry.id.trim()))
            || (link.is_some() && r.link.as_deref() == link.as_deref())
    })
}

fn entry_link(entry: &feed_rs::model::Entry) -> Option<String> {
    entry
        .links
        .iter()
        .find(|l| l.rel.as_deref().is_none_or(|rel| rel == "alternate"))
        .map(|l| l.href.trim().to_owned())
        .filter(|href| !href.is_empty())
}

fn build_item(
    entry: feed_rs::model::Entry,
    raw: Option<&RawItem>,
    config: &FeedConfig,
    now: DateTime<Utc>,
) -> FeedItem {
    let link = entry_link(&entry);
    let mut title = entry
        .title
        .as_ref()
        .map(|t| text_of(&t.content, t.content_type.as_ref()))
        .unwrap_or_default();
    let (body_raw, body_type) = match (&entry.content, &entry.summary) {
        (Some(content), _)
            if content
                .body
                .as_deref()
                .is_some_and(|b| !b.trim().is_empty()) =>
        {
            (
                content.body.clone().unwrap_or_default(),
                content.content_type.to_string(),
            )
        }
        (_, Some(summary)) => (summary.content.clone(), summary.content_type.to_string()),
        _ => (String::new(), String::new()),
    };
    let body_text = text_of(&body_raw, &body_type);

    let key = if !entry.id.trim().is_empty() {
        entry.id.trim().to_owned()
    } else if let Some(link) = &link {
        link.clone()
    } else {
        let mut hasher = Sha256::new();
        hasher.update(title.as_bytes());
        hasher.update(b"\n");
        hasher.update(body_raw.as_bytes());
        format!("sha256:{}", hex::encode(hasher.finalize()))
    };

    let mut facts = upwork::extract(&body_raw);
    if facts.is_some() {
        title = upwork::clean_title(&title).to_owned();
    }
    if let Some(extra) = raw.and_then(|r| FeedJobFacts::from_extensions(&r.extensions)) {
        match &mut facts {
            Some(facts) => facts.merge(extra),
            None => facts = Some(extra),
        }
    }

    let mut text = title;
    if !body_text.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&body_text);
    }
    if let Some(line) = facts.as_ref().and_then(FeedJobFacts::summary_line) {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&line);
    }

    let author = entry
        .authors
        .iter()
        .filter_map(|p| p.name.as_deref())
        .map(|name| name.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|name| !name.is_empty());
    let posted_at = entry.published.or(entry.updated).unwrap_or(now).min(now);
    let mut post = IncomingPost {
        channel: config.name.clone(),
        external_id: key,
        text,
        author,
        url: link,
        posted_at,
    };
    post.bound_text();
    FeedItem { post, facts }
}

/// `url` without user info, query and fragment (`None` if it does not parse).
fn public_base(url: &str) -> Option<String> {
    let mut url = reqwest::Url::parse(url).ok()?;
    url.set_query(None);
    url.set_fragment(None);
    url.set_username("").ok()?;
    url.set_password(None).ok()?;
    Some(url.into())
}

/// Plain text of a feed text construct: HTML is converted, plain text only trimmed line by
/// line.
fn text_of(content: &str, content_type: &str) -> String {
    if content_type.contains("html") {
        html_to_text(content)
    } else {
        content
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The lowercased name of the document's first element, skipping a BOM, whitespace, the
/// XML declaration, processing instructions, comments and the doctype. `None` when the
/// document does not start with markup (JSON, binary, empty).
fn first_element(body: &[u8]) -> Option<String> {
    let mut rest = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    loop {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        rest = &rest[start..];
        if rest.first() != Some(&b'<') {
            return None;
        }
        let skip_to = |end: &[u8]| {
            rest.windows(end.len())
                .position(|w| w.eq_ignore_ascii_case(end))
                .map(|p| p + end.len())
        };
        if rest.starts_with(b"<?") {
            rest = &rest[skip_to(b"?>")?..];
        } else if rest.starts_with(b"<!--") {
            rest = &rest[skip_to(b"-->")?..];
        } else if rest.starts_with(b"<!") {
            rest = &rest[skip_to(b">")?..];
        } else {
            let name: Vec<u8> = rest[1..]
                .iter()
                .take(64)
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_'))
                .map(u8::to_ascii_lowercase)
                .collect();
            return Some(String::from_utf8_lossy(&name).into_owned());
        }
    }
}

fn header_string(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// `Retry-After` as seconds or an HTTP date, relative to `now`.
fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let value = header_string(headers, header::RETRY_AFTER)?;
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(&value).ok()?;
    (at.with_timezone(&Utc) - now).to_std().ok()
}

/// An error and its sources, `: `-separated (reqwest's own message rarely says why).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-10T12:00:00Z")
            .expect("date")
            .with_timezone(&Utc)
    }

    #[test]
    fn first_element_skips_prolog_and_finds_the_root() {
        assert_eq!(
            first_element(b"\xEF\xBB\xBF <?xml version=\"1.0\"?>\n<!-- c --><!DOCTYPE x><rss>")
                .as_deref(),
            Some("rss")
        );
        assert_eq!(
            first_element(b"<!DOCTYPE html>\n<HTML lang=en>").as_deref(),
            Some("html")
        );
        assert_eq!(first_element(b"<rdf:RDF>").as_deref(), Some("rdf:rdf"));
        assert_eq!(first_element(b"{\"version\":1}"), None);
        assert_eq!(first_element(b""), None);
    }

    #[test]
    fn html_pages_are_not_feeds() {
        let config = FeedConfig::new("feed:t", "http://x/");
        let page =
            b"<!DOCTYPE html><html><head><title>403</title></head><body>Denied</body></html>";
        assert_eq!(
            parse_feed(page, "text/html; charset=utf-8", &config, now()),
            Err(FeedError::NotAFeed("HTML page".into()))
        );
        assert_eq!(
            parse_feed(page, "application/xml", &config, now()),
            Err(FeedError::NotAFeed("HTML page".into()))
        );
        // A real feed served as text/html by a sloppy server is still a feed.
        let rss = b"<rss version=\"2.0\"><channel><title>t</title><item><title>a</title><guid>1</guid></item></channel></rss>";
        let items = parse_feed(rss, "text/html", &config, now()).expect("feed");
        assert_eq!(items.len(), 1);
    }

    #[test]
    fn keys_fall_back_from_guid_to_link_to_hash() {
        let config = FeedConfig::new("feed:t", "http://x/");
        let rss = br#"<rss version="2.0"><channel><title>t</title>
            <item><title>with guid</title><link>https://x/a</link><guid>g-1</guid></item>
            <item><title>link only</title><link>https://x/b</link></item>
            <item><title>bare</title><description>&lt;p&gt;Body&lt;/p&gt;</description></item>
        </channel></rss>"#;
        let items = parse_feed(rss, "application/rss+xml", &config, now()).expect("feed");
        let keys: Vec<&str> = items.iter().map(|i| i.post.external_id.as_str()).collect();
        assert_eq!(keys.len(), 3);
        assert!(keys.contains(&"g-1"));
        assert!(keys.contains(&"https://x/b"));
        let hashed = keys
            .iter()
            .find(|k| k.starts_with("sha256:"))
            .expect("hashed key");
        assert_eq!(hashed.len(), "sha256:".len() + 64);
        let bare = items
            .iter()
            .find(|i| i.post.external_id.starts_with("sha256:"))
            .expect("bare item");
        assert_eq!(bare.post.text, "bare\n\nBody");
        assert_eq!(bare.post.posted_at, now());
        // Same content, same hash.
        let again = parse_feed(rss, "application/rss+xml", &config, now()).expect("feed");
        assert!(again.iter().any(|i| i.post.external_id == **hashed));
    }

    #[test]
    fn atom_entries_are_items_too() {
        let config = FeedConfig::new("feed:atom", "http://x/");
        let atom = br#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Jobs</title><id>urn:f</id><updated>2026-03-01T00:00:00Z</updated>
  <entry><title>Rust developer</title><id>urn:job:1</id><updated>2026-03-01T00:00:00Z</updated>
    <link rel="alternate" href="https://jobs.example/1"/><author><name>ACME</name></author>
    <content type="html">&lt;p&gt;Remote, &amp;euro;80k&lt;/p&gt;</content></entry>
</feed>"#;
        let items = parse_feed(atom, "application/atom+xml", &config, now()).expect("feed");
        assert_eq!(items.len(), 1);
        let post = &items[0].post;
        assert_eq!(post.channel, "feed:atom");
        assert_eq!(post.external_id, "urn:job:1");
        assert_eq!(post.url.as_deref(), Some("https://jobs.example/1"));
        assert_eq!(post.author.as_deref(), Some("ACME"));
        assert_eq!(post.text, "Rust developer\n\nRemote, €80k");
        assert_eq!(post.posted_at.to_rfc3339(), "2026-03-01T00:00:00+00:00");
    }

    #[test]
    fn a_hostile_five_megabyte_description_is_read_in_linear_time() {
        // Every text helper an item goes through (feed-rs, the raw read, Upwork's labeled
        // lines, HTML to text) on a 5 MB description of unclosed tags and unfinished labels.
        let mut description = "<b>Budget</b> ".repeat(100_000);
        description.push_str(&"<a".repeat(1_500_000));
        description.push_str("<b>Country</b>: Narnia");
        let rss = format!(
            "<rss version=\"2.0\" xmlns:job=\"https://x\"><channel><title>t</title><item>\
             <title>hostile</title><guid>h</guid><job:tags>a,b</job:tags>\
             <description><![CDATA[{description}]]></description></item></channel></rss>"
        );
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let config = FeedConfig::new("feed:t", "http://x/");
            let _ = tx.send(parse_feed(
                rss.as_bytes(),
                "application/rss+xml",
                &config,
                now(),
            ));
        });
        let items = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("parsed within 20 s (unoptimized)")
            .expect("a feed");
        assert_eq!(items.len(), 1);
        let facts = items[0].facts.as_ref().expect("facts");
        assert_eq!(facts.country.as_deref(), Some("Narnia"));
        assert_eq!(facts.skills, ["a", "b"]);
        assert!(items[0].post.text.starts_with("hostile\n\nBudget Budget"));
    }

    #[test]
    fn retry_after_accepts_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("120"));
        assert_eq!(retry_after(&headers, now()), Some(Duration::from_secs(120)));
        headers.insert(
            header::RETRY_AFTER,
            HeaderValue::from_static("Tue, 10 Mar 2026 13:00:00 GMT"),
        );
        assert_eq!(
            retry_after(&headers, now()),
            Some(Duration::from_secs(3600))
        );
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers, now()), None);
    }
}
