//! The reader's behaviour, driven through [`ScriptedAccount`] with tokio's paused clock.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use jobwire_core::IncomingPost;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::*;

fn base() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).single().unwrap()
}

/// A message of channel `peer`, posted `id` minutes before the start.
fn m(peer: i64, id: i64, text: &str) -> RawMessage {
    RawMessage {
        id,
        peer,
        text: text.into(),
        entities: vec![],
        grouped_id: None,
        forward_from: None,
        author: None,
        date: base() - chrono::Duration::minutes(1000 - id),
        edit_date: None,
        is_service: false,
    }
}

fn r(s: &str) -> ChannelRef {
    ChannelRef::parse(s).unwrap()
}

fn config() -> ReaderConfig {
    ReaderConfig {
        join_jitter: Duration::ZERO,
        ..ReaderConfig::default()
    }
}

struct Harness {
    events: mpsc::Receiver<ReaderEvent>,
    task: JoinHandle<Result<(), ReaderError>>,
    handle: ReaderHandle,
}

impl Harness {
    fn start(
        config: ReaderConfig,
        accounts: &[&Arc<ScriptedAccount>],
        store: &Arc<MemoryReaderStore>,
        channels: &[&str],
    ) -> Self {
        let (tx, events) = mpsc::channel(100);
        let accounts: Vec<Arc<dyn Account>> = accounts
            .iter()
            .map(|a| Arc::clone(*a) as Arc<dyn Account>)
            .collect();
        let store: Arc<dyn ReaderStore> = Arc::clone(store) as Arc<dyn ReaderStore>;
        let clock = Arc::new(TokioClock::starting_at(base()));
        let mut reader = Reader::new(config, accounts, store, clock, tx);
        for c in channels {
            reader.add_channel(r(c));
        }
        let handle = reader.handle();
        let task = tokio::spawn(reader.run());
        Self {
            events,
            task,
            handle,
        }
    }

    /// The next event, within a simulated day.
    async fn next(&mut self) -> ReaderEvent {
        tokio::time::timeout(Duration::from_secs(24 * 3600), self.events.recv())
            .await
            .expect("an event within a day")
            .expect("reader running")
    }

    async fn post(&mut self) -> IncomingPost {
        match self.next().await {
            ReaderEvent::Post(p) => p,
            other => panic!("expected a post, got {other:?}"),
        }
    }

    async fn posts(&mut self, n: usize) -> Vec<String> {
        let mut ids = Vec::new();
        for _ in 0..n {
            ids.push(self.post().await.external_id);
        }
        ids
    }

    /// Asserts nothing is sent during `d`.
    async fn quiet_for(&mut self, d: Duration) {
        if let Ok(e) = tokio::time::timeout(d, self.events.recv()).await {
            panic!("expected silence, got {e:?}");
        }
    }

    async fn stop(self) {
        drop(self.events);
        self.task.abort();
        let _ = self.task.await;
    }
}

fn account(id: &str, channels: &[(&str, i64)]) -> Arc<ScriptedAccount> {
    let a = Arc::new(ScriptedAccount::new(id));
    for (c, peer) in channels {
        a.add_channel(&r(c), *peer);
    }
    a
}

