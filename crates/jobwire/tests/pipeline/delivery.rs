//! Delivery under pressure: Telegram's 429 and 5xx answers, and quiet hours.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::Utc;
use jobwire::testbed::{Bed, seed_job, start_pipeline, temp_db};
use jobwire_deliver::RateLimitConfig;
use jobwire_store::{
    BlockScope, DeliveryStore, NewDelivery, SqliteStore, SubscriberStore, WaitKind,
};
use jobwire_testkit::telegram::RateLimits;
use jobwire_testkit::wait::eventually;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_telegram_outage_delays_a_delivery_and_a_definitive_refusal_ends_it() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = dev_and_creative_bed();
    let settings = bed.settings(telegram.url(), &db).unwrap();
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        let subs = [subscriber(1, &["web", "design"])];
        jobwire::subscribers::store_all(&store, &subs)
            .await
            .unwrap();
        seed_job(&store, "@c", "1", "Web job, budget $100", &["web"])
            .await
            .unwrap();
        seed_job(&store, "@c", "2", "Logo design, budget $50", &["design"])
            .await
            .unwrap();
    }
    // Telegram is down for the web bot's first call; the design bot's call is refused with
    // an error teloxide does not know, worded as the Bot API words client errors.
    let (dev, creative) = (bed.bot_id("dev").unwrap(), bed.bot_id("creative").unwrap());
    telegram.fail_next_sends(dev, 1, 500, "Internal Server Error");
    telegram.fail_next_sends(creative, 1, 400, "Bad Request: a brand new refusal");
    let (mut running, store) = start_pipeline(&settings).await.unwrap();
    // The failed attempt is held for a backoff (which the pipeline counts as settled).
    eventually(
        "the web job to arrive after the outage",
        Duration::from_secs(60),
        || async { !telegram.chat_messages(dev, 1).is_empty() },
    )
    .await;
    let counts = running.wait_settled(Duration::from_secs(30)).await.unwrap();
    running.shutdown().await.unwrap();

    assert_eq!(telegram.stats().rejected_5xx, 1);
    let web = telegram.chat_messages(dev, 1);
    assert_eq!(web.len(), 1, "the web job arrived once, after the outage");
    assert!(web[0].text.contains("Web job"), "{}", web[0].text);
    assert!(
        telegram.chat_messages(creative, 1).is_empty(),
        "a refused message is not sent again"
    );
    assert_eq!(
        (counts.deliveries_sent, counts.deliveries_failed),
        (1, 1),
        "{counts:?}"
    );
    let sent = store.sent_deliveries().await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].chat_id, sent[0].bot.as_str()), (1, "dev"));
}

