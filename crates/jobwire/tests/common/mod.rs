//! What several of jobwire's integration test binaries share (each uses part of it).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jobwire_mtproto::RawMessage;
use jobwire_store::{ChannelId, SqliteStore, Store};
use jobwire_testkit::wait::eventually;

/// The TLS provider and the test log (`RUST_LOG`), once per binary.
pub fn init() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// Any free port on the loopback interface.
pub fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A post as a source hands it to intake: no author, no link, posted now.
pub fn incoming(channel: &str, external_id: &str, text: &str) -> jobwire_core::IncomingPost {
    jobwire_core::IncomingPost {
        channel: channel.into(),
        external_id: external_id.into(),
        text: text.into(),
        author: None,
        url: None,
        posted_at: Utc::now(),
    }
}

/// A message by `@hr` in channel `peer`, as the user account reads it.
pub fn raw_message(peer: i64, id: i64, text: &str, date: DateTime<Utc>) -> RawMessage {
    RawMessage {
        id,
        peer,
        text: text.into(),
        entities: vec![],
        grouped_id: None,
        forward_from: None,
        author: Some("@hr".into()),
        date,
        edit_date: None,
        is_service: false,
    }
}

/// When the running parser noted channel `id` joined (as the panel reads it), once it did
/// (within 20 s).
pub async fn joined_at(store: &Arc<dyn Store>, id: ChannelId) -> DateTime<Utc> {
    eventually("the channel joined", Duration::from_secs(20), || async {
        let stats = store
            .source_stats(Utc::now() - chrono::Duration::days(1), Utc::now())
            .await
            .unwrap();
        stats
            .iter()
            .find(|s| s.channel_id == id)
            .and_then(|s| s.joined_at)
    })
    .await
}

/// A SQLite store (`jobwire.db`) in a new temporary directory, which must outlive it.
pub async fn temp_sqlite() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open_path(&dir.path().join("jobwire.db"))
            .await
            .unwrap(),
    );
    (dir, store)
}
