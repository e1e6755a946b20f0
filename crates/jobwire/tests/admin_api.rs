//! The admin API over real HTTP: a SQLite store on a temp file, the admin server on
//! 127.0.0.1:0, requests with reqwest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use chrono::Utc;
use jobwire::admin_api::AdminApi;
use jobwire::server::{Health, serve_with_admin};
use jobwire_store::{
    ExampleId, ExampleRow, ExampleSource, NewPost, NewReport, PostId, PostStatus, ReportId,
    ReportKind, ReportStatus, SqliteStore, Store,
};
use reqwest012 as reqwest;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "s3cret-admin-token";

struct Server {
    base: String,
    store: Arc<dyn Store>,
    client: reqwest::Client,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start(token: Option<&str>) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open_path(&dir.path().join("jobwire.db"))
            .await
            .unwrap(),
    );
    let api = AdminApi::new(
        token.map(str::to_owned),
        ["web".to_owned(), "design".to_owned()],
    );
    api.attach_store(store.clone());
    let shutdown = CancellationToken::new();
    let addr = serve_with_admin(
        "127.0.0.1:0".parse().unwrap(),
        Health::new(),
        shutdown.clone(),
        api,
    )
    .await
    .unwrap();
    Server {
        base: format!("http://{addr}"),
        store,
        client: reqwest::Client::new(),
        shutdown,
        _dir: dir,
    }
}

impl Server {
    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn post(&self, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn add_post(&self, text: &str) -> PostId {
        let now = Utc::now();
        let channel = self.store.ensure_channel("freelance", now).await.unwrap();
        let outcome = self
            .store
            .insert_post(&NewPost {
                channel_id: channel.id,
                external_id: format!("{text:.20}-{}", now.timestamp_nanos_opt().unwrap()),
                text: text.to_owned(),
                author: None,
                url: None,
                posted_at: now,
                received_at: now,
                status: PostStatus::NotJob,
                filter_reason: None,
                fingerprint: None,
                duplicate_of: None,
            })
            .await
            .unwrap();
        match outcome {
            jobwire_store::InsertOutcome::Inserted(id) => id,
            other => panic!("post not inserted: {other:?}"),
        }
    }

    async fn add_report(&self, post_id: Option<PostId>, text: &str) -> ReportId {
        self.store
            .insert_report(
                &NewReport {
                    chat_id: 777,
                    post_id,
                    kind: ReportKind::Missed,
                    text: text.to_owned(),
                    link: None,
                },
                Utc::now(),
            )
            .await
            .unwrap()
    }

    async fn examples(&self) -> Vec<ExampleRow> {
        self.store.examples(ExampleId(0), 100).await.unwrap()
    }

    /// Accepts report `id` as a design job (the answer must be 200); the stored examples.
    async fn accept_as_design_job(&self, id: ReportId) -> Vec<ExampleRow> {
        let label = json!({"is_job": true, "kind": "job", "categories": ["design"]});
        let (code, body) = self
            .post(&format!("/api/reports/{id}/accept"), Some(label))
            .await;
        assert_eq!(code, 200, "{body}");
        self.examples().await
    }
}

fn job_label() -> Value {
    json!({"is_job": true, "kind": "job", "categories": ["web"]})
}

#[tokio::test]
async fn requests_without_the_right_token_are_refused() {
    let s = start(Some(TOKEN)).await;
    s.add_report(None, "Нужен разработчик на React, оплата 50к")
        .await;

    let r = s
        .client
        .get(format!("{}/api/reports", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("Bearer"), "{body}");

    let r = s
        .client
        .post(format!("{}/api/retrain", s.base))
        .bearer_auth("wrong-token")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);

    let (code, body) = s.get("/api/reports").await;
    assert_eq!(code, 200);
    assert_eq!(body["reports"].as_array().unwrap().len(), 1);
    assert_eq!(body["reports"][0]["status"], "pending");
    assert_eq!(body["reports"][0]["kind"], "missed");

    // Health stays open.
    let r = s
        .client
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

#[tokio::test]
async fn without_a_configured_token_the_api_is_disabled() {
    let s = start(None).await;
    let r = s
        .client
        .get(format!("{}/api/reports", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["error"], "admin API disabled: set JOBWIRE_ADMIN_TOKEN",
        "{body}"
    );
}

#[tokio::test]
async fn accepting_a_report_stores_its_label_once() {
    let s = start(Some(TOKEN)).await;
    let text = "Ищем верстальщика лендинга, бюджет 30 000 ₽";
    let id = s.add_report(None, text).await;

    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(job_label()))
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["report"]["status"], "accepted");
    assert!(body["report"]["decided_at"].is_string());

    let examples = s.examples().await;
    assert_eq!(examples.len(), 1);
    let ex = &examples[0];
    assert_eq!(ex.source, ExampleSource::Report);
    assert_eq!(ex.text, text);
    assert!(ex.is_job);
    assert_eq!(ex.kind, jobwire_core::PostKind::Job);
    assert_eq!(ex.categories, ["web"]);
    assert_eq!(body["report"]["example_id"], ex.id.get());

    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(job_label()))
        .await;
    assert_eq!(code, 409, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("accepted"),
        "{body}"
    );
    let (code, _) = s.post(&format!("/api/reports/{id}/reject"), None).await;
    assert_eq!(code, 409);
    assert_eq!(s.examples().await.len(), 1);

