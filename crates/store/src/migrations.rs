//! The migrations, embedded by `build.rs` (no `sqlx::migrate!`, whose proc-macro compiled a
//! second sqlx with both drivers and SQLite's C source for the host).
//!
//! They are the same migrations `sqlx::migrate!` would build: the same versions,
//! descriptions and checksums (the SHA-384 of each file), so databases migrated by an older
//! jobwire see nothing changed. `tests` below holds that to sqlx's own reading of the folders.

use std::borrow::Cow;
use std::sync::LazyLock;

use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// One migration file, as `build.rs` found it.
#[derive(Debug)]
pub(crate) struct EmbeddedMigration {
    pub(crate) version: i64,
    pub(crate) description: &'static str,
    pub(crate) sql: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

fn migrator(files: &'static [EmbeddedMigration]) -> Migrator {
    Migrator::with_migrations(
        files
            .iter()
            .map(|file| {
                Migration::new(
                    file.version,
                    Cow::Borrowed(file.description),
                    MigrationType::Simple,
                    file.sql.into_sql_str(),
                    // As sqlx reads a file: this first line opts out of the transaction.
                    file.sql.starts_with("-- no-transaction"),
                )
            })
            .collect(),
    )
}

/// The SQLite schema's migrations.
pub(crate) static SQLITE_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE));
/// The PostgreSQL schema's migrations.
pub(crate) static POSTGRES_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES));

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    async fn same_as_sqlx_reads(embedded: &Migrator, folder: &str) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../migrations")
            .join(folder);
        let read = Migrator::new(dir.as_path())
            .await
            .expect("sqlx reads the folder");
        let ours: Vec<_> = embedded.iter().collect();
        let theirs: Vec<_> = read.iter().collect();
        assert_eq!(ours.len(), theirs.len(), "{folder}: number of migrations");
        assert!(
            ours.len() >= 21,
            "{folder}: only {} migrations found",
            ours.len()
        );
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.version, b.version, "{folder}");
            assert_eq!(a.description, b.description, "{folder} {}", a.version);
            assert_eq!(a.checksum, b.checksum, "{folder} {}: checksum", a.version);
            assert_eq!(a.no_tx, b.no_tx, "{folder} {}", a.version);
            assert_eq!(a.migration_type, b.migration_type, "{folder} {}", a.version);
            assert_eq!(a.sql.as_str(), b.sql.as_str(), "{folder} {}", a.version);
        }
    }

    #[tokio::test]
    async fn the_embedded_migrations_are_what_sqlx_reads_from_the_folders() {
        same_as_sqlx_reads(&SQLITE_MIGRATOR, "sqlite").await;
        same_as_sqlx_reads(&POSTGRES_MIGRATOR, "postgres").await;
    }
}
