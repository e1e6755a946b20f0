//! Telegram's HTML entity parser, ported from TDLib's `parse_html` (MessageEntity.cpp), plus
//! the post-processing the Bot API applies to every message text (whitespace trimming and
//! automatic detection of URLs, mentions, hashtags and bot commands).
//!
//! Offsets and lengths of entities are counted in UTF-16 code units, as in the Bot API.
//! Error strings are TDLib's; the Bot API prefixes them with `Bad Request: can't parse entities: `.

use serde_json::{Value, json};

/// The kind of a message entity (the Bot API's `MessageEntity.type` plus its extra fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntityKind {
    /// `bold`
    Bold,
    /// `italic`
    Italic,
    /// `underline`
    Underline,
    /// `strikethrough`
    Strikethrough,
    /// `spoiler`
    Spoiler,
    /// `code`
    Code,
    /// `pre`, optionally with a language
    Pre(Option<String>),
    /// `text_link`
    TextLink(String),
    /// `text_mention` of a user id
    TextMention(i64),
    /// `custom_emoji`
    CustomEmoji(String),
    /// `blockquote`
    Blockquote,
    /// `expandable_blockquote`
    ExpandableBlockquote,
    /// `date_time`
    DateTime(i64, Option<String>),
    /// `url` (detected automatically)
    Url,
    /// `mention` (detected automatically)
    Mention,
    /// `hashtag` (detected automatically)
    Hashtag,
    /// `bot_command` (detected automatically)
    BotCommand,
}

impl EntityKind {
    /// TDLib's sort priority of entity types (lower comes first at equal offset and length).
    fn priority(&self) -> u8 {
        match self {
            EntityKind::Blockquote | EntityKind::ExpandableBlockquote => 0,
            EntityKind::Pre(_) => 11,
            EntityKind::Code => 20,
            EntityKind::TextLink(_) | EntityKind::TextMention(_) => 49,
            EntityKind::Url
            | EntityKind::Mention
            | EntityKind::Hashtag
            | EntityKind::BotCommand
            | EntityKind::DateTime(..) => 50,
            EntityKind::Bold => 90,
            EntityKind::Italic => 91,
            EntityKind::Underline => 92,
            EntityKind::Strikethrough => 93,
            EntityKind::Spoiler => 94,
            EntityKind::CustomEmoji(_) => 99,
        }
    }
}

/// One parsed entity; offsets and lengths in UTF-16 code units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// What the entity is.
    pub kind: EntityKind,
    /// Start, in UTF-16 code units.
    pub offset: i64,
    /// Length, in UTF-16 code units.
    pub length: i64,
}

impl Entity {
    fn new(kind: EntityKind, offset: i64, length: i64) -> Self {
        Entity {
            kind,
            offset,
            length,
        }
    }

    /// The entity as the Bot API serializes a `MessageEntity`.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"offset": self.offset, "length": self.length});
        let (ty, extra): (&str, Option<(&str, Value)>) = match &self.kind {
            EntityKind::Bold => ("bold", None),
            EntityKind::Italic => ("italic", None),
            EntityKind::Underline => ("underline", None),
            EntityKind::Strikethrough => ("strikethrough", None),
            EntityKind::Spoiler => ("spoiler", None),
            EntityKind::Code => ("code", None),
            EntityKind::Pre(lang) => ("pre", lang.as_ref().map(|l| ("language", json!(l)))),
            EntityKind::TextLink(url) => ("text_link", Some(("url", json!(url)))),
            EntityKind::TextMention(id) => (
                "text_mention",
                Some((
                    "user",
                    json!({"id": id, "is_bot": false, "first_name": format!("User {id}")}),
                )),
            ),
            EntityKind::CustomEmoji(id) => ("custom_emoji", Some(("custom_emoji_id", json!(id)))),
            EntityKind::Blockquote => ("blockquote", None),
            EntityKind::ExpandableBlockquote => ("expandable_blockquote", None),
            EntityKind::DateTime(unix, fmt) => {
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("unix_time".into(), json!(unix));
                    if let Some(f) = fmt {
                        obj.insert("date_time_format".into(), json!(f));
                    }
                }
                ("date_time", None)
            }
            EntityKind::Url => ("url", None),
            EntityKind::Mention => ("mention", None),
            EntityKind::Hashtag => ("hashtag", None),
            EntityKind::BotCommand => ("bot_command", None),
        };
        if let Some(obj) = v.as_object_mut() {
            obj.insert("type".into(), json!(ty));
            if let Some((k, val)) = extra {
                obj.insert(k.into(), val);
            }
        }
        v
    }
}

