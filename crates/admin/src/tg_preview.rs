//! Telegram HTML as a subscriber's Telegram shows it, for the panel's previews (a broadcast
//! before it is sent, a placement's card before it is approved).
//!
//! The message is read with the same parser that checks broadcasts
//! ([`jobwire_core::tghtml`], Telegram's own rules), and the page's HTML is written anew
//! from what the parser found: the visible text, escaped, and the entities Telegram would
//! show, each as one of a fixed set of tags (`b`, `i`, `u`, `s`, `code`, `pre`,
//! `blockquote`, `span class="tg-spoiler"`, `a href`). Nothing of the input's markup reaches
//! the page as markup: an attribute the parser ignores (`onerror=`) is gone, a tag it refuses
//! (`<script>`) makes the message unreadable as Telegram HTML, and a link is kept only with
//! an `http`, `https` or `tg` address.

use jobwire_core::format::escape;
use jobwire_core::tghtml::{self, Entity, EntityKind};

/// The page HTML of a Telegram HTML message as its reader sees it (trimmed, links found in
/// the text made links, as the Bot API does); Telegram's own error when it would refuse it.
pub fn render(text: &str) -> Result<String, String> {
    let (visible, entities) = tghtml::parse_html(text)?;
    let (visible, mut entities) = tghtml::trim(&visible, entities);
    tghtml::add_auto_entities(&visible, &mut entities);
    Ok(write(&visible, &entities))
}

/// [`render`], or the message as escaped text when Telegram would refuse it.
pub fn render_or_escape(text: &str) -> String {
    render(text).unwrap_or_else(|_| escape(text))
}

/// The opening and closing tag of an entity; `None` for what shows as plain text.
fn tags(kind: &EntityKind, covered: &str) -> Option<(String, &'static str)> {
    let simple = |open: &str, close: &'static str| Some((open.to_owned(), close));
    match kind {
        EntityKind::Bold => simple("<b>", "</b>"),
        EntityKind::Italic => simple("<i>", "</i>"),
        EntityKind::Underline => simple("<u>", "</u>"),
        EntityKind::Strikethrough => simple("<s>", "</s>"),
        EntityKind::Spoiler => simple("<span class=\"tg-spoiler\">", "</span>"),
        EntityKind::Code => simple("<code>", "</code>"),
        EntityKind::Pre(_) => simple("<pre>", "</pre>"),
        EntityKind::Blockquote | EntityKind::ExpandableBlockquote => {
            simple("<blockquote>", "</blockquote>")
        }
        EntityKind::TextLink(url) => link(url),
        EntityKind::Url => link(covered),
        EntityKind::TextMention(_)
        | EntityKind::CustomEmoji(_)
        | EntityKind::DateTime(..)
        | EntityKind::Mention
        | EntityKind::Hashtag
        | EntityKind::BotCommand => None,
    }
}

fn link(url: &str) -> Option<(String, &'static str)> {
    // The check a card's links pass (http, https, tg; no spaces or control characters).
    jobwire_core::format::safe_url(url).map(|url| {
        (
            format!(
                "<a href=\"{}\" rel=\"nofollow noopener noreferrer\" target=\"_blank\">",
                escape(url)
            ),
            "</a>",
        )
    })
}

/// One entity to write: where it starts and ends (UTF-16 code units) and its tags.
struct Span {
    start: i64,
    end: i64,
    open: String,
    close: &'static str,
}

/// Writes `visible` with `entities` as tags. Entities that overlap without nesting (an
/// automatic link inside a bold run that ends in the middle of it) are closed and opened
/// again around the boundary, so the tags always nest.
fn write(visible: &str, entities: &[Entity]) -> String {
    let units: Vec<u16> = visible.encode_utf16().collect();
    let covered = |e: &Entity| {
        let from = usize::try_from(e.offset).unwrap_or(0).min(units.len());
        let to = usize::try_from(e.offset + e.length)
            .unwrap_or(0)
            .clamp(from, units.len());
        String::from_utf16_lossy(&units[from..to])
    };
    let mut spans: Vec<Span> = entities
        .iter()
        .filter(|e| e.length > 0)
        .filter_map(|e| {
            tags(&e.kind, &covered(e)).map(|(open, close)| Span {
                start: e.offset,
                end: e.offset + e.length,
                open,
                close,
            })
        })
        .collect();
    // Outer first: by start, the longer one before the shorter.
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out = String::with_capacity(visible.len() * 2);
    let mut open: Vec<&Span> = Vec::new();
    let mut next = 0;
    let mut at: i64 = 0;
    for c in visible.chars() {
        step(&mut out, &mut open, &spans, &mut next, at);
        out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
        at += i64::try_from(c.len_utf16()).unwrap_or(1);
    }
    step(&mut out, &mut open, &spans, &mut next, at);
    while let Some(s) = open.pop() {
        out.push_str(s.close);
    }
    out
}

