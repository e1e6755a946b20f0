//! The cascade in the running pipeline: the local model answers what it is sure of, the LLM
//! the rest in batches; the LLM's answers are kept as training examples, and a retrain
//! learns from them; jobs carry their extracted facts to the subscriber.

use std::time::Duration;

use chrono::Utc;
use jobwire::config::ClassifierKind;
use jobwire::testbed::{Bed, temp_db};
use jobwire_store::ExampleSource;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cascade_sends_only_unsure_posts_to_the_llm_and_learns_from_its_answers() {
    init();
    let telegram = fake_telegram(None).await;
    let llm = fake_llm(shipped_oracle()).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        classifier_kind: Some(ClassifierKind::Cascade),
        ..Bed::default()
    };
    let mut settings = bed.settings(telegram.url(), &db).unwrap();
    // The local model learns from every other post of dev.jsonl and, as the shipped model,
    // from data/train.jsonl; the rest of dev.jsonl arrive as new posts (the fake LLM knows
    // them all).
    let data = dataset();
    let shipped = jobwire::pipeline::SHIPPED_TRAINING_DATA;
    let mut train: String = shipped
        .lines()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    train.push_str(jobwire::pipeline::SHIPPED_EXTRA_TRAINING_DATA);
    let train_path = db.with_extension("train.jsonl");
    std::fs::write(&train_path, train).unwrap();
    settings.classifier.training_data = Some(train_path);
    let (mut running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    assert!(
        running.classifier.starts_with("cascade("),
        "{}",
        running.classifier
    );
    jobwire::subscribers::store_all(
        store.as_ref(),
        &[subscriber(
            501,
            &jobwire_core::category::standard_slugs().collect::<Vec<_>>(),
        )],
    )
    .await
    .unwrap();

    let fresh: Vec<_> = data.iter().skip(1).step_by(2).collect();
    ingest_all(&running, fresh.iter().copied()).await;
    let counts = running
        .wait_settled(Duration::from_secs(120))
        .await
        .unwrap();
    running.shutdown().await.unwrap();

    let classified = counts.jobs + counts.resumes + counts.not_job;
    assert!(classified > 0);
    assert_eq!(counts.waiting + counts.queued, 0, "nothing is left waiting");

    // Every post went through the cascade; the LLM saw only a minority, in batches.
    let examples = store
        .examples(jobwire_core::ExampleId(0), 10_000)
        .await
        .unwrap();
    let from_llm = examples
        .iter()
        .filter(|e| e.source == ExampleSource::Llm)
        .count() as u64;
    assert!(from_llm > 0, "some posts were unsure");
    assert!(
        from_llm * 2 < classified,
        "the local model answered most posts: {from_llm} of {classified} went to the LLM"
    );
    let requests = llm.stats().requests;
    assert!(
        requests < from_llm,
        "the LLM answered {from_llm} posts in {requests} requests (batches)"
    );

    // Totals per model: the LLM's classifications are counted with their tokens.
    let totals = store
        .classification_totals(Utc::now() - chrono::Duration::hours(1))
        .await
        .unwrap();
    let llm_totals = totals.iter().find(|t| t.model == "fake-model").unwrap();
    assert_eq!(llm_totals.posts, from_llm);
    assert!(llm_totals.tokens_in > 0);
    let local_posts: u64 = totals
        .iter()
        .filter(|t| t.model != "fake-model")
        .map(|t| t.posts)
        .sum();
    assert_eq!(local_posts + llm_totals.posts, classified);

    // Delivered cards carry what was extracted: a budget line for jobs that state one.
    let messages = telegram.messages();
    assert!(!messages.is_empty());
    assert!(
        messages.iter().any(|m| m.text.contains('💰')),
        "no delivered card shows a budget"
    );

    // A retrain learns from the LLM's answers.
    let classifiers = jobwire::pipeline::classifiers(&settings).unwrap();
    let before = classifiers.local.model().id();
    let retrainer = jobwire::pipeline::retrainer(&settings, &classifiers, store.clone());
    let report = retrainer.retrain_once().await.unwrap();
    assert_eq!(report.llm_examples as u64, from_llm);
    assert!(report.trained_on > data.len() / 2, "{report:?}");
    assert_ne!(
        classifiers.local.model().id(),
        before,
        "the new model is in place"
    );
}
