//! Work that stopped flowing: rows whose queue message was lost after their commit, sends
//! left `sending`, and messages that fail for good.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use jobwire::testbed::{Bed, bot_id, seed_job, start_in_process, temp_db};
use jobwire_queue::{MemoryQueue, Queue, Topic};
use jobwire_store::{DeliveryUpdate, NewDelivery};
use jobwire_testkit::wait::eventually;

use crate::support::*;

fn bed() -> Bed {
    Bed {
        bots: vec!["dev".into()],
        routes: vec![("web".into(), "dev".into())],
        scheduler_tick_ms: 50,
        ..Bed::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_whose_message_was_lost_is_published_again_and_a_stuck_send_is_taken_over() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = bed();
    let mut settings = bed.settings(telegram.url(), &db).unwrap();
    settings.stuck_after = Duration::from_secs(1);
    settings.lease = Duration::from_secs(1);
    let store = jobwire::pipeline::open_store(&settings).await.unwrap();
    jobwire::subscribers::store_all(store.as_ref(), &[subscriber(7, &["web"])])
        .await
        .unwrap();
    let classifiers = jobwire::pipeline::classifiers(&settings).unwrap();
    let queue: Arc<dyn Queue> = Arc::new(MemoryQueue::new());
    let running = start_in_process(&settings, store.clone(), queue, classifiers)
        .await
        .unwrap();

    // Three rows committed while the pipeline runs, none of them published, as when a
    // publish fails right after its commit: a classified job waiting for fan-out, a
    // delivery waiting to be sent, and a delivery whose sender stopped mid-send.
    seed_job(
        store.as_ref(),
        "@c",
        "1",
        "Job one: a landing page",
        &["web"],
    )
    .await
    .unwrap();
    let sub = store.subscribers().await.unwrap()[0].id;
    let mut deliveries = Vec::new();
    for (n, text) in [(2, "Job two: a shop"), (3, "Job three: an API")] {
        let post = seed_job(store.as_ref(), "@c", &n.to_string(), text, &[])
            .await
            .unwrap();
        let one = NewDelivery {
            subscriber_id: sub,
            chat_id: 7,
            bot: "dev".into(),
            not_before: None,
        };
        let ids = store
            .fan_out(post, &[format!("<b>{text}</b>")], &[one], Utc::now())
            .await
            .unwrap();
        deliveries.push(ids[0]);
    }
    let claimed = store
        .apply_delivery_updates(&[DeliveryUpdate::Claim { id: deliveries[1] }], Utc::now())
        .await
        .unwrap();
    assert_eq!(claimed, vec![true]);

    eventually(
        "all three jobs to reach the user",
        Duration::from_secs(20),
        || async { telegram.chat_messages(bot_id(0), 7).len() >= 3 },
    )
    .await;
    // Every later deadline passes without a second copy.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    running.shutdown().await.unwrap();
    let texts: Vec<String> = telegram
        .chat_messages(bot_id(0), 7)
        .iter()
        .map(|m| m.text.clone())
        .collect();
    assert_eq!(texts.len(), 3, "each job once: {texts:?}");
    for job in ["Job one", "Job two", "Job three"] {
        assert_eq!(
            texts.iter().filter(|t| t.contains(job)).count(),
            1,
            "{job} in {texts:?}"
        );
    }
    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_sent, 3, "{counts:?}");
    assert_eq!(counts.deliveries_resent_after_crash, 1, "{counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_fails_for_good_is_kept_as_a_dead_letter_and_reported() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let settings = bed().settings(telegram.url(), &db).unwrap();
    let store = jobwire::pipeline::open_store(&settings).await.unwrap();
    let classifiers = jobwire::pipeline::classifiers(&settings).unwrap();
    let queue: Arc<dyn Queue> = Arc::new(MemoryQueue::new());
    let running = start_in_process(&settings, store.clone(), queue.clone(), classifiers)
        .await
        .unwrap();

    queue
        .publish(
            Topic::Send,
            b"{\"v\":1,\"delivery\":\"not a number\"}".to_vec(),
        )
        .await
        .unwrap();
    let letter = eventually(
        "the bad message to be kept",
        Duration::from_secs(10),
        || async { store.dead_letters(10).await.unwrap().pop() },
    )
    .await;
    running.shutdown().await.unwrap();
    assert_eq!(letter.topic, "jobwire.send");
    assert!(letter.payload.contains("not a number"), "{letter:?}");
    assert!(letter.reason.contains("not a valid"), "{letter:?}");

    let report =
        jobwire::report::daily_report(store.as_ref(), Utc::now() - chrono::Duration::hours(1), 1)
            .await
            .unwrap();
    assert!(report.contains("dead letters, last 1 h: 1"), "{report}");
    assert!(report.contains("not a number"), "{report}");
}