/// TDLib's `is_space`: the NUL byte counts as space, which also stops scans at the end.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0 | 0x0b | 0x0c)
}

/// Decodes an HTML character reference at `pos` (which holds `&`).
/// Returns the code point and the position after it, or `None` when it is not one
/// Telegram understands (then the `&` is kept literally).
fn decode_html_entity(b: &[u8], pos: usize) -> Option<(u32, usize)> {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut end = pos + 1;
    let res: u32;
    if at(pos + 1) == b'#' {
        end += 1;
        let mut r: u32 = 0;
        if at(pos + 2) == b'x' {
            end += 1;
            while at(end).is_ascii_hexdigit() {
                r = r * 16 + char::from(at(end)).to_digit(16).unwrap_or(0);
                end += 1;
                if r >= 0x10ffff {
                    return None;
                }
            }
        } else {
            while at(end).is_ascii_digit() {
                r = r * 10 + u32::from(at(end) - b'0');
                end += 1;
                if r >= 0x10ffff {
                    return None;
                }
            }
        }
        if r == 0 || end - pos >= 10 {
            return None;
        }
        res = r;
    } else {
        while at(end).is_ascii_alphabetic() {
            end += 1;
        }
        res = match &b[pos + 1..end] {
            b"lt" => u32::from(b'<'),
            b"gt" => u32::from(b'>'),
            b"amp" => u32::from(b'&'),
            b"quot" => u32::from(b'"'),
            _ => return None,
        };
    }
    if at(end) == b';' {
        end += 1;
    }
    Some((res, end))
}

const BAD_SURROGATES: &str = "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units";

fn push_code_point(out: &mut Vec<u8>, cp: u32) -> Result<(), String> {
    let ch = char::from_u32(cp).ok_or_else(|| BAD_SURROGATES.to_owned())?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    Ok(())
}

