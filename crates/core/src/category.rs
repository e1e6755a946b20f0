//! Category slugs: the closed set of labels a job can carry.

use std::fmt;

/// A category slug such as `web` or `bots`: lowercase ASCII letters, digits, `_` or `-`,
/// 1 to 32 characters. Parsed once at the edge; a value of this type is always valid.
///
/// Serialized as the bare slug; deserializing checks it like [`CategorySlug::parse`].
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct CategorySlug(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid category slug {0:?}: use 1-32 lowercase letters, digits, '_' or '-'")]
pub struct InvalidCategory(pub String);

impl CategorySlug {
    pub fn parse(raw: &str) -> Result<Self, InvalidCategory> {
        let ok = !raw.is_empty()
            && raw.len() <= 32
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(InvalidCategory(raw.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for CategorySlug {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for CategorySlug {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl TryFrom<String> for CategorySlug {
    type Error = InvalidCategory;

    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<CategorySlug> for String {
    fn from(slug: CategorySlug) -> String {
        slug.0
    }
}

impl fmt::Display for CategorySlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for CategorySlug {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The standard taxonomy: slug, display name, description (used in the LLM prompt and the
/// bots). Configured categories replace it; tests and benchmarks use it as is.
pub const STANDARD: [(&str, &str, &str); 12] = [
    (
        "web",
        "Web",
        "websites, landing pages, frontend, backend, CMS (WordPress, Tilda, Bitrix), site fixes",
    ),
    (
        "bots",
        "Bots & automation",
        "Telegram/Discord bots, scripts, parsers, scrapers, automation, integrations, mini apps",
    ),
    (
        "mobile",
        "Mobile apps",
        "iOS / Android / Flutter / React Native apps",
    ),
    (
        "design",
        "Design",
        "graphic, UI/UX, logos, banners, presentations, illustrations, marketplace cards",
    ),
    (
        "video",
        "Video",
        "video editing, motion design, reels/shorts, YouTube montage",
    ),
    (
        "texts",
        "Texts",
        "copywriting, articles, editing, scripts for videos, content writing",
    ),
    (
        "marketing",
        "Marketing",
        "SMM, targeting, ads, SEO, marketplaces promotion, email marketing",
    ),
    (
        "ai",
        "AI",
        "AI image/video/text generation, prompt engineering, ML/LLM work, neural networks",
    ),
    (
        "assistant",
        "Assistants",
        "virtual assistant, admin, moderation, sales/calls manager, customer support",
    ),
    ("translation", "Translation", "translation and localisation"),
    (
        "audio",
        "Audio",
        "voice-over, music, podcasts, sound editing",
    ),
    (
        "data",
        "Data",
        "data entry, Excel/Google Sheets, analytics, dashboards, research",
    ),
];

/// The slugs of the [`STANDARD`] taxonomy, in order.
pub fn standard_slugs() -> impl Iterator<Item = &'static str> {
    STANDARD.iter().map(|(slug, _, _)| *slug)
}

/// The [`STANDARD`] taxonomy's slugs, parsed.
pub fn standard() -> Vec<CategorySlug> {
    standard_slugs()
        .map(|s| CategorySlug(s.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_taxonomy_has_twelve_valid_distinct_slugs() {
        let slugs = standard();
        assert_eq!(slugs.len(), 12);
        for slug in &slugs {
            assert_eq!(CategorySlug::parse(slug.as_str()).as_ref(), Ok(slug));
        }
        let distinct: std::collections::HashSet<_> = slugs.iter().collect();
        assert_eq!(distinct.len(), 12);
    }

    #[test]
    fn slugs_are_checked() {
        assert!(CategorySlug::parse("web").is_ok());
        assert!(CategorySlug::parse("data-entry_2").is_ok());
        for bad in ["", "Web", "веб", "a b", "x".repeat(33).as_str(), "<b>"] {
            assert!(CategorySlug::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