#[tokio::test(start_paused = true)]
async fn a_new_channel_starts_from_now_then_streams_live_posts() {
    let a = account("a1", &[("@jobs", 100)]);
    for id in 1..=3 {
        a.post(m(100, id, "old"), false);
    }
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        store.cursor("@jobs").await.unwrap(),
        Some(3),
        "no backfill by default"
    );
    let mut live = m(100, 4, "Rust dev wanted");
    live.author = Some("@hr".into());
    a.post(live, true);
    let post = h.post().await;
    assert_eq!(post.external_id, "4");
    assert_eq!(post.channel, "@jobs");
    assert_eq!(post.text, "Rust dev wanted");
    assert_eq!(post.author.as_deref(), Some("@hr"));
    assert_eq!(post.url.as_deref(), Some("https://t.me/jobs/4"));
    assert_eq!(store.cursor("@jobs").await.unwrap(), Some(4));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_gap_after_a_restart_is_caught_up_from_the_cursor_in_order() {
    let a = account("a1", &[("@jobs", 100)]);
    for id in 8..=15 {
        a.post(m(100, id, &format!("post {id}")), false);
    }
    let store = Arc::new(MemoryReaderStore::new());
    store.set_cursor("@jobs", 10).await.unwrap();
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    assert_eq!(h.posts(5).await, ["11", "12", "13", "14", "15"]);
    assert_eq!(store.cursor("@jobs").await.unwrap(), Some(15));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_live_post_after_missed_ones_pulls_the_missed_ones_first() {
    let a = account("a1", &[("@jobs", 100)]);
    a.post(m(100, 1, "x"), false);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    a.post(m(100, 2, "missed"), false);
    a.post(m(100, 3, "missed too"), false);
    a.post(m(100, 4, "live"), true);
    assert_eq!(h.posts(3).await, ["2", "3", "4"]);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_quiet_channel_is_polled_and_nothing_is_missed() {
    let a = account("a1", &[("@jobs", 100)]);
    a.post(m(100, 1, "x"), false);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Telegram stops pushing: the post only lands in history.
    a.post(m(100, 2, "never pushed"), false);
    let start = Instant::now();
    let post = h.post().await;
    assert_eq!(post.external_id, "2");
    let waited = start.elapsed();
    assert!(
        waited <= Duration::from_secs(121),
        "polled within the poll interval, took {waited:?}"
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_disconnect_triggers_a_catch_up() {
    let a = account("a1", &[("@jobs", 100)]);
    a.post(m(100, 1, "x"), false);
    let store = Arc::new(MemoryReaderStore::new());
    let mut cfg = config();
    cfg.poll_interval = Duration::from_secs(3600);
    let mut h = Harness::start(cfg, &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    a.post(m(100, 2, "sent while disconnected"), false);
    a.push_error(AccountError::Other("connection reset".into()));
    let start = Instant::now();
    assert_eq!(h.post().await.external_id, "2");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_short_flood_wait_is_slept_through() {
    let a = account("a1", &[("@jobs", 100)]);
    for id in 1..=3 {
        a.post(m(100, id, "p"), false);
    }
    let store = Arc::new(MemoryReaderStore::new());
    store.set_cursor("@jobs", 1).await.unwrap();
    a.fail_next(
        Op::History,
        AccountError::FloodWait(Duration::from_secs(20)),
    );
    let start = Instant::now();
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    assert_eq!(h.posts(2).await, ["2", "3"]);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(20) && took < Duration::from_secs(25),
        "{took:?}"
    );
    assert_eq!(
        store.flood_waits(),
        [("a1".to_string(), Duration::from_secs(20))],
        "the flood wait is noted for the admin panel"
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_long_flood_defers_and_a_very_long_one_moves_channels() {
    // 10 min: deferred on the same account, no alert.
    let a = account("a1", &[("@jobs", 100)]);
    a.post(m(100, 1, "p"), false);
    a.post(m(100, 2, "p"), false);
    let store = Arc::new(MemoryReaderStore::new());
    store.set_cursor("@jobs", 1).await.unwrap();
    a.fail_next(
        Op::History,
        AccountError::FloodWait(Duration::from_secs(600)),
    );
    let start = Instant::now();
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    assert_eq!(h.post().await.external_id, "2");
    assert!(start.elapsed() >= Duration::from_secs(600));
    h.stop().await;

    // 2 h: the channel moves to the second account, with an alert.
    let a1 = account("a1", &[("@jobs", 100)]);
    let a2 = account("a2", &[("@jobs", 100)]);
    for acc in [&a1, &a2] {
        acc.post(m(100, 1, "p"), false);
        acc.post(m(100, 2, "p"), false);
    }
    let store = Arc::new(MemoryReaderStore::new());
    store.set_cursor("@jobs", 1).await.unwrap();
    store.assign("@jobs", "a1").await.unwrap();
    a1.fail_next(
        Op::Resolve,
        AccountError::FloodWait(Duration::from_secs(7200)),
    );
    let start = Instant::now();
    let mut h = Harness::start(config(), &[&a1, &a2], &store, &["@jobs"]);
    match h.next().await {
        ReaderEvent::Alert {
            account, message, ..
        } => {
            assert_eq!(account.as_deref(), Some("a1"));
            assert!(message.contains("flood"), "{message}");
        }
        other => panic!("expected an alert, got {other:?}"),
    }
    assert_eq!(h.post().await.external_id, "2");
    assert!(
        start.elapsed() < Duration::from_secs(600),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        store.assignments().await.unwrap(),
        [("@jobs".to_string(), "a2".to_string())]
    );
    assert_eq!(
        store.flood_waits(),
        [("a1".to_string(), Duration::from_secs(7200))]
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_banned_account_fails_over_with_an_alert() {
    let a1 = account("a1", &[("@jobs", 100)]);
    let a2 = account("a2", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a1, &a2], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        store.assignments().await.unwrap(),
        [("@jobs".to_string(), "a1".to_string())]
    );
    a1.kill(AccountError::Banned);
    match h.next().await {
        ReaderEvent::Alert {
            account, message, ..
        } => {
            assert_eq!(account.as_deref(), Some("a1"));
            assert!(message.contains("banned"), "{message}");
        }
        other => panic!("expected an alert, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    a2.post(m(100, 1, "after the ban"), true);
    assert_eq!(h.post().await.text, "after the ban");
    assert_eq!(
        store.assignments().await.unwrap(),
        [("@jobs".to_string(), "a2".to_string())]
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_dead_session_is_reported() {
    let a1 = account("a1", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a1], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    a1.kill(AccountError::SessionDead);
    let mut saw = Vec::new();
    for _ in 0..2 {
        if let ReaderEvent::Alert { message, .. } = h.next().await {
            saw.push(message);
        }
    }
    assert!(saw[0].contains("jobwire login"), "{saw:?}");
    assert!(saw[1].contains("no account left"), "{saw:?}");
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn joins_are_paced() {
    let names = ["@chan_a", "@chan_b", "@chan_c", "@chan_d"];
    let a = account(
        "a1",
        &names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, 100 + i as i64))
            .collect::<Vec<_>>(),
    );
    let store = Arc::new(MemoryReaderStore::new());
    let mut cfg = config();
    cfg.join_jitter = Duration::from_secs(30);
    let h = Harness::start(cfg, &[&a], &store, &names);
    tokio::time::sleep(Duration::from_secs(600)).await;
    let joins = a.join_times();
    assert_eq!(joins.len(), 4);
    for w in joins.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            gap >= Duration::from_secs(90) && gap <= Duration::from_secs(121),
            "gap {gap:?}"
        );
    }
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_daily_join_cap_holds_joins_back() {
    let names = ["@chan_a", "@chan_b", "@chan_c"];
    let a = account("a1", &[("@chan_a", 1), ("@chan_b", 2), ("@chan_c", 3)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut cfg = config();
    cfg.max_joins_per_day = 2;
    let h = Harness::start(cfg, &[&a], &store, &names);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    // Each channel costs a resolve and a join slot: 2 per day means one channel a day.
    assert_eq!(a.join_times().len(), 1);
    tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
    assert_eq!(a.join_times().len(), 2);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn channels_past_the_cap_are_sharded_over_accounts() {
    let chans = [("@chan_a", 1), ("@chan_b", 2), ("@chan_c", 3)];
    let a1 = account("a1", &chans);
    let a2 = account("a2", &chans);
    let store = Arc::new(MemoryReaderStore::new());
    let mut cfg = config();
    cfg.channels_per_account = 2;
    let h = Harness::start(cfg, &[&a1, &a2], &store, &["@chan_a", "@chan_b", "@chan_c"]);
    tokio::time::sleep(Duration::from_secs(600)).await;
    let assigned = store.assignments().await.unwrap();
    assert_eq!(assigned.len(), 3);
    let on = |acc: &str| assigned.iter().filter(|(_, a)| a == acc).count();
    assert_eq!((on("a1"), on("a2")), (2, 1), "{assigned:?}");
    assert_eq!(a1.join_times().len(), 2);
    assert_eq!(a2.join_times().len(), 1);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_full_account_hands_the_channel_to_another() {
    let a1 = account("a1", &[("@jobs", 100)]);
    let a2 = account("a2", &[("@jobs", 100)]);
    a1.set_join_error(&r("@jobs"), AccountError::ChannelsTooMuch);
    let store = Arc::new(MemoryReaderStore::new());
    let h = Harness::start(config(), &[&a1, &a2], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(300)).await;
    assert_eq!(
        store.assignments().await.unwrap(),
        [("@jobs".to_string(), "a2".to_string())]
    );
    assert_eq!(a2.join_times().len(), 1);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn join_failures_are_reported_with_their_reason() {
    let a = account(
        "a1",
        &[
            ("https://t.me/+Expired123", 1),
            ("https://t.me/+Approve123", 2),
        ],
    );
    a.set_join_error(&r("https://t.me/+Expired123"), AccountError::InviteExpired);
    a.set_join_error(
        &r("https://t.me/+Approve123"),
        AccountError::JoinRequestSent,
    );
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(
        config(),
        &[&a],
        &store,
        &[
            "https://t.me/+Expired123",
            "https://t.me/+Approve123",
            "@missing",
        ],
    );
    let mut failed = Vec::new();
    for _ in 0..3 {
        match h.next().await {
            ReaderEvent::JoinFailed { channel, reason } => failed.push((channel, reason)),
            other => panic!("expected JoinFailed, got {other:?}"),
        }
    }
    failed.sort();
    assert_eq!(failed[0].0, "@missing");
    assert!(failed[0].1.contains("no such channel"), "{failed:?}");
    assert_eq!(failed[1].0, "https://t.me/+Approve123");
    assert!(failed[1].1.contains("join request"), "{failed:?}");
    assert_eq!(failed[2].0, "https://t.me/+Expired123");
    assert!(failed[2].1.contains("expired"), "{failed:?}");
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_username_is_never_resolved_twice() {
    let a = account("a1", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(10)).await;
    h.stop().await;
    assert_eq!(a.resolve_count(&r("@jobs")), 1);
    // A restart with the same store, and the channel added again at runtime.
    let h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    assert!(h.handle.add_channel(r("t.me/jobs")));
    tokio::time::sleep(Duration::from_secs(300)).await;
    assert_eq!(a.resolve_count(&r("@jobs")), 1);
    assert_eq!(a.join_times().len(), 1);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_invite_channel_is_joined_and_read() {
    let a = account("a1", &[("https://t.me/+Secret123", 555)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["https://t.me/+Secret123"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    a.post(m(555, 1, "private job"), true);
    let post = h.post().await;
    assert_eq!(post.channel, "https://t.me/+Secret123");
    assert_eq!(post.url.as_deref(), Some("https://t.me/c/555/1"));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_album_becomes_one_post() {
    let a = account("a1", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    for (id, text) in [(1, ""), (2, "Photographer wanted"), (3, "")] {
        let mut part = m(100, id, text);
        part.grouped_id = Some(42);
        a.post(part, true);
    }
    a.post(m(100, 4, "next post"), true);
    let album = h.post().await;
    assert_eq!(album.external_id, "1");
    assert_eq!(album.text, "Photographer wanted");
    assert_eq!(h.post().await.external_id, "4");
    // An album alone is sent once the window passes.
    for id in [5, 6] {
        let mut part = m(100, id, if id == 5 { "Caption" } else { "" });
        part.grouped_id = Some(43);
        a.post(part, true);
    }
    let start = Instant::now();
    assert_eq!(h.post().await.external_id, "5");
    assert!(start.elapsed() <= Duration::from_secs(3));
    assert_eq!(store.cursor("@jobs").await.unwrap(), Some(6));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_forward_keeps_its_origin() {
    let a = account("a1", &[("@jobs", 100), ("@origin", 200)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs", "@origin"]);
    tokio::time::sleep(Duration::from_secs(200)).await;
    let mut fwd = m(100, 1, "Forwarded vacancy");
    fwd.forward_from = Some(ForwardOrigin {
        channel_id: Some(200),
        message_id: Some(77),
        ..ForwardOrigin::default()
    });
    a.post(fwd, true);
    let post = h.post().await;
    assert_eq!(post.channel, "@jobs");
    assert_eq!(post.url.as_deref(), Some("https://t.me/origin/77"));
    assert_eq!(post.author.as_deref(), Some("@origin"));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn service_messages_are_skipped_but_move_the_cursor() {
    let a = account("a1", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let history_before = a.history_calls();
    let mut service = m(100, 1, "");
    service.is_service = true;
    a.post(service, true);
    a.post(m(100, 2, "real"), true);
    assert_eq!(h.post().await.external_id, "2");
    assert_eq!(a.history_calls(), history_before, "no gap, no catch-up");
    assert_eq!(store.cursor("@jobs").await.unwrap(), Some(2));
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn edits_are_passed_on_once_per_text_change() {
    let a = account("a1", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    a.post(m(100, 1, "Go dev, 3000"), true);
    assert_eq!(h.post().await.text, "Go dev, 3000");
    a.edit(m(100, 1, "Go dev, 3000"), true); // reactions or buttons: same text
    a.edit(m(100, 1, "Go dev, 4000"), true);
    match h.next().await {
        ReaderEvent::Edited(p) => {
            assert_eq!(p.external_id, "1");
            assert_eq!(p.text, "Go dev, 4000");
        }
        other => panic!("expected an edit, got {other:?}"),
    }
    // An edited album caption names the album's post.
    for (id, text) in [(2, ""), (3, "Caption")] {
        let mut part = m(100, id, text);
        part.grouped_id = Some(9);
        a.post(part, true);
    }
    assert_eq!(h.post().await.external_id, "2");
    let mut part = m(100, 3, "Caption, fixed");
    part.grouped_id = Some(9);
    a.edit(part, true);
    match h.next().await {
        ReaderEvent::Edited(p) => {
            assert_eq!(p.external_id, "2");
            assert_eq!(p.text, "Caption, fixed");
        }
        other => panic!("expected an edit, got {other:?}"),
    }
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_watchdog_reports_a_channel_silent_far_longer_than_usual() {
    let a = account("a1", &[("@jobs", 100)]);
    // Ten posts ten minutes apart, the last one at the start.
    for k in 0..10 {
        let mut p = m(100, k + 1, "job");
        p.date = base() - chrono::Duration::minutes(10 * (9 - k));
        a.post(p, false);
    }
    let store = Arc::new(MemoryReaderStore::new());
    let mut cfg = config();
    cfg.initial_backfill = 10;
    cfg.min_channel_silence = Duration::from_secs(3600);
    cfg.account_silence = Duration::from_secs(100 * 3600);
    let mut h = Harness::start(cfg, &[&a], &store, &["@jobs"]);
    assert_eq!(h.posts(10).await.len(), 10);
    let start = Instant::now();
    match h.next().await {
        ReaderEvent::Alert {
            channel, message, ..
        } => {
            assert_eq!(channel.as_deref(), Some("@jobs"));
            assert!(message.contains("silent"), "{message}");
            assert!(message.contains("10 min"), "{message}");
        }
        other => panic!("expected an alert, got {other:?}"),
    }
    let after = start.elapsed();
    assert!(
        after >= Duration::from_secs(3600) && after <= Duration::from_secs(3602),
        "{after:?}"
    );
    // Once per silence.
    h.quiet_for(Duration::from_secs(6 * 3600)).await;
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_watchdog_reports_an_account_without_updates() {
    let a = account("a1", &[("@jobs", 100)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut cfg = config();
    cfg.account_silence = Duration::from_secs(1800);
    let mut h = Harness::start(cfg, &[&a], &store, &["@jobs"]);
    match h.next().await {
        ReaderEvent::Alert {
            account,
            channel,
            message,
        } => {
            assert_eq!(account.as_deref(), Some("a1"));
            assert_eq!(channel, None);
            assert!(message.contains("no update"), "{message}");
        }
        other => panic!("expected an alert, got {other:?}"),
    }
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_stalled_consumer_holds_updates_back_without_dropping_them() {
    let a = account("a1", &[("@jobs", 100)]);
    a.post(m(100, 1, "x"), false);
    let store = Arc::new(MemoryReaderStore::new());
    let cfg = ReaderConfig {
        update_buffer: 50,
        ..config()
    };
    let mut h = Harness::start(cfg, &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    // The consumer (the database writer) stalls: nobody takes events for a minute while
    // Telegram pushes 1000 posts.
    let pushed = 1000;
    for id in 2..2 + pushed {
        a.post(m(100, id, "live"), true);
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    // Pulled from the stream at most: the buffer, the event channel (100 in the harness),
    // and one each in the reader and in the pump.
    let held = a.updates_pulled();
    assert!(
        held <= 50 + 100 + 2,
        "{held} of {pushed} updates pulled while the consumer stalled"
    );
    // The consumer is back: every post arrives, in order, none dropped.
    let want: Vec<String> = (2..2 + pushed).map(|id| id.to_string()).collect();
    assert_eq!(h.posts(want.len()).await, want);
    assert_eq!(a.updates_pulled(), pushed as usize);
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn channels_added_while_running_are_joined_at_the_pace_and_removed_ones_go_silent() {
    let a = account("a1", &[("@jobs", 100), ("@gigs", 200), ("@work", 300)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(5)).await;

    // Two channels added while the reader runs: joined one after the other, the join
    // interval apart, and their next posts handed on.
    assert!(h.handle.add_channel(r("@gigs")));
    assert!(h.handle.add_channel(r("@work")));
    tokio::time::sleep(Duration::from_secs(200)).await;
    let joins = a.join_times();
    assert_eq!(joins.len(), 3, "every channel joined once");
    assert!(
        joins[2] - joins[1] >= Duration::from_secs(90),
        "joins paced"
    );
    a.post(m(200, 1, "Designer wanted"), true);
    let post = h.post().await;
    assert_eq!(
        (post.channel.as_str(), post.external_id.as_str()),
        ("@gigs", "1")
    );

    // Removed: live posts and polls hand nothing on.
    assert!(h.handle.remove_channel(r("@jobs")));
    tokio::time::sleep(Duration::from_secs(1)).await;
    a.post(m(100, 1, "Rust dev wanted"), true);
    a.post(m(100, 2, "Go dev wanted"), false);
    h.quiet_for(Duration::from_secs(600)).await;

    // Added again: read from its newest message on, without a second join; what was
    // posted while it was removed is not handed on.
    assert!(h.handle.add_channel(r("@jobs")));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(a.join_times().len(), 3, "no second join");
    a.post(m(100, 3, "QA wanted"), true);
    let post = h.post().await;
    assert_eq!(
        (post.channel.as_str(), post.external_id.as_str()),
        ("@jobs", "3")
    );
    h.quiet_for(Duration::from_secs(600)).await;
    h.stop().await;
}

// ---------------------------------------------------------------------------------------
// Restarts: the account's update state (getChannelDifference) or the history poll
// ---------------------------------------------------------------------------------------

/// An account over a session file in `dir`, with `channels`.
fn account_with_session(dir: &tempfile::TempDir, channels: &[(&str, i64)]) -> Arc<ScriptedAccount> {
    let a = Arc::new(ScriptedAccount::with_session("a1", &dir.path().join("a1.session")).unwrap());
    for (c, peer) in channels {
        a.add_channel(&r(c), *peer);
    }
    a
}

/// The channels' pts the session file at `path` holds, `(channel id, pts)` sorted.
fn saved_pts(path: &std::path::Path) -> Vec<(i64, i32)> {
    FileSession::open(path).unwrap().channel_pts()
}

/// A first run over an account with a session: `@jobs` (100) and `@design` (200) joined,
/// three live posts in `@jobs` and one in `@design` handed on; then jobwire stops. Returns
/// the reader's store and the account's next connection (the restart).
async fn restarted_after_live_posts(
    dir: &tempfile::TempDir,
) -> (Arc<MemoryReaderStore>, Arc<ScriptedAccount>) {
    let a = account_with_session(dir, &[("@jobs", 100), ("@design", 200)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs", "@design"]);
    tokio::time::sleep(Duration::from_secs(200)).await;
    for id in 1..=3 {
        a.post(m(100, id, "live"), true);
    }
    a.post(m(200, 1, "live"), true);
    let mut got = h.posts(4).await;
    got.sort();
    assert_eq!(got, ["1", "1", "2", "3"]);
    h.stop().await;
    (store, Arc::new(a.restart().unwrap()))
}

#[tokio::test(start_paused = true)]
async fn after_live_updates_the_session_file_holds_each_channels_pts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a1.session");
    let a = account_with_session(&dir, &[("@jobs", 100), ("@design", 200)]);
    let store = Arc::new(MemoryReaderStore::new());
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs", "@design"]);
    tokio::time::sleep(Duration::from_secs(200)).await;
    for id in 1..=3 {
        a.post(m(100, id, "live"), true);
    }
    a.edit(m(100, 2, "live, edited"), true);
    a.post(m(200, 1, "live"), true);
    h.posts(3).await;
    assert!(matches!(h.next().await, ReaderEvent::Edited(_)));
    h.post().await;
    // Marked dirty with each update and written by the periodic flush, while it runs.
    let want = vec![(100, a.channel_pts(100)), (200, a.channel_pts(200))];
    assert_eq!(want, [(100, 4), (200, 1)], "an edit moves the pts too");
    let deadline = Instant::now() + Duration::from_secs(5);
    while saved_pts(&path) != want {
        assert!(Instant::now() < deadline, "{:?}", saved_pts(&path));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_restart_catches_up_through_get_channel_difference_from_the_saved_pts() {
    let dir = tempfile::tempdir().unwrap();
    let (store, second) = restarted_after_live_posts(&dir).await;
    // While jobwire is down @jobs posts 250 times (one of them edited later) and @design
    // twice: the live updates reach nobody.
    for id in 4..=253 {
        second.post(m(100, id, &format!("missed {id}")), false);
    }
    second.edit(m(100, 10, "missed 10, edited"), false);
    second.post(m(200, 2, "missed"), false);
    second.post(m(200, 3, "missed"), false);
    let mut h = Harness::start(config(), &[&second], &store, &["@jobs", "@design"]);
    let mut jobs = Vec::new();
    let mut design = Vec::new();
    let mut edits = Vec::new();
    while jobs.len() < 250 || design.len() < 2 || edits.is_empty() {
        match h.next().await {
            ReaderEvent::Post(p) if p.channel == "@jobs" => jobs.push(p.external_id),
            ReaderEvent::Post(p) => design.push(p.external_id),
            ReaderEvent::Edited(p) => edits.push((p.external_id, p.text)),
            other => panic!("unexpected {other:?}"),
        }
    }
    // Every missed post once, in order; nothing older again.
    let want: Vec<String> = (4..=253).map(|id| id.to_string()).collect();
    assert_eq!(jobs, want);
    assert_eq!(design, ["2", "3"]);
    assert_eq!(edits, [("10".to_string(), "missed 10, edited".to_string())]);
    // From the pts the session kept, 100 updates an answer; no history read.
    assert_eq!(
        second.channel_differences(),
        [(100, 3), (100, 103), (100, 203), (200, 1)]
    );
    assert_eq!(second.history_calls(), 0, "{:?}", second.calls());
    assert_eq!(store.cursor("@jobs").await.unwrap(), Some(253));
    // Nothing comes twice, also once the quiet channels' regular polls have run.
    h.quiet_for(Duration::from_secs(600)).await;
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_session_without_channel_state_falls_back_to_the_history_poll() {
    let dir = tempfile::tempdir().unwrap();
    let first = account_with_session(&dir, &[("@jobs", 100)]);
    first.post(m(100, 1, "before the first start"), false);
    // The account's state as a login leaves it: a pts, no channels.
    {
        use grammers_session::Session;
        use grammers_session::types::{UpdateState, UpdatesState};
        let session = FileSession::open(&dir.path().join("a1.session")).unwrap();
        session
            .set_update_state(UpdateState::All(UpdatesState {
                pts: 2,
                ..UpdatesState::default()
            }))
            .await
            .unwrap();
        session.save().unwrap();
    }
    let first = Arc::new(first.restart().unwrap());
    let store = Arc::new(MemoryReaderStore::new());
    // Joined, no live update: the session learns no channel pts.
    let h = Harness::start(config(), &[&first], &store, &["@jobs"]);
    tokio::time::sleep(Duration::from_secs(10)).await;
    h.stop().await;
    assert_eq!(store.cursor("@jobs").await.unwrap(), Some(1));

    let second = Arc::new(first.restart().unwrap());
    for id in 2..=151 {
        second.post(m(100, id, "missed"), false);
    }
    let mut h = Harness::start(config(), &[&second], &store, &["@jobs"]);
    let want: Vec<String> = (2..=151).map(|id| id.to_string()).collect();
    assert_eq!(h.posts(150).await, want, "paged until the gap closed");
    let calls = second.calls();
    let history: Vec<_> = calls
        .iter()
        .filter_map(|c| match c {
            Call::History(peer, after, _) => Some((*peer, *after)),
            _ => None,
        })
        .collect();
    assert_eq!(history, [(100, 1), (100, 101)], "from the cursor on");
    assert!(
        calls.iter().any(|c| matches!(c, Call::Difference(2, _))),
        "the account's difference was asked for, and brought no channel post: {calls:?}"
    );
    assert!(second.channel_differences().is_empty());
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_young_channel_loses_nothing_after_a_crash() {
    let a = account("a1", &[("@jobs", 100)]);
    for id in 1..=150 {
        a.post(m(100, id, "post"), false);
    }
    // The last run handed on up to 5 and did not stop cleanly: read again from 20 before.
    let store = Arc::new(MemoryReaderStore::new());
    store.set_cursor("@jobs", 5).await.unwrap();
    store.set_restart_rewind(20);
    let mut h = Harness::start(config(), &[&a], &store, &["@jobs"]);
    let want: Vec<String> = (1..=150).map(|id| id.to_string()).collect();
    assert_eq!(
        h.posts(150).await,
        want,
        "from the first message, not the newest 100"
    );
    assert_eq!(
        a.calls()
            .iter()
            .filter_map(|c| match c {
                Call::History(_, after, _) => Some(*after),
                Call::Newest(..) => Some(-1),
                _ => None,
            })
            .collect::<Vec<_>>(),
        [0, 100]
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn after_a_crash_even_a_channel_the_session_catches_up_is_polled_from_before_its_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let (store, second) = restarted_after_live_posts(&dir).await;
    store.set_restart_rewind(20);
    second.post(m(100, 4, "missed"), false);
    let mut h = Harness::start(config(), &[&second], &store, &["@jobs", "@design"]);
    // Re-read from the first message (intake drops what it has), then the missed one.
    let mut jobs = Vec::new();
    while jobs.last().map(String::as_str) != Some("4") {
        if let ReaderEvent::Post(p) = h.next().await
            && p.channel == "@jobs"
        {
            jobs.push(p.external_id);
        }
    }
    assert_eq!(jobs, ["1", "2", "3", "4"]);
    assert!(
        second
            .calls()
            .iter()
            .any(|c| matches!(c, Call::History(100, 0, _)))
    );
    h.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_difference_too_long_is_closed_from_history_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (store, second) = restarted_after_live_posts(&dir).await;
    // Telegram no longer keeps the updates after the saved pts: it answers with the latest
    // messages and the current pts, and the gap before them is read from history.
    second.set_message_box(50);
    for id in 4..=253 {
        second.post(m(100, id, "missed"), false);
    }
    let mut h = Harness::start(config(), &[&second], &store, &["@jobs", "@design"]);
    let mut jobs = Vec::new();
    while jobs.len() < 250 {
        if let ReaderEvent::Post(p) = h.next().await {
            jobs.push(p.external_id);
        }
    }
    let want: Vec<String> = (4..=253).map(|id| id.to_string()).collect();
    assert_eq!(jobs, want);
    assert_eq!(second.channel_differences(), [(100, 3), (200, 1)]);
    assert!(second.history_calls() > 0);
    h.quiet_for(Duration::from_secs(600)).await;
    h.stop().await;
}
