//! Batching, re-asks, accounting and few-shot examples of the LLM classifier, against the
//! local fake OpenAI-compatible server.

mod common;

use std::collections::HashSet;

use jobwire_classify::llm::{FewShot, LlmClassifier, LlmConfig, MAX_BATCH};
use jobwire_classify::{Classified, Classifier, ClassifyError, ClassifyInput};
use jobwire_core::dataset::LabeledPost;
use jobwire_core::{CategorySlug, PostKind};
use jobwire_testkit::llm::{FakeLlm, Fault, FaultPlan};
use jobwire_testkit::wait::eventually;

/// How long a test waits for the fake LLM to see a request.
const SOON: std::time::Duration = std::time::Duration::from_secs(10);

async fn fake(faults: FaultPlan) -> FakeLlm {
    common::fake_llm(faults, 42).await
}

fn config(server: &FakeLlm) -> LlmConfig {
    common::llm_config(server, "fake-model")
}

/// Inputs with database-like ids (which must never reach the model).
fn inputs(data: &[LabeledPost]) -> Vec<ClassifyInput> {
    data.iter()
        .map(|p| ClassifyInput {
            id: format!("db-{}", p.id),
            text: p.text.clone(),
            channel: p.channel.clone(),
        })
        .collect()
}

fn assert_matches_label(post: &LabeledPost, got: &Classified) {
    let label = post.label.as_ref().expect("labeled");
    assert_eq!(got.verdict.is_job, label.is_job, "{}", post.id);
    assert_eq!(got.verdict.kind, label.kind, "{}", post.id);
    assert_eq!(got.verdict.categories, label.categories, "{}", post.id);
}

fn ok(r: &Result<Classified, ClassifyError>) -> &Classified {
    r.as_ref().expect("classified")
}

#[tokio::test]
async fn shuffled_and_partial_answers_are_tied_to_their_posts() {
    let server = fake(FaultPlan {
        shuffle_items: true,
        rate_drop_item: 0.25,
        ..FaultPlan::default()
    })
    .await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let data = &data[..30];
    let out = classifier.classify_many(&inputs(data)).await;
    assert_eq!(out.len(), data.len());
    let mut answered = 0;
    for (post, got) in data.iter().zip(&out) {
        match got {
            Ok(c) => {
                assert_matches_label(post, c);
                answered += 1;
            }
            Err(e) => assert!(e.is_retryable(), "{}: {e}", post.id),
        }
    }
    assert!(answered >= 25, "only {answered} of 30 answered");
    assert!(server.stats().dropped_items > 0);
    assert!(classifier.stats().reasks > 0);
    // The model saw short per-batch ids, never the database ids.
    let log = server.requests_log();
    let first: Vec<String> = (1..=10).map(|i| format!("p{i}")).collect();
    assert_eq!(log[0].ids, first);
    assert!(log.iter().all(|r| !r.user.contains("db-")));
}

#[tokio::test]
async fn a_reask_carries_only_the_missing_posts() {
    let server = fake(FaultPlan::scripted([Fault::Partial, Fault::Ok])).await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[..5])).await;
    for (post, got) in data[..5].iter().zip(&out) {
        assert_matches_label(post, ok(got));
    }
    let log = server.requests_log();
    let ids: Vec<Vec<String>> = log.iter().map(|r| r.ids.clone()).collect();
    assert_eq!(
        ids,
        [vec!["p1", "p2", "p3", "p4", "p5"], vec!["p1", "p3", "p5"]]
    );
    let stats = classifier.stats();
    assert_eq!(
        (stats.requests, stats.reasks, stats.failed_requests),
        (2, 1, 0)
    );
}

#[tokio::test]
async fn off_schema_items_are_reasked_and_the_good_ones_kept() {
    // 1st item: unknown kind; 3rd: a job whose only category is unknown; 2nd: fine.
    let server = fake(FaultPlan::scripted([Fault::BadItems, Fault::Ok])).await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[..3])).await;
    for (post, got) in data[..3].iter().zip(&out) {
        assert_matches_label(post, ok(got));
    }
    let ids: Vec<Vec<String>> = server.requests_log().into_iter().map(|r| r.ids).collect();
    assert_eq!(ids, [vec!["p1", "p2", "p3"], vec!["p1", "p3"]]);
    assert_eq!(server.stats().bad_items, 2);
}

