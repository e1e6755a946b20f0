//! `[[categories]]`: the taxonomy the configuration seeds (slug, name, description, the bot
//! that delivers it, whether the digest includes it), and [`Category`], one entry checked.

use std::collections::HashSet;

use serde::Deserialize;

use crate::category::{CategorySlug, STANDARD};
use crate::config::InvalidKey;

/// One `[[categories]]` entry as the file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategorySection {
    pub slug: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The bot (a `[[bots]]` name) that delivers this category.
    pub bot: String,
    /// Whether the daily public digest includes it.
    #[serde(default = "CategorySection::in_digest_by_default")]
    pub digest: bool,
}

/// A category after validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub slug: CategorySlug,
    pub name: String,
    pub description: String,
    pub bot: String,
    /// Whether the daily public digest includes it.
    pub digest: bool,
}

impl CategorySection {
    /// Every category is in the digest unless its entry says `digest = false`.
    pub const fn in_digest_by_default() -> bool {
        true
    }

    /// The categories `sections` name, checked: slugs valid and unique, each one's bot among
    /// `bots` (unless no bot is configured). No entry: the built-in taxonomy ([`STANDARD`]),
    /// delivered by the first bot.
    pub fn resolve_all(
        sections: &[CategorySection],
        bots: &[&str],
    ) -> Result<Vec<Category>, InvalidKey> {
        let standard;
        let sections = if sections.is_empty() {
            let bot = bots.first().copied().unwrap_or_default();
            standard = STANDARD
                .iter()
                .map(|(slug, name, description)| CategorySection {
                    slug: (*slug).to_owned(),
                    name: (*name).to_owned(),
                    description: (*description).to_owned(),
                    bot: bot.to_owned(),
                    digest: true,
                })
                .collect::<Vec<_>>();
            &standard[..]
        } else {
            sections
        };
        let mut slugs = HashSet::new();
        let mut categories = Vec::with_capacity(sections.len());
        for (i, c) in sections.iter().enumerate() {
            let slug = CategorySlug::parse(&c.slug)
                .map_err(|e| InvalidKey::new(format!("categories[{i}].slug"), e.to_string()))?;
            if !slugs.insert(slug.clone()) {
                return Err(InvalidKey::new(
                    format!("categories[{i}].slug"),
                    format!("{slug} is defined twice"),
                ));
            }
            if !bots.is_empty() && !bots.contains(&c.bot.as_str()) {
                return Err(InvalidKey::new(
                    format!("categories[{i}].bot"),
                    format!("no bot named {:?} in [[bots]]", c.bot),
                ));
            }
            categories.push(Category {
                slug,
                name: c.name.clone(),
                description: c.description.clone(),
                bot: c.bot.clone(),
                digest: c.digest,
            });
        }
        Ok(categories)
    }
}
