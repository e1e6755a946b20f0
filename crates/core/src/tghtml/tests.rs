#![allow(clippy::unwrap_used)]
use serde_json::Value;

use super::*;

/// Each entity as `(type, offset, length)`.
fn summary(entities: &[Entity]) -> Vec<(String, i64, i64)> {
    entities
        .iter()
        .map(|e| {
            (
                e.to_json()["type"].as_str().unwrap().to_owned(),
                e.offset,
                e.length,
            )
        })
        .collect()
}

fn kinds(s: &str) -> (String, Vec<(String, i64, i64)>) {
    let (t, e) = parse_html(s).unwrap();
    (t, summary(&e))
}

#[test]
fn basic_tags_and_escapes() {
    let (t, e) = kinds("<b>bold</b> &amp; <i>it</i> &lt;x&gt; &#65;&#x42; &quot;");
    assert_eq!(t, "bold & it <x> AB \"");
    assert_eq!(e, vec![("bold".into(), 0, 4), ("italic".into(), 7, 2)]);
}

#[test]
fn utf16_offsets_count_surrogate_pairs() {
    let (t, e) = kinds("😀<b>x</b>");
    assert_eq!(t, "😀x");
    assert_eq!(e, vec![("bold".into(), 2, 1)]);
}

#[test]
fn unknown_entities_stay_literal() {
    let (t, _) = kinds("a & b &nbsp; &#0; AT&T");
    assert_eq!(t, "a & b &nbsp; &#0; AT&T");
}

#[test]
fn error_messages_match_tdlib() {
    for (html, error) in [
        (
            "<foo>x</foo>",
            "Unsupported start tag \"foo\" at byte offset 0",
        ),
        (
            "<b>x",
            "Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            "<b><i>x</b></i>",
            "Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\"",
        ),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("a <b", "Unclosed start tag at byte offset 2"),
        (
            "<span class=\"x\">y</span>",
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0",
        ),
        (
            "<a href>x</a>",
            "Expected equal sign in declaration of an attribute of the tag \"a\" at byte offset 0",
        ),
    ] {
        assert_eq!(parse_html(html).unwrap_err(), error, "{html}");
    }
}

#[test]
fn links_pre_code_blockquote_spoiler_emoji() {
    let (t, e) = parse_html(
        "<a href=\"https://example.com\">site</a> <pre><code class=\"language-rust\">fn</code></pre> <blockquote expandable>q</blockquote> <tg-spoiler>s</tg-spoiler> <span class=\"tg-spoiler\">t</span> <tg-emoji emoji-id=\"5368324170671202286\">👍</tg-emoji> <a href=\"tg://user?id=42\">u</a> <a href=\"javascript:alert(1)\">bad</a> <pre>p</pre> <code>c</code>",
    )
    .unwrap();
    assert_eq!(t, "site fn q s t 👍 u bad p c");
    let j: Vec<Value> = e.iter().map(Entity::to_json).collect();
    assert_eq!(j[0]["type"], "text_link");
    assert_eq!(j[0]["url"], "https://example.com/");
    assert_eq!(j[1]["type"], "pre");
    assert_eq!(j[1]["language"], "rust");
    assert_eq!(j[2]["type"], "expandable_blockquote");
    assert_eq!(j[3]["type"], "spoiler");
    assert_eq!(j[4]["type"], "spoiler");
    assert_eq!(j[5]["type"], "custom_emoji");
    assert_eq!(j[5]["custom_emoji_id"], "5368324170671202286");
    assert_eq!(j[6]["type"], "text_mention");
    assert_eq!(j[6]["user"]["id"], 42);
    assert_eq!(j[7]["type"], "pre");
    assert!(j[7].get("language").is_none());
    assert_eq!(j[8]["type"], "code");
    assert_eq!(j.len(), 9);
}

#[test]
fn trim_shifts_entities() {
    let (t, e) = parse_html("  <b> hi </b>\n").unwrap();
    let (t, e) = trim(&t, e);
    assert_eq!(t, "hi");
    assert_eq!(e, vec![Entity::new(EntityKind::Bold, 0, 2)]);
}

#[test]
fn auto_entities() {
    let mut e = Vec::new();
    add_auto_entities("/start see https://x.io/a, @someone #rust_jobs", &mut e);
    let j = summary(&e);
    assert_eq!(
        j,
        vec![
            ("bot_command".into(), 0, 6),
            ("url".into(), 11, 14),
            ("mention".into(), 27, 8),
            ("hashtag".into(), 36, 10)
        ]
    );
}
