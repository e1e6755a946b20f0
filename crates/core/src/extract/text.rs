//! Text helpers shared by the extractors: preparing a post's text for reading (bounded
//! length, unified line endings and spaces, decoded HTML entities), position-preserving
//! lowercasing, script detection, compiling the built-in patterns, shortening a phrase and
//! recognising a forwarding header line.

use regex::Regex;

use super::MAX_INPUT_CHARS;

/// At most [`MAX_INPUT_CHARS`] characters, line endings unified, exotic spaces as plain
/// spaces, HTML entities of feed items decoded.
pub(super) fn prepare(text: &str) -> String {
    let end = text
        .char_indices()
        .nth(MAX_INPUT_CHARS)
        .map_or(text.len(), |(i, _)| i);
    // Entities first (one pass, so `&amp;lt;` stays `&lt;`), then spaces and controls, so
    // that a decoded `&nbsp;` is a plain space and a decoded control character is dropped.
    let decoded = html_escape::decode_html_entities(&text[..end]);
    let mut out = String::with_capacity(decoded.len());
    let mut prev_cr = false;
    for c in decoded.chars() {
        match c {
            '\r' => out.push('\n'),
            '\n' if prev_cr => {}
            '\u{a0}' | '\u{202f}' | '\u{2007}' | '\u{2009}' | '\u{200a}' | '\t' => out.push(' '),
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
        prev_cr = c == '\r';
    }
    out
}

/// The single-character lowercase of `c` (`c` itself when lowercasing makes more than one
/// character), so that positions in the lowercased text match the original's.
pub(super) fn lower(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

fn is_cyrillic(c: char) -> bool {
    ('\u{0400}'..='\u{04FF}').contains(&c)
}

/// Whether most letters are Cyrillic.
pub(super) fn mostly_cyrillic(chars: &[char]) -> bool {
    let (mut cyr, mut lat) = (0usize, 0usize);
    for &c in chars {
        if is_cyrillic(c) {
            cyr += 1;
        } else if c.is_ascii_alphabetic() {
            lat += 1;
        }
    }
    cyr > lat
}

pub(super) fn regex(pattern: &str) -> Regex {
    // The patterns are constants of the extractor modules; the tests compile every one of them.
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("a valid built-in pattern")
}

/// One line, collapsed whitespace, at most `max` characters (cut between words, ending
/// with `…`).
pub(super) fn short_phrase(raw: &str, max: usize) -> String {
    let joined = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let joined = joined.trim_end_matches([':', '-', '–', '—', ',']);
    if joined.chars().count() <= max {
        return joined.to_owned();
    }
    let chars: Vec<char> = joined.chars().collect();
    let limit = max.saturating_sub(1);
    let cut = (limit / 2..=limit)
        .rev()
        .find(|&i| chars.get(i) == Some(&' '))
        .unwrap_or(limit);
    let mut out: String = chars[..cut].iter().collect();
    out.truncate(
        out.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | ';' | ':'))
            .len(),
    );
    out.push('…');
    out
}

/// Whether the line is a forwarding header (`Forwarded from …`, `Переслано от …`).
pub(super) fn is_forward_header(line: &str) -> bool {
    let l = line.trim_start().to_lowercase();
    [
        "forwarded from",
        "переслано от",
        "переслано из",
        "репост из",
        "repost from",
    ]
    .iter()
    .any(|p| l.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_entities_are_decoded_once_and_spaces_unified() {
        assert_eq!(prepare("5&nbsp;000&nbsp;₽"), "5 000 ₽");
        assert_eq!(
            prepare("R&amp;D &lt;b&gt; &quot;x&quot; it&#39;s"),
            "R&D <b> \"x\" it's"
        );
        // Decoded once: an escaped entity stays an entity, as the feed meant.
        assert_eq!(prepare("write &amp;lt;div&amp;gt;"), "write &lt;div&gt;");
        // Named entities beyond the five of XML, and numeric ones.
        assert_eq!(
            prepare("Python &mdash; Django &rarr; &#8381;"),
            "Python — Django → ₽"
        );
        // Control characters are dropped, line endings unified.
        assert_eq!(prepare("a\u{7}b\r\nc"), "ab\nc");
    }

    #[test]
    fn the_text_is_bounded_before_decoding() {
        let long = "x".repeat(MAX_INPUT_CHARS) + "&amp;&lt;";
        assert_eq!(prepare(&long), "x".repeat(MAX_INPUT_CHARS));
    }
}
