//! One query text for both backends.
//!
//! Most of jobwire's SQL reads the same in SQLite and PostgreSQL once placeholders are
//! written `$1, $2, …` (sqlx's SQLite driver maps `$N` to the N-th argument) and booleans
//! and JSON are bound as typed values. What differs is the *types* sqlx needs in between:
//! SQLite stores flags as `INTEGER` and JSON as `TEXT`, PostgreSQL as `BOOLEAN` and `JSONB`,
//! and PostgreSQL's counters are `INTEGER` where SQLite has one integer type.
//!
//! Writing the shared queries as generic sqlx code would mean repeating a dozen
//! higher-ranked bounds (`for<'c> &'c mut DB::Connection: Executor<'c>`, `Encode` and
//! `Decode` for every value type) on every function; sqlx's `Any` driver cannot bind
//! `JSONB`. So a [`Dialect`] implements the handful of value conversions and executions once
//! per backend, and [`Sql`] / [`Cols`] give the shared code a small, bound-free API:
//!
//! ```text
//! let row = Sql::<DB>::new("SELECT * FROM reports WHERE id = $1")
//!     .int(id)
//!     .fetch_optional(&self.read)
//!     .await?;
//! ```
//!
//! A dialect also carries the statements that truly differ (claims with `SKIP LOCKED`, JSON
//! array operators) and may batch what PostgreSQL can do set-based (see `postgres.rs`).

use async_trait::async_trait;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::error::BoxDynError;
use sqlx::{Database, Pool, Transaction};

use crate::{DeliveryId, DeliveryUpdate, NewDelivery, PostId, Result, SqlStore, StoreError};

/// A boxed, sendable future (what a [`Dialect`]'s executions return).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a statement runs: the pool (autocommit) or an open transaction.
pub enum Exec<'e, DB: Database> {
    Pool(&'e Pool<DB>),
    Conn(&'e mut DB::Connection),
}

impl<DB: Database> fmt::Debug for Exec<'_, DB> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pool(_) => "Exec::Pool",
            Self::Conn(_) => "Exec::Conn",
        })
    }
}

impl<'e, DB: Database> From<&'e Pool<DB>> for Exec<'e, DB> {
    fn from(pool: &'e Pool<DB>) -> Self {
        Self::Pool(pool)
    }
}

impl<'e, 't, DB: Database> From<&'e mut Transaction<'t, DB>> for Exec<'e, DB> {
    fn from(tx: &'e mut Transaction<'t, DB>) -> Self {
        Self::Conn(&mut **tx)
    }
}

/// What one backend adds to the shared queries: value conversions, execution, the few
/// statements whose SQL differs, and the operations it batches its own way.
#[async_trait]
pub trait Dialect: Database + Sized {
    /// `deliveries.message_ids` gets `$1` appended; `$2` = now, `$3` = the delivery.
    const PART_SENT: &'static str;
    /// [`Self::PART_SENT`] and the delivery `sent` in one statement, same arguments.
    const LAST_PART_SENT: &'static str;
    /// Waiting posts due by `$1` back to `queued`, at most `$2`, returning their ids.
    const RELEASE_WAITING_POSTS: &'static str;
    /// Held deliveries due by `$1` back to `pending`, at most `$2`, returning their ids.
    const RELEASE_HELD_DELIVERIES: &'static str;
    /// The post whose delivery to chat `$1` by bot `$2` became message `$3`.
    const POST_OF_MESSAGE: &'static str;
    /// The deliveries (with their chat's language) whose ids are in the JSON array `$1`.
    const DELIVERIES_BY_ID: &'static str;

    fn bind_int(args: &mut Self::Arguments, value: Option<i64>) -> Result<(), BoxDynError>;
    fn bind_text(args: &mut Self::Arguments, value: Option<&str>) -> Result<(), BoxDynError>;
    fn bind_bool(args: &mut Self::Arguments, value: bool) -> Result<(), BoxDynError>;
    fn bind_real(args: &mut Self::Arguments, value: f64) -> Result<(), BoxDynError>;
    fn bind_json<T: Serialize + Sync + ?Sized>(
        args: &mut Self::Arguments,
        value: Option<&T>,
    ) -> Result<(), BoxDynError>;

