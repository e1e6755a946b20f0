//! HTML to plain text, for feed item descriptions.
//!
//! Feed descriptions are HTML fragments (often inside CDATA). Subscribers and the classifier
//! want their text: tags removed, entities decoded, whitespace collapsed the way a browser
//! would, with line breaks where the HTML breaks lines (`<br>`, paragraphs, list items).
//! This is a small scanner, not an HTML parser: it never builds a tree, so hostile input
//! costs linear time and no more memory than its length.

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
/// - A `<` that does not start a tag (`a < b`) is kept as text.
pub fn html_to_text(html: &str) -> String {
    let mut raw = String::with_capacity(html.len());
    let mut i = 0;
    while i < html.len() {
        let rest = &html[i..];
        if rest.starts_with('<')
            && let Some(skip) = markup_len(rest, &mut raw)
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

/// If `rest` (which starts with `<`) starts a tag, comment or declaration, writes what it
/// stands for into `out` and returns how many bytes it spans (for `script`/`style`: up to
/// and including the end tag). `None` means the `<` is literal text.
fn markup_len(rest: &str, out: &mut String) -> Option<usize> {
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
    let end = tag_end(rest)?;
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
            let lower = rest[end..].to_ascii_lowercase();
            let close = format!("</{name}");
            let skipped = match lower.find(&close) {
                Some(at) => {
                    let after = end + at;
                    after + tag_end(&rest[after..]).unwrap_or(rest.len() - after)
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

/// The length of the tag at the start of `rest` up to and including its `>`, skipping `>`
/// inside quoted attribute values. `None` if the tag never ends.
fn tag_end(rest: &str) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, &b) in rest.as_bytes().iter().enumerate().skip(1) {
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

    #[test]
    fn empty_and_whitespace_only_input_give_empty_text() {
        assert_eq!(html_to_text(""), "");
        assert_eq!(html_to_text(" \n <br/> &nbsp; "), "");
    }
}