#[tokio::test]
async fn a_job_without_a_known_category_is_reasked_once_then_accepted() {
    let server = fake(FaultPlan::scripted([
        Fault::UnknownCategoryItems,
        Fault::UnknownCategoryItems,
    ]))
    .await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[..2])).await;
    for got in &out {
        let c = ok(got);
        assert!(c.verdict.is_job);
        assert_eq!(c.verdict.kind, PostKind::Job);
        assert!(c.verdict.categories.is_empty(), "{c:?}");
    }
    assert_eq!(server.stats().requests, 2, "one re-ask, not two");
}

#[tokio::test]
async fn a_post_never_answered_stays_retryable() {
    let server = fake(FaultPlan::scripted([Fault::Partial; 3])).await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[..2])).await;
    // p2 is answered at once; p1 is dropped from the answer and from both re-asks.
    assert_matches_label(&data[1], ok(&out[1]));
    match &out[0] {
        Err(e @ ClassifyError::Unavailable { attempts, .. }) => {
            assert!(e.is_retryable());
            assert_eq!(*attempts, 3);
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    let ids: Vec<Vec<String>> = server.requests_log().into_iter().map(|r| r.ids).collect();
    assert_eq!(ids, [vec!["p1", "p2"], vec!["p1"], vec!["p1"]]);
    assert_eq!(classifier.stats().reasks, 2);
}

#[tokio::test]
async fn posts_go_in_batches_of_the_configured_size() {
    let server = fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.batch_size = 10;
    let classifier = LlmClassifier::new(cfg.clone()).expect("client builds");
    assert_eq!(classifier.max_batch(), 10);
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[..25])).await;
    for (post, got) in data[..25].iter().zip(&out) {
        assert_matches_label(post, ok(got));
    }
    let sizes: Vec<usize> = server.requests_log().iter().map(|r| r.ids.len()).collect();
    assert_eq!(sizes, [10, 10, 5]);
    assert_eq!(server.stats().requests_per_1000_posts(), 120.0);
    assert!(classifier.classify_many(&[]).await.is_empty());

    cfg.batch_size = 1000;
    assert_eq!(
        LlmClassifier::new(cfg).expect("builds").max_batch(),
        MAX_BATCH
    );
}

#[tokio::test]
async fn cost_and_tokens_add_up_to_the_requests_usage() {
    let server = fake(FaultPlan::scripted([Fault::Partial, Fault::Ok])).await;
    let mut cfg = config(&server);
    cfg.price_in_per_mtok = 2.5;
    cfg.price_out_per_mtok = 10.0;
    // Shares are exact when the answer comes whole; a streamed post's share is estimated
    // when its item arrives (llm_streaming.rs checks those).
    cfg.stream = false;
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();
    let out: Vec<Classified> = classifier
        .classify_many(&inputs(&data[..6]))
        .await
        .into_iter()
        .map(|r| r.expect("classified"))
        .collect();
    let fake_stats = server.stats();
    let tokens_in: u64 = out.iter().map(|c| u64::from(c.tokens_in)).sum();
    let tokens_out: u64 = out.iter().map(|c| u64::from(c.tokens_out)).sum();
    assert_eq!(tokens_in, fake_stats.prompt_tokens);
    assert_eq!(tokens_out, fake_stats.completion_tokens);
    let expected =
        (fake_stats.prompt_tokens as f64 * 2.5 + fake_stats.completion_tokens as f64 * 10.0) / 1e6;
    let cost: f64 = out.iter().map(|c| c.cost_usd).sum();
    assert!(expected > 0.0);
    assert!(
        (cost - expected).abs() < expected * 1e-9,
        "{cost} vs {expected}"
    );
    let stats = classifier.stats();
    assert_eq!((stats.tokens_in, stats.tokens_out), (tokens_in, tokens_out));
    assert!((stats.cost_usd - expected).abs() < expected * 1e-9);
    // The re-asked posts (p1, p3, p5) took part in two requests: they cost more.
    assert!(out[0].cost_usd > out[1].cost_usd);
    assert!(out[4].tokens_in > out[3].tokens_in);
    assert!(out.iter().all(|c| c.model == "fake-model"));
}