    /// Any integer column (PostgreSQL's `INTEGER` counters included).
    fn get_int(row: &Self::Row, column: &str) -> Result<Option<i64>>;
    fn get_text(row: &Self::Row, column: &str) -> Result<Option<String>>;
    fn get_bool(row: &Self::Row, column: &str) -> Result<bool>;
    fn get_real(row: &Self::Row, column: &str) -> Result<f64>;
    fn get_json<T: DeserializeOwned>(row: &Self::Row, column: &str) -> Result<Option<T>>;

    fn fetch_all<'e>(
        exec: Exec<'e, Self>,
        sql: &'static str,
        args: Self::Arguments,
    ) -> BoxFuture<'e, Result<Vec<Self::Row>>>;
    /// Every row, each turned into a `T` as it arrives: only the driver's few rows in
    /// flight are held, not the whole result as rows (a driver row keeps a copy of every
    /// value; for a listing of 50,000 subscribers that was 1.5 KB each, at once).
    fn fetch_map<'e, T: Send + 'e>(
        exec: Exec<'e, Self>,
        sql: &'static str,
        args: Self::Arguments,
        map: fn(&Self::Row) -> Result<T>,
    ) -> BoxFuture<'e, Result<Vec<T>>>;
    fn fetch_optional<'e>(
        exec: Exec<'e, Self>,
        sql: &'static str,
        args: Self::Arguments,
    ) -> BoxFuture<'e, Result<Option<Self::Row>>>;
    /// Runs a statement; returns the rows it affected.
    fn execute<'e>(
        exec: Exec<'e, Self>,
        sql: &'static str,
        args: Self::Arguments,
    ) -> BoxFuture<'e, Result<u64>>;

    /// See [`crate::Store::fan_out`]: the audience in a few statements (one insert per
    /// delivery costs a round trip each), between [`SqlStore::begin_fan_out`] and
    /// [`SqlStore::finish_fan_out`].
    async fn fan_out(
        store: &SqlStore<Self>,
        post_id: PostId,
        parts: &[String],
        deliveries: &[NewDelivery],
        now: i64,
    ) -> Result<Vec<DeliveryId>>;

    /// See [`crate::Store::apply_delivery_updates`]. By default one statement per update
    /// in one transaction; a dialect may batch.
    async fn apply_delivery_updates(
        store: &SqlStore<Self>,
        updates: &[DeliveryUpdate],
        now: i64,
    ) -> Result<Vec<bool>> {
        store.apply_each(updates, now).await
    }
}

