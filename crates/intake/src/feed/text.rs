//! HTML to plain text, for feed item descriptions.
//!
//! Feed descriptions are HTML fragments (often inside CDATA). Subscribers and the classifier
//! want their text: tags removed, entities decoded, whitespace collapsed the way a browser
//! would, with line breaks where the HTML breaks lines (`<br>`, paragraphs, list items).
//! This is a small scanner, not an HTML parser: it never builds a tree, and every byte of
//! the input is looked at a bounded number of times, so hostile input (thousands of
//! unclosed tags, comments, scripts or entities) costs linear time and no more memory than
//! a few times its length.

/// Marks the boundary of a block element: a new line, but never an empty one. (A
/// private-use character; the same character in the input is read as a space.)
const SOFT_BREAK: char = '\u{E000}';

/// Converts an HTML fragment to plain text.
///
/// - Tags are removed; `<br>` becomes a line break, block elements (`p`, `div`, headings,
///   `tr`, …) start a new line, `li` starts a line with `• `.
/// - `<script>` and `<style>` elements are dropped with their content, comments too.
/// - Entities (`&amp;`, `&#039;`, `&nbsp;`, all HTML5 named ones) are decoded *after* the
///   tags are removed, so an escaped tag (`&lt;b&gt;`) stays visible text.
/// - Source whitespace (spaces, tabs, newlines) collapses to one space, as in a browser;
///   lines are trimmed and at most one blank line is kept in a row.
/// - A `<` that does not start a tag (`a < b`), or whose tag never ends, is kept as text.
///
/// Runs in time linear in the length of `html`, whatever it holds.
pub fn html_to_text(html: &str) -> String {
    let ends = TagEnds::new(html);
    let mut raw = String::with_capacity(html.len());
    let mut i = 0;
    while i < html.len() {
        let rest = &html[i..];
        if rest.starts_with('<')
            && let Some(skip) = markup_len(html, i, &ends, &mut raw)
        {
            i += skip;
            continue;
        }
        let Some(ch) = rest.chars().next() else {
            break;
        };
        raw.push(if ch.is_whitespace() || ch == SOFT_BREAK {
            ' '
        } else {
            ch
        });
        i += ch.len_utf8();
    }
    let decoded = html_escape::decode_html_entities(&raw);
    collapse_whitespace(&decoded)
}

/// Which `<` of a document have a tag end: a `>` after them that is not inside a quoted
/// attribute value. Computed in one backward pass, so asking is O(1); scanning forward from
/// every `<` instead would read the rest of the document once per unclosed `<`, which is
/// quadratic (`"<a".repeat(n)`).
struct TagEnds {
    /// One bit per byte of the document, set at a `<` whose tag ends.
    bits: Vec<u64>,
}

impl TagEnds {
    fn new(html: &str) -> Self {
        let bytes = html.as_bytes();
        let mut bits = vec![0u64; bytes.len().div_ceil(64)];
        // Whether a forward scan starting at the current position finds a tag end, by the
        // scan's state there: outside quotes, inside "…", inside '…'.
        let (mut plain, mut double, mut single) = (false, false, false);
        for (at, &b) in bytes.iter().enumerate().rev() {
            if b == b'<' && plain {
                bits[at / 64] |= 1 << (at % 64);
            }
            (plain, double, single) = match b {
                b'>' => (true, double, single),
                b'"' => (double, plain, single),
                b'\'' => (single, double, plain),
                _ => (plain, double, single),
            };
        }
        Self { bits }
    }

    /// The length of the tag starting at the `<` at byte `at` of `html`, up to and including
    /// its `>` (skipping `>` inside quoted attribute values); `None` if the tag never ends.
    fn len_at(&self, html: &str, at: usize) -> Option<usize> {
        let known = self
            .bits
            .get(at / 64)
            .is_some_and(|w| w & (1 << (at % 64)) != 0);
        if !known {
            return None;
        }
        scan_tag_end(&html.as_bytes()[at..])
    }
}

/// The length of the tag that starts with the `<` at `rest[0]`, up to and including its
/// `>` outside quotes, by a forward scan; `None` when it does not end.
fn scan_tag_end(rest: &[u8]) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, &b) in rest.iter().enumerate().skip(1) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return Some(i + 1),
            None => {}
        }
    }
    None
}

