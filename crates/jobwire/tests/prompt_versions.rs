//! Prompt versions in the running service: a version made current in the database is what
//! a running classifier sends (and records) within seconds, and the panel's prompt lab asks
//! the configured LLM (the project's fake OpenAI-compatible server).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use chrono::Utc;
use jobwire::testbed::{Bed, fake_llm_answering, start_pipeline, temp_db};
use jobwire_admin::PromptLab as _;
use jobwire_classify::llm::{PROMPT_VERSION, verdict_of_answer};
use jobwire_core::PostId;
use jobwire_intake::stage::IntakeOutcome;
use jobwire_testkit::llm::{FakeLlm, OracleEntry};
use jobwire_testkit::wait::eventually;

const V6: &str = "You sort Telegram posts.\n{{categories}}\n{{reason}}Answer with JSON only.";

fn post(id: &str, text: &str) -> jobwire_core::IncomingPost {
    common::incoming("@prompt_jobs", id, text)
}

/// The default test bed with the fake LLM as its `[llm]` endpoint.
fn bed_asking(llm: &FakeLlm) -> Bed {
    Bed {
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        ..Bed::default()
    }
}

async fn prompt_version_of(store: &dyn jobwire_store::Store, id: PostId) -> String {
    eventually(
        "the post is classified",
        Duration::from_secs(30),
        || async {
            store
                .classification(id)
                .await
                .ok()
                .flatten()
                .and_then(|c| c.prompt_version)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_classifier_picks_up_a_version_made_current() {
    let first = "Нужен лендинг на Tilda, бюджет 20 000 ₽, пишите @first_client";
    let second = "Ищем верстальщика для интернет-магазина, оплата 40 000 ₽, @shop_owner";
    let third = "Сделать сайт-визитку на WordPress, бюджет 15 000 ₽, писать @third_one";
    let telegram = jobwire::testbed::fake_telegram(None).await.unwrap();
    let llm = fake_llm_answering(vec![
        OracleEntry::job(first, &["web"]),
        OracleEntry::job(second, &["web"]),
        OracleEntry::job(third, &["web"]),
    ])
    .await
    .unwrap();
    let (_dir, db) = temp_db().unwrap();
    let bed = bed_asking(&llm);
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (running, store) = start_pipeline(&settings).await.unwrap();
    assert!(
        running.classifier.starts_with("llm"),
        "{}",
        running.classifier
    );

    let queued = |o: IntakeOutcome| match o {
        IntakeOutcome::Queued { post_id } => post_id,
        other => panic!("not queued: {other:?}"),
    };
    let one = queued(running.intake.ingest(post("1", first)).await.unwrap());
    assert_eq!(prompt_version_of(store.as_ref(), one).await, PROMPT_VERSION);

    // An admin writes classify.v6 and makes it current.
    let v6 = store
        .create_prompt_version("classify.v6", V6, "ops", Utc::now())
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .activate_prompt_version(v6.id, "ops", Utc::now())
            .await
            .unwrap()
    );
    let requests_before = llm.requests_log().len();
    // Within a few polls the classifier sends the new prompt.
    let deadline = jobwire::llm::PROMPT_POLL * 3;
    let started = std::time::Instant::now();
    let mut n = 1;
    let version = loop {
        n += 1;
        let text = if n == 2 { second } else { third };
        let id = queued(
            running
                .intake
                .ingest(post(&n.to_string(), text))
                .await
                .unwrap(),
        );
        let version = prompt_version_of(store.as_ref(), id).await;
        if version == "classify.v6" || started.elapsed() > deadline || n >= 3 {
            break version;
        }
        tokio::time::sleep(jobwire::llm::PROMPT_POLL + Duration::from_millis(500)).await;
    };
    assert_eq!(version, "classify.v6", "after {:?}", started.elapsed());
    let log = llm.requests_log();
    let first_hash = log[0].system_hash;
    assert_ne!(
        log.last().unwrap().system_hash,
        first_hash,
        "the new system prompt was sent"
    );
    assert!(log.len() > requests_before);
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_panels_prompt_lab_asks_the_configured_llm() {
    let text = "Нужен лендинг на Tilda, бюджет 20 000 ₽, пишите @first_client";
    let llm = fake_llm_answering(vec![OracleEntry::job(text, &["web"])])
        .await
        .unwrap();
    let (_dir, db) = temp_db().unwrap();
    let bed = bed_asking(&llm);
    let settings = bed
        .settings("http://127.0.0.1:9".parse().unwrap(), &db)
        .unwrap();
    let lab = jobwire::llm::PromptLab::new(settings.llm.as_ref().unwrap()).unwrap();
    let raw = lab.try_prompt(V6, text).await.expect("the LLM answers");
    let slugs: Vec<_> = settings.categories.iter().map(|c| c.slug.clone()).collect();
    let verdict = verdict_of_answer(&raw, &slugs).expect("a verdict");
    assert!(verdict.is_job, "{raw}");
    assert_eq!(
        verdict
            .categories
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>(),
        ["web"]
    );
    assert!(raw.contains("\"items\""), "{raw}");
    let log = llm.requests_log();
    assert_eq!(log.len(), 1);
    assert!(log[0].user.contains("Tilda"), "the text was asked about");

    let refused = lab.try_prompt("no placeholders here", text).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("lacks the placeholder {{categories}}")),
        "{refused:?}"
    );
    assert_eq!(llm.requests_log().len(), 1, "a bad template is not sent");
}
