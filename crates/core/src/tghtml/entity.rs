//! Message entities: their kinds, their Bot API JSON and TDLib's order.

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
    pub(super) fn new(kind: EntityKind, offset: i64, length: i64) -> Self {
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

/// Sorts entities like TDLib: by offset, longer first, then by type priority.
pub fn sort_entities(entities: &mut [Entity]) {
    entities.sort_by(|a, b| {
        a.offset
            .cmp(&b.offset)
            .then(b.length.cmp(&a.length))
            .then(a.kind.priority().cmp(&b.kind.priority()))
    });
}
