//! Job cards as Telegram messages (`parse_mode = HTML`), split to fit Telegram's text limit.
//!
//! Everything on a card except the few tags written here comes from a channel and is
//! untrusted: it is HTML-escaped (`&`, `<`, `>`, `"`), single-lined where it goes into a
//! header, bounded in length, and URLs are linked only when they are `http`, `https` or `tg`
//! links.
//!
//! ## Layout
//!
//! ```text
//! <b>Title</b>                                   (only when the card has a title)
//! 💼 <b>Web · Design</b> · <a href="…">@channel</a> · 2026-11-03 14:05 UTC
//! 💰 15 000–20 000 ₽ · fixed | ⏰ до пятницы | 🌍 remote | 🛠 Figma, Photoshop
//! ✉️ @client                                       (the last two lines: extracted facts, if any)
//!
//! post text …
//!
//! 🔗 <a href="https://t.me/channel/42">Open original</a>
//! ```
//!
//! (With a title, the category names on the second line are not bold.)
//!
//! The title is the card's own [`JobCard::title`], else the extracted one. The facts line
//! shows only what was extracted (budget, deadline, work mode, skills), the contact line only
//! a contact; both are part of the header, so they open the first part and count toward its
//! limit. Extracted values are as untrusted as the post: escaped and bounded like the rest.
//!
//! A card longer than [`MAX_MESSAGE_CHARS`] is split into parts. The header opens the first
//! part, the link closes the last one; every part except the last ends with `…` and every
//! part ends with an italic counter line `(k/n)`. The text is cut at a paragraph break, else
//! a line break, else after a sentence, else between words, and only as a last resort inside
//! a word — never inside an HTML entity or tag (the text is cut before it is escaped) and,
//! where the text allows, never inside a grapheme cluster (an emoji with modifiers, a flag,
//! a letter with combining marks). Whitespace at a cut is dropped.

use chrono::{DateTime, Utc};

use crate::extract::{Extraction, MAX_SKILLS};

/// Telegram's limit for a message text, in characters after entity parsing (Unicode scalar
/// values; an HTML escape such as `&amp;` counts as the one character it stands for).
pub const MAX_MESSAGE_CHARS: usize = 4096;

/// Longest title shown, in characters; a longer one is cut and ends with `…`.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest channel name shown, in characters.
pub const MAX_CHANNEL_CHARS: usize = 100;
/// Longest category line shown (names joined by ` · `), in characters.
pub const MAX_CATEGORIES_CHARS: usize = 300;
/// Longest URL that is linked, in bytes; longer ones are dropped.
pub const MAX_URL_BYTES: usize = 2048;
/// Longest facts line shown (budget, deadline, work mode, skills), in characters.
pub const MAX_FACTS_CHARS: usize = 400;
/// Longest contact shown, in characters.
pub const MAX_CONTACT_CHARS: usize = 100;
/// Longest single fact (a deadline, a skill, a budget) shown, in characters.
const MAX_FACT_CHARS: usize = 80;

/// Everything a job card shows.
#[derive(Debug, Clone, PartialEq)]
pub struct JobCard {
    /// A short title, when one is known (e.g. extracted by the classifier).
    pub title: Option<String>,
    /// The post text as posted (plain text, not HTML).
    pub text: String,
    /// The source channel: `@name` or its title.
    pub channel: String,
    /// A link to the channel, if any.
    pub channel_url: Option<String>,
    /// A link to the original post, if any.
    pub url: Option<String>,
    /// Display names of the job's categories.
    pub categories: Vec<String>,
    /// When the post was published.
    pub posted_at: DateTime<Utc>,
    /// What was extracted from the post (title, budget, deadline, work mode, skills,
    /// contact), shown under the header; `None` shows nothing extra.
    pub extraction: Option<Extraction>,
    /// A résumé (someone offering their work) rather than a vacancy: the header starts
    /// with `👤 Résumé` instead of `💼`.
    pub resume: bool,
    /// A direct placement (an employer's own, paid): the header starts with
    /// `📌 Direct placement` and names no channel.
    pub direct: bool,
}

impl JobCard {
    /// This card with `extraction` shown on it.
    pub fn with_extraction(mut self, extraction: Option<Extraction>) -> JobCard {
        self.extraction = extraction;
        self
    }
}

