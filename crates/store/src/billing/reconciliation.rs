//! The last reconciliation with Telegram: when it finished and what it found, one row that
//! every run replaces (the main bot's billing loop writes it, the panel's payments page
//! reads it).

use chrono::{DateTime, Utc};

use crate::codec::{clamp_u64, ms};
use crate::sql::{Dialect, Sql};
use crate::{Result, SqlStore};

/// One finished reconciliation of the ledger with Telegram's Stars transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconciliationRun {
    pub finished_at: DateTime<Utc>,
    /// Stars transactions read from Telegram.
    pub transactions: u64,
    /// Payments Telegram had and the ledger lacked (applied by this run).
    pub payments: u64,
    /// Refunds Telegram had and the ledger lacked (applied by this run).
    pub refunds: u64,
}

impl ReconciliationRun {
    /// What the run found missing from the ledger: payments and refunds.
    pub fn found(&self) -> u64 {
        self.payments.saturating_add(self.refunds)
    }
}

fn stored(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(super) async fn record<DB: Dialect>(
    store: &SqlStore<DB>,
    run: &ReconciliationRun,
) -> Result<()> {
    Sql::<DB>::new(
        "INSERT INTO reconciliations (id, finished_at, transactions, payments, refunds)
         VALUES (1, $1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET finished_at = excluded.finished_at,
             transactions = excluded.transactions, payments = excluded.payments,
             refunds = excluded.refunds",
    )
    .int(ms(run.finished_at))
    .int(stored(run.transactions))
    .int(stored(run.payments))
    .int(stored(run.refunds))
    .execute(&store.write)
    .await?;
    Ok(())
}

pub(super) async fn last<DB: Dialect>(store: &SqlStore<DB>) -> Result<Option<ReconciliationRun>> {
    let runs = Sql::<DB>::new("SELECT * FROM reconciliations WHERE id = 1")
        .fetch_each(&store.read, |c| {
            Ok(ReconciliationRun {
                finished_at: c.time("finished_at")?,
                transactions: clamp_u64(c.int("transactions")?),
                payments: clamp_u64(c.int("payments")?),
                refunds: clamp_u64(c.int("refunds")?),
            })
        })
        .await?;
    Ok(runs.into_iter().next())
}
