//! jobwire's repositories: one [`Store`] trait over everything the stages persist, and its
//! one implementation, [`SqlStore`], over SQLite (embedded mode) and PostgreSQL
//! (distributed mode).
//!
//! The database is the source of truth. Every post, classification and delivery has a row
//! with a status, written before the message that names it moves on, so a restarted process
//! finds whatever was in flight by asking for rows in a status ("re-drive"). Uniqueness
//! makes the consumers idempotent: `(channel, external id)` for posts and `(post, subscriber)`
//! for deliveries.
//!
//! **Architecture invariant:** the stages never see SQL. They speak in the row types of this
//! crate; both databases run the same queries (one file per concern: `channels.rs`, `posts.rs`,
//! …) and pass the same test suite.

mod admins;
mod billing;
mod broadcasts;
mod cards;
mod categories;
mod channels;
mod codec;
mod config;
mod deliveries;
mod learning;
mod migrations;
mod panel;
mod placements;
mod postgres;
mod posts;
mod prompts;
mod recovery;
mod reporting;
mod row_by_row;
mod shared;
mod source_state;
mod sql;
mod sqlite;
mod subscribers;
mod types;

use std::sync::Arc;

use async_trait::async_trait;

pub use admins::{AdminRole, AdminRow, AdminStore};
pub use billing::{
    AccessPeriodId, AccessPeriodRow, BillingCounts, BillingStore, Grant, InvoiceRow, LedgerId,
    LedgerKind, LedgerRow, LedgerSource, NewInvoice, NewLedgerEntry, PaymentOutcome,
    ReconciliationRun, access_of,
};
pub use broadcasts::{
    BroadcastProgress, BroadcastRow, BroadcastStatus, BroadcastStore, RecipientOutcome,
};
pub use cards::{CardReport, CardStore, HiddenAuthorRow, RecentJob};
pub use categories::{CategoryFields, CategoryRow, CategoryStore};
pub use channels::ChannelStore;
pub use config::DatabaseSection;
pub use deliveries::{DeliveryStore, RecentSend};
pub use learning::LearningStore;
pub use panel::{
    AuditEntry, DashboardBucket, DashboardTotals, NewSession, PanelStore, PostFilter, PostListRow,
    SessionRow, TELEGRAM_WAITS_KEPT, TelegramWait, WaitKind, WaitTotal,
};
pub use placements::{
    PlacementDraft, PlacementPaid, PlacementRow, PlacementStatus, PlacementStore, REASON_CHANGED,
    REASON_NOT_A_VACANCY, REASON_NOT_CHECKED, REASON_OFF,
};
pub use postgres::{PostgresOptions, PostgresStore};
pub use posts::PostStore;
pub use prompts::{PromptStore, PromptVersionRow};
pub use recovery::{DeadLetterRow, NewDeadLetter, RecoveryStore, StuckWork};
pub use reporting::ReportingStore;
pub use shared::SqlStore;
pub use source_state::SourceStateStore;
pub use sql::{BoxFuture, Dialect, Exec};
pub use sqlite::{SQLITE_FAN_OUT_ROWS, SqliteStore};
pub use subscribers::SubscriberStore;
pub use types::*;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt value in column {column}: {detail}")]
    Corrupt {
        column: &'static str,
        detail: String,
    },
    #[error("unsupported database URL {0:?}: expected sqlite://PATH or postgres://…")]
    UnsupportedUrl(String),
}

impl StoreError {
    /// Whether the database could not be reached or dropped the connection (down, restarting,
    /// refusing connections, pool exhausted): the same call is worth making again later.
    /// Constraint violations, bad values and migrations are not.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Database(e) => match e {
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::WorkerCrashed
                | sqlx::Error::Protocol(_) => true,
                // Connection exceptions (08…), shutdown in progress, cannot connect now.
                sqlx::Error::Database(db) => db
                    .code()
                    .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
                _ => false,
            },
            _ => false,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Opens the store a database URL names: `sqlite://PATH` (or `sqlite:PATH`) for the
/// embedded mode, `postgres://…` (or `postgresql://…`) for the distributed mode, applying
/// pending migrations. Any other scheme is [`StoreError::UnsupportedUrl`] (password redacted).
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PostgresStore::open(url).await?))
    } else {
        Err(StoreError::UnsupportedUrl(postgres::redact_url(url)))
    }
}

/// Everything the pipeline stores. Implementations must be safe to share between tasks.
#[async_trait]
pub trait Store:
    ChannelStore
    + PostStore
    + SourceStateStore
    + SubscriberStore
    + LearningStore
    + DeliveryStore
    + ReportingStore
    + RecoveryStore
    + BillingStore
    + CardStore
    + BroadcastStore
    + PlacementStore
    + AdminStore
    + PanelStore
    + PromptStore
    + CategoryStore
    + Send
    + Sync
    + std::fmt::Debug
{
    /// A round trip to the database (readiness checks).
    async fn ping(&self) -> Result<()>;
}
