//! Subscribers: their chats, categories, filters and whether they blocked the bots.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::codec::{self, ms};
use crate::sql::{Cols, Dialect, Sql};
use crate::*;

/// The statement that marks the subscriber list changed (the fan-out index reloads).
pub(crate) const BUMP_SUBSCRIBERS_VERSION: &str =
    "UPDATE meta SET value = value + 1 WHERE key = 'subscribers_version'";

/// Subscribers: their chats, categories, filters and whether they blocked the bots.
#[async_trait]
pub trait SubscriberStore: Send + Sync {
    async fn upsert_subscriber(
        &self,
        spec: &SubscriberSpec,
        now: DateTime<Utc>,
    ) -> Result<SubscriberId>;

    async fn subscribers(&self) -> Result<Vec<SubscriberRow>>;

    /// A number that changes whenever any subscriber changes.
    async fn subscribers_version(&self) -> Result<i64>;

    /// The subscriber of a chat.
    async fn subscriber_by_chat(&self, chat_id: i64) -> Result<Option<SubscriberRow>>;

    /// Marks a chat's subscriber blocked (Telegram answered 403) or unblocked (they wrote to a
    /// bot again). Returns whether a subscriber exists.
    async fn set_subscriber_blocked(
        &self,
        chat_id: i64,
        blocked: bool,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    /// The bots that cannot reach a subscriber (blocked, or never started): every
    /// subscriber's (fan-out), or one chat's.
    async fn bot_blocks(&self, chat_id: Option<i64>) -> Result<Vec<BotBlock>>;

    /// The bots a subscriber never started that nobody told them about yet, at most `limit`;
    /// each is marked told (at `now`) as it is returned, so that one notice goes out however
    /// many bot processes ask.
    async fn take_unnotified_bot_blocks(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<BotBlock>>;

    /// Notes that `bot` cannot reach the chat's subscriber (`Some(scope)`, a per-bot scope),
    /// or that it can again (`None`: the user wrote to it or unblocked it). Returns whether
    /// anything changed.
    async fn set_bot_block(
        &self,
        chat_id: i64,
        bot: &str,
        scope: Option<BlockScope>,
        now: DateTime<Utc>,
    ) -> Result<bool>;

    /// Remembers the language a chat's user reads (`"ru"`, `"en"`). Returns whether it
    /// changed.
    async fn set_chat_language(&self, chat_id: i64, lang: &str, now: DateTime<Utc>)
    -> Result<bool>;

    /// The language a chat's user reads, if it was seen.
    async fn chat_language(&self, chat_id: i64) -> Result<Option<String>>;

    /// Every chat's language, by chat (one read for a whole audience).
    async fn chat_languages(&self) -> Result<std::collections::HashMap<i64, String>>;

    /// The chats whose user did something in the bots at `since` or later (one read for a
    /// whole audience): saved their settings (the subscriber row changed), reported a post,
    /// hid an author, paid, or wrote from a client in another language.
    async fn active_chats_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<std::collections::HashSet<i64>>;
}

#[async_trait]
impl<DB: Dialect> SubscriberStore for SqlStore<DB> {
    async fn set_chat_language(
        &self,
        chat_id: i64,
        lang: &str,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let changed = Sql::<DB>::new(
            "INSERT INTO chat_languages (chat_id, lang, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (chat_id) DO UPDATE SET lang = excluded.lang, updated_at = excluded.updated_at
             WHERE chat_languages.lang <> excluded.lang",
        )
        .int(chat_id)
        .text(lang)
        .int(ms(now))
        .execute(&self.write)
        .await?;
        Ok(changed > 0)
    }

    async fn chat_language(&self, chat_id: i64) -> Result<Option<String>> {
        let row = Sql::<DB>::new("SELECT lang FROM chat_languages WHERE chat_id = $1")
            .int(chat_id)
            .fetch_optional(&self.read)
            .await?;
        row.map(|r| Cols::<DB>::new(&r).text("lang")).transpose()
    }

    async fn chat_languages(&self) -> Result<std::collections::HashMap<i64, String>> {
        let rows = Sql::<DB>::new("SELECT chat_id, lang FROM chat_languages")
            .fetch_all(&self.read)
            .await?;
        rows.iter()
            .map(|r| {
                let c = Cols::<DB>::new(r);
                Ok((c.int("chat_id")?, c.text("lang")?))
            })
            .collect()
    }

    async fn active_chats_since(
        &self,
        since: DateTime<Utc>,
    ) -> Result<std::collections::HashSet<i64>> {
        let chats = Sql::<DB>::new(
            "SELECT chat_id FROM subscribers WHERE updated_at >= $1
             UNION SELECT chat_id FROM reports WHERE created_at >= $1
             UNION SELECT chat_id FROM hidden_authors WHERE created_at >= $1
             UNION SELECT chat_id FROM payments WHERE kind = 'payment' AND created_at >= $1
             UNION SELECT chat_id FROM chat_languages WHERE updated_at >= $1",
        )
        .int(ms(since))
        .fetch_each(&self.read, |c| c.int("chat_id"))
        .await?;
        Ok(chats.into_iter().collect())
    }

    async fn upsert_subscriber(
        &self,
        spec: &SubscriberSpec,
        now: DateTime<Utc>,
    ) -> Result<SubscriberId> {
        let quiet = spec.quiet_hours.as_ref();
        let mut tx = self.write.begin().await?;
        let row = Sql::<DB>::new(
            "INSERT INTO subscribers (chat_id, name, categories, include_terms, exclude_terms,
                 paused, quiet_start, quiet_end, time_zone, created_at, updated_at, min_budget)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
             ON CONFLICT (chat_id) DO UPDATE SET name = excluded.name,
                 categories = excluded.categories, include_terms = excluded.include_terms,
                 exclude_terms = excluded.exclude_terms, paused = excluded.paused,
                 quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end,
                 time_zone = excluded.time_zone, updated_at = excluded.updated_at,
                 min_budget = excluded.min_budget
             RETURNING id",
        )
        .int(spec.chat_id)
        .text(spec.name.as_deref())
        .json(Some(&spec.categories))
        .json(Some(&spec.include))
        .json(Some(&spec.exclude))
        .flag(spec.paused)
        .text(quiet.map(|q| q.start.as_str()))
        .text(quiet.map(|q| q.end.as_str()))
        .text(quiet.map(|q| q.time_zone.as_str()))
        .int(ms(now))
        .json(spec.min_budget.as_ref())
        .fetch_one(&mut tx)
        .await?;
        Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
            .execute(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(Cols::<DB>::new(&row).id()?.into())
    }

    async fn subscribers(&self) -> Result<Vec<SubscriberRow>> {
        Sql::<DB>::new("SELECT * FROM subscribers ORDER BY id")
            .fetch_map(&self.read, codec::subscriber_row::<DB>)
            .await
    }

    async fn subscribers_version(&self) -> Result<i64> {
        let row = Sql::<DB>::new("SELECT value FROM meta WHERE key = 'subscribers_version'")
            .fetch_one(&self.read)
            .await?;
        Cols::<DB>::new(&row).int("value")
    }

    async fn subscriber_by_chat(&self, chat_id: i64) -> Result<Option<SubscriberRow>> {
        const SQL: &str = "SELECT * FROM subscribers WHERE chat_id = $1";
        self.one(SQL, chat_id, codec::subscriber_row::<DB>).await
    }

    async fn set_subscriber_blocked(
        &self,
        chat_id: i64,
        blocked: bool,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        // The row lock of the update makes concurrent callers bump the version once.
        let changed = Sql::<DB>::new(
            "UPDATE subscribers SET blocked = $1, updated_at = $2
             WHERE chat_id = $3 AND blocked <> $1",
        )
        .flag(blocked)
        .int(ms(now))
        .int(chat_id)
        .execute(&mut tx)
        .await?;
        if changed > 0 {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
            tx.commit().await?;
            return Ok(true);
        }
        let exists = Sql::<DB>::new("SELECT id FROM subscribers WHERE chat_id = $1")
            .int(chat_id)
            .fetch_optional(&mut tx)
            .await?;
        tx.commit().await?;
        Ok(exists.is_some())
    }

    async fn bot_blocks(&self, chat_id: Option<i64>) -> Result<Vec<BotBlock>> {
        Sql::<DB>::new(
            "SELECT b.subscriber_id, s.chat_id, b.bot, b.state FROM bot_blocks b
             JOIN subscribers s ON s.id = b.subscriber_id
             WHERE $1 = 0 OR s.chat_id = $2
             ORDER BY b.subscriber_id, b.bot",
        )
        .int(i64::from(chat_id.is_some()))
        .int(chat_id.unwrap_or(0))
        .fetch_each(&self.read, bot_block_row::<DB>)
        .await
    }

    async fn set_bot_block(
        &self,
        chat_id: i64,
        bot: &str,
        scope: Option<BlockScope>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.write.begin().await?;
        let changed = match scope.and_then(BlockScope::state) {
            Some(state) => {
                Sql::<DB>::new(
                    "INSERT INTO bot_blocks (subscriber_id, bot, state, updated_at)
                     SELECT id, $1, $2, $3 FROM subscribers WHERE chat_id = $4
                     ON CONFLICT (subscriber_id, bot) DO UPDATE SET
                         state = excluded.state, updated_at = excluded.updated_at",
                )
                .text(bot)
                .text(state)
                .int(ms(now))
                .int(chat_id)
                .execute(&mut tx)
                .await?
            }
            None => {
                Sql::<DB>::new(
                    "DELETE FROM bot_blocks WHERE bot = $1
                     AND subscriber_id = (SELECT id FROM subscribers WHERE chat_id = $2)",
                )
                .text(bot)
                .int(chat_id)
                .execute(&mut tx)
                .await?
            }
        };
        if changed > 0 {
            Sql::<DB>::new(BUMP_SUBSCRIBERS_VERSION)
                .execute(&mut tx)
                .await?;
        }
        tx.commit().await?;
        Ok(changed > 0)
    }

    async fn take_unnotified_bot_blocks(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<BotBlock>> {
        Sql::<DB>::new(
            "UPDATE bot_blocks SET notified_at = $1
             WHERE state = 'not_started' AND notified_at IS NULL
               AND (subscriber_id, bot) IN (
                   SELECT subscriber_id, bot FROM bot_blocks
                   WHERE state = 'not_started' AND notified_at IS NULL
                   ORDER BY updated_at LIMIT $2)
             RETURNING subscriber_id, bot, state,
                 (SELECT chat_id FROM subscribers WHERE id = bot_blocks.subscriber_id) AS chat_id",
        )
        .int(ms(now))
        .int(i64::from(limit))
        .fetch_each(&self.write, bot_block_row::<DB>)
        .await
    }
}

/// A `bot_blocks` row joined with its subscriber's chat id.
fn bot_block_row<DB: Dialect>(c: &Cols<'_, DB>) -> Result<BotBlock> {
    Ok(BotBlock {
        subscriber_id: SubscriberId(c.int("subscriber_id")?),
        chat_id: c.int("chat_id")?,
        bot: c.text("bot")?,
        scope: c.word("state", BlockScope::parse_state)?,
    })
}
