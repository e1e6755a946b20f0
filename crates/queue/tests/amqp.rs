//! The RabbitMQ queue against a real broker (`JOBWIRE_TEST_AMQP_URL`). These tests share the
//! broker with each other but never a queue (random prefixes); the ones that stop the broker
//! live in `amqp_broker.rs`.
#![cfg(any(feature = "amqp-tests", jobwire_amqp_tests))]

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, header_int, header_str, next, raw, take, take_eventually, with_queue};
use jobwire_queue::wire::{JobReady, PostReady};
use jobwire_queue::{AmqpConfig, AmqpQueue, Queue, Topic, publish};
use jobwire_testkit::wait::eventually;
use tokio::time::Instant;

const SOON: Duration = Duration::from_secs(10);

fn id(m: &jobwire_queue::Received) -> i64 {
    m.decode::<PostReady>().expect("a PostReady").post_id.get()
}

/// The dead-letter queue of `topic` under `cfg`'s prefix.
fn dlq(cfg: &AmqpConfig, topic: Topic) -> String {
    format!("{}{}.dlq", cfg.queue_prefix, topic.name())
}

/// Waits until `topic` holds `depth` messages.
async fn until_depth(q: &AmqpQueue, topic: Topic, depth: u64, what: &str) {
    eventually(what, SOON, || {
        let q = q.clone();
        async move { q.depth(topic).await == Some(depth) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_messages_are_consumed_acked_ones_are_gone_and_unacked_ones_come_back() {
    with_queue(config(), |q| async move {
        for i in 0..3 {
            publish(&q, &PostReady::new(i)).await.expect("publish");
        }
        // A confirmed publish is in the queue.
        assert_eq!(q.depth(Topic::Classify).await, Some(3));

        let mut sub = q.subscribe(Topic::Classify).await.expect("subscribe");
        let mut got = Vec::new();
        let mut unacked = None;
        for n in 0..3 {
            let m = next(&mut sub, SOON).await;
            assert_eq!(m.attempt, 0);
            got.push(id(&m));
            if n < 2 {
                m.ack().await;
            } else {
                unacked = Some(m);
            }
        }
        assert_eq!(got, vec![0, 1, 2]);
        let unacked = unacked.expect("the third message");
        let unacked_id = id(&unacked);

        // The consumer "dies" without acknowledging: only that message returns.
        drop(unacked);
        drop(sub);
        until_depth(
            &q,
            Topic::Classify,
            1,
            "the unacked message back in the queue",
        )
        .await;

        let mut sub = q.subscribe(Topic::Classify).await.expect("subscribe again");
        let m = next(&mut sub, SOON).await;
        assert_eq!(id(&m), unacked_id);
        assert_eq!(m.attempt, 1, "a redelivery counts as an attempt");
        m.ack().await;
        drop(sub);
        // Other topics are separate queues.
        assert_eq!(q.depth(Topic::Fanout).await, Some(0));
        until_depth(&q, Topic::Classify, 0, "an empty queue").await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn competing_consumers_share_the_messages() {
    with_queue(config(), |q| async move {
        let total = 40;
        let seen = Arc::new(Mutex::new(Vec::<(usize, i64)>::new()));
        let mut tasks = Vec::new();
        for who in 0..2 {
            let mut sub = q.subscribe(Topic::Classify).await.expect("subscribe");
            let seen = seen.clone();
            tasks.push(tokio::spawn(async move {
                loop {
                    if seen.lock().expect("lock").len() >= total {
                        return;
                    }
                    if let Ok(m) =
                        tokio::time::timeout(Duration::from_millis(200), sub.next()).await
                    {
                        let m = m.expect("next").expect("open");
                        seen.lock().expect("lock").push((who, id(&m)));
                        m.ack().await;
                    }
                }
            }));
        }
        for i in 0..total {
            publish(&q, &PostReady::new(i as i64))
                .await
                .expect("publish");
        }
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(30), t)
                .await
                .expect("consumers finish")
                .expect("consumer task");
        }
        let seen = seen.lock().expect("lock").clone();
        let ids: BTreeSet<i64> = seen.iter().map(|(_, i)| *i).collect();
        assert_eq!(ids, (0..total as i64).collect::<BTreeSet<_>>());
        assert_eq!(seen.len(), total, "each message went to one consumer only");
        for who in 0..2 {
            let mine = seen.iter().filter(|(w, _)| *w == who).count();
            assert!(
                mine >= total / 4,
                "consumer {who} got only {mine} of {total}"
            );
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_later_brings_the_message_back_after_the_delay_with_the_next_attempt() {
    with_queue(config(), |q| async move {
        publish(&q, &PostReady::new(7)).await.expect("publish");
        let mut sub = q.subscribe(Topic::Classify).await.expect("subscribe");
        let m = next(&mut sub, SOON).await;
        assert_eq!(m.attempt, 0);
        let retried_at = Instant::now();
        m.retry_later(Duration::from_secs(1)).await;
        assert_eq!(q.depth(Topic::Classify).await, Some(0), "not back at once");

        let m = next(&mut sub, SOON).await;
        let waited = retried_at.elapsed();
        assert_eq!(id(&m), 7);
        assert_eq!(m.attempt, 1);
        assert!(
            waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
            "came back after {waited:?}"
        );
        m.retry_later(Duration::from_millis(1)).await;
        let m = next(&mut sub, SOON).await;
        assert_eq!(m.attempt, 2);
        m.ack().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_messages_land_in_the_dead_letter_queue_with_their_reason() {
    let cfg = config();
    let dlq = dlq(&cfg, Topic::Fanout);
    with_queue(cfg, |q| async move {
        publish(&q, &JobReady::new(42)).await.expect("publish");
        let mut sub = q.subscribe(Topic::Fanout).await.expect("subscribe");
        let m = next(&mut sub, SOON).await;
        m.reject("post 42 has no category".to_owned()).await;

        let (_conn, raw) = raw().await;
        let dead = take_eventually(&raw, &dlq, SOON).await;
        let job: JobReady = serde_json::from_slice(&dead.data).expect("the payload is kept");
        assert_eq!(job.post_id.get(), 42);
        assert_eq!(
            header_str(&dead, "x-jobwire-reason").as_deref(),
            Some("post 42 has no category")
        );
        assert_eq!(header_int(&dead, "x-jobwire-attempt"), Some(0));
        assert_eq!(
            header_str(&dead, "x-jobwire-topic").as_deref(),
            Some("jobwire.fanout")
        );
        assert_eq!(*dead.properties.delivery_mode(), Some(2), "persistent");
        assert_eq!(q.depth(Topic::Fanout).await, Some(0));
        assert!(take(&raw, &dlq).await.is_none(), "dead-lettered once");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_message_is_retried_then_rejected_without_holding_up_the_others() {
    let cfg = config();
    let dlq = dlq(&cfg, Topic::Classify);
    with_queue(cfg, |q| async move {
        const POISON: i64 = -1;
        const GIVE_UP_AFTER: u32 = 3;
        publish(&q, &PostReady::new(POISON)).await.expect("publish");
        for i in 0..5 {
            publish(&q, &PostReady::new(i)).await.expect("publish");
        }
        let mut sub = q.subscribe(Topic::Classify).await.expect("subscribe");
        let started = Instant::now();
        let mut good = BTreeSet::new();
        let mut good_done_at = None;
        let mut poison_attempts = Vec::new();
        loop {
            let m = next(&mut sub, SOON).await;
            if id(&m) == POISON {
                poison_attempts.push(m.attempt);
                if m.attempt < GIVE_UP_AFTER {
                    m.retry_later(Duration::ZERO).await;
                } else {
                    m.reject(format!("failed {GIVE_UP_AFTER} times")).await;
                    break;
                }
            } else {
                good.insert(id(&m));
                m.ack().await;
                if good.len() == 5 {
                    good_done_at = Some(started.elapsed());
                }
            }
        }
        let poison_done_at = started.elapsed();
        assert_eq!(good, (0..5).collect::<BTreeSet<_>>());
        assert_eq!(poison_attempts, vec![0, 1, 2, 3]);
        let good_done_at = good_done_at.expect("all good messages handled");
        assert!(
            good_done_at < Duration::from_secs(1) && poison_done_at > Duration::from_secs(2),
            "good ones done after {good_done_at:?}, poison after {poison_done_at:?}"
        );
        let (_conn, raw) = raw().await;
        let dead = take_eventually(&raw, &dlq, SOON).await;
        assert_eq!(header_int(&dead, "x-jobwire-attempt"), Some(3));
        assert_eq!(
            header_str(&dead, "x-jobwire-reason").as_deref(),
            Some("failed 3 times")
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_consumer_keeps_dying_is_dead_lettered_after_the_delivery_limit() {
    let mut cfg = config();
    cfg.delivery_limit = 2;
    let dlq = dlq(&cfg, Topic::Send);
    with_queue(cfg, |q| async move {
        publish(&q, &jobwire_queue::wire::DeliveryReady::new(5))
            .await
            .expect("publish");
        let (_conn, raw) = raw().await;
        let mut attempts = Vec::new();
        let dead = loop {
            let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
            tokio::select! {
                m = sub.next() => {
                    let m = m.expect("next").expect("open");
                    attempts.push(m.attempt);
                    // The consumer crashes: neither the message nor the subscription survive.
                    drop(m);
                    drop(sub);
                }
                dead = take_eventually(&raw, &dlq, SOON) => break dead,
            }
            assert!(
                attempts.len() <= 5,
                "never dead-lettered: attempts {attempts:?}"
            );
        };
        let expected: Vec<u32> = (0..attempts.len() as u32).collect();
        assert_eq!(attempts, expected);
        assert!(attempts.len() >= 2, "attempts {attempts:?}");
        assert!(
            common::header(&dead, "x-death").is_some(),
            "the broker says why"
        );
        assert_eq!(q.depth(Topic::Send).await, Some(0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_the_broker_refuses_is_an_error() {
    let cfg = config();
    let policy = format!("{}full", cfg.queue_prefix);
    let pattern = format!("^{}jobwire\\.fanout$", cfg.queue_prefix.replace('.', "\\."));
    with_queue(cfg, |q| async move {
        common::rabbitmqctl(&[
            "set_policy",
            "--apply-to",
            "queues",
            &policy,
            &pattern,
            r#"{"max-length":1}"#,
        ])
        .await;
        let mut refused = None;
        for i in 0..200 {
            if let Err(e) = publish(&q, &JobReady::new(i)).await {
                refused = Some(e);
                break;
            }
        }
        common::rabbitmqctl(&["clear_policy", &policy]).await;
        let refused = refused.expect("a full queue refuses publishes");
        assert!(refused.to_string().contains("nack"), "{refused}");
        // The queue still works for what it holds.
        assert!(q.depth(Topic::Fanout).await.is_some_and(|d| d >= 1));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_dispatches_on_the_url_scheme() {
    let memory = jobwire_queue::open("memory://").await.expect("memory");
    assert!(format!("{memory:?}").contains("MemoryQueue"));
    // An AMQP URL goes to RabbitMQ: nothing listens on port 1, so it fails after the
    // default connect timeout, naming the URL without its password.
    let started = Instant::now();
    let err = jobwire_queue::open("amqp://guest:s3cret@127.0.0.1:1/%2f")
        .await
        .expect_err("no broker on port 1");
    assert!(started.elapsed() < Duration::from_secs(15));
    let msg = err.to_string();
    assert!(msg.contains("amqp://guest:***@127.0.0.1:1/%2f"), "{msg}");
    assert!(!msg.contains("s3cret"), "{msg}");
    let err = jobwire_queue::open("redis://x:secret@host")
        .await
        .expect_err("unsupported");
    assert!(!err.to_string().contains("secret"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_close_publishes_fail_and_subscriptions_end() {
    with_queue(config(), |q| async move {
        let other = AmqpQueue::connect(q.config().clone())
            .await
            .expect("a second connection");
        assert!(other.is_ready());
        let mut other_sub = other.subscribe(Topic::Send).await.expect("subscribe");
        other.close().await;
        assert!(!other.is_ready());
        let end = tokio::time::timeout(SOON, other_sub.next())
            .await
            .expect("ends in time");
        assert!(end.expect("no error").is_none(), "the subscription ends");
        let err = publish(&other, &jobwire_queue::wire::DeliveryReady::new(1))
            .await
            .expect_err("closed");
        assert!(
            matches!(err, jobwire_queue::QueueError::Closed { .. }),
            "{err}"
        );
        assert!(
            other.subscribe(Topic::Send).await.is_err(),
            "no subscription on a closed queue"
        );

        // Closing one queue does not touch another connection.
        let mut sub = q.subscribe(Topic::Send).await.expect("subscribe");
        publish(&q, &jobwire_queue::wire::DeliveryReady::new(2))
            .await
            .expect("publish");
        let m = next(&mut sub, SOON).await;
        m.ack().await;
    })
    .await;
}
