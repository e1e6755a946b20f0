//! A broadcast to 5,000 subscribers at (scaled) Telegram limits, stopped halfway and
//! started again on the same database: every subscriber gets it exactly once, and a
//! vacancy through the same bot meanwhile is delivered ahead of the broadcast's backlog.

use std::time::{Duration, Instant};

use jobwire::broadcast::{Audience, create};
use jobwire::config::UpdatesMode;
use jobwire::testbed::{Bed, bot_id, seed_job, temp_db};
use jobwire_queue::wire::JobReady;
use jobwire_store::BroadcastStatus;
use jobwire_testkit::wait::eventually;

use crate::support::*;

const SUBSCRIBERS: i64 = 5_000;
const TEXT: &str = "<b>jobwire</b>: résumés are here — Filters → 👤 Résumés";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_broadcast_stopped_halfway_reaches_everyone_once_and_vacancies_go_first() {
    init();
    let (fake_limits, limits) = scaled_limits(10);
    let telegram = fake_telegram(Some(fake_limits)).await;
    let (_dir, db) = temp_db().unwrap();
    // One bot for everything: the broadcast and the vacancies share its limits.
    let bed = Bed {
        bots: vec!["main".into()],
        routes: vec![
            ("web".into(), "main".into()),
            ("design".into(), "main".into()),
        ],
        main_bot: Some("main".into()),
        updates: UpdatesMode::Off,
        limits,
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    // The last chat also follows design: the vacancy below goes to it alone.
    let specs: Vec<_> = (1..=SUBSCRIBERS)
        .map(|c| {
            if c == SUBSCRIBERS {
                subscriber(c, &["web", "design"])
            } else {
                subscriber(c, &["web"])
            }
        })
        .collect();
    jobwire::subscribers::store_all(store.as_ref(), &specs)
        .await
        .unwrap();

    // Bad HTML is refused before anything is stored.
    let refused = create(
        &settings.broadcast_setup(),
        &store,
        "<b>oops",
        &Audience::default(),
    )
    .await;
    assert!(refused.is_err());
    assert!(
        store
            .broadcasts(10, chrono::Utc::now())
            .await
            .unwrap()
            .is_empty()
    );

    let b = create(
        &settings.broadcast_setup(),
        &store,
        TEXT,
        &Audience::default(),
    )
    .await
    .unwrap();
    assert_eq!(b.progress.total(), SUBSCRIBERS as u64);
    let half = SUBSCRIBERS as u64 / 2;
    eventually(
        "half of the broadcast sent",
        Duration::from_secs(60),
        || async {
            let p = store
                .broadcast(b.id, chrono::Utc::now())
                .await
                .unwrap()
                .unwrap()
                .progress;
            p.sent >= half
        },
    )
    .await;
    // Stopped (SIGTERM): the send in flight finishes, nothing is left mid-call.
    running.shutdown().await.unwrap();
    let stopped = store
        .broadcast(b.id, chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stopped.progress.sending, 0);
    assert!(stopped.progress.pending > 0, "stopped before the end");
    assert_eq!(stopped.status, BroadcastStatus::Running);

    // Started again: the rest goes out, and a vacancy posted meanwhile jumps the queue.
    let (running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    let job = seed_job(
        store.as_ref(),
        "@jobs",
        "v1",
        "Нужен логотип для кофейни, 25к",
        &["design"],
    )
    .await
    .unwrap();
    let posted = Instant::now();
    jobwire_queue::publish(running.queue.as_ref(), &JobReady::new(job))
        .await
        .unwrap();
    let chat = SUBSCRIBERS; // the last chat in the broadcast's order
    eventually("the vacancy delivered", Duration::from_secs(20), || async {
        telegram
            .chat_messages(bot_id(0), chat)
            .iter()
            .any(|m| m.text.contains("логотип"))
    })
    .await;
    let latency = posted.elapsed();
    eprintln!("vacancy latency during the broadcast: {latency:?}");
    let during = store
        .broadcast(b.id, chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    assert!(
        during.progress.remaining() > 0,
        "the vacancy arrived after the broadcast was done: nothing was shown"
    );
    assert!(latency < Duration::from_secs(5), "vacancy took {latency:?}");

    let done = eventually("the broadcast done", Duration::from_secs(90), || async {
        let b = store
            .broadcast(b.id, chrono::Utc::now())
            .await
            .unwrap()
            .unwrap();
        (b.status == BroadcastStatus::Done).then_some(b)
    })
    .await;
    assert_eq!(
        done.progress.sent, SUBSCRIBERS as u64,
        "{:?}",
        done.progress
    );
    assert_eq!(done.progress.unknown + done.progress.failed, 0);
    // Exactly once per subscriber, as Telegram saw it.
    let mut per_chat = std::collections::HashMap::<i64, u32>::new();
    for m in telegram.messages() {
        if m.bot_id == bot_id(0) && m.text == TEXT {
            *per_chat.entry(m.chat_id).or_default() += 1;
        }
    }
    assert_eq!(per_chat.len(), SUBSCRIBERS as usize);
    assert!(per_chat.values().all(|n| *n == 1), "someone got it twice");
    running.shutdown().await.unwrap();
}