/// Renders a card as one or more Telegram HTML messages, in order. Each is a complete,
/// balanced HTML text of at most [`MAX_MESSAGE_CHARS`] visible characters (see
/// [`visible_len`]); never empty.
pub fn render(card: &JobCard) -> Vec<String> {
    let header = header_html(card);
    let footer = card
        .url
        .as_deref()
        .and_then(safe_url)
        .map(|url| format!("🔗 <a href=\"{}\">Open original</a>", escape(url)));
    let body = clean_body(&card.text);
    let layout = Layout {
        header_len: visible_len(&header),
        footer_len: footer.as_deref().map_or(0, visible_len),
        has_footer: footer.is_some(),
    };

    let Some(chunks) = layout.plan(&body) else {
        // Everything fits in one message.
        let mut out = header;
        if !body.is_empty() {
            out.push_str("\n\n");
            out.push_str(&escape(&collect(&body)));
        }
        if let Some(footer) = &footer {
            out.push_str("\n\n");
            out.push_str(footer);
        }
        return vec![out];
    };

    let n = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(i, &(from, to))| {
            let k = i + 1;
            let mut out = String::new();
            if k == 1 {
                out.push_str(&header);
                out.push_str("\n\n");
            }
            out.push_str(&escape(&collect(&body[from..to])));
            if k < n {
                out.push('…');
            }
            out.push_str(&format!("\n\n<i>({k}/{n})</i>"));
            if k == n
                && let Some(footer) = &footer
            {
                out.push('\n');
                out.push_str(footer);
            }
            out
        })
        .collect()
}

/// Counts the characters Telegram sees in HTML produced by [`render`]: tags count 0, an
/// entity (`&amp;`, `&#x27;`) counts 1, every other Unicode scalar value counts 1.
///
/// A minimal counter for this module's own output, not a general HTML parser: a `<` always
/// starts a tag (rendered text never contains a raw one), and a `&` not followed by a
/// well-formed entity counts as itself.
pub fn visible_len(html: &str) -> usize {
    let mut count = 0;
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                rest = match rest.find('>') {
                    Some(end) => &rest[end + 1..],
                    None => "",
                };
            }
            '&' => {
                count += 1;
                rest = &rest[entity_len(rest)..];
            }
            _ => {
                count += 1;
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    count
}

/// Length in bytes of the entity at the start of `s` (which starts with `&`), or 1 when it is
/// not a well-formed entity.
fn entity_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate().skip(1).take(12) {
        if b == b';' {
            return if i > 1 { i + 1 } else { 1 };
        }
        if !(b.is_ascii_alphanumeric() || (i == 1 && b == b'#')) {
            return 1;
        }
    }
    1
}

/// Escapes text for Telegram HTML: `&`, `<`, `>` and `"` become the entities Telegram knows.
pub fn escape(text: &str) -> String {
    html_escape::encode_double_quoted_attribute(text).into_owned()
}

/// `Some(url)` (trimmed) when the URL is safe to link: `http://`, `https://` or `tg://`, no
/// whitespace or control characters, at most [`MAX_URL_BYTES`].
pub fn safe_url(raw: &str) -> Option<&str> {
    let url = raw.trim();
    if url.is_empty()
        || url.len() > MAX_URL_BYTES
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return None;
    }
    let (scheme, rest) = url.split_once(':')?;
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https" | "tg") {
        return None;
    }
    let after = rest.strip_prefix("//")?;
    let host_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    if host_end == 0 && scheme != "tg" {
        return None;
    }
    if after.is_empty() {
        return None;
    }
    Some(url)
}

/// [`safe_url`], normalized as a URL parser writes it (scheme and host lower-cased): the form
/// jobwire stores and renders a post's link in. `None` for any link [`safe_url`] refuses.
pub fn safe_link(raw: &str) -> Option<String> {
    let url = url::Url::parse(safe_url(raw)?).ok()?;
    (url.scheme() == "tg" || url.host_str().is_some_and(|h| !h.is_empty())).then(|| url.to_string())
}

/// The first line(s): bold title, the category/channel/time line, and the extracted facts
/// and contact.
fn header_html(card: &JobCard) -> String {
    let extraction = card.extraction.as_ref();
    let title = card
        .title
        .as_deref()
        .map(|t| one_line(t, MAX_TITLE_CHARS))
        .filter(|t| !t.is_empty())
        .or_else(|| {
            extraction
                .and_then(|e| e.title.as_deref())
                .map(|t| one_line(t, MAX_TITLE_CHARS))
                .filter(|t| !t.is_empty())
        });
    let categories = one_line(
        &card
            .categories
            .iter()
            .map(|c| one_line(c, MAX_CATEGORIES_CHARS))
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>()
            .join(" · "),
        MAX_CATEGORIES_CHARS,
    );
    let channel = one_line(&card.channel, MAX_CHANNEL_CHARS);

    let mut meta: Vec<String> = Vec::new();
    if !categories.is_empty() {
        if title.is_some() {
            meta.push(escape(&categories));
        } else {
            meta.push(format!("<b>{}</b>", escape(&categories)));
        }
    }
    if !channel.is_empty() {
        match card.channel_url.as_deref().and_then(safe_url) {
            Some(url) => meta.push(format!(
                "<a href=\"{}\">{}</a>",
                escape(url),
                escape(&channel)
            )),
            None => meta.push(escape(&channel)),
        }
    }
    meta.push(card.posted_at.format("%Y-%m-%d %H:%M UTC").to_string());

    let mut out = String::new();
    if let Some(title) = title {
        out.push_str(&format!("<b>{}</b>\n", escape(&title)));
    }
    if card.direct {
        out.push_str("📌 <b>Direct placement</b> · ");
    } else if card.resume {
        out.push_str("👤 <b>Résumé</b> · ");
    } else {
        out.push_str("💼 ");
    }
    out.push_str(&meta.join(" · "));
    if let Some(extraction) = extraction {
        let facts = facts_line(extraction);
        if !facts.is_empty() {
            out.push('\n');
            out.push_str(&escape(&facts));
        }
        let contact = extraction
            .contact
            .as_deref()
            .map(|c| one_line(c, MAX_CONTACT_CHARS))
            .filter(|c| !c.is_empty());
        if let Some(contact) = contact {
            out.push_str("\n✉️ ");
            out.push_str(&escape(&contact));
        }
    }
    out
}