fn shot(text: &str, kind: PostKind, cats: &[&str]) -> FewShot {
    FewShot {
        text: text.into(),
        is_job: kind == PostKind::Job,
        kind,
        categories: cats
            .iter()
            .map(|c| CategorySlug::parse(c).expect("slug"))
            .collect(),
    }
}

fn examples() -> Vec<FewShot> {
    vec![
        shot(
            "Нужен логотип для кофейни в минималистичном стиле, бюджет 5000 руб",
            PostKind::Job,
            &["design"],
        ),
        shot(
            "Looking for a Python developer to build a Telegram bot with payments",
            PostKind::Job,
            &["bots"],
        ),
        shot(
            "Монтаж роликов для YouTube, 10 видео в месяц",
            PostKind::Job,
            &["video"],
        ),
        shot(
            "Курс по SMM: научим зарабатывать от 100к в месяц!",
            PostKind::Ad,
            &[],
        ),
    ]
}

#[tokio::test]
async fn few_shot_examples_similar_to_the_post_go_into_the_request() {
    let server = fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.few_shot = 1;
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    classifier.set_examples(examples());
    let post = ClassifyInput {
        id: "x1".into(),
        text: "Ищу дизайнера: логотип для кофейни и вывеска, бюджет 7000 руб".into(),
        channel: "@c".into(),
    };
    ok(&classifier.classify(&post).await);
    let post2 = ClassifyInput {
        id: "x2".into(),
        text: "Need a developer for a Telegram bot that accepts payments".into(),
        channel: "@c".into(),
    };
    ok(&classifier.classify(&post2).await);
    let log = server.requests_log();
    assert!(
        log[0]
            .user
            .contains("логотип для кофейни в минималистичном")
    );
    assert!(!log[0].user.contains("Telegram bot with payments"));
    assert!(!log[0].user.contains("YouTube"));
    assert!(log[1].user.contains("Telegram bot with payments"));
    assert!(!log[1].user.contains("кофейни в минималистичном"));
    // The examples sit before the posts, in the user message; the system prompt is the same.
    let examples_at = log[0].user.find("минималистичном").expect("example");
    let posts_at = log[0].user.find("{\"posts\"").expect("posts");
    assert!(examples_at < posts_at);
    assert_eq!(log[0].system_hash, log[1].system_hash);

    // Refreshing the examples takes effect at once; none similar: none sent.
    classifier.set_examples(vec![shot("Продам гараж недорого", PostKind::Chatter, &[])]);
    ok(&classifier.classify(&post).await);
    let log = server.requests_log();
    assert!(!log[2].user.contains("минималистичном"));
    assert!(!log[2].user.contains("гараж"));
}

#[tokio::test]
async fn the_system_prompt_is_byte_identical_across_requests() {
    let server = fake(FaultPlan::scripted([Fault::Ok, Fault::Partial, Fault::Ok])).await;
    let mut cfg = config(&server);
    cfg.batch_size = 4;
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    classifier.set_examples(examples());
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[10..18])).await;
    assert!(out.iter().all(Result::is_ok));
    let log = server.requests_log();
    assert_eq!(log.len(), 3, "two batches and one re-ask");
    let hashes: HashSet<u64> = log.iter().map(|r| r.system_hash).collect();
    assert_eq!(hashes.len(), 1, "{log:?}");
    let users: HashSet<&str> = log.iter().map(|r| r.user.as_str()).collect();
    assert_eq!(users.len(), 3, "the per-request part differs");
}

/// A fake whose every answer takes `latency`.
async fn slow_fake(faults: FaultPlan, latency: std::time::Duration) -> FakeLlm {
    let config = jobwire_testkit::llm::FakeLlmConfig {
        oracle: jobwire_testkit::llm::load_oracle_jsonl(&common::dev_jsonl()).expect("oracle"),
        faults,
        latency,
        seed: 7,
        ..Default::default()
    };
    FakeLlm::start("127.0.0.1:0".parse().expect("addr"), config)
        .await
        .expect("fake LLM starts")
}

