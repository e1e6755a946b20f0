//! What the HTTP tests of the panel share: a panel over a SQLite store on a temp file with
//! one admin account, driven in-process through its router as a browser on this site would.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use chrono::Utc;
use jobwire_admin::{AdminSettings, AdminState, Panel};
use jobwire_store::{
    ChannelId, InsertOutcome, NewPost, PostId, PostStatus, SqliteStore, Store, SubscriberSpec,
};
use tower::ServiceExt;

/// The password of the admin account `ops`.
pub const PASSWORD: &str = "correct horse battery";

pub struct Bed {
    pub app: Router,
    pub api: Arc<AdminState>,
    pub panel: Arc<Panel>,
    pub store: Arc<dyn Store>,
    _dir: tempfile::TempDir,
}

/// An answer as the browser gets it.
pub struct Answer {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: String,
}

/// A logged-in browser: its session cookie and the CSRF token its pages carry.
#[derive(Debug, Clone)]
pub struct Login {
    pub cookie: String,
    pub csrf: String,
}

/// A SQLite store in `dir` with the admin account `ops` ([`PASSWORD`]).
pub async fn store_with_admin(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open_path(&dir.path().join("jobwire.db"))
            .await
            .unwrap(),
    );
    jobwire_admin::accounts::apply(
        store.as_ref(),
        jobwire_admin::accounts::Change::Create(jobwire_store::AdminRole::Admin),
        "ops",
        PASSWORD,
    )
    .await
    .unwrap();
    store
}

/// The panel with the categories `web` and `design`, the API's bearer token `token`, and
/// whatever `configure` adds to the settings before the state is built.
pub async fn open(
    token: Option<&str>,
    configure: impl FnOnce(AdminSettings) -> AdminSettings,
) -> Bed {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_admin(&dir).await;
    let settings = AdminSettings::new(
        token.map(str::to_owned),
        ["web".to_owned(), "design".to_owned()],
    );
    let api = configure(settings).build(store.clone());
    let panel = Panel::new(api.clone());
    Bed {
        app: jobwire_admin::router_with_panel(panel.clone()),
        api,
        panel,
        store,
        _dir: dir,
    }
}

impl Bed {
    pub async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), 10 << 20)
            .await
            .unwrap();
        Answer {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, path: &str, session: Option<&Login>) -> Answer {
        let mut r = Request::get(path).header(header::HOST, "panel.test");
        if let Some(s) = session {
            r = r.header(header::COOKIE, &s.cookie);
        }
        self.send(r.body(Body::empty()).unwrap()).await
    }

    /// A form post as a browser on this site sends it.
    pub async fn post(&self, path: &str, session: &Login, form: &[(&str, &str)]) -> Answer {
        let mut pairs = url::form_urlencoded::Serializer::new(String::new());
        pairs.append_pair("csrf", &session.csrf);
        for (k, v) in form {
            pairs.append_pair(k, v);
        }
        self.send(
            Request::post(path)
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::COOKIE, &session.cookie)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(pairs.finish()))
                .unwrap(),
        )
        .await
    }

    pub async fn try_login(&self, username: &str, password: &str) -> Answer {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("username", username)
            .append_pair("password", password)
            .append_pair("next", "/sources")
            .finish();
        self.send(
            Request::post("/login")
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(form))
                .unwrap(),
        )
        .await
    }

    /// Logs `ops` in; the session and the CSRF token of its pages.
    pub async fn login(&self) -> Login {
        self.login_as("ops").await
    }

    /// Makes the account `username` with `role` (password [`PASSWORD`]).
    pub async fn add_account(&self, username: &str, role: jobwire_store::AdminRole) {
        jobwire_admin::accounts::apply(
            self.store.as_ref(),
            jobwire_admin::accounts::Change::Create(role),
            username,
            PASSWORD,
        )
        .await
        .unwrap();
    }

    /// Logs `username` in (password [`PASSWORD`]); the session and its CSRF token.
    pub async fn login_as(&self, username: &str) -> Login {
        let a = self.try_login(username, PASSWORD).await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
        let set = a.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
        let cookie = set.split(';').next().unwrap().to_owned();
        let page = self
            .get(
                "/sources",
                Some(&Login {
                    cookie: cookie.clone(),
                    csrf: String::new(),
                }),
            )
            .await;
        let csrf = page
            .body
            .split("name=\"csrf\" value=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a csrf field")
            .to_owned();
        Login { cookie, csrf }
    }
}

/// A login form post from `client` (its address as the server sees it), with `next`.
pub fn login_request(
    client: &str,
    username: &str,
    password: &str,
    next: Option<&str>,
) -> Request<Body> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("username", username)
        .append_pair("password", password);
    if let Some(next) = next {
        form.append_pair("next", next);
    }
    let mut r = Request::post("/login")
        .header(header::HOST, "panel.test")
        .header(header::ORIGIN, "http://panel.test")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(form.finish()))
        .unwrap();
    let addr: SocketAddr = format!("{client}:40000").parse().unwrap();
    r.extensions_mut().insert(ConnectInfo(addr));
    r
}