/// `💰 15 000–20 000 ₽ · fixed | ⏰ до пятницы | 🌍 remote | 🛠 Figma, Photoshop` (plain text,
/// not yet escaped), with only the facts that are known; empty when none is.
fn facts_line(extraction: &Extraction) -> String {
    let mut facts: Vec<String> = Vec::new();
    if let Some(budget) = &extraction.budget
        && budget.min.is_finite()
    {
        let amount = one_line(&budget.to_string(), MAX_FACT_CHARS);
        facts.push(format!("💰 {amount} · {}", budget.basis.label()));
    }
    if let Some(deadline) = extraction.deadline.as_deref() {
        let deadline = one_line(deadline, MAX_FACT_CHARS);
        if !deadline.is_empty() {
            facts.push(format!("⏰ {deadline}"));
        }
    }
    if let Some(mode) = extraction.work_mode {
        facts.push(format!("🌍 {}", mode.label()));
    }
    let skills: Vec<String> = extraction
        .skills
        .iter()
        .take(MAX_SKILLS)
        .map(|s| one_line(s, MAX_FACT_CHARS))
        .filter(|s| !s.is_empty())
        .collect();
    if !skills.is_empty() {
        facts.push(format!("🛠 {}", skills.join(", ")));
    }
    one_line(&facts.join(" | "), MAX_FACTS_CHARS)
}