#[tokio::test]
async fn posts_of_concurrent_callers_share_full_requests() {
    let server = fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.batch_size = 20;
    cfg.batch_linger = std::time::Duration::from_secs(2);
    let classifier = std::sync::Arc::new(LlmClassifier::new(cfg).expect("client builds"));
    let data = common::dev_set();
    // Eight callers (as the classify stage's batches would be) with five unsure posts each.
    let calls = data[..40].chunks(5).map(|chunk| {
        let classifier = classifier.clone();
        let chunk = chunk.to_vec();
        async move {
            (
                chunk.clone(),
                classifier.classify_many(&inputs(&chunk)).await,
            )
        }
    });
    for (chunk, out) in futures::future::join_all(calls).await {
        for (post, got) in chunk.iter().zip(&out) {
            assert_matches_label(post, ok(got));
        }
    }
    let sizes: Vec<usize> = server.requests_log().iter().map(|r| r.ids.len()).collect();
    assert_eq!(
        sizes,
        [20, 20],
        "40 posts from 8 callers in two full requests"
    );
    assert_eq!(server.stats().requests_per_1000_posts(), 50.0);
}

#[tokio::test]
async fn a_reasked_post_rides_along_with_the_next_posts() {
    // The window in which the second caller's posts arrive: while the first request is in
    // flight.
    let latency = std::time::Duration::from_millis(300);
    let server = slow_fake(FaultPlan::scripted([Fault::Partial, Fault::Ok]), latency).await;
    let mut cfg = config(&server);
    cfg.batch_size = 6;
    cfg.batch_linger = std::time::Duration::from_secs(2);
    let classifier = std::sync::Arc::new(LlmClassifier::new(cfg).expect("client builds"));
    let data = common::dev_set();
    let first = data[..6].to_vec();
    let later = data[6..9].to_vec();
    let a = {
        let classifier = classifier.clone();
        let first = first.clone();
        tokio::spawn(async move { classifier.classify_many(&inputs(&first)).await })
    };
    // The second caller's posts arrive while the first request is in flight.
    eventually("the first request at the LLM", SOON, || async {
        server.stats().requests >= 1
    })
    .await;
    let b = classifier.classify_many(&inputs(&later)).await;
    let a = a.await.expect("first caller");
    for (post, got) in first.iter().zip(&a).chain(later.iter().zip(&b)) {
        assert_matches_label(post, ok(got));
    }
    let log = server.requests_log();
    assert_eq!(
        log.len(),
        2,
        "the re-ask did not cost a request of its own: {log:?}"
    );
    assert_eq!(log[0].ids, ["p1", "p2", "p3", "p4", "p5", "p6"]);
    let second: HashSet<&str> = log[1].ids.iter().map(String::as_str).collect();
    assert_eq!(second.len(), 6);
    for id in ["p7", "p8", "p9"] {
        assert!(second.contains(id), "{second:?}");
    }
    let reasked: Vec<&&str> = second
        .iter()
        .filter(|id| !["p7", "p8", "p9"].contains(id))
        .collect();
    assert!(
        reasked
            .iter()
            .all(|id| log[0].ids.iter().any(|x| x == **id))
    );
    assert_eq!(classifier.stats().reasks, 1);
}

#[tokio::test]
async fn a_lone_post_goes_at_once_when_the_llm_is_idle() {
    let server = fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.idle_linger = std::time::Duration::from_millis(100);
    cfg.batch_linger = std::time::Duration::from_secs(30);
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();
    let started = std::time::Instant::now();
    let got = classifier.classify(&inputs(&data[..1])[0]).await;
    assert_matches_label(&data[0], ok(&got));
    // It waited the short idle gathering window, not the long one.
    let waited = started.elapsed();
    assert!(
        waited >= std::time::Duration::from_millis(100),
        "{waited:?}"
    );
    assert!(waited < std::time::Duration::from_secs(30), "{waited:?}");
    // The wait is part of the post's latency.
    assert!(ok(&got).latency_ms >= 100);
    let sizes: Vec<usize> = server.requests_log().iter().map(|r| r.ids.len()).collect();
    assert_eq!(sizes, [1]);
}

