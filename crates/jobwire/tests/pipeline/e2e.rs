//! The spine end to end: dev.jsonl replayed through intake, the LLM classifier (the fake LLM
//! answering from the labels), fan-out and the senders, into the fake Telegram.

use std::path::Path;
use std::time::Duration;

use jobwire::config::Settings;
use jobwire::testbed::{Bed, temp_db};
use jobwire_core::PostId;
use jobwire_testkit::telegram::FakeTelegram;
use jobwire_testkit::wait::eventually;

use crate::expect::*;
use crate::support::*;

/// The bed's settings with the channels' rules, the chat [`BLOCKED`] having blocked every
/// bot.
fn settings_with_blocked_chat(telegram: &FakeTelegram, bed: &Bed, db: &Path) -> Settings {
    let mut settings = bed.settings(telegram.url(), db).unwrap();
    settings.channels = channel_rules();
    for bot in 0..bed.bots.len() {
        telegram.block_chat(jobwire::testbed::bot_id(bot), BLOCKED);
    }
    settings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_subscriber_gets_exactly_the_jobs_that_match_them() {
    init();
    let (fake_limits, limits) = scaled_limits(20);
    let telegram = fake_telegram(Some(fake_limits)).await;
    let llm = fake_llm(shipped_oracle()).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        limits,
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        ..Bed::default()
    };
    let settings = settings_with_blocked_chat(&telegram, &bed, &db);

    let (mut running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    assert!(
        running.classifier.starts_with("llm"),
        "the LLM classifies: {}",
        running.classifier
    );
    jobwire::subscribers::store_all(store.as_ref(), &subscribers())
        .await
        .unwrap();

    let data = dataset();
    ingest_all(&running, &data).await;
    let counts = running
        .wait_settled(Duration::from_secs(180))
        .await
        .unwrap();
    running.shutdown().await.unwrap();

    verify(&*store, &telegram, &bed, &settings.channels, counts.jobs).await;
    // A 403 marks the bot that got it blocked for that user (and only that bot).
    let blocks = store.bot_blocks(Some(BLOCKED)).await.unwrap();
    assert!(
        !blocks.is_empty()
            && blocks
                .iter()
                .all(|b| b.scope == jobwire_store::BlockScope::Bot && b.chat_id == BLOCKED),
        "{blocks:?}"
    );
    assert!(llm.stats().requests > 0);
}

/// Streamed answers cut halfway through their batch (the connection drops mid-answer): the
/// verdicts already written are kept, the rest are asked again, and every subscriber still
/// gets exactly the jobs that match them, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_cut_halfway_through_a_batch_still_deliver_every_job_once() {
    use jobwire_testkit::llm::{Fault, FaultPlan};
    init();
    let (fake_limits, limits) = scaled_limits(20);
    let telegram = fake_telegram(Some(fake_limits)).await;
    let llm = fake_llm(shipped_oracle()).await;
    // Paced like a model (a few ms a token), so the cuts land while items are being written.
    llm.state().set_speed(Duration::from_millis(20), 2_000);
    llm.set_faults(FaultPlan::scripted([
        Fault::StreamCut,
        Fault::Ok,
        Fault::StreamCut,
        Fault::StreamCut,
    ]));
    let (_dir, db) = temp_db().unwrap();
    let section = jobwire::cli::llm_section(&llm.url(), "fake-model");
    assert!(section.stream, "answers are streamed by default");
    let bed = Bed {
        limits,
        llm: Some(section),
        ..Bed::default()
    };
    let settings = settings_with_blocked_chat(&telegram, &bed, &db);
    let (mut running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    jobwire::subscribers::store_all(store.as_ref(), &subscribers())
        .await
        .unwrap();
    ingest_all(&running, &dataset()).await;
    let counts = running
        .wait_settled(Duration::from_secs(180))
        .await
        .unwrap();
    running.shutdown().await.unwrap();
    let stats = llm.stats();
    assert_eq!(stats.cut_streams, 3, "{stats:?}");
    assert_eq!(stats.streamed_requests, stats.requests, "{stats:?}");
    verify(&*store, &telegram, &bed, &settings.channels, counts.jobs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_an_llm_outage_posts_wait_and_are_classified_when_it_returns() {
    use jobwire_testkit::llm::FaultPlan;
    init();
    let telegram = fake_telegram(None).await;
    let llm = fake_llm(shipped_oracle()).await;
    llm.set_faults(FaultPlan {
        rate_500: 1.0,
        retry_after_secs: 0,
        ..FaultPlan::default()
    });
    let (_dir, db) = temp_db().unwrap();
    let mut section = jobwire::cli::llm_section(&llm.url(), "fake-model");
    section.max_retries = 1;
    section.timeout_secs = 5;
    let bed = Bed {
        llm: Some(section),
        fallback_after: 1000, // no local fallback: the posts must wait for the LLM
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (mut running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    jobwire::subscribers::store_all(
        store.as_ref(),
        &[subscriber(
            1,
            &["web", "bots", "design", "texts", "marketing"],
        )],
    )
    .await
    .unwrap();
    let jobs: Vec<_> = dataset()
        .into_iter()
        .filter(|p| p.label.as_ref().is_some_and(|l| l.is_job))
        .take(5)
        .collect();
    ingest_all(&running, &jobs).await;
    // The LLM fails every call: the posts wait (and are retried), none is dropped or guessed.
    eventually(
        "the posts to reach `waiting`",
        Duration::from_secs(30),
        || async {
            let c = store.pipeline_counts().await.unwrap();
            assert_eq!(
                c.jobs + c.resumes + c.not_job,
                0,
                "nothing is classified while the LLM is down"
            );
            if c.waiting == jobs.len() as u64 && llm.stats().requests >= 2 * jobs.len() as u64 {
                Ok(())
            } else {
                Err(format!("{c:?}"))
            }
        },
    )
    .await;
    llm.set_faults(FaultPlan::default());
    let counts = running.wait_settled(Duration::from_secs(60)).await.unwrap();
    running.shutdown().await.unwrap();
    assert_eq!(counts.jobs, jobs.len() as u64, "{counts:?}");
    let first = store.post(PostId(1)).await.unwrap().unwrap();
    assert!(first.attempts >= 1, "the post was retried");
    let verdict = store.classification(PostId(1)).await.unwrap().unwrap();
    assert!(
        verdict.model.contains("fake-model"),
        "classified by the LLM: {}",
        verdict.model
    );
}
