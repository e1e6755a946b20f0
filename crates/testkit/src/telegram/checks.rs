//! Content checks of outgoing messages as Telegram does them: entity parsing, empty and
//! too-long texts and captions, and inline keyboard buttons.

use serde_json::Value;

use jobwire_core::tghtml::{self as html, Entity, EntityKind};

use super::params::{Params, ParamsExt};

/// Maximum visible length of a message text, in Unicode scalar values.
const MAX_TEXT_LEN: usize = 4096;
/// Maximum visible length of a caption.
const MAX_CAPTION_LEN: usize = 1024;

/// The visible text and entities of a message, after parsing.
pub(super) struct Content {
    pub(super) visible: String,
    pub(super) entities: Vec<Value>,
}

pub(super) struct TextRules {
    max_len: usize,
    too_long: &'static str,
    empty: Option<&'static str>,
}

pub(super) const MESSAGE_RULES: TextRules = TextRules {
    max_len: MAX_TEXT_LEN,
    too_long: "Bad Request: message is too long",
    empty: Some("Bad Request: message text is empty"),
};

pub(super) const EDIT_RULES: TextRules = TextRules {
    max_len: MAX_TEXT_LEN,
    too_long: "Bad Request: MESSAGE_TOO_LONG",
    empty: Some("Bad Request: message text is empty"),
};

pub(super) const CAPTION_RULES: TextRules = TextRules {
    max_len: MAX_CAPTION_LEN,
    too_long: "Bad Request: message caption is too long",
    empty: None,
};

fn explicit_entities(v: Option<Value>) -> Vec<Entity> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|e| {
            let offset = e.get("offset")?.as_i64()?;
            let length = e.get("length")?.as_i64()?;
            let kind = match e.get("type")?.as_str()? {
                "bold" => EntityKind::Bold,
                "italic" => EntityKind::Italic,
                "underline" => EntityKind::Underline,
                "strikethrough" => EntityKind::Strikethrough,
                "spoiler" => EntityKind::Spoiler,
                "code" => EntityKind::Code,
                "pre" => {
                    EntityKind::Pre(e.get("language").and_then(Value::as_str).map(str::to_owned))
                }
                "text_link" => EntityKind::TextLink(e.get("url")?.as_str()?.to_owned()),
                "text_mention" => EntityKind::TextMention(e.get("user")?.get("id")?.as_i64()?),
                "custom_emoji" => {
                    EntityKind::CustomEmoji(e.get("custom_emoji_id")?.as_str()?.to_owned())
                }
                "blockquote" => EntityKind::Blockquote,
                "expandable_blockquote" => EntityKind::ExpandableBlockquote,
                _ => return None,
            };
            Some(Entity {
                kind,
                offset,
                length,
            })
        })
        .collect()
}

pub(super) fn parse_content(
    text: &str,
    parse_mode: Option<&str>,
    entities: Option<Value>,
    rules: &TextRules,
) -> Result<Content, String> {
    let (visible, ents) = match parse_mode.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") => (text.to_owned(), explicit_entities(entities)),
        Some("html") => {
            html::parse_html(text).map_err(|e| format!("Bad Request: can't parse entities: {e}"))?
        }
        Some("markdownv2" | "markdown") => {
            return Err(
                "Bad Request: can't parse entities: Markdown parse modes are not supported by the jobwire fake Bot API; use HTML"
                    .into(),
            );
        }
        Some(_) => return Err("Bad Request: unsupported parse_mode".into()),
    };
    let (visible, mut ents) = html::trim(&visible, ents);
    if let Some(empty) = rules.empty
        && visible.chars().all(char::is_whitespace)
    {
        return Err(empty.into());
    }
    if visible.chars().count() > rules.max_len {
        return Err(rules.too_long.into());
    }
    html::add_auto_entities(&visible, &mut ents);
    Ok(Content {
        visible,
        entities: ents.iter().map(Entity::to_json).collect(),
    })
}

const BUTTON_ACTIONS: &[&str] = &[
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
];

/// Decodes `reply_markup` and checks inline keyboard buttons like Telegram.
pub(super) fn check_markup(p: &Params) -> Result<Option<Value>, String> {
    let Some(markup) = p.json("reply_markup") else {
        return Ok(None);
    };
    let Some(keyboard) = markup.get("inline_keyboard") else {
        return Ok(Some(markup));
    };
    let Some(rows) = keyboard.as_array() else {
        return Err(
            "Bad Request: can't parse inline keyboard: field \"inline_keyboard\" must be an Array"
                .into(),
        );
    };
    for row in rows {
        let Some(buttons) = row.as_array() else {
            return Err("Bad Request: can't parse inline keyboard: row must be an Array".into());
        };
        for button in buttons {
            if button.get("text").and_then(Value::as_str).is_none() {
                return Err("Bad Request: can't parse inline keyboard button: Field \"text\" must be of type String".into());
            }
            if !BUTTON_ACTIONS.iter().any(|a| button.get(*a).is_some()) {
                return Err("Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard".into());
            }
            if let Some(data) = button.get("callback_data") {
                let len = data.as_str().map_or(0, str::len);
                if !(1..=64).contains(&len) {
                    return Err("Bad Request: BUTTON_DATA_INVALID".into());
                }
            }
            if let Some(u) = button.get("url") {
                let ok = u.as_str().is_some_and(|s| {
                    let l = s.to_ascii_lowercase();
                    (l.starts_with("http://") || l.starts_with("https://"))
                        && url::Url::parse(s)
                            .is_ok_and(|u| u.host_str().is_some_and(|h| !h.is_empty()))
                        || l.starts_with("tg://") && s.len() > 5
                });
                if !ok {
                    return Err("Bad Request: BUTTON_URL_INVALID".into());
                }
            }
        }
    }
    Ok(Some(markup))
}
