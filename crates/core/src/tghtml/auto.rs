//! The entities Telegram detects on its own: URLs, @mentions, #hashtags and /commands.

use super::entity::{Entity, EntityKind, sort_entities};

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
