//! Items of an answer found while it streams in: each object directly inside the answer's
//! array (`{"items":[{…},{…}]}`, or a bare `[{…}]`) is handed on as soon as its closing brace
//! arrives, so the first post of a request is settled while the model still writes the rest.
//!
//! Written by hand: partial-JSON crates parse the whole prefix again on every chunk (quadratic
//! over an answer of a few thousand tokens) or want a `Read`er that blocks; this is one pass
//! over each byte, tracking only strings and the stack of open containers. Structural
//! characters are ASCII, and UTF-8 continuation bytes never equal an ASCII byte, so scanning
//! bytes is exact. Each found object is parsed by `serde_json`, so the scanner only decides
//! where an item starts and ends.

use serde_json::Value;

/// Finds complete items in a growing answer text.
#[derive(Debug, Default)]
pub(crate) struct ItemScanner {
    /// The answer so far.
    text: String,
    /// Bytes of `text` already scanned.
    scanned: usize,
    /// Open containers (`{` or `[`), outermost first.
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// The JSON started (the first `{` or `[`; prose before it is skipped).
    started: bool,
    /// Where the item being read starts.
    item_start: Option<usize>,
    /// The open array directly inside the top-level object is its `items`.
    in_items: bool,
    /// Items handed on so far.
    found: usize,
}

impl ItemScanner {
    /// Adds the next piece of the answer; returns the items it completed, in order.
    pub(crate) fn feed(&mut self, piece: &str) -> Vec<Value> {
        self.text.push_str(piece);
        let mut out = Vec::new();
        let bytes = self.text.as_bytes();
        let mut i = self.scanned;
        while i < bytes.len() {
            let c = bytes[i];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == b'"' {
                    self.in_string = false;
                }
                i += 1;
                continue;
            }
            match c {
                b'{' | b'[' => {
                    self.started = true;
                    if c == b'{' && self.at_item_level() {
                        self.item_start = Some(i);
                    }
                    if c == b'[' && self.stack.as_slice() == [b'{'] {
                        // Only the answer's `items`: `{"answers":[…]}` is not an answer.
                        self.in_items = self.text[..i]
                            .trim_end()
                            .strip_suffix(':')
                            .is_some_and(|k| k.trim_end().ends_with("\"items\""));
                    }
                    self.stack.push(c);
                }
                b'}' | b']' if self.started => {
                    self.stack.pop();
                    if c == b'}'
                        && self.at_item_level()
                        && let Some(start) = self.item_start.take()
                        && let Ok(v @ Value::Object(_)) =
                            serde_json::from_str::<Value>(&self.text[start..=i])
                    {
                        out.push(v);
                    }
                }
                b'"' if self.started => self.in_string = true,
                _ => {}
            }
            i += 1;
        }
        self.scanned = i;
        self.found += out.len();
        out
    }

    /// Whether the innermost open container is the answer's array: a bare top-level array,
    /// or an array directly inside the top-level object.
    fn at_item_level(&self) -> bool {
        match self.stack.as_slice() {
            [b'['] => true,
            [b'{', b'['] => self.in_items,
            _ => false,
        }
    }

    /// The whole answer text received.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// How many items were handed on.
    pub(crate) fn found(&self) -> usize {
        self.found
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn feed_in_pieces(text: &str, size: usize) -> Vec<Value> {
        let mut s = ItemScanner::default();
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        for piece in chars.chunks(size) {
            out.extend(s.feed(&piece.iter().collect::<String>()));
        }
        assert_eq!(s.text(), text);
        assert_eq!(s.found(), out.len());
        out
    }

    #[test]
    fn items_come_out_as_they_close_whatever_the_pieces() {
        let answer = json!({"items": [
            {"id": "p1", "kind": "job", "categories": ["web"], "extraction": {"title": "Сайт {для} \"кафе\" ]", "skills": ["a", "b"]}},
            {"id": "p2", "kind": "ad", "categories": [], "extraction": null},
        ]})
        .to_string();
        for size in [1, 2, 3, 7, 16, 1000] {
            let items = feed_in_pieces(&answer, size);
            assert_eq!(items.len(), 2, "pieces of {size}");
            assert_eq!(items[0]["id"], "p1");
            assert_eq!(items[0]["extraction"]["title"], "Сайт {для} \"кафе\" ]");
            assert_eq!(items[1]["id"], "p2");
        }
    }

    #[test]
    fn the_first_item_is_out_before_the_second_starts() {
        let mut s = ItemScanner::default();
        assert!(
            s.feed(r#"{"items":[{"id":"p1","categories":["x"]"#)
                .is_empty()
        );
        let first = s.feed(r#"},{"id":"p2""#);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0]["id"], "p1");
        assert_eq!(s.feed(r#"}]}"#).len(), 1);
    }

    #[test]
    fn a_bare_array_fences_and_prose_are_read_too() {
        let items = feed_in_pieces(
            "Here you go:\n```json\n[{\"id\":\"p1\",\"a\":{\"b\":[{\"c\":1}]}}, {\"id\":\"p2\"}]\n```",
            5,
        );
        let ids: Vec<&str> = items.iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["p1", "p2"]);
    }

    #[test]
    fn a_cut_answer_keeps_only_complete_items_and_nested_objects_are_not_items() {
        let mut s = ItemScanner::default();
        let items = s.feed(
            r#"{"meta":{"x":{"y":1}},"items":[{"id":"p1"},{"id":"p2","extraction":{"title":"half"#,
        );
        assert_eq!(items.len(), 1);
        assert_eq!(items[0], json!({"id": "p1"}));
    }

    #[test]
    fn only_the_items_array_holds_items() {
        let mut s = ItemScanner::default();
        assert!(
            s.feed(r#"{"answers":[{"id":"p1"}],"other" : [{"id":"p2"}]}"#)
                .is_empty()
        );
        let mut s = ItemScanner::default();
        assert_eq!(
            s.feed(r#"{"other":[{"id":"p0"}], "items" : [{"id":"p1"}]}"#)
                .len(),
            1
        );
    }
}