/// If the `<` at byte `at` of `html` starts a tag, comment or declaration, writes what it
/// stands for into `out` and returns how many bytes it spans (for `script`/`style`: up to
/// and including the end tag). `None` means the `<` is literal text.
///
/// Every byte it reads is skipped by the caller when it returns `Some`; when it returns
/// `None` it has read a bounded number of bytes. That keeps the whole conversion linear.
fn markup_len(html: &str, at: usize, ends: &TagEnds, out: &mut String) -> Option<usize> {
    let rest = &html[at..];
    if let Some(body) = rest.strip_prefix("<!--") {
        return Some(body.find("-->").map_or(rest.len(), |end| 4 + end + 3));
    }
    let bytes = rest.as_bytes();
    let second = *bytes.get(1)?;
    let closing = second == b'/';
    let name_start = if closing { 2 } else { 1 };
    let first_name_byte = *bytes.get(name_start)?;
    let declaration = !closing && (second == b'!' || second == b'?');
    if !declaration && !first_name_byte.is_ascii_alphabetic() {
        return None;
    }
    let end = ends.len_at(html, at)?;
    if declaration {
        return Some(end);
    }
    let name: String = rest[name_start..end]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match name.as_str() {
        "script" | "style" if !closing => {
            let skipped = match find_end_tag(&rest[end..], &name) {
                Some(found) => {
                    let after = end + found;
                    after + ends.len_at(html, at + after).unwrap_or(rest.len() - after)
                }
                None => rest.len(),
            };
            return Some(skipped);
        }
        "br" => out.push('\n'),
        "li" if !closing => {
            out.push(SOFT_BREAK);
            out.push_str("• ");
        }
        "p" | "div" | "li" | "ul" | "ol" | "tr" | "table" | "h1" | "h2" | "h3" | "h4" | "h5"
        | "h6" | "blockquote" | "pre" | "hr" | "section" | "article" | "header" | "footer"
        | "dl" | "dt" | "dd" => out.push(SOFT_BREAK),
        "td" | "th" if closing => out.push(' '),
        _ => {}
    }
    Some(end)
}

/// Where the first `</name` (any case; `name` is lowercase ASCII) starts in `text`. Reads
/// `text` once, without copying it.
fn find_end_tag(text: &str, name: &str) -> Option<usize> {
    text.match_indices("</").map(|(at, _)| at).find(|&at| {
        text.as_bytes()
            .get(at + 2..at + 2 + name.len())
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(name.as_bytes()))
    })
}

