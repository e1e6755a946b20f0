//! The RabbitMQ queue without a broker: redacted settings, a bounded first connect.

use std::time::Duration;

use super::{AmqpConfig, AmqpQueue};

#[test]
fn passwords_never_show() {
    let cfg = AmqpConfig::new("amqp://guest:s3cret@127.0.0.1:5672/%2f");
    assert_eq!(cfg.redacted_url(), "amqp://guest:***@127.0.0.1:5672/%2f");
    assert!(!format!("{cfg:?}").contains("s3cret"));
    let odd = AmqpConfig::new("amqps://u:p@w/x@host/vh?x=1");
    assert_eq!(odd.redacted_url(), "amqps://u:***@host/vh?x=1");
}

#[tokio::test]
async fn a_missing_broker_fails_fast_with_the_url_and_no_password() {
    // Port 1 on loopback: nothing listens there, connections are refused at once.
    let mut cfg = AmqpConfig::new("amqp://guest:s3cret@127.0.0.1:1/%2f");
    cfg.connect_timeout = Duration::from_millis(800);
    let started = std::time::Instant::now();
    let err = AmqpQueue::connect(cfg).await.expect_err("no broker there");
    assert!(started.elapsed() < Duration::from_secs(5));
    let msg = err.to_string();
    assert!(msg.contains("amqp://guest:***@127.0.0.1:1/%2f"), "{msg}");
    assert!(!msg.contains("s3cret"), "{msg}");
}
