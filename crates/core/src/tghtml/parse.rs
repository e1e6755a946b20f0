//! The tag reader: walks Telegram-flavoured HTML, decoding character references, checking
//! start and end tags and their attributes, and counting UTF-16 offsets.

use super::charref::{BAD_SURROGATES, decode_html_entity, is_space, push_code_point};
use super::entity::{Entity, sort_entities};
use super::tags::close_entity;

/// A start tag waiting for its end tag.
pub(super) struct Open {
    pub(super) tag: String,
    pub(super) argument: String,
    pub(super) extra: Option<String>,
    /// Where its entity starts, in UTF-16 code units.
    pub(super) offset: i64,
    /// Where its content starts in the output bytes.
    pub(super) begin_pos: usize,
}

const SUPPORTED_TAGS: &[&str] = &[
    "a",
    "b",
    "strong",
    "i",
    "em",
    "s",
    "strike",
    "del",
    "u",
    "ins",
    "tg-spoiler",
    "tg-emoji",
    "tg-time",
    "span",
    "pre",
    "code",
    "blockquote",
];

/// Parses Telegram-flavoured HTML. Returns the visible text and its entities (before trimming
/// and automatic entity detection), or TDLib's error message.
pub fn parse_html(text: &str) -> Result<(String, Vec<Entity>), String> {
    let b = text.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut result: Vec<u8> = Vec::with_capacity(b.len());
    let mut entities: Vec<(Entity, Option<String>)> = Vec::new();
    let mut utf16: i64 = 0;
    let mut nested: Vec<Open> = Vec::new();
    let mut i = 0usize;
    while i < b.len() {
        let c = b[i];
        if c == b'&'
            && let Some((cp, next)) = decode_html_entity(b, i)
        {
            utf16 += if cp > 0xffff { 2 } else { 1 };
            push_code_point(&mut result, cp)?;
            i = next;
            continue;
        }
        if c != b'<' {
            result.push(c);
            if (c & 0xc0) != 0x80 {
                utf16 += if c >= 0xf0 { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        let begin = i;
        i += 1;
        if at(i) != b'/' {
            // A start tag.
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            if at(i) == 0 {
                return Err(format!("Unclosed start tag at byte offset {begin}"));
            }
            let tag = String::from_utf8_lossy(&b[begin + 1..i]).to_lowercase();
            if !SUPPORTED_TAGS.contains(&tag.as_str()) {
                return Err(format!(
                    "Unsupported start tag \"{tag}\" at byte offset {begin}"
                ));
            }
            let mut argument = String::new();
            let mut extra: Option<String> = None;
            while at(i) != b'>' {
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) == b'>' {
                    break;
                }
                let attr_begin = i;
                while !is_space(at(i)) && at(i) != b'=' && at(i) != b'>' {
                    i += 1;
                }
                let attr_name = String::from_utf8_lossy(&b[attr_begin..i.min(b.len())]).to_string();
                if attr_name.is_empty() {
                    return Err(format!(
                        "Empty attribute name in the tag \"{tag}\" at byte offset {begin}"
                    ));
                }
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) != b'=' {
                    if tag == "blockquote" && attr_name == "expandable" {
                        argument = "1".into();
                        continue;
                    }
                    return Err(format!(
                        "Expected equal sign in declaration of an attribute of the tag \"{tag}\" at byte offset {begin}"
                    ));
                }
                i += 1;
                while at(i) != 0 && is_space(at(i)) {
                    i += 1;
                }
                if at(i) == 0 {
                    return Err(format!(
                        "Unclosed start tag \"{tag}\" at byte offset {begin}"
                    ));
                }
                let mut value: Vec<u8> = Vec::new();
                if at(i) != b'\'' && at(i) != b'"' {
                    let token_begin = i;
                    while at(i).is_ascii_alphanumeric() || at(i) == b'.' || at(i) == b'-' {
                        i += 1;
                    }
                    value.extend(b[token_begin..i].iter().map(u8::to_ascii_lowercase));
                    if !is_space(at(i)) && at(i) != b'>' {
                        return Err(format!(
                            "Unexpected end of name token at byte offset {token_begin}"
                        ));
                    }
                } else {
                    let quote = at(i);
                    i += 1;
                    while at(i) != quote && at(i) != 0 {
                        if at(i) == b'&'
                            && let Some((cp, next)) = decode_html_entity(b, i)
                        {
                            push_code_point(&mut value, cp)?;
                            i = next;
                            continue;
                        }
                        value.push(at(i));
                        i += 1;
                    }
                    if at(i) == quote {
                        i += 1;
                    }
                }
                if at(i) == 0 {
                    return Err(format!("Unclosed start tag at byte offset {begin}"));
                }
                let value = String::from_utf8(value).map_err(|_| BAD_SURROGATES.to_owned())?;
                match (tag.as_str(), attr_name.as_str()) {
                    ("a", "href") => argument = value,
                    ("code", "class") if value.starts_with("language-") => {
                        argument = value["language-".len()..].to_owned();
                    }
                    ("span", "class") if value.starts_with("tg-") => {
                        argument = value["tg-".len()..].to_owned();
                    }
                    ("tg-emoji", "emoji-id") => argument = value,
                    ("tg-time", "unix") => argument = value,
                    ("tg-time", "format") => extra = Some(value),
                    ("blockquote", "expandable") => argument = "1".into(),
                    _ => {}
                }
            }
            if tag == "span" && argument != "spoiler" {
                return Err(format!(
                    "Tag \"span\" must have class \"tg-spoiler\" at byte offset {begin}"
                ));
            }
            nested.push(Open {
                tag,
                argument,
                extra,
                offset: utf16,
                begin_pos: result.len(),
            });
        } else {
            // An end tag.
            let Some(open) = nested.pop() else {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            };
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            let end_name = String::from_utf8_lossy(&b[begin + 2..i.min(b.len())]).to_string();
            while is_space(at(i)) && at(i) != 0 {
                i += 1;
            }
            if at(i) != b'>' {
                return Err(format!("Unclosed end tag at byte offset {begin}"));
            }
            if !end_name.is_empty() && !end_name.eq_ignore_ascii_case(&open.tag) {
                return Err(format!(
                    "Unmatched end tag at byte offset {begin}, expected \"</{}>\", found \"</{end_name}>\"",
                    open.tag
                ));
            }
            if utf16 > open.offset {
                close_entity(open, utf16, &result, &mut entities)?;
            }
        }
        // Skip the closing '>'.
        i += 1;
    }
    if let Some(open) = nested.last() {
        return Err(format!(
            "Can't find end tag corresponding to start tag \"{}\"",
            open.tag
        ));
    }
    let text = String::from_utf8(result).map_err(|_| BAD_SURROGATES.to_owned())?;
    let mut entities: Vec<Entity> = entities.into_iter().map(|(e, _)| e).collect();
    sort_entities(&mut entities);
    Ok((text, entities))
}