struct Open {
    tag: String,
    argument: String,
    extra: Option<String>,
    offset: i64,
    begin_pos: usize,
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

fn close_entity(
    open: Open,
    utf16: i64,
    result: &[u8],
    entities: &mut Vec<(Entity, Option<String>)>,
) -> Result<(), String> {
    let offset = open.offset;
    let length = utf16 - offset;
    let same_range = |e: &Entity| e.offset == offset && e.length == length;
    let kind = match open.tag.as_str() {
        "i" | "em" => EntityKind::Italic,
        "b" | "strong" => EntityKind::Bold,
        "s" | "strike" | "del" => EntityKind::Strikethrough,
        "u" | "ins" => EntityKind::Underline,
        "tg-spoiler" | "span" => EntityKind::Spoiler,
        "tg-emoji" => match open.argument.parse::<i64>() {
            Ok(id) if id != 0 => EntityKind::CustomEmoji(id.to_string()),
            _ => return Err("Invalid custom emoji identifier specified".into()),
        },
        "tg-time" => match open.argument.parse::<i64>() {
            Ok(unix) => EntityKind::DateTime(unix, open.extra),
            Err(_) => return Err("Invalid Unix time specified".into()),
        },
        "a" => {
            let url = if open.argument.is_empty() {
                String::from_utf8_lossy(&result[open.begin_pos..]).to_string()
            } else {
                open.argument
            };
            match check_link(&url) {
                Some(kind) => kind,
                None => return Ok(()),
            }
        }
        "pre" => {
            if let Some((last, lang)) = entities.last_mut()
                && last.kind == EntityKind::Code
                && same_range(last)
            {
                // <pre><code class="language-x">…</code></pre> is a pre with a language;
                // a code filling a pre without a language disappears into the pre.
                last.kind = EntityKind::Pre(lang.take());
                return Ok(());
            }
            EntityKind::Pre(None)
        }
        "code" => {
            if let Some((last, _)) = entities.last_mut()
                && last.kind == EntityKind::Pre(None)
                && same_range(last)
            {
                if !open.argument.is_empty() {
                    last.kind = EntityKind::Pre(Some(open.argument));
                }
                return Ok(());
            }
            let lang = (!open.argument.is_empty()).then_some(open.argument);
            entities.push((Entity::new(EntityKind::Code, offset, length), lang));
            return Ok(());
        }
        "blockquote" => {
            if open.argument.is_empty() {
                EntityKind::Blockquote
            } else {
                EntityKind::ExpandableBlockquote
            }
        }
        _ => return Ok(()),
    };
    entities.push((Entity::new(kind, offset, length), None));
    Ok(())
}

/// TDLib's link check, simplified: `tg://user?id=N` is a text mention; http(s) links are
/// normalized; `tg:`, `ton:` and `tonsite:` links are kept; links without a scheme get
/// `http://`; anything else is dropped (Telegram silently drops the entity).
fn check_link(url: &str) -> Option<EntityKind> {
    let lower = url.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("tg://user?id=")
        && let Ok(id) = rest.parse::<i64>()
        && id > 0
    {
        return Some(EntityKind::TextMention(id));
    }
    if lower.starts_with("tg:") || lower.starts_with("ton:") || lower.starts_with("tonsite:") {
        return Some(EntityKind::TextLink(url.to_owned()));
    }
    let candidate = if lower.starts_with("http://") || lower.starts_with("https://") {
        url.to_owned()
    } else if lower.contains("://") || url.trim().is_empty() {
        return None;
    } else if let Some((scheme, _)) = lower.split_once(':')
        && !scheme.contains('.')
        && !scheme.chars().all(|c| c.is_ascii_digit())
        && matches!(
            scheme,
            "javascript" | "mailto" | "data" | "file" | "ftp" | "vbscript"
        )
    {
        return None;
    } else {
        format!("http://{url}")
    };
    let parsed = url::Url::parse(&candidate).ok()?;
    let host = parsed.host_str()?;
    if host.is_empty() {
        return None;
    }
    Some(EntityKind::TextLink(parsed.to_string()))
}

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

/// Detects the entities Telegram adds on its own (URLs, @mentions, #hashtags, /commands),
/// outside code, pre and links, and merges them into `entities`, sorted as TDLib sorts.
pub fn add_auto_entities(text: &str, entities: &mut Vec<Entity>) {
    let chars: Vec<char> = text.chars().collect();
    let mut u16pos = Vec::with_capacity(chars.len() + 1);
    let mut acc = 0i64;
    for c in &chars {
        u16pos.push(acc);
        acc += c.len_utf16() as i64;
    }
    u16pos.push(acc);
    let blocked = |start: i64, end: i64, ents: &[Entity]| {
        ents.iter().any(|e| {
            matches!(
                e.kind,
                EntityKind::Code | EntityKind::Pre(_) | EntityKind::TextLink(_)
            ) && e.offset < end
                && start < e.offset + e.length
        })
    };
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev_ok = i == 0 || !word(chars[i - 1]);
        let mut matched: Option<(usize, EntityKind)> = None;
        if prev_ok && (c == 'h' || c == 'H') {
            let rest: String = chars[i..chars.len().min(i + 8)].iter().collect();
            let lower = rest.to_ascii_lowercase();
            let scheme_len = if lower.starts_with("https://") {
                8
            } else if lower.starts_with("http://") {
                7
            } else {
                0
            };
            if scheme_len > 0 {
                let mut j = i + scheme_len;
                while j < chars.len()
                    && !chars[j].is_whitespace()
                    && !matches!(chars[j], '<' | '>' | '"')
                {
                    j += 1;
                }
                while j > i + scheme_len
                    && matches!(chars[j - 1], '.' | ',' | ')' | '!' | '?' | ';' | ':' | '\'')
                {
                    j -= 1;
                }
                if j > i + scheme_len {
                    matched = Some((j, EntityKind::Url));
                }
            }
        } else if prev_ok && c == '@' {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            if (5..=32).contains(&(j - i - 1)) {
                matched = Some((j, EntityKind::Mention));
            }
        } else if prev_ok && c == '#' {
            let mut j = i + 1;
            while j < chars.len() && word(chars[j]) {
                j += 1;
            }
            if j > i + 1 && chars[i + 1..j].iter().any(|c| !c.is_ascii_digit()) {
                matched = Some((j, EntityKind::Hashtag));
            }
        } else if c == '/' && (i == 0 || chars[i - 1].is_whitespace()) {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let end_ok = j == chars.len() || chars[j].is_whitespace() || chars[j] == '@';
            if j > i + 1 && j - i - 1 <= 64 && end_ok {
                if j < chars.len() && chars[j] == '@' {
                    let mut k = j + 1;
                    while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
                        k += 1;
                    }
                    if k > j + 1 {
                        j = k;
                    }
                }
                matched = Some((j, EntityKind::BotCommand));
            }
        }
        if let Some((end, kind)) = matched {
            let (s, e) = (u16pos[i], u16pos[end]);
            if !blocked(s, e, entities) {
                found.push(Entity::new(kind, s, e - s));
            }
            i = end;
        } else {
            i += 1;
        }
    }
    entities.extend(found);
    sort_entities(entities);
}

