//! The classification prompt's versions: written in the admin panel, one of them current
//! (the one activated most recently). Without a current version the classifier uses its
//! built-in prompt.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::ms;
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// One version of the classification prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptVersionRow {
    pub id: PromptVersionId,
    /// Unique, e.g. `classify.v5`; recorded with every verdict made with it.
    pub name: String,
    /// The template (the same placeholders as `prompts/classify.v5.md`).
    pub text: String,
    /// The admin who wrote it.
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    /// Who made it current last, and when (`None`: never current).
    pub activated_by: Option<String>,
    pub activated_at: Option<DateTime<Utc>>,
}

/// The prompt's versions.
#[async_trait]
pub trait PromptStore: Send + Sync {
    /// Stores a new version (not current yet); `None` when the name is taken (nothing
    /// changes then).
    async fn create_prompt_version(
        &self,
        name: &str,
        text: &str,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PromptVersionRow>>;

    /// Every version, newest first.
    async fn prompt_versions(&self) -> Result<Vec<PromptVersionRow>>;

    async fn prompt_version(&self, id: PromptVersionId) -> Result<Option<PromptVersionRow>>;

    /// Makes a version current, recording who and when; `false` when there is no such
    /// version. Its activation time is after every earlier one's, even within the same
    /// millisecond, so the last activation always wins.
    async fn activate_prompt_version(
        &self,
        id: PromptVersionId,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    /// The version activated most recently, if any.
    async fn current_prompt_version(&self) -> Result<Option<PromptVersionRow>>;
}

/// `SELECT` of every column, then the rest of the query.
macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT id, name, text, created_by, created_at, activated_by, activated_at
             FROM prompt_versions",
            $rest
        )
    };
}

fn row<DB: Dialect>(row: &DB::Row) -> Result<PromptVersionRow> {
    let c = Cols::<DB>::new(row);
    Ok(PromptVersionRow {
        id: PromptVersionId(c.id()?),
        name: c.text("name")?,
        text: c.text("text")?,
        created_by: c.text("created_by")?,
        created_at: c.time("created_at")?,
        activated_by: c.opt_text("activated_by")?,
        activated_at: c.opt_time("activated_at")?,
    })
}

#[async_trait]
impl<DB: Dialect> PromptStore for SqlStore<DB> {
    async fn create_prompt_version(
        &self,
        name: &str,
        text: &str,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PromptVersionRow>> {
        let created = Sql::<DB>::new(
            "INSERT INTO prompt_versions (name, text, created_by, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING
             RETURNING id, name, text, created_by, created_at, activated_by, activated_at",
        )
        .text(name)
        .text(text)
        .text(by)
        .int(ms(now))
        .fetch_optional(&self.write)
        .await?;
        created.map(|r| row::<DB>(&r)).transpose()
    }

    async fn prompt_versions(&self) -> Result<Vec<PromptVersionRow>> {
        let rows = Sql::<DB>::new(select!(" ORDER BY created_at DESC, id DESC"))
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(|r| row::<DB>(r)).collect()
    }

    async fn prompt_version(&self, id: PromptVersionId) -> Result<Option<PromptVersionRow>> {
        let found = Sql::<DB>::new(select!(" WHERE id = $1"))
            .int(id)
            .fetch_optional(&self.read)
            .await?;
        found.map(|r| row::<DB>(&r)).transpose()
    }

    async fn activate_prompt_version(
        &self,
        id: PromptVersionId,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let n = Sql::<DB>::new(
            "UPDATE prompt_versions SET activated_by = $2,
                 activated_at = (SELECT CASE WHEN MAX(activated_at) IS NULL OR MAX(activated_at) < $3
                                        THEN $3 ELSE MAX(activated_at) + 1 END
                                 FROM prompt_versions)
             WHERE id = $1",
        )
        .int(id)
        .text(by)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(n > 0)
    }

    async fn current_prompt_version(&self) -> Result<Option<PromptVersionRow>> {
        let found = Sql::<DB>::new(select!(
            " WHERE activated_at IS NOT NULL ORDER BY activated_at DESC, id DESC LIMIT 1"
        ))
        .fetch_optional(&self.read)
        .await?;
        found.map(|r| row::<DB>(&r)).transpose()
    }
}
