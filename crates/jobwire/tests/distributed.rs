//! The distributed mode end to end: role processes over PostgreSQL, RabbitMQ and Redis.
//! Its own test binary, so rate measurements do not share the machine with the embedded
//! suites; compiled in when `JOBWIRE_TEST_{POSTGRES,AMQP,REDIS}_URL` are set (see build.rs).
#![cfg(jobwire_distributed_tests)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "pipeline/distributed.rs"]
mod distributed;
#[path = "pipeline/expect.rs"]
mod expect;
#[allow(dead_code)]
#[path = "pipeline/support.rs"]
mod support;