/// One bot, `dev`, delivering web, with the sender's `limits`.
fn dev_only_bed(limits: RateLimitConfig) -> Bed {
    Bed {
        bots: vec!["dev".into()],
        routes: vec![("web".into(), "dev".into())],
        limits,
        ..Bed::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_429_the_bot_waits_retry_after_and_resends_everything_once() {
    init();
    // The fake enforces Telegram's limits; our sender is told the limits are 5x higher,
    // so Telegram answers 429 and the sender must back off and re-send.
    let telegram = fake_telegram(Some(RateLimits::default())).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = dev_only_bed(RateLimitConfig {
        global_per_sec: 150,
        per_chat_per_sec: 5,
        per_group_per_min: 100,
        ..RateLimitConfig::default()
    });
    let settings = bed.settings(telegram.url(), &db).unwrap();
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        let subs: Vec<_> = (1..=8).map(|c| subscriber(c, &["web"])).collect();
        jobwire::subscribers::store_all(&store, &subs)
            .await
            .unwrap();
        for j in 0..3 {
            seed_job(
                &store,
                "@c",
                &j.to_string(),
                &format!("Web job {j}, budget $100"),
                &["web"],
            )
            .await
            .unwrap();
        }
    }
    let since = Utc::now() - chrono::Duration::minutes(1);
    let (mut running, store) = start_pipeline(&settings).await.unwrap();
    let counts = running.wait_settled(Duration::from_secs(60)).await.unwrap();
    let rate_limited = running
        .counters()
        .unwrap()
        .rate_limited
        .load(std::sync::atomic::Ordering::Relaxed);
    // Each 429 is kept for the admin panel's dashboard, under the bot's name.
    let answered = telegram.stats().rejected_429;
    eventually(
        "every 429 to be counted on the dashboard",
        Duration::from_secs(10),
        || async {
            let waits = store.dashboard_totals(since).await.unwrap().waits;
            let counted: u64 = waits
                .iter()
                .filter(|w| w.kind == WaitKind::Bot429 && w.who == "dev")
                .map(|w| w.count)
                .sum();
            (counted == answered)
                .then_some(())
                .ok_or(format!("{waits:?}"))
        },
    )
    .await;
    running.shutdown().await.unwrap();

    assert_eq!(counts.deliveries_sent, 24, "{counts:?}");
    let stats = telegram.stats();
    assert!(
        stats.rejected_429 > 0,
        "the fake must have answered 429 at least once"
    );
    assert_eq!(
        rate_limited, stats.rejected_429,
        "every 429 was seen and handled by the sender"
    );
    let messages = telegram.messages();
    assert_eq!(
        messages.len(),
        24,
        "each delivery reached Telegram exactly once"
    );
    let mut per_chat: BTreeMap<i64, Vec<chrono::DateTime<Utc>>> = BTreeMap::new();
    for m in &messages {
        per_chat.entry(m.chat_id).or_default().push(m.received_at);
    }
    for (chat, times) in per_chat {
        assert_eq!(times.len(), 3, "chat {chat}");
    }
    assert_eq!(store.sent_deliveries().await.unwrap().len(), 24);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_deliveries_go_out_when_their_time_comes_not_before() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        bots: vec!["dev".into()],
        routes: vec![("web".into(), "dev".into())],
        scheduler_tick_ms: 50,
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let release = Utc::now() + chrono::Duration::milliseconds(1500);
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        jobwire::subscribers::store_all(&store, &[subscriber(7, &["web"])])
            .await
            .unwrap();
        let sub = store.subscribers().await.unwrap()[0].id;
        let post = seed_job(&store, "@c", "1", "Night job", &["web"])
            .await
            .unwrap();
        let ready = store
            .fan_out(
                post,
                &["<b>Night job</b>".to_owned()],
                &[NewDelivery {
                    subscriber_id: sub,
                    chat_id: 7,
                    bot: "dev".into(),
                    not_before: Some(release),
                }],
                Utc::now(),
            )
            .await
            .unwrap();
        assert!(
            ready.is_empty(),
            "a delivery in quiet hours is held, not ready"
        );
    }
    let (running, store) = start_pipeline(&settings).await.unwrap();
    eventually(
        "the held message to be sent",
        Duration::from_secs(10),
        || async { !telegram.messages().is_empty() },
    )
    .await;
    running.shutdown().await.unwrap();
    let m = &telegram.messages()[0];
    assert!(
        m.received_at >= release,
        "sent at {} before its release at {release}",
        m.received_at
    );
    assert_eq!(store.pipeline_counts().await.unwrap().deliveries_held, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_one_category_bot_leaves_the_others_delivering() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        scheduler_tick_ms: 50,
        ..dev_and_creative_bed()
    };
    let mut settings = bed.settings(telegram.url(), &db).unwrap();
    settings.stuck_after = Duration::from_secs(1);
    let (dev, creative) = (bed.bot_id("dev").unwrap(), bed.bot_id("creative").unwrap());
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        let subs = [subscriber(1, &["web", "design"]), subscriber(2, &["web"])];
        jobwire::subscribers::store_all(&store, &subs)
            .await
            .unwrap();
        seed_job(&store, "@c", "1", "Web job A", &["web"])
            .await
            .unwrap();
    }
    // User 1 blocked the web bot; user 2 never pressed Start in it.
    telegram.block_chat(dev, 1);
    telegram.fail_next_sends(
        dev,
        1,
        403,
        "Forbidden: bot can't initiate conversation with a user",
    );
    let (mut running, store) = start_pipeline(&settings).await.unwrap();
    let counts = running.wait_settled(Duration::from_secs(30)).await.unwrap();
    assert_eq!(counts.deliveries_blocked, 2, "{counts:?}");
    let mut blocks: Vec<_> = store
        .bot_blocks(None)
        .await
        .unwrap()
        .into_iter()
        .map(|b| (b.chat_id, b.bot, b.scope))
        .collect();
    blocks.sort_by_key(|b| b.0);
    assert_eq!(
        blocks,
        [
            (1, "dev".to_owned(), BlockScope::Bot),
            (2, "dev".to_owned(), BlockScope::NotStarted)
        ]
    );
    for chat in [1, 2] {
        let s = store.subscriber_by_chat(chat).await.unwrap().unwrap();
        assert!(
            !s.blocked,
            "user {chat} is still reachable through other bots"
        );
    }

    // A job of both categories goes to user 1 through the bot they did not block.
    seed_job(
        store.as_ref(),
        "@c",
        "2",
        "Web and design job B",
        &["web", "design"],
    )
    .await
    .unwrap();
    eventually("job B to reach user 1", Duration::from_secs(20), || async {
        !telegram.chat_messages(creative, 1).is_empty()
    })
    .await;
    let counts = running.wait_settled(Duration::from_secs(30)).await.unwrap();
    running.shutdown().await.unwrap();
    assert!(
        telegram.chat_messages(creative, 1)[0]
            .text
            .contains("job B")
    );
    assert!(telegram.chat_messages(dev, 1).is_empty());
    assert!(
        telegram.chat_messages(dev, 2).is_empty() && telegram.chat_messages(creative, 2).is_empty(),
        "user 2 can be reached by no bot of the job"
    );
    assert_eq!(counts.deliveries_sent, 1, "{counts:?}");
}

