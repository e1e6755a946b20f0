//! Telegram's HTML entity parser, ported from TDLib's `parse_html` (MessageEntity.cpp), plus
//! the post-processing the Bot API applies to every message text (whitespace trimming and
//! automatic detection of URLs, mentions, hashtags and bot commands).
//!
//! Offsets and lengths of entities are counted in UTF-16 code units, as in the Bot API.
//! Error strings are TDLib's; the Bot API prefixes them with `Bad Request: can't parse entities: `.
//!
//! Layout: `parse` reads tags (with `charref` decoding character references), `tags` turns
//! each closed tag into an entity, `trim` and `auto` are the Bot API's post-processing, and
//! `entity` defines the entities themselves.

mod auto;
mod charref;
mod entity;
mod parse;
mod tags;
mod trim;

pub use auto::add_auto_entities;
pub use entity::{Entity, EntityKind, sort_entities};
pub use parse::parse_html;
pub use trim::{trim, utf16_len};

#[cfg(test)]
mod tests;