#[tokio::test]
async fn while_a_request_is_in_flight_posts_gather_for_the_next() {
    let latency = std::time::Duration::from_millis(300);
    let server = slow_fake(FaultPlan::default(), latency).await;
    let mut cfg = config(&server);
    cfg.batch_size = 30;
    cfg.idle_linger = std::time::Duration::from_millis(10);
    cfg.batch_linger = std::time::Duration::from_secs(30);
    let classifier = std::sync::Arc::new(LlmClassifier::new(cfg).expect("client builds"));
    let data = common::dev_set();
    let mut chunks = data[..13].chunks(3);
    let call = |chunk: &[LabeledPost], after: std::time::Duration| {
        let classifier = classifier.clone();
        let chunk = chunk.to_vec();
        tokio::spawn(async move {
            // The callers trickle in, one a little after the other.
            tokio::time::sleep(after).await;
            let out = classifier.classify_many(&inputs(&chunk)).await;
            (chunk, out)
        })
    };
    // One caller, then four more trickling in while its request is in flight.
    let mut calls = vec![call(
        chunks.next().expect("13 posts"),
        std::time::Duration::ZERO,
    )];
    eventually("the first request at the LLM", SOON, || async {
        server.stats().requests >= 1
    })
    .await;
    for (n, chunk) in chunks.enumerate() {
        calls.push(call(chunk, std::time::Duration::from_millis(40 * n as u64)));
    }
    for call in calls {
        let (chunk, out) = call.await.expect("caller");
        for (post, got) in chunk.iter().zip(&out) {
            assert_matches_label(post, ok(got));
        }
    }
    let sizes: Vec<usize> = server.requests_log().iter().map(|r| r.ids.len()).collect();
    // The first three went alone (the LLM was idle); the other ten waited for it, together,
    // and went as soon as it answered — not after the 30 s linger.
    assert_eq!(sizes, [3, 10]);
}

#[tokio::test]
async fn an_answer_cut_short_keeps_its_complete_items_and_reasks_the_rest() {
    // The model runs out of tokens halfway through its answer.
    let server = fake(FaultPlan::scripted([Fault::Truncated, Fault::Ok])).await;
    let classifier = LlmClassifier::new(config(&server)).expect("client builds");
    let data = common::dev_set();
    let out = classifier.classify_many(&inputs(&data[..8])).await;
    for (post, got) in data[..8].iter().zip(&out) {
        assert_matches_label(post, ok(got));
    }
    let log = server.requests_log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0].ids.len(), 8);
    let again = &log[1].ids;
    assert!(
        !again.is_empty() && again.len() < 8,
        "only the cut-off posts: {again:?}"
    );
    assert!(again.iter().all(|id| log[0].ids.contains(id)));
    let stats = classifier.stats();
    assert_eq!((stats.failed_requests, stats.reasks), (0, 1));
}

#[tokio::test]
async fn an_endless_linger_is_capped_not_an_overflow() {
    let server = fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.batch_linger = std::time::Duration::MAX;
    cfg.idle_linger = std::time::Duration::from_millis(10);
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();
    let got = classifier.classify(&inputs(&data[..1])[0]).await;
    assert_matches_label(&data[0], ok(&got));
}

/// The provider's prompt cache is read from the answers and priced as configured: the
/// instructions and few-shot examples that open every request repeat, so a second request
/// is billed less for the same number of prompt tokens.
#[tokio::test]
async fn cached_prompt_tokens_are_counted_and_cost_less() {
    let server = fake(FaultPlan::default()).await;
    let mut cfg = config(&server);
    cfg.price_in_per_mtok = 0.15;
    cfg.price_cached_in_per_mtok = Some(0.075);
    cfg.price_out_per_mtok = 0.60;
    cfg.batch_size = 10;
    let classifier = LlmClassifier::new(cfg).expect("client builds");
    let data = common::dev_set();
    for chunk in data[..40].chunks(10) {
        let out = classifier.classify_many(&inputs(chunk)).await;
        assert!(out.iter().all(Result::is_ok));
    }
    let stats = classifier.stats();
    let fake = server.stats();
    assert_eq!(
        stats.cached_tokens, fake.cached_tokens,
        "{stats:?} {fake:?}"
    );
    assert!(
        stats.cached_tokens > 0,
        "the stable prefix is cached: {stats:?}"
    );
    let full = (stats.tokens_in as f64 * 0.15 + stats.tokens_out as f64 * 0.60) / 1e6;
    let saved = stats.cached_tokens as f64 * (0.15 - 0.075) / 1e6;
    assert!(
        (stats.cost_usd - (full - saved)).abs() < 1e-9,
        "{} vs {}",
        stats.cost_usd,
        full - saved
    );
}
