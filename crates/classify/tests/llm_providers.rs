//! The fallback endpoint: used when the primary is out of quota (then the primary is skipped
//! for a cool-down), gone, or keeps failing.

mod common;

use std::time::Duration;

use common::{fake, input};
use jobwire_classify::llm::{LlmClassifier, LlmConfig, LlmEndpoint};
use jobwire_classify::{Classified, Classifier, ClassifyError};
use jobwire_core::dataset::LabeledPost;
use jobwire_testkit::llm::{FakeLlm, Fault, FaultPlan};

const PRIMARY: &str = "primary-model";
const FALLBACK: &str = "fallback-model";

/// The primary and the fallback are two models of the same fake server.
fn config(server: &FakeLlm, with_fallback: bool) -> LlmConfig {
    let mut c = common::llm_config(server, PRIMARY);
    c.api_key = Some("sk-primary".into());
    c.price_in_per_mtok = 1.0;
    c.price_out_per_mtok = 1.0;
    if with_fallback {
        let mut f = LlmEndpoint::new(server.url().to_string(), FALLBACK);
        f.api_key = Some("sk-fallback".into());
        f.price_in_per_mtok = 3.0;
        f.price_out_per_mtok = 6.0;
        c.fallback = Some(f);
    }
    c
}

fn client(server: &FakeLlm, with_fallback: bool) -> LlmClassifier {
    LlmClassifier::new(config(server, with_fallback)).expect("client builds")
}

/// Faults where the primary model is out of quota.
fn primary_out_of_quota() -> FaultPlan {
    FaultPlan {
        quota_models: vec![PRIMARY.into()],
        ..FaultPlan::default()
    }
}

/// Faults where the server does not know the primary model.
fn primary_unknown() -> FaultPlan {
    FaultPlan {
        unknown_models: vec![PRIMARY.into()],
        ..FaultPlan::default()
    }
}

async fn classified(classifier: &LlmClassifier, post: &LabeledPost) -> Classified {
    classifier.classify(&input(post)).await.expect("classified")
}

fn models(server: &FakeLlm) -> Vec<String> {
    server.requests_log().into_iter().map(|r| r.model).collect()
}

#[tokio::test]
async fn out_of_quota_goes_to_the_fallback_and_the_primary_cools_down() {
    let server = fake(primary_out_of_quota()).await;
    let mut cfg = config(&server, true);
    cfg.quota_cooldown = Duration::from_millis(400);
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();

    let first = classified(&classifier, &data[0]).await;
    assert_eq!(first.model, FALLBACK);
    let label = data[0].label.as_ref().expect("labeled");
    assert_eq!(first.verdict.categories, label.categories);
    // The fallback's prices apply.
    let expected = (f64::from(first.tokens_in) * 3.0 + f64::from(first.tokens_out) * 6.0) / 1e6;
    assert!((first.cost_usd - expected).abs() < 1e-12, "{first:?}");
    assert_eq!(
        models(&server),
        [PRIMARY, FALLBACK],
        "no retries of a quota error"
    );

    // Cooling down: the primary is not even tried.
    let second = classified(&classifier, &data[1]).await;
    assert_eq!(second.model, FALLBACK);
    assert_eq!(models(&server), [PRIMARY, FALLBACK, FALLBACK]);
    let stats = classifier.stats();
    assert_eq!(
        (
            stats.requests,
            stats.fallback_requests,
            stats.failed_requests
        ),
        (3, 2, 1)
    );

    // After the cool-down (and a top-up) the primary answers again.
    tokio::time::sleep(Duration::from_millis(450)).await;
    server.set_faults(FaultPlan::default());
    let third = classified(&classifier, &data[2]).await;
    assert_eq!(third.model, PRIMARY);
    assert_eq!(server.stats().insufficient_quota, 1);
}

#[tokio::test]
async fn without_a_fallback_out_of_quota_is_retryable_and_not_hammered() {
    let server = fake(primary_out_of_quota()).await;
    let classifier = client(&server, false);
    let data = common::dev_set();
    for post in &data[..3] {
        match classifier.classify(&input(post)).await {
            Err(e @ ClassifyError::Unavailable { retry_after, .. }) => {
                assert!(e.is_retryable());
                let wait = retry_after.expect("the cool-down is the wait");
                assert!(wait > Duration::from_secs(60) && wait <= Duration::from_secs(600));
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }
    assert_eq!(server.stats().requests, 1, "skipped during the cool-down");
}

#[tokio::test]
async fn an_unknown_primary_model_goes_to_the_fallback_at_once() {
    let server = fake(primary_unknown()).await;
    let classifier = client(&server, true);
    let data = common::dev_set();
    let out = classifier
        .classify_many(&[input(&data[0]), input(&data[1])])
        .await;
    assert!(
        out.iter()
            .all(|r| r.as_ref().is_ok_and(|c| c.model == FALLBACK))
    );
    assert_eq!(models(&server), [PRIMARY, FALLBACK]);

    // Without a fallback it is a rejection (a configuration error), not retried.
    let server = fake(primary_unknown()).await;
    let classifier = client(&server, false);
    let err = classifier
        .classify(&input(&data[0]))
        .await
        .expect_err("no model");
    assert!(
        matches!(err, ClassifyError::Rejected { status: 404, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn a_failing_primary_falls_back_after_its_retries_without_cooling_down() {
    let server = fake(FaultPlan::scripted([Fault::Status500; 3])).await;
    let classifier = client(&server, true);
    let data = common::dev_set();
    let out = classified(&classifier, &data[0]).await;
    assert_eq!(out.model, FALLBACK);
    assert_eq!(models(&server), [PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
    // A 500 is no reason to skip the primary next time.
    let out = classified(&classifier, &data[1]).await;
    assert_eq!(out.model, PRIMARY);
    // Both failing: the post stays retryable.
    server.set_faults(FaultPlan::scripted([Fault::Status500; 6]));
    let err = classifier
        .classify(&input(&data[2]))
        .await
        .expect_err("both down");
    assert!(err.is_retryable(), "{err}");
}
