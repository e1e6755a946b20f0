//! Categories as data: the display name, the description (the LLM prompt, the bots), the
//! delivering bot and the digest flag of each category, edited in the admin panel. The
//! configuration names the set of categories and seeds rows the database lacks; every change
//! bumps `meta.categories_version` in its own transaction, so each running process notices it
//! with one single-row read ([`CategoryStore::categories_version`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use jobwire_core::CategorySlug;

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

const BUMP_CATEGORIES_VERSION: &str =
    "UPDATE meta SET value = value + 1 WHERE key = 'categories_version'";

/// What a category is, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryRow {
    pub slug: CategorySlug,
    pub name: String,
    pub description: String,
    /// The `[[bots]]` name of the bot that delivers it.
    pub bot: String,
    /// Whether the daily public digest includes it.
    pub digest: bool,
    /// The admin who changed it last (`None`: as seeded from the configuration).
    pub updated_by: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// A category's editable part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryFields {
    pub name: String,
    pub description: String,
    pub bot: String,
    pub digest: bool,
}

#[async_trait]
pub trait CategoryStore: Send + Sync {
    /// Writes the categories the database lacks (configuration order); rows it has are left
    /// as they are. Returns how many were written.
    async fn seed_categories(
        &self,
        seeds: &[(CategorySlug, CategoryFields)],
        now: DateTime<Utc>,
    ) -> Result<usize>;

    /// Every stored category, by slug.
    async fn categories(&self) -> Result<Vec<CategoryRow>>;

    /// Changes a category, recording who and when; `None` when there is no such category.
    async fn update_category(
        &self,
        slug: &CategorySlug,
        fields: &CategoryFields,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<CategoryRow>>;

    /// A counter bumped by every change (seed or edit).
    async fn categories_version(&self) -> Result<i64>;
}

fn row<DB: Dialect>(row: &DB::Row) -> Result<CategoryRow> {
    let c = Cols::<DB>::new(row);
    let raw = c.text("slug")?;
    let slug = CategorySlug::parse(&raw).map_err(|e| StoreError::Corrupt {
        column: "categories.slug",
        detail: e.to_string(),
    })?;
    Ok(CategoryRow {
        slug,
        name: c.text("name")?,
        description: c.text("description")?,
        bot: c.text("bot")?,
        digest: c.flag("digest")?,
        updated_by: c.opt_text("updated_by")?,
        updated_at: c.time("updated_at")?,
    })
}

#[async_trait]
impl<DB: Dialect> CategoryStore for SqlStore<DB> {
    async fn seed_categories(
        &self,
        seeds: &[(CategorySlug, CategoryFields)],
        now: DateTime<Utc>,
    ) -> Result<usize> {
        let mut tx = self.write.begin().await?;
        let mut written = 0;
        for (slug, f) in seeds {
            written += Sql::<DB>::new(
                "INSERT INTO categories (slug, name, description, bot, digest, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (slug) DO NOTHING",
            )
            .text(slug.as_str())
            .text(f.name.as_str())
            .text(f.description.as_str())
            .text(f.bot.as_str())
            .flag(f.digest)
            .int(ms(now))
            .execute(&mut tx)
            .await?;
        }
        if written > 0 {
            Sql::<DB>::new(BUMP_CATEGORIES_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(usize::try_from(written).unwrap_or(usize::MAX))
    }

    async fn categories(&self) -> Result<Vec<CategoryRow>> {
        let rows = Sql::<DB>::new(
            "SELECT slug, name, description, bot, digest, updated_by, updated_at
             FROM categories ORDER BY slug",
        )
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(|r| row::<DB>(r)).collect()
    }

    async fn update_category(
        &self,
        slug: &CategorySlug,
        fields: &CategoryFields,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<CategoryRow>> {
        let mut tx = self.write.begin().await?;
        let updated = Sql::<DB>::new(
            "UPDATE categories SET name = $2, description = $3, bot = $4, digest = $5,
                 updated_by = $6, updated_at = $7
             WHERE slug = $1
             RETURNING slug, name, description, bot, digest, updated_by, updated_at",
        )
        .text(slug.as_str())
        .text(fields.name.as_str())
        .text(fields.description.as_str())
        .text(fields.bot.as_str())
        .flag(fields.digest)
        .text(by)
        .int(ms(now))
        .fetch_optional(&mut tx)
        .await?;
        if updated.is_some() {
            Sql::<DB>::new(BUMP_CATEGORIES_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        updated.map(|r| row::<DB>(&r)).transpose()
    }

    async fn categories_version(&self) -> Result<i64> {
        let row = Sql::<DB>::new("SELECT value FROM meta WHERE key = 'categories_version'")
            .fetch_one(&self.read)
            .await?;
        Cols::<DB>::new(&row).int("value")
    }
}