/// Sorts entities like TDLib: by offset, longer first, then by type priority.
pub fn sort_entities(entities: &mut [Entity]) {
    entities.sort_by(|a, b| {
        a.offset
            .cmp(&b.offset)
            .then(b.length.cmp(&a.length))
            .then(a.kind.priority().cmp(&b.kind.priority()))
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn kinds(s: &str) -> (String, Vec<(String, i64, i64)>) {
        let (t, e) = parse_html(s).unwrap();
        let v = e
            .iter()
            .map(|e| {
                (
                    e.to_json()["type"].as_str().unwrap().to_owned(),
                    e.offset,
                    e.length,
                )
            })
            .collect();
        (t, v)
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
        assert_eq!(
            parse_html("<foo>x</foo>").unwrap_err(),
            "Unsupported start tag \"foo\" at byte offset 0"
        );
        assert_eq!(
            parse_html("<b>x").unwrap_err(),
            "Can't find end tag corresponding to start tag \"b\""
        );
        assert_eq!(
            parse_html("<b><i>x</b></i>").unwrap_err(),
            "Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\""
        );
        assert_eq!(
            parse_html("x</b>").unwrap_err(),
            "Unexpected end tag at byte offset 1"
        );
        assert_eq!(
            parse_html("a <b").unwrap_err(),
            "Unclosed start tag at byte offset 2"
        );
        assert_eq!(
            parse_html("<span class=\"x\">y</span>").unwrap_err(),
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0"
        );
        assert_eq!(
            parse_html("<a href>x</a>").unwrap_err(),
            "Expected equal sign in declaration of an attribute of the tag \"a\" at byte offset 0"
        );
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
        let j: Vec<(String, i64, i64)> = e
            .iter()
            .map(|e| {
                (
                    e.to_json()["type"].as_str().unwrap().to_owned(),
                    e.offset,
                    e.length,
                )
            })
            .collect();
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
}
