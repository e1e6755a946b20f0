//! The distributed mode's dialogue state and update dedup against a real Redis
//! (`JOBWIRE_TEST_REDIS_URL`, e.g. `redis://127.0.0.1:6379`; without it `build.rs` leaves
//! this file out, and CI sets it). Every test uses its own key prefix and deletes its keys.
#![cfg(jobwire_redis_tests)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "bots/common.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use jobwire_bot::{
    DialogueState, DialogueStore, Processed, RedisDedup, RedisDialogues, UpdateMode,
    redis_connection,
};
use redis::aio::ConnectionManager;
use teloxide::types::Update;

const CHAT: i64 = 804;

fn redis_url() -> String {
    std::env::var("JOBWIRE_TEST_REDIS_URL").expect("JOBWIRE_TEST_REDIS_URL names the test Redis")
}

fn unique_prefix(test: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "jobwire-test:{test}:{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

async fn keys(conn: &mut ConnectionManager, prefix: &str) -> Vec<String> {
    redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(conn)
        .await
        .unwrap()
}

async fn delete_keys(conn: &mut ConnectionManager, prefix: &str) {
    for k in keys(conn, prefix).await {
        let _: usize = redis::cmd("DEL").arg(k).query_async(conn).await.unwrap();
    }
}

/// A copy of the bot role: its own Redis connection, the shared prefix.
async fn copy(env: &Env, prefix: &str) -> Running {
    let conn = redis_connection(&redis_url()).unwrap();
    let public = "127.0.0.1:9".parse::<std::net::SocketAddr>().unwrap();
    env.start_with(
        UpdateMode::Webhook {
            public_url: url::Url::parse(&format!("http://{public}/")).unwrap(),
            secret: SECRET.into(),
        },
        Arc::new(RedisDialogues::new(conn.clone(), prefix)),
        Arc::new(RedisDedup::new(conn, prefix)),
    )
    .await
}

fn update(v: serde_json::Value) -> Update {
    serde_json::from_str(&v.to_string()).unwrap()
}

#[tokio::test]
async fn a_dialogue_continues_on_another_copy_through_redis() {
    let env = Env::new().await;
    let prefix = unique_prefix("dialogue");
    let mut conn = redis_connection(&redis_url()).unwrap();
    let first = copy(&env, &prefix).await;
    let second = copy(&env, &prefix).await;

    let r = first
        .bots
        .handle_update("main", update(with_id(text(CHAT, "/include"), 1)))
        .await
        .unwrap();
    assert_eq!(r, Processed::Handled);
    // The question is in Redis under the documented key, expiring within a day.
    let key = format!("{prefix}:dialogue:main:{CHAT}");
    let ttl: i64 = redis::cmd("TTL")
        .arg(&key)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        (86_000..=86_400).contains(&ttl),
        "ttl {ttl}; sent {:?}",
        env.sent(MAIN_ID, CHAT)
    );
    let dialogues = RedisDialogues::new(conn.clone(), prefix.as_str());
    assert_eq!(
        dialogues.get("main", CHAT).await.unwrap(),
        Some(DialogueState::Include)
    );

    second
        .bots
        .handle_update("main", update(with_id(text(CHAT, "rust, tokio"), 2)))
        .await
        .unwrap();
    let sent = env.wait_sent(MAIN_ID, CHAT, 2).await;
    assert!(
        sent[1].visible_text.contains("rust, tokio"),
        "{}",
        sent[1].visible_text
    );
    assert_eq!(
        env.subscriber(CHAT).await.unwrap().include,
        ["rust", "tokio"]
    );
    assert_eq!(dialogues.get("main", CHAT).await.unwrap(), None);

    first.stop().await;
    second.stop().await;
    delete_keys(&mut conn, &prefix).await;
}

#[tokio::test]
async fn an_update_delivered_to_two_copies_is_handled_once() {
    let env = Env::new().await;
    let prefix = unique_prefix("dedup");
    let mut conn = redis_connection(&redis_url()).unwrap();
    let first = copy(&env, &prefix).await;
    let second = copy(&env, &prefix).await;

    first
        .bots
        .handle_update("main", update(with_id(text(CHAT, "/report"), 7)))
        .await
        .unwrap();
    let vacancy = with_id(text(CHAT, "Нужен верстальщик, 20 000 руб"), 8);
    let (a, b) = tokio::join!(
        first.bots.handle_update("main", update(vacancy.clone())),
        second.bots.handle_update("main", update(vacancy)),
    );
    let mut outcomes = [a.unwrap(), b.unwrap()];
    outcomes.sort_by_key(|o| format!("{o:?}"));
    assert_eq!(outcomes, [Processed::Duplicate, Processed::Handled]);
    assert_eq!(env.store.reports(None, 10).await.unwrap().len(), 1);
    let claim: Option<String> = redis::cmd("GET")
        .arg(format!("{prefix}:update:main:8"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(claim.is_some());

    first.stop().await;
    second.stop().await;
    delete_keys(&mut conn, &prefix).await;
}
