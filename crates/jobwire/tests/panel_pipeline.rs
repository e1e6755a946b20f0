//! One test through the whole pipeline, as an admin and a subscriber see it: jobwire runs
//! as on one machine (SQLite, the in-memory queue, every role in this process), its admin
//! panel served over real HTTP on a loopback port, the parser reading Telegram through a
//! scripted account (no local server can stand in for MTProto), the LLM and the Bot API
//! being the test kit's fakes. An admin logs in and adds a channel in the panel; the running
//! parser joins it within seconds, and the channel's next job reaches a subscriber once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use jobwire::pipeline::{Parts, Pipeline, Role};
use jobwire::server::{Health, serve_with_admin};
use jobwire::telegram::{MtprotoSection, MtprotoSettings, NS_CURSOR};
use jobwire::testbed::{
    Bed, ScriptedReader, fake_llm_answering, fake_telegram, subscriber, temp_db,
};
use jobwire_mtproto::{Account, ChannelRef, RawMessage, ScriptedAccount};
use jobwire_testkit::llm::OracleEntry;
use jobwire_testkit::wait::eventually;
use reqwest012 as reqwest;
use tokio_util::sync::CancellationToken;

use common::{init, joined_at, loopback, raw_message};

/// How long a test waits for something to happen in the background.
const SOON: Duration = Duration::from_secs(20);
/// What "within seconds" means to an admin and a subscriber.
const WITHIN: Duration = Duration::from_secs(5);
const USERNAME: &str = "ops";
const PASSWORD: &str = "correct horse battery";
/// The subscriber's chat.
const CHAT: i64 = 4242;
/// The channel's Telegram id in the scripted account.
const GOJOBS_PEER: i64 = 200;
const JOB: &str =
    "Looking for a Go developer to build a payment service backend, budget $2500, remote, 3 weeks";