/// The value conversions that read the same for both backends (only the types differ):
/// expanded inside each `impl Dialect`.
macro_rules! sqlx_values {
    () => {
        fn bind_int(
            args: &mut Self::Arguments,
            value: Option<i64>,
        ) -> Result<(), sqlx::error::BoxDynError> {
            sqlx::Arguments::add(args, value)
        }
        fn bind_text(
            args: &mut Self::Arguments,
            value: Option<&str>,
        ) -> Result<(), sqlx::error::BoxDynError> {
            sqlx::Arguments::add(args, value)
        }
        fn bind_bool(
            args: &mut Self::Arguments,
            value: bool,
        ) -> Result<(), sqlx::error::BoxDynError> {
            sqlx::Arguments::add(args, value)
        }
        fn bind_real(
            args: &mut Self::Arguments,
            value: f64,
        ) -> Result<(), sqlx::error::BoxDynError> {
            sqlx::Arguments::add(args, value)
        }
        fn bind_json<T: serde::Serialize + Sync + ?Sized>(
            args: &mut Self::Arguments,
            value: Option<&T>,
        ) -> Result<(), sqlx::error::BoxDynError> {
            sqlx::Arguments::add(args, value.map(sqlx::types::Json))
        }
        fn get_text(row: &Self::Row, column: &str) -> $crate::Result<Option<String>> {
            Ok(sqlx::Row::try_get(row, column)?)
        }
        fn get_bool(row: &Self::Row, column: &str) -> $crate::Result<bool> {
            Ok(sqlx::Row::try_get(row, column)?)
        }
        fn get_real(row: &Self::Row, column: &str) -> $crate::Result<f64> {
            Ok(sqlx::Row::try_get(row, column)?)
        }
        fn get_json<T: serde::de::DeserializeOwned>(
            row: &Self::Row,
            column: &str,
        ) -> $crate::Result<Option<T>> {
            Ok(
                sqlx::Row::try_get::<Option<sqlx::types::Json<T>>, _>(row, column)?
                    .map(|json| json.0),
            )
        }
        fn fetch_all<'e>(
            exec: $crate::sql::Exec<'e, Self>,
            sql: &'static str,
            args: Self::Arguments,
        ) -> $crate::sql::BoxFuture<'e, $crate::Result<Vec<Self::Row>>> {
            Box::pin(async move {
                let query = sqlx::query_with(sql, args);
                Ok(match exec {
                    $crate::sql::Exec::Pool(pool) => query.fetch_all(pool).await?,
                    $crate::sql::Exec::Conn(conn) => query.fetch_all(conn).await?,
                })
            })
        }
        fn fetch_map<'e, T: Send + 'e>(
            exec: $crate::sql::Exec<'e, Self>,
            sql: &'static str,
            args: Self::Arguments,
            map: fn(&Self::Row) -> $crate::Result<T>,
        ) -> $crate::sql::BoxFuture<'e, $crate::Result<Vec<T>>> {
            Box::pin(async move {
                use futures::TryStreamExt;
                let query = sqlx::query_with(sql, args);
                let mut rows = match exec {
                    $crate::sql::Exec::Pool(pool) => query.fetch(pool),
                    $crate::sql::Exec::Conn(conn) => query.fetch(conn),
                };
                let mut out = Vec::new();
                while let Some(row) = rows.try_next().await? {
                    out.push(map(&row)?);
                }
                Ok(out)
            })
        }
        fn fetch_optional<'e>(
            exec: $crate::sql::Exec<'e, Self>,
            sql: &'static str,
            args: Self::Arguments,
        ) -> $crate::sql::BoxFuture<'e, $crate::Result<Option<Self::Row>>> {
            Box::pin(async move {
                let query = sqlx::query_with(sql, args);
                Ok(match exec {
                    $crate::sql::Exec::Pool(pool) => query.fetch_optional(pool).await?,
                    $crate::sql::Exec::Conn(conn) => query.fetch_optional(conn).await?,
                })
            })
        }
        fn execute<'e>(
            exec: $crate::sql::Exec<'e, Self>,
            sql: &'static str,
            args: Self::Arguments,
        ) -> $crate::sql::BoxFuture<'e, $crate::Result<u64>> {
            Box::pin(async move {
                let query = sqlx::query_with(sql, args);
                Ok(match exec {
                    $crate::sql::Exec::Pool(pool) => query.execute(pool).await?,
                    $crate::sql::Exec::Conn(conn) => query.execute(conn).await?,
                }
                .rows_affected())
            })
        }
    };
}
pub(crate) use sqlx_values;

/// What binds as an SQL integer: `i64`, the id types, and `Option`s of them (NULL).
pub(crate) trait IntArg {
    fn int_arg(self) -> Option<i64>;
}

impl IntArg for i64 {
    fn int_arg(self) -> Option<i64> {
        Some(self)
    }
}

