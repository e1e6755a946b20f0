//! One message of the export as JSON: the fields jobwire reads (ids that are numbers or
//! strings), and its text flattened from a string or an array of text parts.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The fields of a message jobwire uses; everything else is skipped unparsed.
#[derive(Debug, Deserialize)]
pub(super) struct RawMessage {
    pub(super) id: Option<IdLike>,
    #[serde(rename = "type")]
    pub(super) kind: Option<String>,
    pub(super) date: Option<String>,
    pub(super) date_unixtime: Option<IdLike>,
    pub(super) from: Option<String>,
    pub(super) from_id: Option<IdLike>,
    pub(super) text: Option<Text>,
}

/// A number or a string, kept as a string (`id`, `from_id`, `date_unixtime` vary by version).
#[derive(Debug)]
pub(super) struct IdLike(pub(super) String);

impl<'de> Deserialize<'de> for IdLike {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IdLike;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IdLike, E> {
                Ok(IdLike(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdLike, E> {
                Ok(IdLike(v.to_string()))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<IdLike, E> {
                Ok(IdLike(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<IdLike, E> {
                Ok(IdLike(v))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A message's `text`: a string, or an array of strings and `{type, text, ...}` objects,
/// concatenated.
#[derive(Debug)]
pub(super) struct Text(pub(super) String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a text: a string or an array of text parts")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
        Ok(Text(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
        Ok(Text(String::new()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
        let mut out = String::new();
        while let Some(part) = seq.next_element::<TextPart>()? {
            out.push_str(&part.0);
        }
        Ok(Text(out))
    }
}

/// One element of a text array: a string or an object whose `text` is the visible text.
struct TextPart(String);

impl<'de> Deserialize<'de> for TextPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextPart;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a {\"type\", \"text\"} object")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<TextPart, E> {
                Ok(TextPart(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<TextPart, E> {
                Ok(TextPart(v))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextPart, A::Error> {
                let mut text = String::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "text" {
                        text = map.next_value::<Option<String>>()?.unwrap_or_default();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(TextPart(text))
            }
        }
        deserializer.deserialize_any(V)
    }
}
