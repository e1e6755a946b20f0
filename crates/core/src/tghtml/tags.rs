//! What a closed tag becomes: the entity of each tag, `<pre>`/`<code>` merging and the
//! link check of `<a href>`.

use super::entity::{Entity, EntityKind};
use super::parse::Open;

/// Turns a closed tag into its entity (or merges it into the last one, or drops it).
pub(super) fn close_entity(
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
