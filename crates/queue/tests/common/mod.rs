//! Helpers shared by the RabbitMQ integration tests.
#![allow(dead_code)]

use std::future::Future;
use std::panic::{AssertUnwindSafe, resume_unwind};
use std::time::Duration;

use futures::FutureExt;
use jobwire_queue::{AmqpConfig, AmqpQueue, Received, Subscription};
use jobwire_testkit::wait;
use lapin::message::Delivery;
use lapin::options::BasicGetOptions;
use lapin::types::{AMQPValue, FieldTable};
use lapin::{Channel, Connection, ConnectionProperties};

/// The broker under test. With the `amqp-tests` feature on, a missing variable is a failure.
pub fn url() -> String {
    std::env::var("JOBWIRE_TEST_AMQP_URL").expect(
        "JOBWIRE_TEST_AMQP_URL must name the RabbitMQ to test against when the amqp-tests \
         feature is on, e.g. amqp://guest:guest@127.0.0.1:5672/%2f",
    )
}

/// A configuration with a random queue prefix, so tests never share queues.
pub fn config() -> AmqpConfig {
    init_tracing();
    let mut config = AmqpConfig::new(url());
    config.queue_prefix = format!("t{:08x}.", rand::random::<u32>());
    config
}

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,lapin=off".into()),
        )
        .with_test_writer()
        .try_init();
}

/// Connects, runs `body`, then deletes every queue of the prefix, even if `body` panicked.
pub async fn with_queue<F, Fut>(config: AmqpConfig, body: F)
where
    F: FnOnce(AmqpQueue) -> Fut,
    Fut: Future<Output = ()>,
{
    let queue = AmqpQueue::connect(config)
        .await
        .expect("connect to RabbitMQ");
    let outcome = AssertUnwindSafe(body(queue.clone())).catch_unwind().await;
    let what = "the queue to be ready for clean-up";
    until_ready(&queue, true, Duration::from_secs(60), what).await;
    queue
        .delete_topology()
        .await
        .expect("delete the test queues");
    queue.close().await;
    if let Err(panic) = outcome {
        resume_unwind(panic);
    }
}

/// Waits until `q` [is ready](AmqpQueue::is_ready) (or, with `ready` false, until it noticed
/// that it lost its connection); panics after `timeout`.
pub async fn until_ready(q: &AmqpQueue, ready: bool, timeout: Duration, what: &str) {
    wait::eventually(what, timeout, || {
        let q = q.clone();
        async move { q.is_ready() == ready }
    })
    .await;
}

/// The next message, which must come within `within`.
pub async fn next(sub: &mut Box<dyn Subscription>, within: Duration) -> Received {
    tokio::time::timeout(within, sub.next())
        .await
        .expect("a message in time")
        .expect("next succeeds")
        .expect("the subscription is open")
}

/// A plain lapin connection, to look at queues behind jobwire's back.
pub async fn raw() -> (Connection, Channel) {
    let conn = Connection::connect(&url(), ConnectionProperties::default())
        .await
        .expect("raw connection");
    let channel = conn.create_channel().await.expect("raw channel");
    (conn, channel)
}

/// Takes one message off `queue` (no ack needed), if there is one.
pub async fn take(channel: &Channel, queue: &str) -> Option<Delivery> {
    channel
        .basic_get(queue.into(), BasicGetOptions { no_ack: true })
        .await
        .expect("basic.get")
        .map(|m| m.delivery)
}

/// Waits for a message on `queue`.
pub async fn take_eventually(channel: &Channel, queue: &str, timeout: Duration) -> Delivery {
    wait::eventually(&format!("a message on {queue}"), timeout, || {
        take(channel, queue)
    })
    .await
}

pub fn header<'a>(delivery: &'a Delivery, name: &str) -> Option<&'a AMQPValue> {
    delivery
        .properties
        .headers()
        .as_ref()
        .and_then(|h: &FieldTable| h.inner().get(name))
}

pub fn header_str(delivery: &Delivery, name: &str) -> Option<String> {
    match header(delivery, name)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.to_string()),
        _ => None,
    }
}

pub fn header_int(delivery: &Delivery, name: &str) -> Option<i64> {
    match header(delivery, name)? {
        AMQPValue::LongLongInt(v) => Some(*v),
        AMQPValue::LongInt(v) => Some(i64::from(*v)),
        AMQPValue::LongUInt(v) => Some(i64::from(*v)),
        AMQPValue::ShortInt(v) => Some(i64::from(*v)),
        AMQPValue::ShortShortInt(v) => Some(i64::from(*v)),
        _ => None,
    }
}

/// Runs `rabbitmqctl` with `args`; panics if it fails.
pub async fn rabbitmqctl(args: &[&str]) {
    let out = tokio::process::Command::new("rabbitmqctl")
        .args(args)
        .output()
        .await
        .expect("run rabbitmqctl");
    assert!(
        out.status.success(),
        "rabbitmqctl {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
