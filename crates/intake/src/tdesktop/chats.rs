//! The export's structure, visited as it streams by: a chat (or the top level), the
//! `chats`/`left_chats` lists of a full-account export, and a chat's `messages`.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::message::IdLike;
use super::posts::{ChatMeta, Ctx};

/// Drives a visitor over a JSON object.
pub(super) struct Object<V>(pub(super) V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Object<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        deserializer.deserialize_map(self.0)
    }
}

/// Drives a visitor over a JSON array.
struct Array<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Array<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        deserializer.deserialize_seq(self.0)
    }
}

/// Visits a chat object (or the top level of the file, which is either a chat or a
/// full-account export holding `chats` and `left_chats`).
pub(super) struct Chat<'c, 'a> {
    pub(super) ctx: &'c mut Ctx<'a>,
    pub(super) top_level: bool,
}

impl<'de> Visitor<'de> for Chat<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.top_level {
            f.write_str("a Telegram Desktop export (a JSON object)")
        } else {
            f.write_str("a chat object")
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut meta = ChatMeta::default();
        // Messages that came before the chat's type and id (Telegram Desktop always writes
        // those first; other writers may sort keys): kept until the chat object ends so they
        // get the right channel and links.
        let mut early: Vec<serde_json::Value> = Vec::new();
        let mut saw_messages = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => meta.name = map.next_value()?,
                "type" => meta.kind = map.next_value()?,
                "id" => meta.id = map.next_value::<Option<IdLike>>()?.map(|i| i.0),
                "messages" => {
                    saw_messages = true;
                    self.ctx.recognized = true;
                    if meta.id.is_some() && meta.kind.is_some() {
                        map.next_value_seed(Array(Messages {
                            ctx: &mut *self.ctx,
                            chat: &meta,
                        }))?;
                    } else {
                        early = map.next_value()?;
                    }
                }
                "chats" | "left_chats" if self.top_level => {
                    self.ctx.recognized = true;
                    map.next_value_seed(Object(ChatListHolder {
                        ctx: &mut *self.ctx,
                    }))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if saw_messages {
            self.ctx.stats.chats += 1;
        }
        for (position, msg) in early.into_iter().enumerate() {
            self.ctx
                .take(&meta, position + 1, msg)
                .map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// Visits `{"about": ..., "list": [chat, ...]}`.
struct ChatListHolder<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
}

impl<'de> Visitor<'de> for ChatListHolder<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with a \"list\" of chats")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "list" {
                map.next_value_seed(Array(ChatList {
                    ctx: &mut *self.ctx,
                }))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// Visits `[chat, ...]`.
struct ChatList<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
}

impl<'de> Visitor<'de> for ChatList<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of chats")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Object(Chat {
                ctx: &mut *self.ctx,
                top_level: false,
            }))?
            .is_some()
        {}
        Ok(())
    }
}

/// Visits a chat's `messages` array, one message at a time.
struct Messages<'c, 'a, 'm> {
    ctx: &'c mut Ctx<'a>,
    chat: &'m ChatMeta,
}

impl<'de> Visitor<'de> for Messages<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // Each message is read as plain JSON first, so that one of an unexpected shape is
        // a malformed message (reported and skipped) rather than the end of the import.
        let mut position = 0;
        while let Some(msg) = seq.next_element::<serde_json::Value>()? {
            position += 1;
            self.ctx
                .take(self.chat, position, msg)
                .map_err(de::Error::custom)?;
        }
        Ok(())
    }
}