macro_rules! id_arg {
    ($($id:ty),*) => {$(
        impl IntArg for $id {
            fn int_arg(self) -> Option<i64> {
                Some(self.get())
            }
        }
    )*};
}
id_arg!(
    jobwire_core::ChannelId,
    jobwire_core::PostId,
    jobwire_core::SubscriberId,
    jobwire_core::DeliveryId,
    jobwire_core::ReportId,
    jobwire_core::ExampleId,
    jobwire_core::AdminId,
    jobwire_core::BroadcastId,
    jobwire_core::PlacementId,
    jobwire_core::PromptVersionId
);

impl<T: IntArg> IntArg for Option<T> {
    fn int_arg(self) -> Option<i64> {
        self.and_then(IntArg::int_arg)
    }
}

/// A statement and its arguments, bound in order (`$1`, `$2`, …).
pub(crate) struct Sql<DB: Dialect> {
    text: &'static str,
    args: DB::Arguments,
    /// The first value that could not be encoded; reported when the statement runs.
    error: Option<BoxDynError>,
}

impl<DB: Dialect> Sql<DB> {
    pub(crate) fn new(text: &'static str) -> Self {
        Self {
            text,
            args: Default::default(),
            error: None,
        }
    }

    fn push(mut self, bind: impl FnOnce(&mut DB::Arguments) -> Result<(), BoxDynError>) -> Self {
        if self.error.is_none()
            && let Err(e) = bind(&mut self.args)
        {
            self.error = Some(e);
        }
        self
    }

    pub(crate) fn int(self, value: impl IntArg) -> Self {
        let value = value.int_arg();
        self.push(|a| DB::bind_int(a, value))
    }

    pub(crate) fn text<'a>(self, value: impl Into<Option<&'a str>>) -> Self {
        let value = value.into();
        self.push(|a| DB::bind_text(a, value))
    }

    pub(crate) fn flag(self, value: bool) -> Self {
        self.push(|a| DB::bind_bool(a, value))
    }

    pub(crate) fn real(self, value: f64) -> Self {
        self.push(|a| DB::bind_real(a, value))
    }

    /// A value stored as JSON (`TEXT` in SQLite, `JSONB` in PostgreSQL); `None` is NULL.
    pub(crate) fn json<T: Serialize + Sync + ?Sized>(self, value: Option<&T>) -> Self {
        self.push(|a| DB::bind_json(a, value))
    }

    fn ready(self) -> Result<(&'static str, DB::Arguments)> {
        match self.error {
            Some(e) => Err(StoreError::Database(sqlx::Error::Encode(e))),
            None => Ok((self.text, self.args)),
        }
    }

    pub(crate) async fn fetch_all(self, exec: impl Into<Exec<'_, DB>>) -> Result<Vec<DB::Row>> {
        let (text, args) = self.ready()?;
        DB::fetch_all(exec.into(), text, args).await
    }

    /// Every row turned into a `T` as it is read (see [`Dialect::fetch_map`]): for listings
    /// that grow with the users, where holding every row first would double the memory.
    pub(crate) async fn fetch_map<T: Send>(
        self,
        exec: impl Into<Exec<'_, DB>>,
        map: fn(&DB::Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let (text, args) = self.ready()?;
        DB::fetch_map(exec.into(), text, args, map).await
    }

    pub(crate) async fn fetch_optional(
        self,
        exec: impl Into<Exec<'_, DB>>,
    ) -> Result<Option<DB::Row>> {
        let (text, args) = self.ready()?;
        DB::fetch_optional(exec.into(), text, args).await
    }

    /// Exactly one row (a `RETURNING` of an insert or upsert, an aggregate).
    pub(crate) async fn fetch_one(self, exec: impl Into<Exec<'_, DB>>) -> Result<DB::Row> {
        let text = self.text;
        self.fetch_optional(exec).await?.ok_or_else(|| {
            tracing::error!(sql = text, "a statement that returns a row returned none");
            StoreError::Database(sqlx::Error::RowNotFound)
        })
    }

    /// Runs the statement; returns how many rows it changed.
    pub(crate) async fn execute(self, exec: impl Into<Exec<'_, DB>>) -> Result<u64> {
        let (text, args) = self.ready()?;
        DB::execute(exec.into(), text, args).await
    }

    /// The first column of every row, as ids.
    /// The `id` column of every row, as the id type `T` (`PostId`, `DeliveryId`, `i64`, …).
    pub(crate) async fn ids<T: From<i64>>(self, exec: impl Into<Exec<'_, DB>>) -> Result<Vec<T>> {
        self.fetch_each(exec, |c| c.id().map(T::from)).await
    }

    /// Every row, decoded by `decode` from its columns.
    pub(crate) async fn fetch_each<T>(
        self,
        exec: impl Into<Exec<'_, DB>>,
        decode: impl Fn(&Cols<'_, DB>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let rows = self.fetch_all(exec).await?;
        rows.iter().map(|row| decode(&Cols::new(row))).collect()
    }
}

/// Typed reads of one row's columns; a NULL where a value must be is
/// [`StoreError::Corrupt`].
pub(crate) struct Cols<'r, DB: Dialect> {
    row: &'r DB::Row,
}