/// A message posted in channel `peer` just now.
fn message(peer: i64, id: i64, text: &str) -> RawMessage {
    raw_message(peer, id, text, Utc::now())
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The admin panel as a browser on the admin's machine talks to it.
struct Browser {
    client: reqwest::Client,
    base: String,
    /// `jw_session=…`, once logged in.
    cookie: String,
}

impl Browser {
    fn new(addr: SocketAddr) -> Self {
        Self {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: format!("http://{addr}"),
            cookie: String::new(),
        }
    }

    async fn log_in(&mut self, username: &str, password: &str) {
        let r = self
            .client
            .post(format!("{}/login", self.base))
            .header("Origin", &self.base)
            .form(&[
                ("username", username),
                ("password", password),
                ("next", "/sources"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 303, "logged in");
        assert_eq!(r.headers()["location"], "/sources");
        let set = r.headers()["set-cookie"].to_str().unwrap();
        assert!(set.starts_with("jw_session="), "{set}");
        self.cookie = set.split(';').next().unwrap().to_owned();
    }

    async fn get(&self, path: &str) -> String {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header("Cookie", &self.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "GET {path}");
        r.text().await.unwrap()
    }

    /// Fills in and sends the form of page `page` that posts to `action`, with the page's
    /// CSRF token, as the browser does when the admin presses its button.
    async fn submit(&self, page: &str, action: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let html = self.get(page).await;
        let csrf = html
            .split(&format!("action=\"{action}\""))
            .nth(1)
            .and_then(|form| form.split("name=\"csrf\" value=\"").nth(1))
            .and_then(|s| s.split('"').next())
            .unwrap_or_else(|| panic!("no form to {action} with a csrf field on {page}"))
            .to_owned();
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.client
            .post(format!("{}{action}", self.base))
            .header("Origin", &self.base)
            .header("Cookie", &self.cookie)
            .form(&form)
            .send()
            .await
            .unwrap()
    }
}

/// The cells of the sources list's row for `handle`, as text: source, kind, status, joined,
/// last post, posts a day, job share, last error.
fn source_row(page: &str, handle: &str) -> Vec<String> {
    let table = page
        .split("<table id=\"sources\">")
        .nth(1)
        .expect("the sources table");
    let row = table
        .split("<tr>")
        .find(|r| r.contains(&format!(">{handle}</a>")))
        .unwrap_or_else(|| panic!("{handle} is not listed:\n{table}"));
    row.split("<td")
        .skip(1)
        .map(|cell| {
            let inner = cell.split_once('>').map_or("", |(_, rest)| rest);
            let inner = inner.split("</td>").next().unwrap_or_default();
            let mut text = String::new();
            let mut in_tag = false;
            for c in inner.chars() {
                match c {
                    '<' => {
                        in_tag = true;
                        text.push(' ');
                    }
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            collapse(&text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_added_in_the_panel_is_joined_within_seconds_and_its_next_job_is_delivered() {
    init();
    let fake_tg = fake_telegram(None).await.expect("fake Telegram starts");
    let llm = fake_llm_answering(vec![OracleEntry::job(JOB, &["web"])])
        .await
        .expect("fake LLM starts");

    // One machine: SQLite, the in-memory queue, every role in one process. The configuration
    // names one channel; the one the admin adds later is not in it.
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        bots: vec!["dev".into()],
        routes: vec![("web".into(), "dev".into())],
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        ..Bed::default()
    };
    let mut settings = bed.settings(fake_tg.url(), &db).unwrap();
    settings.mtproto = Some(
        toml::from_str::<MtprotoSection>(
            "channels = [\"@rustjobs\"]\njoin_interval_secs = 0\njoin_jitter_secs = 0\n",
        )
        .expect("section parses")
        .settings()
        .expect("section resolves"),
    );
    let account = Arc::new(ScriptedAccount::new("a1"));
    account.add_channel(&ChannelRef::parse("@rustjobs").unwrap(), 100);
    account.add_channel(&ChannelRef::parse("@gojobs").unwrap(), GOJOBS_PEER);

    let health = Health::new();
    let store = jobwire::pipeline::open_store(&settings).await.unwrap();
    let parts = Parts {
        settings: settings.clone(),
        store: store.clone(),
        queue: jobwire::pipeline::open_queue(&settings).await.unwrap(),
        redis: None,
        admin_alert: None,
        health: Some(health.clone()),
        clock: Arc::new(jobwire_core::clock::SystemClock),
    };
    let classifiers = jobwire::pipeline::classifiers(&settings).unwrap();
    let others: Vec<Role> = Role::ALL
        .into_iter()
        .filter(|r| *r != Role::Parser)
        .collect();
    let (mut running, _) = Pipeline::start_roles(parts, &others, Some(classifiers))
        .await
        .unwrap();
    assert!(
        running.classifier.starts_with("llm"),
        "{}",
        running.classifier
    );
    let section: MtprotoSettings = settings.mtproto.clone().expect("an [mtproto] section");
    let accounts: Vec<Arc<dyn Account>> = vec![account.clone()];
    let parser = ScriptedReader::start(&settings, &section, accounts, &store, &running.intake);

    // The admin role's panel, served over HTTP as `jobwire run` serves it.
    let admin = jobwire_admin::AdminSettings::new(
        None,
        settings.categories.iter().map(|c| c.slug.to_string()),
    )
    .build(store.clone());
    let http_shutdown = CancellationToken::new();
    let addr = serve_with_admin(loopback(), health, http_shutdown.clone(), admin)
        .await
        .unwrap();
    jobwire::admin_accounts::apply(
        store.as_ref(),
        jobwire::admin_accounts::Change::Create(jobwire_store::AdminRole::Admin),
        USERNAME,
        PASSWORD,
    )
    .await
    .unwrap();

    // A subscriber of the web category.
    jobwire::subscribers::store_all(
        store.as_ref(),
        &[subscriber(
            CHAT,
            vec![jobwire_core::CategorySlug::parse("web").unwrap()],
        )],
    )
    .await
    .unwrap();

    let rustjobs = store.source_by_handle("@rustjobs").await.unwrap().unwrap();
    joined_at(&store, rustjobs.id).await;
    assert!(
        store.source_by_handle("@gojobs").await.unwrap().is_none(),
        "the channel is not in the configuration"
    );

    // The admin logs in and adds the channel on the Sources page.
    let mut browser = Browser::new(addr);
    browser.log_in(USERNAME, PASSWORD).await;
    let added = Instant::now();
    let r = browser
        .submit(
            "/sources",
            "/sources",
            &[("address", "https://t.me/GoJobs"), ("title", "Go jobs")],
        )
        .await;
    assert_eq!(r.status().as_u16(), 303, "{}", r.text().await.unwrap());
    let gojobs = store
        .source_by_handle("@gojobs")
        .await
        .unwrap()
        .expect("the panel stored the source");
    assert_eq!(
        r.headers()["location"].to_str().unwrap(),
        format!("/sources/{}", gojobs.id.get()),
        "the panel shows the new source's page"
    );
    assert!(gojobs.enabled);

    // The running parser joins it within seconds, and the panel's list says so.
    let joined = joined_at(&store, gojobs.id).await;
    let took = added.elapsed();
    assert!(took < WITHIN, "joined {took:?} after it was added");
    println!("added in the panel → joined by the parser: {took:?}");
    let row = source_row(&browser.get("/sources").await, "@gojobs");
    assert_eq!(
        row[0], "@gojobs Go jobs",
        "the handle and the title: {row:?}"
    );
    assert_eq!(row[1], "telegram", "{row:?}");
    assert_eq!(row[2], "Enabled", "{row:?}");
    assert_eq!(
        row[3],
        joined.format("%Y-%m-%d %H:%M").to_string(),
        "joined: {row:?}"
    );
    assert_eq!(row[7], "", "no error: {row:?}");

    // The reader starts the channel from its newest message once it has its cursor: a post
    // from then on is new, not history.
    eventually("the channel's cursor", SOON, || async {
        store.state_get(NS_CURSOR, "@gojobs").await.unwrap()
    })
    .await;

    // A job is posted in the channel: the subscriber gets it within seconds, once.
    let posted = Instant::now();
    account.post(message(GOJOBS_PEER, 1, JOB), true);
    let dev = bed.bot_id("dev").unwrap();
    let got = eventually("the job at the subscriber", SOON, || async {
        fake_tg.chat_messages(dev, CHAT).into_iter().next()
    })
    .await;
    let took = posted.elapsed();
    assert!(took < WITHIN, "delivered {took:?} after it was posted");
    println!("posted in the new channel → delivered: {took:?}");
    assert!(
        collapse(&got.visible_text).contains(JOB),
        "the message shows the job: {:?}",
        got.visible_text
    );
    running.wait_settled(SOON).await.unwrap();
    let to_subscriber: Vec<_> = fake_tg
        .messages()
        .into_iter()
        .filter(|m| m.chat_id == CHAT)
        .collect();
    assert_eq!(to_subscriber.len(), 1, "sent once: {to_subscriber:?}");

    // The panel's list shows the channel's post and that it was a job.
    let row = source_row(&browser.get("/sources").await, "@gojobs");
    assert!(!row[4].is_empty(), "last post: {row:?}");
    assert_eq!(row[6], "100%", "job share: {row:?}");

    parser.stop().await.expect("the reader stops cleanly");
    running.shutdown().await.unwrap();
    http_shutdown.cancel();
}