/// A restart does not forget the last sends: a chat that got a card just before the sender
/// stopped gets the next one only after its interval, counted from the card before the
/// restart (here 1 message a second stretched to 5 s by the safety margin, so a quick
/// restart cannot pass for the wait), and Telegram never answers 429.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_does_not_forget_the_last_sends_to_a_chat() {
    init();
    let telegram = fake_telegram(Some(RateLimits::default())).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = dev_only_bed(RateLimitConfig {
        safety_margin: 4.0,
        ..RateLimitConfig::default()
    });
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let dev = bed.bot_id("dev").unwrap();
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        jobwire::subscribers::store_all(&store, &[subscriber(1, &["web"])])
            .await
            .unwrap();
        seed_job(&store, "@c", "1", "Web job one, budget $100", &["web"])
            .await
            .unwrap();
    }
    let (running, store) = start_pipeline(&settings).await.unwrap();
    eventually("the first card", Duration::from_secs(30), || async {
        !telegram.chat_messages(dev, 1).is_empty()
    })
    .await;
    running.shutdown().await.unwrap();

    seed_job(
        store.as_ref(),
        "@c",
        "2",
        "Web job two, budget $200",
        &["web"],
    )
    .await
    .unwrap();
    let (running, _store) = start_pipeline(&settings).await.unwrap();
    eventually("the second card", Duration::from_secs(30), || async {
        telegram.chat_messages(dev, 1).len() >= 2
    })
    .await;
    running.shutdown().await.unwrap();

    let cards = telegram.chat_messages(dev, 1);
    assert_eq!(cards.len(), 2);
    let gap = cards[1].received_at - cards[0].received_at;
    assert!(
        gap >= chrono::Duration::milliseconds(4_900),
        "the second card came {gap} after the first, across a restart"
    );
    assert_eq!(telegram.stats().rejected_429, 0);
}

/// The fan-out hands deliveries to the senders in messages of up to 64: each delivery a
/// message names goes out once, a message naming them again (a broker's redelivery) sends
/// nothing twice, and a one-delivery message of an earlier release is still sent. With
/// fewer in-flight slots than a message names, its deliveries share them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_naming_many_deliveries_sends_each_once() {
    use jobwire_queue::wire::{DeliveryReady, MAX_DELIVERY_BATCH};
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = dev_only_bed(RateLimitConfig::default());
    let mut settings = bed.settings(telegram.url(), &db).unwrap();
    settings.max_in_flight = 2;
    let dev = bed.bot_id("dev").unwrap();
    let chats: Vec<i64> = (1..=5).collect();
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        let subs: Vec<_> = chats.iter().map(|&c| subscriber(c, &["web"])).collect();
        jobwire::subscribers::store_all(&store, &subs)
            .await
            .unwrap();
    }
    let (mut running, store) = start_pipeline(&settings).await.unwrap();
    // A job nobody's filters route (design has no bot here), given deliveries by hand so
    // that this test writes their messages.
    let post = seed_job(store.as_ref(), "@c", "1", "Landing page, $300", &["design"])
        .await
        .unwrap();
    let new = jobwire::testbed::deliveries_to(&store.subscribers().await.unwrap(), "dev");
    let ready = store
        .fan_out(post, &["<b>Landing page</b>".to_owned()], &new, Utc::now())
        .await
        .unwrap();
    assert_eq!(ready.len(), chats.len());
    let (batch, single) = ready.split_at(ready.len() - 1);
    let batch = DeliveryReady::batch(batch).unwrap();
    assert!(batch.count() > 1 && batch.count() <= MAX_DELIVERY_BATCH);
    let queue = running.queue.clone();
    jobwire_queue::publish(queue.as_ref(), &batch)
        .await
        .unwrap();
    jobwire_queue::publish(queue.as_ref(), &DeliveryReady::new(single[0]))
        .await
        .unwrap();
    let first = running.wait_settled(Duration::from_secs(30)).await.unwrap();
    // The broker hands the batch out again (a sender died before its ack). Once the send
    // stage has taken it, the shutdown waits for its handling to end.
    jobwire_queue::publish(queue.as_ref(), &batch)
        .await
        .unwrap();
    eventually(
        "the send stage to take the message again and skip its sent deliveries",
        Duration::from_secs(10),
        || async {
            running
                .counters()
                .is_some_and(|c| c.skipped.load(Ordering::Relaxed) == batch.count() as u64)
        },
    )
    .await;
    running.shutdown().await.unwrap();
    let again = store.pipeline_counts().await.unwrap();

    for &chat in &chats {
        let got = telegram.chat_messages(dev, chat);
        assert_eq!(got.len(), 1, "chat {chat} got the job once: {got:?}");
        assert!(got[0].text.contains("Landing page"), "{}", got[0].text);
    }
    assert_eq!(telegram.messages().len(), chats.len());
    assert_eq!(first.deliveries_sent, chats.len() as u64, "{first:?}");
    assert_eq!(again.deliveries_sent, chats.len() as u64, "{again:?}");
}