/// At position `at`: closes the spans that end here (and reopens those closed only to keep
/// the nesting), then opens the spans that start here.
fn step<'s>(
    out: &mut String,
    open: &mut Vec<&'s Span>,
    spans: &'s [Span],
    next: &mut usize,
    at: i64,
) {
    if let Some(deepest) = open.iter().position(|s| s.end <= at) {
        let closed = open.split_off(deepest);
        for s in closed.iter().rev() {
            out.push_str(s.close);
        }
        for s in closed.into_iter().filter(|s| s.end > at) {
            out.push_str(&s.open);
            open.push(s);
        }
    }
    while let Some(s) = spans.get(*next).filter(|s| s.start <= at) {
        *next += 1;
        if s.end > at {
            out.push_str(&s.open);
            open.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &str) {
        assert_eq!(render(input).as_deref(), Ok(expect), "{input}");
    }

    #[test]
    fn telegrams_formatting_is_shown_formatted() {
        check(
            "<b>New:</b> <i>daily</i> <u>digests</u> &amp; <s>old</s> <code>x&lt;y</code>",
            "<b>New:</b> <i>daily</i> <u>digests</u> &amp; <s>old</s> <code>x&lt;y</code>",
        );
        check(
            "<strong>a</strong><em>b</em><ins>c</ins><strike>d</strike><del>e</del>",
            "<b>a</b><i>b</i><u>c</u><s>d</s><s>e</s>",
        );
        check(
            "<pre>let x = 1;</pre><blockquote>said</blockquote>",
            "<pre>let x = 1;</pre><blockquote>said</blockquote>",
        );
        check(
            "<tg-spoiler>a</tg-spoiler> <span class=\"tg-spoiler\">b</span>",
            "<span class=\"tg-spoiler\">a</span> <span class=\"tg-spoiler\">b</span>",
        );
        check(
            "<a href=\"https://example.com/?a=1&amp;b=2\">site</a> <b><i>both</i></b>",
            "<a href=\"https://example.com/?a=1&amp;b=2\" rel=\"nofollow noopener noreferrer\" \
             target=\"_blank\">site</a> <b><i>both</i></b>",
        );
        check(
            "<a href=\"tg://resolve?domain=jobwire\">bot</a>",
            "<a href=\"tg://resolve?domain=jobwire\" rel=\"nofollow noopener noreferrer\" \
             target=\"_blank\">bot</a>",
        );
        // Trimmed, and a bare address made a link, as Telegram does.
        check(
            "  see https://t.me/jobs  ",
            "see <a href=\"https://t.me/jobs\" rel=\"nofollow noopener noreferrer\" \
             target=\"_blank\">https://t.me/jobs</a>",
        );
    }

    #[test]
    fn hostile_markup_never_reaches_the_page_as_markup() {
        // A tag Telegram refuses: not Telegram HTML; shown as the text it is.
        let script = "<b>hi</b><script>alert(1)</script>";
        assert!(render(script).is_err());
        assert_eq!(
            render_or_escape(script),
            "&lt;b&gt;hi&lt;/b&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        // Attributes Telegram ignores are gone.
        check("<b onerror=\"alert(1)\">x</b>", "<b>x</b>");
        check(
            "<span class=\"tg-spoiler\" onmouseover=\"alert(1)\" style=\"x\">s</span>",
            "<span class=\"tg-spoiler\">s</span>",
        );
        // Links to anything but http, https or tg are plain text.
        for href in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:x",
            "tonsite://x.ton",
            "tg://user?id=42",
        ] {
            let input = format!("<a href=\"{}\">click</a>", href.replace('<', "&lt;"));
            assert_eq!(render(&input).as_deref(), Ok("click"), "{href}");
        }
        // Quotes in an address cannot leave the attribute.
        let html = render("<a href='https://x.test/\"onmouseover=\"alert(1)'>x</a>");
        let html = html.unwrap_or_else(|e| e);
        assert!(html.starts_with("<a href=\"https://x.test/"), "{html}");
        assert!(!html.contains("\"onmouseover"), "{html}");
        // Escaped markup in the text stays text.
        check(
            "&lt;img src=x onerror=alert(1)&gt;",
            "&lt;img src=x onerror=alert(1)&gt;",
        );
    }

    #[test]
    fn overlapping_entities_still_nest() {
        // A bold run ending inside a link: the link is closed and opened again around it.
        let entity = |kind, offset, length| Entity {
            kind,
            offset,
            length,
        };
        let html = write(
            "go https://a.test/x",
            &[
                entity(EntityKind::Bold, 0, 14),
                entity(EntityKind::Url, 3, 16),
            ],
        );
        let a = "<a href=\"https://a.test/x\" rel=\"nofollow noopener noreferrer\" \
                 target=\"_blank\">";
        assert_eq!(html, format!("<b>go {a}https://a.t</a></b>{a}est/x</a>"));
        // Text outside the Basic Multilingual Plane keeps its offsets.
        check("😀 <b>bold</b>", "😀 <b>bold</b>");
    }
}
