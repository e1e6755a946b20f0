//! Tests that stop and start the RabbitMQ application (with `rabbitmqctl`, so they must run
//! on the broker's machine) or that need the broker to themselves. They take a lock so that
//! they run one at a time, and always start RabbitMQ again, even when they fail.
#![cfg(any(feature = "amqp-tests", jobwire_amqp_tests))]

mod common;

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, next, rabbitmqctl, until_ready, with_queue};
use futures::FutureExt;
use futures::stream::{self, StreamExt};
use jobwire_queue::wire::DeliveryReady;
use jobwire_queue::{AmqpQueue, Queue, Subscription, Topic, publish};
use jobwire_testkit::wait::eventually;
use tokio::time::Instant;

static BROKER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs `body` alone on the broker and makes sure RabbitMQ runs again afterwards.
async fn exclusively<Fut: Future<Output = ()>>(body: Fut) {
    let _alone = BROKER.lock().await;
    let outcome = AssertUnwindSafe(body).catch_unwind().await;
    rabbitmqctl(&["start_app"]).await;
    rabbitmqctl(&["await_startup"]).await;
    if let Err(panic) = outcome {
        resume_unwind(panic);
    }
}

async fn stop_broker(q: &AmqpQueue) {
    rabbitmqctl(&["stop_app"]).await;
    let what = "the queue to notice the broker is gone";
    until_ready(q, false, Duration::from_secs(10), what).await;
}

async fn start_broker(q: &AmqpQueue) {
    rabbitmqctl(&["start_app"]).await;
    rabbitmqctl(&["await_startup"]).await;
    until_ready(q, true, Duration::from_secs(60), "the queue to reconnect").await;
}

fn delivery_id(m: &jobwire_queue::Received) -> i64 {
    m.decode::<DeliveryReady>()
        .expect("a DeliveryReady")
        .delivery_id
        .get()
}

/// Waits until `seen` holds at least `count` ids.
async fn until_seen(seen: &Mutex<HashSet<i64>>, count: usize, timeout: Duration, what: &str) {
    eventually(what, timeout, || async {
        seen.lock().expect("lock").len() >= count
    })
    .await;
}