/// Collapses all whitespace (and drops control characters) to single spaces, trims, and cuts
/// to `max` characters (ending with `…`) at a grapheme-safe place.
fn one_line(raw: &str, max: usize) -> String {
    let words: Vec<&str> = raw.split_whitespace().collect();
    let joined: Vec<char> = words
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if joined.len() <= max {
        return collect(&joined);
    }
    let limit = max.saturating_sub(1);
    let mut cut = limit;
    while cut > 0 && limit - cut < 32 && !break_allowed(&joined, cut) {
        cut -= 1;
    }
    if cut == 0 || !break_allowed(&joined, cut) {
        cut = limit;
    }
    let mut out = collect(&joined[..cut]);
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// The post text as characters: line endings unified to `\n`, control characters other than
/// `\n` and `\t` dropped, surrounding whitespace trimmed.
fn clean_body(text: &str) -> Vec<char> {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    let kept: String = unified
        .chars()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect();
    kept.trim().chars().collect()
}

fn collect(chars: &[char]) -> String {
    chars.iter().collect()
}

/// The fixed visible sizes around the body.
struct Layout {
    header_len: usize,
    footer_len: usize,
    has_footer: bool,
}

impl Layout {
    /// `None` when header, body and footer fit into one message; otherwise the body's chunks
    /// as char ranges, one per part.
    fn plan(&self, body: &[char]) -> Option<Vec<(usize, usize)>> {
        let single = self.header_len
            + if body.is_empty() { 0 } else { 2 + body.len() }
            + if self.has_footer {
                2 + self.footer_len
            } else {
                0
            };
        if single <= MAX_MESSAGE_CHARS {
            return None;
        }
        // The counter line's size depends on the number of parts: plan for `digits`-digit
        // counters and re-plan with more digits if more parts came out.
        let mut digits = 1;
        loop {
            let chunks = self.chunks(body, 3 + 2 * digits);
            if chunks.len().to_string().len() <= digits {
                return Some(chunks);
            }
            digits += 1;
        }
    }

    /// Greedy split with `mark_len` visible characters reserved for the `(k/n)` counter.
    fn chunks(&self, body: &[char], mark_len: usize) -> Vec<(usize, usize)> {
        let footer = if self.has_footer {
            1 + self.footer_len
        } else {
            0
        };
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < body.len() {
            let first = if out.is_empty() {
                self.header_len + 2
            } else {
                0
            };
            let room = MAX_MESSAGE_CHARS.saturating_sub(first);
            // Last part: text, "\n\n", counter, "\n" + footer.
            let last_budget = room.saturating_sub(2 + mark_len + footer);
            let remaining = body.len() - pos;
            if remaining <= last_budget {
                out.push((pos, body.len()));
                break;
            }
            // Other parts: text, "…", "\n\n", counter. Leave at least one char for later.
            let budget = room.saturating_sub(3 + mark_len).max(1);
            let limit = pos + budget.min(remaining - 1);
            let (end, next) = find_cut(body, pos, limit);
            out.push((pos, end));
            pos = next;
        }
        out
    }
}

/// Where to cut the body for a chunk starting at `start` (a non-whitespace char) that may
/// extend up to (not including) `limit` (`start < limit < body.len()`). Returns the chunk's
/// end (trailing whitespace dropped) and where the next chunk starts (leading whitespace
/// skipped).
fn find_cut(body: &[char], start: usize, limit: usize) -> (usize, usize) {
    let min_end = start + (limit - start).div_ceil(2);
    let is_ws = |i: usize| body[i].is_whitespace();
    let paragraph = |i: usize| {
        body[i] == '\n' && {
            let mut j = i + 1;
            while j < body.len() && (body[j] == ' ' || body[j] == '\t') {
                j += 1;
            }
            j < body.len() && body[j] == '\n'
        }
    };
    let line = |i: usize| body[i] == '\n';
    let sentence = |i: usize| {
        if !is_ws(i) {
            return false;
        }
        let mut j = i;
        while j > start && matches!(body[j - 1], ')' | '"' | '»' | '\'' | '”') {
            j -= 1;
        }
        j > start && matches!(body[j - 1], '.' | '!' | '?' | '…' | ';')
    };
    let preferences: [&dyn Fn(usize) -> bool; 4] = [&paragraph, &line, &sentence, &is_ws];
    let mut cut = None;
    for accept in preferences {
        if let Some(i) = (min_end..=limit).rev().find(|&i| accept(i)) {
            cut = Some(i);
            break;
        }
    }
    let cut = cut.unwrap_or_else(|| {
        // No whitespace in the second half: cut inside a word, between graphemes if possible.
        (start + 1..=limit)
            .rev()
            .take(64)
            .find(|&i| break_allowed(body, i))
            .unwrap_or(limit)
    });
    let mut end = cut;
    while end > start + 1 && body[end - 1].is_whitespace() {
        end -= 1;
    }
    let mut next = cut;
    while next < body.len() && body[next].is_whitespace() {
        next += 1;
    }
    (end, next)
}

/// Whether cutting between `chars[i - 1]` and `chars[i]` keeps grapheme clusters whole (an
/// approximation of UAX #29 good enough for emoji sequences, flags and combining marks).
fn break_allowed(chars: &[char], i: usize) -> bool {
    if i == 0 || i >= chars.len() {
        return true;
    }
    let (prev, next) = (chars[i - 1], chars[i]);
    if is_extend(next) || prev == '\u{200D}' {
        return false;
    }
    if is_regional_indicator(prev) && is_regional_indicator(next) {
        // Flags are pairs: break only after an even number of indicators.
        let run = chars[..i]
            .iter()
            .rev()
            .take_while(|&&c| is_regional_indicator(c))
            .count();
        return run % 2 == 0;
    }
    true
}

fn is_extend(c: char) -> bool {
    unicode_normalization::char::is_combining_mark(c)
        || matches!(c,
            '\u{200C}' | '\u{200D}'            // ZWNJ, ZWJ
            | '\u{FE00}'..='\u{FE0F}'          // variation selectors
            | '\u{1F3FB}'..='\u{1F3FF}'        // emoji skin tones
            | '\u{E0020}'..='\u{E007F}'        // tag characters (subdivision flags)
            | '\u{E0100}'..='\u{E01EF}')
}

fn is_regional_indicator(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::extract::{Budget, BudgetBasis, WorkMode};
    use proptest::prelude::*;

    fn card(text: &str) -> JobCard {
        JobCard {
            title: None,
            text: text.to_owned(),
            channel: "@remote_jobs".into(),
            channel_url: Some("https://t.me/remote_jobs".into()),
            url: Some("https://t.me/remote_jobs/42".into()),
            categories: vec!["Web".into(), "Design".into()],
            posted_at: DateTime::parse_from_rfc3339("2026-11-03T14:05:00Z")
                .unwrap()
                .with_timezone(&Utc),
            extraction: None,
            resume: false,
            direct: false,
        }
    }

    /// Checks that `html` is what Telegram's HTML parser accepts from us: only `b`, `i` and
    /// `a href` tags, properly nested and closed, no raw `<`/`>`, only known entities.
    /// Returns the visible text (entities decoded, tags removed).
    fn check_html(html: &str) -> String {
        let mut stack: Vec<&str> = Vec::new();
        let mut text = String::new();
        let mut rest = html;
        while let Some(c) = rest.chars().next() {
            match c {
                '<' => {
                    let end = rest
                        .find('>')
                        .unwrap_or_else(|| panic!("unclosed tag in {html:?}"));
                    let tag = &rest[1..end];
                    if let Some(name) = tag.strip_prefix('/') {
                        assert_eq!(stack.pop(), Some(name), "unbalanced </{name}> in {html:?}");
                    } else if tag == "b" || tag == "i" {
                        stack.push(tag);
                    } else if let Some(href) = tag.strip_prefix("a href=\"") {
                        let href = href.strip_suffix('"').expect("quoted href");
                        assert!(!href.contains('"') && !href.contains('<'));
                        let decoded = html_escape::decode_html_entities(href);
                        assert!(safe_url(&decoded).is_some(), "unsafe href {decoded:?}");
                        stack.push("a");
                    } else {
                        panic!("unexpected tag <{tag}> in {html:?}");
                    }
                    rest = &rest[end + 1..];
                }
                '>' => panic!("raw '>' in {html:?}"),
                '&' => {
                    let (entity, ch) = ["&amp;", "&lt;", "&gt;", "&quot;"]
                        .iter()
                        .zip(['&', '<', '>', '"'])
                        .find(|(e, _)| rest.starts_with(**e))
                        .unwrap_or_else(|| panic!("bad entity in {html:?}"));
                    text.push(ch);
                    rest = &rest[entity.len()..];
                }
                _ => {
                    text.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        assert!(stack.is_empty(), "unclosed {stack:?} in {html:?}");
        assert_eq!(
            text.chars().count(),
            visible_len(html),
            "visible_len disagrees"
        );
        text
    }

    /// Renders, checks every part, and returns the parts with their visible texts.
    fn render_checked(card: &JobCard) -> Vec<(String, String)> {
        let parts = render(card);
        assert!(!parts.is_empty());
        parts
            .into_iter()
            .map(|p| {
                let text = check_html(&p);
                assert!(
                    visible_len(&p) <= MAX_MESSAGE_CHARS,
                    "part has {} visible chars",
                    visible_len(&p)
                );
                assert!(!text.trim().is_empty());
                (p, text)
            })
            .collect()
    }

    /// The body text recovered from the parts (header, marks and footer removed), with
    /// all whitespace removed, to compare with the original's non-whitespace characters.
    fn body_without_whitespace(parts: &[(String, String)]) -> String {
        let n = parts.len();
        let mut out = String::new();
        for (i, (_, text)) in parts.iter().enumerate() {
            let mut t = text.as_str();
            if n == 1 {
                t = t.strip_suffix("\n\n🔗 Open original").unwrap_or(t);
            }
            if i == 0 {
                t = t.split_once("\n\n").map_or("", |(_, b)| b);
            }
            if n > 1 {
                let mark = format!("\n\n({}/{n})", i + 1);
                let at = t.rfind(&mark).expect("counter line");
                t = &t[..at];
                if i + 1 < n {
                    t = t.strip_suffix('…').expect("continuation mark");
                }
            }
            out.extend(t.chars().filter(|c| !c.is_whitespace()));
        }
        out
    }

    fn no_ws(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    #[test]
    fn short_card_layout() {
        let parts = render(&card("Нужен дизайнер <лендинга> & \"логотипа\"."));
        assert_eq!(
            parts,
            vec![
                "💼 <b>Web · Design</b> · <a href=\"https://t.me/remote_jobs\">@remote_jobs</a> · \
                 2026-11-03 14:05 UTC\n\nНужен дизайнер &lt;лендинга&gt; &amp; &quot;логотипа&quot;.\n\n\
                 🔗 <a href=\"https://t.me/remote_jobs/42\">Open original</a>"
                    .to_owned()
            ]
        );
        let mut titled = card("text");
        titled.title = Some("Senior <Rust>\n developer".into());
        let parts = render_checked(&titled);
        assert!(
            parts[0]
                .0
                .starts_with("<b>Senior &lt;Rust&gt; developer</b>\n💼 Web · Design · ")
        );
    }

    #[test]
    fn a_direct_placement_is_marked_and_names_no_channel() {
        let mut c = card("Нужен лендинг");
        c.direct = true;
        c.channel = String::new();
        c.channel_url = None;
        c.url = None;
        let parts = render_checked(&c);
        assert_eq!(
            parts[0].1,
            "📌 Direct placement · Web · Design · 2026-11-03 14:05 UTC\n\nНужен лендинг"
        );
    }

    #[test]
    fn empty_text_still_gives_a_valid_card() {
        let mut c = card("   \n  ");
        c.url = None;
        c.categories.clear();
        let parts = render_checked(&c);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].1, "💼 @remote_jobs · 2026-11-03 14:05 UTC");

        c.channel = String::new();
        c.text = String::new();
        let parts = render_checked(&c);
        assert_eq!(parts[0].1, "💼 2026-11-03 14:05 UTC");
    }

    #[test]
    fn dangerous_urls_are_not_linked() {
        let mut c = card("hello");
        c.url = Some("javascript:alert(1)".into());
        c.channel_url = Some("JavaScript://%0Aalert(1)".into());
        let parts = render_checked(&c);
        assert_eq!(parts.len(), 1);
        assert!(!parts[0].0.contains("<a "), "{}", parts[0].0);
        assert!(!parts[0].0.contains("javascript"));
        assert!(!parts[0].0.contains("Open original"));

        for bad in [
            "data:text/html,<script>",
            "https://",
            "https://exa mple.com",
            "ftp://example.com",
            "//example.com",
            "https://ex\u{0}ample.com",
            "",
        ] {
            assert_eq!(safe_url(bad), None, "{bad:?} accepted");
        }
        for good in [
            "https://t.me/c/1/2",
            "HTTP://example.com?a=1&b=\"2\"",
            "tg://resolve?domain=x",
        ] {
            assert_eq!(safe_url(good), Some(good));
        }
        // Quotes and ampersands in an allowed URL are escaped inside the attribute.
        c.url = Some("https://example.com/?a=1&b=\"><script>".into());
        let parts = render_checked(&c);
        assert!(
            parts[0].0.contains(
                "<a href=\"https://example.com/?a=1&amp;b=&quot;&gt;&lt;script&gt;\">Open original</a>"
            ),
            "{}",
            parts[0].0
        );
    }

    #[test]
    fn text_full_of_markup_characters() {
        // 12,000 visible characters, 30,000 bytes of HTML once escaped: three parts, since
        // the limit counts each escape as one character.
        let text = "<>&\"".repeat(3000);
        let parts = render_checked(&card(&text));
        assert_eq!(parts.len(), 3);
        assert_eq!(body_without_whitespace(&parts), text);
        // Many parts use most of the budget even though the HTML is much longer.
        assert!(parts[0].0.len() > 4 * MAX_MESSAGE_CHARS);
        assert!(parts[0].1.chars().count() > MAX_MESSAGE_CHARS - 100);
    }

    #[test]
    fn hundred_kilobytes_split_at_paragraphs() {
        let paragraph = "Ищем разработчика на Rust. Удалёнка, полный день! Оплата обсуждается.\n\
                         Требования: опыт от 3 лет; знание tokio и axum.";
        let mut text = String::new();
        while text.len() < 100 * 1024 {
            text.push_str(paragraph);
            text.push_str("\n\n");
        }
        let parts = render_checked(&card(&text));
        let n = parts.len();
        assert!(n > 10, "{n} parts");
        for (i, (html, visible)) in parts.iter().enumerate() {
            let counter = format!("({}/{n})", i + 1);
            if i + 1 < n {
                // Cut at a paragraph end: the part's text ends with the paragraph's last
                // sentence, then the continuation mark.
                assert!(
                    visible.contains(&format!("axum.…\n\n{counter}")),
                    "{visible:?}"
                );
                assert!(!html.contains("Open original"));
            } else {
                assert!(visible.ends_with(&format!("{counter}\n🔗 Open original")));
            }
            if i > 0 {
                assert!(visible.starts_with("Ищем"), "{visible:?}");
            }
        }
        assert_eq!(body_without_whitespace(&parts), no_ws(&text));
    }

    #[test]
    fn long_text_without_paragraphs_splits_at_sentences_then_words() {
        let text = "Первое предложение здесь. ".repeat(400);
        let parts = render_checked(&card(&text));
        assert!(parts.len() >= 3);
        assert!(parts[0].1.contains("здесь.…\n\n(1/"));

        let words = "word ".repeat(3000);
        let parts = render_checked(&card(&words));
        assert!(parts[0].1.contains(" word…\n\n(1/"));
        assert_eq!(body_without_whitespace(&parts), no_ws(&words));
    }

    #[test]
    fn emoji_text_is_split_between_whole_emoji() {
        // 4096 single-scalar emoji do not fit next to the header and footer.
        let text = "😀".repeat(4096);
        let parts = render_checked(&card(&text));
        assert_eq!(parts.len(), 2);
        assert_eq!(body_without_whitespace(&parts), text);

        // Multi-scalar emoji (ZWJ family, skin tone, flags) are kept whole at the cut.
        let family = "👨\u{200D}👩\u{200D}👧🏽🇺🇦";
        let text = family.repeat(2000);
        let parts = render_checked(&card(&text));
        assert!(parts.len() >= 3);
        for (i, (_, visible)) in parts.iter().enumerate() {
            let body: &str = if i == 0 {
                visible.split_once("\n\n").unwrap().1
            } else {
                visible
            };
            let body = body.split("\n\n(").next().unwrap().trim_end_matches('…');
            assert!(body.starts_with("👨"), "part {i} starts mid-cluster");
            assert!(body.ends_with("🇺🇦"), "part {i} ends mid-cluster");
        }
        assert_eq!(body_without_whitespace(&parts), text);
    }

    #[test]
    fn rtl_and_emoji_only_texts() {
        let rtl = "مطلوب مطور ويب للعمل عن بعد. \u{05e9}\u{05dc}\u{05d5}\u{05dd} ";
        let parts = render_checked(&card(&rtl.repeat(300)));
        assert!(parts.len() >= 3);
        assert_eq!(body_without_whitespace(&parts), no_ws(&rtl.repeat(300)));

        let parts = render_checked(&card("🔥🔥🔥"));
        assert_eq!(parts.len(), 1);
        assert!(parts[0].1.contains("\n\n🔥🔥🔥\n\n🔗 Open original"));
    }

    #[test]
    fn oversized_header_fields_are_bounded() {
        let mut c = card(&"x ".repeat(5000));
        c.title = Some("T".repeat(10_000));
        c.channel = "C".repeat(10_000);
        c.categories = vec!["K".repeat(10_000); 20];
        let parts = render_checked(&c);
        let header = parts[0].1.split("\n\n").next().unwrap();
        assert!(header.chars().count() < 700, "{}", header.chars().count());
        assert!(header.contains("T…"));
    }

    #[test]
    fn counter_width_grows_with_the_number_of_parts() {
        // Over 9 parts: counters get two digits and every part must still fit.
        let text = "y".repeat(60_000);
        let parts = render_checked(&card(&text));
        assert!(parts.len() >= 15);
        assert!(
            parts
                .last()
                .unwrap()
                .1
                .contains(&format!("({}/{})", parts.len(), parts.len()))
        );
        assert_eq!(body_without_whitespace(&parts), text);
    }

    #[test]
    fn visible_len_counts_like_telegram() {
        assert_eq!(
            visible_len("<b>a&amp;b</b> <a href=\"x?a=1&amp;b\">л</a>"),
            5
        );
        assert_eq!(visible_len("&#x27;&quot;&lt;"), 3);
        assert_eq!(visible_len("AT&T & co"), 9);
        assert_eq!(visible_len("😀👍🏽"), 3);
    }

    fn extraction() -> Extraction {
        Extraction {
            title: Some("Лендинг на Тильде для бренда косметики".into()),
            budget: Some(Budget {
                min: 15_000.0,
                max: Some(20_000.0),
                currency: "RUB".into(),
                basis: BudgetBasis::Fixed,
            }),
            deadline: Some("до пятницы".into()),
            work_mode: Some(WorkMode::Remote),
            skills: vec!["Figma".into(), "Photoshop".into()],
            contact: Some("@anna_kosmetika".into()),
        }
    }

    #[test]
    fn extracted_facts_follow_the_header() {
        let c =
            card("Нужен лендинг на Тильде.\n\nБюджет 15-20к").with_extraction(Some(extraction()));
        let parts = render_checked(&c);
        assert_eq!(parts.len(), 1);
        let (html, visible) = &parts[0];
        assert!(
            html.starts_with(
                "<b>Лендинг на Тильде для бренда косметики</b>\n💼 Web · Design · \
                 <a href=\"https://t.me/remote_jobs\">@remote_jobs</a> · 2026-11-03 14:05 UTC\n\
                 💰 15 000–20 000 ₽ · fixed | ⏰ до пятницы | 🌍 remote | 🛠 Figma, Photoshop\n\
                 ✉️ @anna_kosmetika\n\nНужен лендинг на Тильде."
            ),
            "{html}"
        );
        assert!(visible.ends_with("Бюджет 15-20к\n\n🔗 Open original"));

        // The card's own title wins over the extracted one.
        let mut own = c.clone();
        own.title = Some("Own title".into());
        assert!(
            render_checked(&own)[0]
                .0
                .starts_with("<b>Own title</b>\n💼 Web · Design ·")
        );
    }

    #[test]
    fn only_known_facts_are_shown() {
        let hourly = Extraction {
            budget: Some(Budget {
                min: 25.0,
                max: None,
                currency: "USD".into(),
                basis: BudgetBasis::Hourly,
            }),
            ..Extraction::default()
        };
        let parts = render_checked(&card("text").with_extraction(Some(hourly)));
        let header = parts[0].1.split("\n\n").next().unwrap().to_owned();
        assert!(header.ends_with("UTC\n💰 $25 · hourly"), "{header}");
        assert!(!header.contains('⏰') && !header.contains("✉️"));

        // Nothing extracted: the same card as without an extraction.
        let empty = card("text").with_extraction(Some(Extraction::default()));
        assert_eq!(render(&empty), render(&card("text")));
        let contact_only = Extraction {
            contact: Some("https://t.me/zernoipar_hr_bot".into()),
            ..Extraction::default()
        };
        let parts = render_checked(&card("text").with_extraction(Some(contact_only)));
        assert!(
            parts[0]
                .1
                .contains("UTC\n✉️ https://t.me/zernoipar_hr_bot\n\ntext")
        );
    }

    #[test]
    fn hostile_extracted_values_are_escaped() {
        let hostile = Extraction {
            title: Some("<b>Hi</b> & <a href=\"javascript:alert(1)\">co</a>".into()),
            budget: Some(Budget {
                min: 5.0,
                max: None,
                currency: "<i>X".into(),
                basis: BudgetBasis::Monthly,
            }),
            deadline: Some("до <пятницы> & \"субботы\"\nи дальше".into()),
            work_mode: Some(WorkMode::OnSite),
            skills: vec!["C++ & <script>".into(), "a\"b".into()],
            contact: Some("\"><a href=x>@evil</a>".into()),
        };
        let parts = render_checked(&card("body").with_extraction(Some(hostile)));
        let (html, visible) = &parts[0];
        assert!(html.starts_with(
            "<b>&lt;b&gt;Hi&lt;/b&gt; &amp; &lt;a href=&quot;javascript:alert(1)&quot;&gt;co&lt;/a&gt;</b>\n"
        ), "{html}");
        assert!(visible.contains(
            "💰 5 <I>X · monthly | ⏰ до <пятницы> & \"субботы\" и дальше | 🌍 on-site | 🛠 C++ & <script>, a\"b\n\
             ✉️ \"><a href=x>@evil</a>\n\nbody"
        ), "{visible}");
        assert!(
            !html.contains("<script>") && !html.contains("<I>") && !html.contains("<a href=x>")
        );
    }

    #[test]
    fn oversized_extraction_is_bounded_and_split_correctly() {
        let huge = Extraction {
            title: Some("T".repeat(10_000)),
            budget: Some(Budget {
                min: 1e15,
                max: Some(1e18),
                currency: "&".repeat(5_000),
                basis: BudgetBasis::Fixed,
            }),
            deadline: Some("<".repeat(10_000)),
            work_mode: Some(WorkMode::Hybrid),
            skills: vec!["&".repeat(1_000); 1_000],
            contact: Some("\"".repeat(10_000)),
        };
        // A body that needs several parts: the facts count toward the first one.
        let text = "слово ".repeat(2_000);
        let parts = render_checked(&card(&text).with_extraction(Some(huge)));
        assert!(parts.len() >= 3);
        let header = parts[0].1.split("\n\n").next().unwrap();
        let limit = MAX_TITLE_CHARS
            + MAX_CATEGORIES_CHARS
            + MAX_CHANNEL_CHARS
            + MAX_FACTS_CHARS
            + MAX_CONTACT_CHARS
            + 100;
        assert!(header.chars().count() < limit, "{}", header.chars().count());
        assert_eq!(header.lines().count(), 4);
        assert!(parts[1..].iter().all(|(_, v)| !v.contains('💰')));
        assert_eq!(body_without_whitespace(&parts), no_ws(&text));
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            4 => "[a-zа-я]{1,12}",
            2 => Just(" ".to_owned()),
            1 => Just("\n".to_owned()),
            1 => Just("\n\n".to_owned()),
            1 => "[<>&\"'.!?;]{1,3}",
            1 => Just("👨\u{200D}👩\u{200D}👧".to_owned()),
            1 => Just("🇺🇦".to_owned()),
            1 => Just("e\u{301}".to_owned()),
            1 => any::<String>(),
            1 => "[a-z]{500,3000}",
        ];
        proptest::collection::vec(piece, 0..800).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn every_part_fits_and_no_text_is_lost(
            text in text_strategy(),
            title in proptest::option::of(any::<String>()),
            channel in any::<String>(),
            url in proptest::option::of(any::<String>()),
            extraction in proptest::option::of(extraction_strategy()),
        ) {
            let mut c = card(&text);
            c.title = title;
            c.channel = channel;
            c.extraction = extraction;
            if url.is_some() {
                c.url = url;
            }
            let parts = render_checked(&c);
            let expected = no_ws(&clean_body_string(&text));
            prop_assert_eq!(body_without_whitespace(&parts), expected);
        }
    }

    fn extraction_strategy() -> impl Strategy<Value = Extraction> {
        (
            proptest::option::of(any::<String>()),
            proptest::option::of((
                any::<f64>(),
                proptest::option::of(any::<f64>()),
                any::<String>(),
            )),
            proptest::option::of(any::<String>()),
            proptest::collection::vec(any::<String>(), 0..12),
            proptest::option::of(any::<String>()),
        )
            .prop_map(|(title, budget, deadline, skills, contact)| Extraction {
                title,
                budget: budget.map(|(min, max, currency)| Budget {
                    min,
                    max,
                    currency,
                    basis: BudgetBasis::Hourly,
                }),
                deadline,
                work_mode: Some(WorkMode::Remote),
                skills,
                contact,
            })
    }

    fn clean_body_string(text: &str) -> String {
        collect(&clean_body(text))
    }
}