/// Collapses whitespace the way a browser renders it: runs of spaces (including no-break
/// spaces) become one, lines are trimmed, a [`SOFT_BREAK`] starts a new line unless one was
/// just started, two or more hard line breaks in a row leave one blank line.
fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut hard_breaks = 0usize;
    let mut soft_break = false;
    let mut space = false;
    for c in text.chars() {
        if c == '\n' {
            hard_breaks += 1;
            space = false;
        } else if c == SOFT_BREAK {
            soft_break = true;
            space = false;
        } else if c.is_whitespace() || c == '\u{a0}' {
            space = true;
        } else {
            if !out.is_empty() {
                if hard_breaks >= 2 {
                    out.push_str("\n\n");
                } else if hard_breaks == 1 || soft_break {
                    out.push('\n');
                } else if space {
                    out.push(' ');
                }
            }
            out.push(c);
            hard_breaks = 0;
            soft_break = false;
            space = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_removed_and_breaks_become_newlines() {
        assert_eq!(html_to_text("<p>Hello<br/>world</p>"), "Hello\nworld");
        assert_eq!(html_to_text("one<br>two<BR />three"), "one\ntwo\nthree");
        assert_eq!(
            html_to_text("<b>Bold</b> and <i class=\"x\">italic</i>"),
            "Bold and italic"
        );
    }

    #[test]
    fn entities_are_decoded_after_tags_are_removed() {
        assert_eq!(
            html_to_text("Tom &amp; Jerry &lt;3 it&#039;s&nbsp;&nbsp;fine &euro;5"),
            "Tom & Jerry <3 it's fine €5"
        );
        assert_eq!(
            html_to_text("&lt;b&gt;not bold&lt;/b&gt;"),
            "<b>not bold</b>"
        );
    }

    #[test]
    fn source_whitespace_collapses_like_a_browser() {
        assert_eq!(html_to_text("  a\n   b\t\tc  <br />\n\n d  "), "a b c\nd");
        assert_eq!(html_to_text("x<br><br><br><br>y"), "x\n\ny");
    }

    #[test]
    fn scripts_styles_and_comments_are_dropped() {
        assert_eq!(
            html_to_text(
                "a<script type=\"x\">if (1 < 2) { alert('<b>') }</script>b\
                 <style>p{}</style>c<!-- <p>hidden</p> -->d"
            ),
            "abcd"
        );
        // An unterminated script swallows the rest rather than leaking code.
        assert_eq!(html_to_text("a<SCRIPT>evil()"), "a");
    }

    #[test]
    fn a_lone_less_than_sign_is_text() {
        assert_eq!(html_to_text("a < b and c>d, 1<2"), "a < b and c>d, 1<2");
        assert_eq!(html_to_text("x <"), "x <");
    }

    #[test]
    fn quoted_greater_than_in_attributes_does_not_end_the_tag() {
        assert_eq!(
            html_to_text("<a href=\"https://x/?a>b\" title='c>d'>link</a>"),
            "link"
        );
    }

    #[test]
    fn lists_and_blocks_get_their_own_lines() {
        assert_eq!(
            html_to_text("<h2>Stack</h2><ul><li>Rust</li><li>Postgres</li></ul><p>Apply</p>"),
            "Stack\n• Rust\n• Postgres\nApply"
        );
        assert_eq!(
            html_to_text("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>"),
            "a b\nc"
        );
    }

    #[test]
    fn non_ascii_text_survives() {
        assert_eq!(
            html_to_text("<p>FC Bayern München AG — Вакансия</p>"),
            "FC Bayern München AG — Вакансия"
        );
    }

    #[test]
    fn upwork_description_reads_as_lines() {
        let html = "Campaign to kick off Q4 &#039;21 <br /><br /><b>Budget</b>: $65,000\n\
                    <br /><b>Category</b>: Cartoons &amp; Comics<br /><b>Skills</b>:A,     B\n\
                    <br /><a href=\"https://www.upwork.com/jobs/x?source=rss\">click to apply</a>\n";
        assert_eq!(
            html_to_text(html),
            "Campaign to kick off Q4 '21\n\nBudget: $65,000\nCategory: Cartoons & Comics\n\
             Skills:A, B\nclick to apply"
        );
    }

    /// Runs `html_to_text` on `input` in its own thread and fails if it takes longer than
    /// `limit` (the old scanner needed hours for some of these).
    fn converted_within(input: String, limit: std::time::Duration) -> String {
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::time::Instant::now();
        std::thread::spawn(move || {
            let _ = tx.send(html_to_text(&input));
        });
        let text = rx
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("html_to_text took longer than {limit:?}"));
        eprintln!("converted in {:?}", started.elapsed());
        text
    }

    #[test]
    fn hostile_five_megabyte_inputs_take_linear_time_and_convert_right() {
        const SIZE: usize = 5 * 1024 * 1024;
        // A bound a linear scan meets many times over even unoptimized, and that the
        // quadratic one missed by hours (160 KB of `<a` took it 4.6 s).
        let limit = std::time::Duration::from_secs(10);
        let repeat = |unit: &str| unit.repeat(SIZE / unit.len());

        // Unclosed tags, declarations and quoted attributes: every `<` is literal text.
        for unit in ["<a", "<!", "<?", "</b", "<a \"", "<a '", "<a b=\"x\" '"] {
            let input = repeat(unit);
            let expected = input.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                converted_within(input, limit) == expected,
                "{unit:?} repeated is not kept as text"
            );
        }
        // Scripts and styles, closed and not, in any case.
        for unit in ["<script></script>", "<STYLE>x</sTyLe>", "<script>a</scrip"] {
            assert_eq!(converted_within(repeat(unit), limit), "", "{unit:?}");
        }
        // Comments: closed ones vanish; the first unclosed one swallows the rest.
        assert_eq!(
            converted_within(repeat("<!---->x"), limit),
            "x".repeat(SIZE / 8)
        );
        assert_eq!(converted_within(format!("a{}", repeat("<!--")), limit), "a");
        // Real tags, entities (complete and not) and breaks.
        let text = converted_within(repeat("<b>x</b>&amp;"), limit);
        assert_eq!(text, "x&".repeat(SIZE / 13));
        let text = converted_within(repeat("&amp"), limit);
        assert_eq!(text, repeat("&amp"));
        let text = converted_within(repeat("&#"), limit);
        assert_eq!(text, repeat("&#"));
        let text = converted_within(repeat("<br>"), limit);
        assert_eq!(text, "");
        // A tag that only ends at the very end of the input.
        let input = format!("{}>after", repeat("<a "));
        assert_eq!(converted_within(input, limit), "after");
    }

    /// The tag end of every `<`, as the straightforward forward scan finds it.
    fn scanned_tag_end(rest: &str) -> Option<usize> {
        scan_tag_end(rest.as_bytes())
    }

    #[test]
    fn precomputed_tag_ends_match_a_forward_scan_on_every_short_input() {
        const ALPHABET: &[u8] = b"<>\"'a";
        let mut input = Vec::new();
        for len in 1..=7u32 {
            for mut n in 0..ALPHABET.len().pow(len) {
                input.clear();
                for _ in 0..len {
                    input.push(ALPHABET[n % ALPHABET.len()]);
                    n /= ALPHABET.len();
                }
                let html = std::str::from_utf8(&input).expect("ASCII");
                let ends = TagEnds::new(html);
                for (at, _) in html.match_indices('<') {
                    assert_eq!(
                        ends.len_at(html, at),
                        scanned_tag_end(&html[at..]),
                        "{html:?} at {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn empty_and_whitespace_only_input_give_empty_text() {
        assert_eq!(html_to_text(""), "");
        assert_eq!(html_to_text(" \n <br/> &nbsp; "), "");
    }
}