/// Takes the next message, which must come within `within` and be delivery `id`, and acks it.
async fn ack_next(sub: &mut Box<dyn Subscription>, id: i64, within: Duration) {
    let m = next(sub, within).await;
    assert_eq!(delivery_id(&m), id);
    m.ack().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_message_is_lost_when_the_broker_restarts_during_2000_publishes_and_consumes() {
    exclusively(with_queue(config(), |q| async move {
        const TOTAL: i64 = 2000;
        let seen = Arc::new(Mutex::new(HashSet::<i64>::new()));
        let deliveries = Arc::new(AtomicUsize::new(0));

        let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
        let consumer = {
            let (seen, deliveries) = (seen.clone(), deliveries.clone());
            tokio::spawn(async move {
                while let Some(m) = sub.next().await.expect("next") {
                    deliveries.fetch_add(1, Ordering::Relaxed);
                    seen.lock().expect("lock").insert(delivery_id(&m));
                    m.ack().await;
                }
            })
        };
        let publish_errors = Arc::new(AtomicUsize::new(0));
        let published = Arc::new(AtomicUsize::new(0));
        let publisher = {
            let (q, errors, published) = (q.clone(), publish_errors.clone(), published.clone());
            tokio::spawn(async move {
                for i in 0..TOTAL {
                    // The contract allows an error (the caller may publish again); count them.
                    while publish(&q, &DeliveryReady::new(i)).await.is_err() {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    published.fetch_add(1, Ordering::Relaxed);
                }
            })
        };

        let what = "a first part to be consumed";
        until_seen(&seen, 300, Duration::from_secs(60), what).await;
        let before = published.load(Ordering::Relaxed);
        stop_broker(&q).await;
        start_broker(&q).await;
        assert!(
            (before as i64) < TOTAL,
            "the restart happened while publishing ({before} published)"
        );

        tokio::time::timeout(Duration::from_secs(120), publisher)
            .await
            .expect("publisher finishes")
            .expect("publisher task");
        let what = "every message to be consumed";
        until_seen(&seen, TOTAL as usize, Duration::from_secs(120), what).await;
        consumer.abort();
        let seen = seen.lock().expect("lock");
        assert!((0..TOTAL).all(|i| seen.contains(&i)));
        eprintln!(
            "restart test: {} deliveries for {TOTAL} messages, {} publish errors",
            deliveries.load(Ordering::Relaxed),
            publish_errors.load(Ordering::Relaxed)
        );
        assert_eq!(
            publish_errors.load(Ordering::Relaxed),
            0,
            "publishes re-send across the reconnect by themselves"
        );
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_waits_for_the_broker_to_return_and_gives_up_after_its_timeout() {
    let mut cfg = config();
    cfg.publish_timeout = Duration::from_millis(1500);
    exclusively(with_queue(cfg, |q| async move {
        stop_broker(&q).await;

        // Down for longer than the publish timeout: an error naming the broker.
        let started = Instant::now();
        let err = publish(&q, &DeliveryReady::new(1))
            .await
            .expect_err("broker is down");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(1400) && waited < Duration::from_secs(5),
            "{waited:?}"
        );
        assert!(err.to_string().contains("127.0.0.1"), "{err}");
        assert!(!err.to_string().contains(":guest@"), "{err}");

        // Back within the timeout: the publish goes through.
        let pending = {
            let q = q.clone();
            tokio::spawn(async move {
                // Keep trying: each attempt waits up to the (short) publish timeout.
                let deadline = Instant::now() + Duration::from_secs(60);
                loop {
                    match publish(&q, &DeliveryReady::new(2)).await {
                        Ok(()) => return,
                        Err(e) => assert!(Instant::now() < deadline, "never published: {e}"),
                    }
                }
            })
        };
        start_broker(&q).await;
        pending.await.expect("publish task");
        let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
        ack_next(&mut sub, 2, Duration::from_secs(10)).await;
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_consumes_again_after_the_broker_restarts() {
    exclusively(with_queue(config(), |q| async move {
        let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
        publish(&q, &DeliveryReady::new(1)).await.expect("publish");
        let held = next(&mut sub, Duration::from_secs(10)).await;
        assert_eq!(held.attempt, 0);

        stop_broker(&q).await;
        start_broker(&q).await;

        // The message received before the restart can no longer be acknowledged: acking
        // only logs, and the broker hands the message out again.
        held.ack().await;
        ack_next(&mut sub, 1, Duration::from_secs(30)).await;
        publish(&q, &DeliveryReady::new(2))
            .await
            .expect("publish after restart");
        ack_next(&mut sub, 2, Duration::from_secs(10)).await;
    }))
    .await;
}

/// Measures publish+consume throughput with publisher confirms: one publisher and one
/// consumer, first one publish at a time, then 32 publishes in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throughput_with_confirms_one_publisher_one_consumer() {
    exclusively(with_queue(config(), |q| async move {
        for in_flight in [1usize, 32] {
            const N: i64 = 3000;
            let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
            let started = Instant::now();
            let consumer = tokio::spawn(async move {
                let mut seen = HashSet::new();
                while (seen.len() as i64) < N {
                    let m = next(&mut sub, Duration::from_secs(30)).await;
                    seen.insert(delivery_id(&m));
                    m.ack().await;
                }
                seen.len()
            });
            stream::iter(0..N)
                .map(|i| {
                    let q = q.clone();
                    async move { publish(&q, &DeliveryReady::new(i)).await.expect("publish") }
                })
                .buffer_unordered(in_flight)
                .collect::<Vec<()>>()
                .await;
            let published_in = started.elapsed();
            let consumed = consumer.await.expect("consumer");
            let elapsed = started.elapsed();
            assert_eq!(consumed as i64, N);
            eprintln!(
                "throughput ({in_flight} publish(es) in flight): {N} msgs published in {:.2}s \
                 and consumed in {:.2}s = {:.0} msgs/s end to end",
                published_in.as_secs_f64(),
                elapsed.as_secs_f64(),
                N as f64 / elapsed.as_secs_f64()
            );
        }
    }))
    .await;
}