pub async fn login_from(bed: &Bed, client: &str, username: &str, password: &str) -> Answer {
    bed.send(login_request(client, username, password, None))
        .await
}

pub fn retry_after(a: &Answer) -> u64 {
    a.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// A placement of `chat` paid for and waiting for approval: categories `web`, 100 Stars,
/// `charge` its Telegram charge id.
pub async fn paid_placement(
    store: &dyn Store,
    chat: i64,
    title: &str,
    budget: Option<&str>,
    charge: &str,
) -> jobwire_store::PlacementId {
    let now = chrono::Utc::now();
    let draft = jobwire_store::PlacementDraft {
        lang: "en".into(),
        title: Some(title.into()),
        body: Some("A landing page on Tilda, the design is ready, one week.".into()),
        budget: budget.map(Into::into),
        contact: Some("@coffee_hr".into()),
        categories: vec![jobwire_core::CategorySlug::parse("web").unwrap()],
    };
    let p = store.save_placement_draft(chat, &draft, now).await.unwrap();
    let nonce = format!("nonce-{charge}");
    store
        .invoice_placement(p.id, chat, 100, &nonce, now)
        .await
        .unwrap()
        .unwrap();
    let entry = jobwire_store::NewLedgerEntry {
        nonce: Some(nonce),
        ..stars_payment(chat, charge, "placement", 100)
    };
    store
        .apply_placement_payment(&entry, Some(p.id), Some(true), now)
        .await
        .unwrap();
    p.id
}

/// Stores a queued post of `text` (and `url`) in a channel under `external_id`; its id,
/// whether stored now or before.
pub async fn queued_post(
    store: &dyn Store,
    channel_id: ChannelId,
    external_id: String,
    text: &str,
    url: Option<&str>,
) -> PostId {
    match store
        .insert_post(&NewPost {
            channel_id,
            external_id,
            text: text.into(),
            author: None,
            url: url.map(str::to_owned),
            posted_at: Utc::now(),
            received_at: Utc::now(),
            status: PostStatus::Queued,
            filter_reason: None,
            fingerprint: None,
            duplicate_of: None,
        })
        .await
        .unwrap()
    {
        InsertOutcome::Inserted(id) | InsertOutcome::AlreadyKnown(id) => id,
    }
}

/// A Stars payment of `amount` for `plan`, as a bot update reports it.
pub fn stars_payment(
    chat: i64,
    charge: &str,
    plan: &str,
    amount: i64,
) -> jobwire_store::NewLedgerEntry {
    jobwire_store::NewLedgerEntry {
        kind: jobwire_store::LedgerKind::Payment,
        charge_id: charge.to_owned(),
        provider_charge_id: None,
        chat_id: chat,
        plan_id: Some(plan.into()),
        nonce: None,
        amount,
        currency: "XTR".into(),
        is_recurring: false,
        is_first_recurring: false,
        subscription_expires_at: None,
        source: jobwire_store::LedgerSource::Update,
        raw: "{}".into(),
    }
}

/// A subscriber of one category, as the bot saves it.
pub fn subscriber_spec(chat_id: i64, name: Option<&str>, category: &str) -> SubscriberSpec {
    SubscriberSpec {
        chat_id,
        name: name.map(str::to_owned),
        categories: vec![jobwire_core::CategorySlug::parse(category).unwrap()],
        include: vec![],
        exclude: vec![],
        paused: false,
        quiet_hours: None,
        min_budget: None,
    }
}

/// A job verdict of one category, as a classifier that cost nothing records it.
pub fn job_verdict(category: &str) -> jobwire_store::ClassificationRecord {
    jobwire_store::ClassificationRecord {
        is_job: true,
        kind: jobwire_core::PostKind::Job,
        categories: vec![jobwire_core::CategorySlug::parse(category).unwrap()],
        confidence: 0.9,
        model: "test".into(),
        prompt_version: None,
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 0,
        extraction: None,
        cost_usd: 0.0,
    }
}

/// Broadcasts to the categories `web` and `design` (bot `dev`), the main bot `main`.
pub fn with_broadcasts(settings: AdminSettings) -> AdminSettings {
    let route = |slug: &str| jobwire_fanout::CategoryRoute {
        slug: jobwire_core::CategorySlug::parse(slug).unwrap(),
        name: slug.to_owned(),
        bot: "dev".to_owned(),
    };
    settings.broadcasts(jobwire_admin::broadcasts::BroadcastSetup {
        routes: vec![route("web"), route("design")],
        plans: vec![],
        main_bot: Some("main".to_owned()),
    })
}

/// [`stars_payment`] applied: `days` of every category, not renewing. Returns the entry.
pub async fn pay_stars(
    store: &dyn Store,
    (chat, charge): (i64, &str),
    plan: &str,
    amount: i64,
    days: u32,
) -> jobwire_store::NewLedgerEntry {
    let paid = stars_payment(chat, charge, plan, amount);
    let grant = jobwire_store::Grant {
        plan_id: plan.into(),
        categories: vec![],
        days,
        renews: false,
        ends_at: None,
    };
    store
        .apply_payment(&paid, &grant, chrono::Utc::now())
        .await
        .unwrap();
    paid
}
