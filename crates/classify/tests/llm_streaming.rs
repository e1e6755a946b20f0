//! Streamed answers (`stream: true`): verdicts handed on item by item, a stream cut halfway,
//! cost estimates per post, and a backlog spread over the requests in flight — against the
//! local fake OpenAI-compatible server paced like a real model.

mod common;

use std::time::{Duration, Instant};

use futures::StreamExt;
use jobwire_classify::llm::{LlmClassifier, LlmConfig};
use jobwire_classify::{Classifier, ClassifyInput};
use jobwire_core::dataset::LabeledPost;
use jobwire_testkit::llm::{FakeLlm, Fault, FaultPlan};
use jobwire_testkit::wait::eventually;

fn config(server: &FakeLlm) -> LlmConfig {
    let mut c = common::llm_config(server, "fake-model");
    c.stream = true;
    c.timeout = Duration::from_secs(20);
    c
}

fn inputs(data: &[LabeledPost]) -> Vec<ClassifyInput> {
    data.iter().map(common::input).collect()
}

fn assert_labeled(post: &LabeledPost, verdict: &jobwire_core::Verdict) {
    let label = post.label.as_ref().expect("labeled");
    assert_eq!(verdict.is_job, label.is_job, "{}", post.id);
    assert_eq!(verdict.kind, label.kind, "{}", post.id);
    assert_eq!(verdict.categories, label.categories, "{}", post.id);
}

#[tokio::test]
async fn verdicts_arrive_one_by_one_while_the_model_writes() {
    let server = common::fake(FaultPlan::default()).await;
    // About 0.2 s per item: the whole answer of 10 items takes about 2 s.
    server.state().set_speed(Duration::from_millis(100), 250);
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let data = &data[..10];
    let started = Instant::now();
    let mut arrivals = Vec::new();
    let mut stream = classifier.classify_stream(inputs(data));
    while let Some((i, result)) = stream.next().await {
        let c = result.expect("classified");
        assert_labeled(&data[i], &c.verdict);
        arrivals.push((i, started.elapsed()));
    }
    assert_eq!(server.stats().requests, 1, "one request for the batch");
    assert_eq!(server.stats().streamed_requests, 1);
    // Items come in the order of the posts, each as soon as it is written: the first
    // verdict is in hand long before the answer ends.
    let order: Vec<usize> = arrivals.iter().map(|(i, _)| *i).collect();
    assert_eq!(order, (0..10).collect::<Vec<_>>());
    let first = arrivals[0].1;
    let last = arrivals[9].1;
    assert!(first * 3 < last, "first {first:?}, last {last:?}");
}

#[tokio::test]
async fn a_stream_cut_halfway_keeps_its_items_and_reasks_only_the_rest() {
    let server = common::fake(FaultPlan::scripted([Fault::StreamCut, Fault::Ok])).await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let data = &data[..10];
    let out = classifier.classify_many(&inputs(data)).await;
    for (post, got) in data.iter().zip(&out) {
        assert_labeled(post, &got.as_ref().expect("classified").verdict);
    }
    let fake = server.stats();
    assert_eq!(fake.cut_streams, 1);
    let log = server.requests_log();
    assert_eq!(log.len(), 2, "{log:?}");
    let first: Vec<String> = (1..=10).map(|i| format!("p{i}")).collect();
    assert_eq!(log[0].ids, first);
    // The second request asks only for the posts the cut stream did not reach, in order.
    let rest = &log[1].ids;
    assert!(
        !rest.is_empty() && rest.len() < 10,
        "the cut kept some items and lost others: {rest:?}"
    );
    assert_eq!(rest[..], first[10 - rest.len()..]);
    let stats = classifier.stats();
    assert_eq!((stats.requests, stats.reasks), (2, 1));
}

#[tokio::test]
async fn a_stream_cut_before_its_first_item_is_retried() {
    let server = common::fake(FaultPlan::scripted([Fault::StreamCut, Fault::Ok])).await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let got = classifier
        .classify(&common::input(&data[0]))
        .await
        .expect("classified after the retry");
    assert_labeled(&data[0], &got.verdict);
    let stats = classifier.stats();
    assert_eq!(
        (stats.requests, stats.failed_requests, stats.reasks),
        (2, 1, 0)
    );
}

#[tokio::test]
async fn streamed_posts_carry_a_close_estimate_and_the_totals_are_the_providers() {
    let server = common::fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.price_in_per_mtok = 0.15;
    cfg.price_cached_in_per_mtok = Some(0.075);
    cfg.price_out_per_mtok = 0.60;
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();
    let mut estimated = 0.0;
    let mut tokens_out = 0u64;
    // Two rounds: the second request's prefix is in the fake's cache.
    for round in [&data[..8], &data[8..16]] {
        for got in classifier.classify_many(&inputs(round)).await {
            let c = got.expect("classified");
            assert!(c.cost_usd > 0.0 && c.tokens_in > 0 && c.tokens_out > 0);
            estimated += c.cost_usd;
            tokens_out += u64::from(c.tokens_out);
        }
    }
    // The usage comes at the end of the stream, after the last item was handed on.
    eventually(
        "the last answer's usage is counted",
        Duration::from_secs(10),
        || async { classifier.stats().tokens_in == server.stats().prompt_tokens },
    )
    .await;
    let fake = server.stats();
    let stats = classifier.stats();
    assert_eq!(
        (stats.tokens_in, stats.tokens_out, stats.cached_tokens),
        (
            fake.prompt_tokens,
            fake.completion_tokens,
            fake.cached_tokens
        )
    );
    assert!(fake.cached_tokens >= 1024, "the stable prefix was cached");
    let exact = ((fake.prompt_tokens - fake.cached_tokens) as f64 * 0.15
        + fake.cached_tokens as f64 * 0.075
        + fake.completion_tokens as f64 * 0.60)
        / 1e6;
    assert!((stats.cost_usd - exact).abs() < exact * 1e-9);
    // Each post's own item is its output; the answer's brackets and commas are not in any.
    assert!(tokens_out <= fake.completion_tokens);
    assert!(
        tokens_out * 10 >= fake.completion_tokens * 9,
        "{tokens_out}"
    );
    assert!(
        (estimated - exact).abs() < exact * 0.15,
        "estimated {estimated}, billed {exact}"
    );
}

#[tokio::test]
async fn a_backlog_is_spread_over_the_requests_in_flight() {
    let server = common::fake(FaultPlan::default()).await;
    server.state().set_speed(Duration::from_millis(100), 2000);
    let mut cfg = config(&server);
    cfg.batch_size = 30;
    cfg.max_in_flight = 4;
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();
    let data = &data[..40];
    let out = classifier.classify_many(&inputs(data)).await;
    for (post, got) in data.iter().zip(&out) {
        assert_labeled(post, &got.as_ref().expect("classified").verdict);
    }
    // 40 posts over 4 requests in flight: none carries more than its share of 10, where a
    // full batch of 30 would make its last post wait for 30 items to be written.
    let sizes: Vec<usize> = server.requests_log().iter().map(|r| r.ids.len()).collect();
    assert!(sizes.iter().all(|&n| n <= 10), "{sizes:?}");
    assert!(sizes.len() >= 4, "{sizes:?}");
    assert_eq!(sizes.iter().sum::<usize>(), 40);
}
