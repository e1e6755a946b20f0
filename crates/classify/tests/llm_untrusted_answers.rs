//! What an LLM answers is not trusted beyond its validation: the model name its response
//! reports never becomes a metrics label or a stored column, an unsure answer is not learned,
//! and a contact the post does not contain is dropped. Against a provider that reports a
//! garbage model name and answers by markers in the posts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::routing::post;
use chrono::Utc;
use jobwire_classify::llm::{LlmClassifier, LlmConfig};
use jobwire_classify::stage::{ClassifyStage, ClassifyStageConfig};
use jobwire_classify::{Classifier, ClassifyInput};
use jobwire_core::CategorySlug;
use jobwire_queue::MemoryQueue;
use jobwire_store::{ExampleId, InsertOutcome, NewPost, PostId, PostStatus, SqliteStore, Store};
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use serde_json::{Value, json};

const CONFIGURED: &str = "configured-model";
const REPORTED: &str = "gpt-4o-2099-evil\"} 1\nfake_metric{x=\"";

/// Answers every post as a web job: confidence 0.5 when its text says "unsure" (else 0.95),
/// the contact `@scam_wallet` when it says "invent" (else `@ivan_dev`); the response names
/// the model [`REPORTED`].
async fn answer(Json(req): Json<Value>) -> Json<Value> {
    let user = req["messages"][1]["content"].as_str().unwrap_or("");
    let posts: Value = serde_json::from_str(user.lines().last().unwrap_or("{}")).unwrap();
    let items: Vec<Value> = posts["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let text = p["text"].as_str().unwrap();
            let confidence = if text.contains("unsure") { 0.5 } else { 0.95 };
            let contact = if text.contains("invent") {
                "@scam_wallet"
            } else {
                "@ivan_dev"
            };
            json!({"id": p["id"], "is_job": true, "kind": "job", "categories": ["web"],
                "confidence": confidence, "reason": "r",
                "extraction": {"title": "Landing page", "budget": null, "deadline": null,
                    "work_mode": null, "skills": [], "contact": contact}})
        })
        .collect();
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
        "model": REPORTED,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
            "message": {"role": "assistant", "content": json!({"items": items}).to_string(),
                "refusal": null, "annotations": []}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
    }))
}

/// The provider, served until the test ends; its base URL.
async fn provider() -> String {
    let app = axum::Router::new().route("/v1/chat/completions", post(answer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn classifier(base_url: &str) -> LlmClassifier {
    let web = CategorySlug::parse("web").unwrap();
    let mut c = LlmConfig::new(base_url, CONFIGURED, vec![(web, "websites".into())]);
    c.max_retries = 0;
    c.idle_linger = std::time::Duration::from_millis(5);
    // This provider answers plain JSON only (a streamed answer's items are checked by the
    // same code, see llm_streaming.rs).
    c.stream = false;
    LlmClassifier::new(c).unwrap()
}

/// Every label value recorded, by metric name.
#[derive(Default)]
struct Labels(Mutex<Vec<(String, String, String)>>);

impl Labels {
    fn note(&self, key: &Key) {
        let mut seen = self.0.lock().unwrap();
        for l in key.labels() {
            seen.push((
                key.name().to_owned(),
                l.key().to_owned(),
                l.value().to_owned(),
            ));
        }
    }
}

struct Capture(Arc<Labels>);

impl Recorder for Capture {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        self.0.note(key);
        Counter::noop()
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.0.note(key);
        Gauge::noop()
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        self.0.note(key);
        Histogram::noop()
    }
}

async fn queued_posts(store: &dyn Store, texts: &[&str]) -> Vec<PostId> {
    let channel = store.ensure_channel("@c", Utc::now()).await.unwrap();
    let mut ids = Vec::new();
    for (n, text) in texts.iter().enumerate() {
        let outcome = store
            .insert_post(&NewPost {
                channel_id: channel.id,
                external_id: n.to_string(),
                text: (*text).to_owned(),
                author: None,
                url: None,
                posted_at: Utc::now(),
                received_at: Utc::now(),
                status: PostStatus::Queued,
                filter_reason: None,
                fingerprint: None,
                duplicate_of: None,
            })
            .await
            .unwrap();
        ids.push(match outcome {
            InsertOutcome::Inserted(id) | InsertOutcome::AlreadyKnown(id) => id,
        });
    }
    ids
}

// A current-thread runtime (`tokio::test`'s): the stage's metrics calls run on this thread,
// where the capturing recorder is installed.
#[tokio::test]
async fn metrics_carry_the_configured_model_and_only_confident_answers_are_learned() {
    let url = provider().await;
    let labels = Arc::new(Labels::default());
    let recorder = Capture(labels.clone());
    let _installed = metrics::set_default_local_recorder(&recorder);
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open_path(&dir.path().join("db"))
            .await
            .unwrap(),
    );
    let sure = "Нужен лендинг для студии, пишите @ivan_dev";
    let unsure = "unsure: нужен сайт? пишите @ivan_dev";
    let ids = queued_posts(store.as_ref(), &[sure, unsure]).await;
    let stage = ClassifyStage::new(
        store.clone(),
        Arc::new(MemoryQueue::new()),
        Arc::new(classifier(&url)),
        None,
        ClassifyStageConfig::default(),
    );
    for outcome in stage.classify_posts(&ids).await {
        outcome.unwrap();
    }

    // Every `model` label is the configured name, never what the provider reported.
    let models: BTreeSet<String> = labels
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, key, _)| key == "model")
        .map(|(_, _, value)| value.clone())
        .collect();
    assert_eq!(models, BTreeSet::from([CONFIGURED.to_owned()]));
    // …and so is the stored model.
    for id in &ids {
        let record = store.classification(*id).await.unwrap().unwrap();
        assert_eq!(record.model, CONFIGURED);
    }

    // Both answers were stored; only the confident one became a training example.
    let examples = store.examples(ExampleId(0), 100).await.unwrap();
    let learned: Vec<&str> = examples.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(learned, [sure]);
}

#[tokio::test]
async fn a_contact_the_post_does_not_contain_is_dropped() {
    let url = provider().await;
    let llm = classifier(&url);
    let posts = [
        "Нужен лендинг, пишите в телеграм t.me/Ivan_Dev",
        "invent: нужен лендинг, пишите в личку",
        "invent: нужен лендинг, пишите @ivan_dev",
    ]
    .map(|text| ClassifyInput {
        id: text.chars().take(6).collect(),
        text: text.to_owned(),
        channel: "@c".into(),
    });
    let out = llm.classify_many(&posts).await;
    let contacts: Vec<Option<String>> = out
        .into_iter()
        .map(|r| {
            let c = r.unwrap();
            assert!(c.verdict.is_job);
            let extraction = c.extraction.expect("the title is kept");
            assert_eq!(extraction.title.as_deref(), Some("Landing page"));
            extraction.contact
        })
        .collect();
    // The first post names @ivan_dev as a link; the other two never name the @scam_wallet
    // the model invented, which is dropped; the third names @ivan_dev, which the rules find.
    assert_eq!(
        contacts,
        [
            Some("@ivan_dev".to_owned()),
            None,
            Some("@ivan_dev".to_owned())
        ]
    );
}
