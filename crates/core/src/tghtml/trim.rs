//! The Bot API's whitespace trimming of message texts, and UTF-16 length counting.

use super::entity::Entity;

/// TDLib's trim set for message texts.
fn is_trim_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{0b}' | '\u{0c}')
}

/// Length of a string in UTF-16 code units.
pub fn utf16_len(s: &str) -> i64 {
    s.chars().map(|c| c.len_utf16() as i64).sum()
}

/// Trims leading and trailing whitespace as the Bot API does, shifting and clipping entities.
pub fn trim(text: &str, entities: Vec<Entity>) -> (String, Vec<Entity>) {
    let trimmed_start = text.trim_start_matches(is_trim_space);
    let left = utf16_len(&text[..text.len() - trimmed_start.len()]);
    let trimmed = trimmed_start.trim_end_matches(is_trim_space);
    let len = utf16_len(trimmed);
    let out = entities
        .into_iter()
        .filter_map(|mut e| {
            let start = (e.offset - left).max(0);
            let end = (e.offset + e.length - left).min(len);
            if end <= start {
                return None;
            }
            e.offset = start;
            e.length = end - start;
            Some(e)
        })
        .collect();
    (trimmed.to_owned(), out)
}