impl<'r, DB: Dialect> Cols<'r, DB> {
    pub(crate) fn new(row: &'r DB::Row) -> Self {
        Self { row }
    }

    fn required<T>(column: &'static str, value: Option<T>) -> Result<T> {
        value.ok_or(StoreError::Corrupt {
            column,
            detail: "NULL".to_owned(),
        })
    }

    /// The `id` column (or the first column named so by a `RETURNING id`).
    pub(crate) fn id(&self) -> Result<i64> {
        self.int("id")
    }

    pub(crate) fn int(&self, column: &'static str) -> Result<i64> {
        Self::required(column, DB::get_int(self.row, column)?)
    }

    pub(crate) fn opt_int(&self, column: &'static str) -> Result<Option<i64>> {
        DB::get_int(self.row, column)
    }

    /// A count or size that fits `u32` (clamped, never wrapped).
    pub(crate) fn count(&self, column: &'static str) -> Result<u32> {
        Ok(crate::codec::clamp_u32(self.int(column)?))
    }

    pub(crate) fn text(&self, column: &'static str) -> Result<String> {
        Self::required(column, DB::get_text(self.row, column)?)
    }

    pub(crate) fn opt_text(&self, column: &'static str) -> Result<Option<String>> {
        DB::get_text(self.row, column)
    }

    pub(crate) fn flag(&self, column: &'static str) -> Result<bool> {
        DB::get_bool(self.row, column)
    }

    pub(crate) fn real(&self, column: &'static str) -> Result<f64> {
        DB::get_real(self.row, column)
    }

    pub(crate) fn time(&self, column: &'static str) -> Result<chrono::DateTime<chrono::Utc>> {
        Ok(crate::codec::from_ms(self.int(column)?))
    }

    pub(crate) fn opt_time(
        &self,
        column: &'static str,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        Ok(self.opt_int(column)?.map(crate::codec::from_ms))
    }

    pub(crate) fn json<T: DeserializeOwned>(&self, column: &'static str) -> Result<T> {
        Self::required(column, self.opt_json(column)?)
    }

    pub(crate) fn opt_json<T: DeserializeOwned>(&self, column: &'static str) -> Result<Option<T>> {
        DB::get_json(self.row, column).map_err(|e| match e {
            StoreError::Database(e) => StoreError::Corrupt {
                column,
                detail: e.to_string(),
            },
            other => other,
        })
    }

    /// A column holding one of a closed set of words (a status, a kind).
    pub(crate) fn word<T>(&self, column: &'static str, parse: fn(&str) -> Option<T>) -> Result<T> {
        let raw = self.text(column)?;
        parse(&raw).ok_or(StoreError::Corrupt {
            column,
            detail: raw,
        })
    }
}
