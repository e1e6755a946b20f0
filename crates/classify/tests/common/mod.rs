//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::time::Duration;

use jobwire_classify::ClassifyInput;
use jobwire_classify::llm::LlmConfig;
use jobwire_core::CategorySlug;
use jobwire_core::dataset::LabeledPost;
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, FaultPlan, load_oracle_jsonl};

pub fn categories() -> Vec<CategorySlug> {
    jobwire_core::category::standard()
}

pub fn dev_jsonl() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
    std::fs::read_to_string(path).expect("data/dev.jsonl is readable")
}

pub fn dev_set() -> Vec<LabeledPost> {
    LabeledPost::parse_all(&dev_jsonl()).expect("dev.jsonl parses")
}

/// The fake OpenAI-compatible server answering from dev.jsonl's labels, with `faults`.
pub async fn fake_llm(faults: FaultPlan, seed: u64) -> FakeLlm {
    let config = FakeLlmConfig {
        oracle: load_oracle_jsonl(&dev_jsonl()).expect("oracle loads"),
        faults,
        seed,
        ..FakeLlmConfig::default()
    };
    FakeLlm::start("127.0.0.1:0".parse().expect("addr"), config)
        .await
        .expect("fake LLM starts")
}

/// [`fake_llm`] with the fake's default seed.
pub async fn fake(faults: FaultPlan) -> FakeLlm {
    fake_llm(faults, FakeLlmConfig::default().seed).await
}

/// What a classifier is asked about a labeled post.
pub fn input(post: &LabeledPost) -> ClassifyInput {
    ClassifyInput {
        id: post.id.clone(),
        text: post.text.clone(),
        channel: post.channel.clone(),
    }
}

/// A client config for `server`: the 12 categories, `model`, a 1.5 s timeout, two retries
/// with short backoff, batches of 10 gathered for at most 50 ms. Tests change what they measure.
pub fn llm_config(server: &FakeLlm, model: &str) -> LlmConfig {
    let categories = categories()
        .into_iter()
        .map(|c| {
            let d = format!("work of the {c} kind");
            (c, d)
        })
        .collect();
    let mut c = LlmConfig::new(server.url().to_string(), model, categories);
    c.timeout = Duration::from_millis(1500);
    c.max_retries = 2;
    c.min_backoff = Duration::from_millis(5);
    c.max_backoff = Duration::from_millis(20);
    c.batch_size = 10;
    c.batch_linger = Duration::from_millis(50);
    // One request at a time: these tests check how requests are filled and re-asked; how a
    // backlog is spread over several requests in flight has a test of its own.
    c.max_in_flight = 1;
    // …and requests wait to be full (or for the lingers), as these tests count them.
    c.quick_batch = 50;
    c
}