    let (code, body) = s.get("/api/reports?status=accepted&limit=10").await;
    assert_eq!(code, 200);
    assert_eq!(body["reports"][0]["id"], id.get());
    let (_, body) = s.get("/api/reports?status=pending").await;
    assert!(body["reports"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_report_of_a_delivered_post_learns_from_the_post_not_the_card() {
    let s = start(Some(TOKEN)).await;
    let post_text = "Looking for a logo designer, $200 fixed";
    let post_id = s.add_post(post_text).await;
    // A `/wrong` reply quotes the delivered card: header, facts, the user's comment.
    let card = format!("🎨 Design · @channel\n💰 $200\n\n{post_text}\n\n// not design");
    let id = s.add_report(Some(post_id), &card).await;

    let examples = s.accept_as_design_job(id).await;
    assert_eq!(examples.len(), 1);
    assert_eq!(examples[0].text, post_text);
}

#[tokio::test]
async fn a_report_without_text_learns_from_its_post() {
    let s = start(Some(TOKEN)).await;
    let post_text = "Looking for a logo designer, $200 fixed";
    let post_id = s.add_post(post_text).await;
    let id = s.add_report(Some(post_id), "").await;

    let examples = s.accept_as_design_job(id).await;
    assert_eq!(examples.len(), 1);
    assert_eq!(examples[0].text, post_text);
    assert_eq!(examples[0].post_id, Some(post_id));
    assert_eq!(examples[0].source, ExampleSource::Report);
}

#[tokio::test]
async fn rejecting_a_report_stores_no_example() {
    let s = start(Some(TOKEN)).await;
    let id = s.add_report(None, "это не вакансия").await;
    let (code, body) = s.post(&format!("/api/reports/{id}/reject"), None).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["report"]["status"], "rejected");
    let report = s.store.report(id).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Rejected);
    assert!(s.examples().await.is_empty());

    let (code, body) = s.post("/api/reports/999999/reject", None).await;
    assert_eq!(code, 404, "{body}");
    let (code, _) = s
        .post("/api/reports/999999/accept", Some(job_label()))
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn bad_labels_are_refused_naming_the_bad_value() {
    let s = start(Some(TOKEN)).await;
    let id = s.add_report(None, "Нужен SMM-менеджер").await;

    let bad_category = json!({"is_job": true, "kind": "job", "categories": ["web", "smm-magic"]});
    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(bad_category))
        .await;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("smm-magic"),
        "{body}"
    );

    let bad_kind = json!({"is_job": false, "kind": "spam", "categories": []});
    let (code, body) = s
        .post(&format!("/api/reports/{id}/accept"), Some(bad_kind))
        .await;
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("spam"), "{body}");

    let r = s
        .client
        .post(format!("{}/api/reports/{id}/accept", s.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body("{\"is_job\": tru")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("JSON"), "{body}");

    // Nothing was decided.
    let report = s.store.report(id).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Pending);
    assert!(s.examples().await.is_empty());
}

#[tokio::test]
async fn relabeling_a_post_stores_a_relabel_example() {
    let s = start(Some(TOKEN)).await;
    let text = "Продам курс по фрилансу со скидкой";
    let post_id = s.add_post(text).await;

    let label = json!({"is_job": false, "kind": "ad", "categories": []});
    let (code, body) = s
        .post(&format!("/api/posts/{post_id}/label"), Some(label))
        .await;
    assert_eq!(code, 200, "{body}");
    let examples = s.examples().await;
    assert_eq!(examples.len(), 1);
    let ex = &examples[0];
    assert_eq!(ex.source, ExampleSource::Relabel);
    assert_eq!(ex.post_id, Some(post_id));
    assert_eq!(ex.text, text);
    assert!(!ex.is_job);
    assert_eq!(ex.kind, jobwire_core::PostKind::Ad);
    assert_eq!(body["example_id"], ex.id.get());

    let (code, body) = s.post("/api/posts/424242/label", Some(job_label())).await;
    assert_eq!(code, 404, "{body}");
}

#[tokio::test]
async fn retrain_is_requested_from_the_classifiers() {
    let s = start(Some(TOKEN)).await;
    let (code, body) = s.post("/api/retrain", None).await;
    assert_eq!(code, 202, "{body}");
    let requested = s
        .store
        .state_get(
            jobwire_classify::retrain::RETRAIN_REQUEST_NAMESPACE,
            jobwire_classify::retrain::RETRAIN_REQUEST_KEY,
        )
        .await
        .unwrap();
    assert!(requested.is_some());
}
