//! The web panel over HTTP (the router driven in-process, a SQLite store on a temp file):
//! auth of every route, login and its limits, sessions, CSRF, escaping, validation, and
//! what each page's forms change.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use chrono::Utc;
use common::{Bed, PASSWORD};
use jobwire_core::CategorySlug;
use jobwire_store::{
    CategoryFields, ClassificationRecord, ExampleId, NewReport, PostId, ReportKind, ReportStatus,
    TelegramWait, WaitKind,
};

async fn bed() -> Bed {
    bed_with(None).await
}

async fn bed_with(token: Option<&str>) -> Bed {
    common::open(token, |s| s).await
}

/// A panel that knows the bots `bots` (the Categories page offers them).
async fn bed_with_bots(bots: &[&str]) -> Bed {
    let bots: Vec<String> = bots.iter().map(|b| (*b).to_owned()).collect();
    common::open(None, |s| {
        s.category_setup(jobwire_admin::CategorySetup {
            order: vec!["web".to_owned(), "design".to_owned()],
            bots,
        })
    })
    .await
}

impl Bed {
    /// Seeds the categories `web` (bot `dev`) and `design`.
    async fn app_categories(&self) {
        let field = |name: &str, bot: &str| CategoryFields {
            name: name.to_owned(),
            description: String::new(),
            bot: bot.to_owned(),
            digest: true,
        };
        self.store
            .seed_categories(
                &[
                    (
                        CategorySlug::parse("web").unwrap(),
                        field("Web <b>sites</b>", "dev"),
                    ),
                    (
                        CategorySlug::parse("design").unwrap(),
                        field("Design", "dev"),
                    ),
                ],
                Utc::now(),
            )
            .await
            .unwrap();
    }

    async fn post_in(&self, channel: &str, text: &str) -> PostId {
        let ch = match jobwire_core::channel_ref::ChannelRef::parse(channel) {
            Ok(r) => {
                let mut spec = jobwire_core::source::SourceSpec::telegram(&r);
                spec.title = Some(format!("{channel} <b>title</b>"));
                match self.store.source_by_handle(&spec.handle).await.unwrap() {
                    Some(row) => row,
                    None => self.store.add_source(&spec, Utc::now()).await.unwrap(),
                }
            }
            // Not a Telegram name: a channel only an import names.
            Err(_) => self
                .store
                .ensure_channel(channel, Utc::now())
                .await
                .unwrap(),
        };
        let n = Utc::now().timestamp_nanos_opt().unwrap_or(0).to_string();
        common::queued_post(self.store.as_ref(), ch.id, n, text, None).await
    }
}

fn concrete(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            if seg.starts_with("{*") {
                "x".to_owned()
            } else if seg == "{action}" {
                "pause".to_owned()
            } else if seg.starts_with('{') {
                "1".to_owned()
            } else {
                seg.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_route_but_the_public_ones_needs_a_login() {
    let bed = bed_with(Some("s3cret-admin-token-0123456789abcdef")).await;
    let mut checked = 0;
    for r in jobwire_admin::panel::ROUTES {
        let path = concrete(r.path);
        let method = Method::from_bytes(r.method.to_uppercase().as_bytes()).unwrap();
        let a = bed
            .send(
                Request::builder()
                    .method(method.clone())
                    .uri(&path)
                    .header(header::HOST, "panel.test")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await;
        match r.access {
            jobwire_admin::panel::Access::Public => {
                // Served, not sent to the login: the login page itself, a failed login
                // (an empty form), a static file (none named `x`: 404).
                let to_login = a
                    .headers
                    .get(header::LOCATION)
                    .is_some_and(|l| l.to_str().unwrap().starts_with("/login?next"));
                assert!(
                    !to_login && !a.body.contains("log in first"),
                    "{method} {path} is public"
                );
                assert!(
                    [
                        StatusCode::OK,
                        StatusCode::UNAUTHORIZED,
                        StatusCode::NOT_FOUND
                    ]
                    .contains(&a.status),
                    "{method} {path}: {}",
                    a.status
                );
                if r.path == "/login" {
                    assert!(
                        a.body.contains("name=\"password\""),
                        "{method} {path} shows the form"
                    );
                }
            }
            jobwire_admin::panel::Access::Session(_) if method == Method::GET => {
                assert_eq!(a.status, StatusCode::SEE_OTHER, "{method} {path}");
                let to = a.headers[header::LOCATION].to_str().unwrap();
                assert!(to.starts_with("/login?next="), "{method} {path} -> {to}");
                checked += 1;
            }
            jobwire_admin::panel::Access::Session(_) => {
                assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{method} {path}");
                checked += 1;
            }
        }
    }
    for (method, path, _) in jobwire_admin::api::ROUTES {
        let path = concrete(path);
        let a = bed
            .send(
                Request::builder()
                    .method(*method)
                    .uri(&path)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await;
        // 401; after five refusals this client is slowed down (429) before any check.
        assert!(
            a.status == StatusCode::UNAUTHORIZED || a.status == StatusCode::TOO_MANY_REQUESTS,
            "{method} {path}: {} {}",
            a.status,
            a.body
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} routes checked");
    // A path nobody routed is closed too (the gate is a layer over the whole panel).
    let a = bed.get("/no-such-page", None).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER);
}

/// Every route states its role: a moderator is refused (403) every admin route of the
/// panel and of the API, with its CSRF token and this site's origin (so the role is why),
/// and nothing changes; it opens its own pages, and its navigation leads only there.
#[tokio::test]
async fn a_moderator_is_refused_every_admin_route() {
    use jobwire_store::AdminRole;
    let bed = bed().await;
    bed.add_account("mod", AdminRole::Moderator).await;
    let m = bed.login_as("mod").await;
    let admin = bed.login().await;
    let request = |method: &Method, path: &str, who: &common::Login| {
        Request::builder()
            .method(method.clone())
            .uri(path)
            .header(header::HOST, "panel.test")
            .header(header::ORIGIN, "http://panel.test")
            .header(header::COOKIE, &who.cookie)
            .header("x-csrf-token", &who.csrf)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(format!("csrf={}", who.csrf)))
            .unwrap()
    };
    let audit_before = bed.store.audit_log(1000, None).await.unwrap().len();
    let (mut refused, mut opened) = (0, 0);
    for r in jobwire_admin::panel::ROUTES {
        let path = concrete(r.path);
        let method = Method::from_bytes(r.method.to_uppercase().as_bytes()).unwrap();
        match r.access {
            jobwire_admin::panel::Access::Session(AdminRole::Admin) => {
                let a = bed.send(request(&method, &path, &m)).await;
                assert_eq!(
                    a.status,
                    StatusCode::FORBIDDEN,
                    "{method} {path}: {}",
                    a.body
                );
                assert!(a.body.contains("moderator"), "{method} {path}: {}", a.body);
                refused += 1;
                if method == Method::GET {
                    let a = bed.get(&path, Some(&admin)).await;
                    assert_ne!(a.status, StatusCode::FORBIDDEN, "an admin opens {path}");
                }
            }
            jobwire_admin::panel::Access::Session(AdminRole::Moderator)
                if method == Method::GET =>
            {
                let a = bed.get(&path, Some(&m)).await;
                assert_ne!(
                    a.status,
                    StatusCode::FORBIDDEN,
                    "{method} {path}: {}",
                    a.body
                );
                opened += 1;
            }
            _ => {}
        }
    }
    for (method, path, role) in jobwire_admin::api::ROUTES {
        let path = concrete(path);
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let a = bed.send(request(&method, &path, &m)).await;
        if *role == AdminRole::Admin {
            assert_eq!(
                a.status,
                StatusCode::FORBIDDEN,
                "{method} {path}: {}",
                a.body
            );
            assert!(a.body.contains("moderator"), "{method} {path}: {}", a.body);
            refused += 1;
        } else {
            assert_ne!(
                a.status,
                StatusCode::FORBIDDEN,
                "{method} {path}: {}",
                a.body
            );
        }
    }
    assert!(
        refused >= 20 && opened >= 5,
        "{refused} refused, {opened} opened"
    );
    let audit_after = bed.store.audit_log(1000, None).await.unwrap();
    assert!(
        audit_after.len() == audit_before
            && audit_after
                .iter()
                .all(|e| e.actor != "mod" || e.action == "login"),
        "a refused request changes nothing: {audit_after:?}"
    );
    // The moderator's navigation shows only its pages; the dashboard hides the revenue.
    let dash = bed.get("/", Some(&m)).await;
    assert_eq!(dash.status, StatusCode::OK);
    for hidden in [
        "href=\"/subscribers\"",
        "href=\"/prompt\"",
        "href=\"/audit\"",
        "Revenue",
    ] {
        assert!(!dash.body.contains(hidden), "{hidden} shown to a moderator");
    }
    for shown in ["href=\"/reports\"", "href=\"/sources\"", "href=\"/posts\""] {
        assert!(dash.body.contains(shown), "{shown} missing for a moderator");
    }
    let dash = bed.get("/", Some(&admin)).await;
    assert!(dash.body.contains("href=\"/subscribers\"") && dash.body.contains("Revenue"));
}

#[tokio::test]
async fn a_login_opens_the_panel_and_logging_out_closes_it() {
    let bed = bed().await;
    let page = bed.get("/login?next=/posts", None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("name=\"username\"") && page.body.contains("name=\"password\""));

    let wrong = bed.try_login("ops", "not the password").await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(wrong.body.contains("Wrong username or password"));
    assert!(
        !wrong.body.contains("not the password"),
        "the password is never echoed"
    );
    assert!(wrong.headers.get(header::SET_COOKIE).is_none());

    let ok = bed.try_login("OPS", PASSWORD).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    assert_eq!(ok.headers[header::LOCATION], "/sources");
    let cookie = ok.headers[header::SET_COOKIE].to_str().unwrap();
    for part in ["jw_session=", "HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert!(cookie.contains("; Secure"), "Secure by default: {cookie}");

    let s = bed.login().await;
    let dash = bed.get("/", Some(&s)).await;
    assert_eq!(dash.status, StatusCode::OK, "{}", dash.body);
    assert!(dash.body.contains("Posts read"));
    assert!(
        dash.headers[header::CACHE_CONTROL]
            .to_str()
            .unwrap()
            .contains("no-store")
    );
    assert_eq!(dash.headers[header::X_FRAME_OPTIONS], "DENY");

    let out = bed.post("/logout", &s, &[]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(
        out.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    // The old cookie is dead on the server, not only in the browser.
    let after = bed.get("/", Some(&s)).await;
    assert_eq!(after.status, StatusCode::SEE_OTHER);

    let audit: Vec<String> = bed
        .store
        .audit_log(10, None)
        .await
        .unwrap()
        .into_iter()
        .map(|e| format!("{} {}", e.actor, e.action))
        .collect();
    assert!(audit.contains(&"ops login.failed".to_owned()), "{audit:?}");
    assert!(audit.contains(&"ops login".to_owned()), "{audit:?}");
    assert!(audit.contains(&"ops logout".to_owned()), "{audit:?}");
}

#[tokio::test]
async fn a_state_change_needs_the_token_and_this_sites_origin() {
    let bed = bed().await;
    let s = bed.login().await;
    let form = "address=%40rust_jobs";
    let send = |origin: Option<&'static str>, body: String| {
        let mut r = Request::post("/sources")
            .header(header::HOST, "panel.test")
            .header(header::COOKIE, &s.cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(o) = origin {
            r = r.header(header::ORIGIN, o);
        }
        r.body(Body::from(body)).unwrap()
    };
    let no_token = bed.send(send(Some("http://panel.test"), form.into())).await;
    assert_eq!(no_token.status, StatusCode::FORBIDDEN);
    let bad_token = bed
        .send(send(
            Some("http://panel.test"),
            format!("{form}&csrf={}", "0".repeat(64)),
        ))
        .await;
    assert_eq!(bad_token.status, StatusCode::FORBIDDEN);
    let elsewhere = bed
        .send(send(
            Some("https://evil.example"),
            format!("{form}&csrf={}", s.csrf),
        ))
        .await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN);
    assert!(
        bed.store.sources().await.unwrap().is_empty(),
        "nothing was added"
    );

    let ok = bed
        .post("/sources", &s, &[("address", "https://t.me/Rust_Jobs")])
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let channels = bed.store.sources().await.unwrap();
    assert_eq!(channels.len(), 1);
    assert_eq!(channels[0].handle, "@rust_jobs");
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(audit[0].actor, "ops");
    assert_eq!(audit[0].action, "source.add");
    assert_eq!(audit[0].detail, "@rust_jobs");
    let page = bed.get("/audit", Some(&s)).await;
    assert!(page.body.contains("source.add"));
}

#[tokio::test]
async fn what_came_from_a_channel_is_shown_as_text() {
    let bed = bed().await;
    let s = bed.login().await;
    let id = bed
        .post_in(
            "@evil_channel",
            "Need a dev <script>alert('x')</script> & <img src=x onerror=alert(1)>",
        )
        .await;
    for path in [
        "/posts".to_owned(),
        format!("/posts/{}", id.get()),
        "/sources".to_owned(),
    ] {
        let page = bed.get(&path, Some(&s)).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(!page.body.contains("<script>alert"), "{path}");
        assert!(!page.body.contains("<img src=x"), "{path}");
        assert!(!page.body.contains("<b>title</b>"), "{path}");
    }
    let trace = bed.get(&format!("/posts/{}", id.get()), Some(&s)).await;
    assert!(
        trace.body.contains(
            "Need a dev &#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62; &#38; &#60;img"
        ),
        "{}",
        trace.body
    );
}

#[tokio::test]
async fn bad_input_gets_a_clear_answer_and_changes_nothing() {
    let bed = bed().await;
    let s = bed.login().await;
    let bad = bed
        .post("/sources", &s, &[("address", "not a channel")])
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.body.contains("expected @username"), "{}", bad.body);
    assert!(
        bad.body.contains("value=\"not a channel\""),
        "what was typed is kept"
    );
    assert!(bed.store.sources().await.unwrap().is_empty());
    let slow = bed
        .post(
            "/sources",
            &s,
            &[
                ("address", "https://example.com/jobs.rss"),
                ("interval_secs", "often"),
            ],
        )
        .await;
    assert_eq!(slow.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        slow.body
            .contains("interval_secs: a whole number of seconds"),
        "{}",
        slow.body
    );
    let feed = bed
        .post(
            "/sources",
            &s,
            &[
                ("address", "https://example.com/jobs.rss"),
                ("interval_secs", "600"),
            ],
        )
        .await;
    assert_eq!(feed.status, StatusCode::SEE_OTHER, "{}", feed.body);
    let again = bed
        .post(
            "/sources",
            &s,
            &[("address", "https://example.com/jobs.rss")],
        )
        .await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(again.body.contains("in the list already"), "{}", again.body);
    let listed = bed.store.sources().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].feed.as_ref().unwrap().interval_secs, 600);

    let id = bed.post_in("@jobs", "Ищем дизайнера лендинга").await;
    let ch = bed
        .store
        .source_by_handle("@jobs")
        .await
        .unwrap()
        .unwrap()
        .id
        .get();
    let bad_rule = bed
        .post(
            &format!("/sources/{ch}"),
            &s,
            &[("include", "дизайн\n#bad tag"), ("exclude", "")],
        )
        .await;
    assert_eq!(bad_rule.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad_rule.body.contains("is not a hashtag"),
        "{}",
        bad_rule.body
    );
    assert!(
        bed.store
            .source(ch.into())
            .await
            .unwrap()
            .unwrap()
            .include
            .is_empty(),
        "nothing saved"
    );

    let bad_date = bed.get("/posts?from=yesterday", Some(&s)).await;
    assert_eq!(bad_date.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad_date.body.contains("2026-12-31"));

    let bad_label = bed
        .post(
            &format!("/posts/{}/label", id.get()),
            &s,
            &[("kind", "job"), ("category", "plumbing")],
        )
        .await;
    assert_eq!(bad_label.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad_label.body.contains("unknown category"),
        "{}",
        bad_label.body
    );
    assert_eq!(
        bed.get("/posts/999999", Some(&s)).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_rule_preview_marks_what_would_pass() {
    let bed = bed().await;
    let s = bed.login().await;
    bed.post_in("@jobs", "Ищем дизайнера лендинга, бюджет 30к")
        .await;
    bed.post_in("@jobs", "Продам курс по Python").await;
    let ch = bed
        .store
        .source_by_handle("@jobs")
        .await
        .unwrap()
        .unwrap()
        .id
        .get();
    let preview = bed
        .send(
            Request::post(format!("/sources/{ch}/preview"))
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::COOKIE, &s.cookie)
                .header("hx-request", "true")
                .header("x-csrf-token", &s.csrf)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(
                    "include=%D0%B4%D0%B8%D0%B7%D0%B0%D0%B9%D0%BD&exclude=",
                ))
                .unwrap(),
        )
        .await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert!(
        preview.body.contains("<strong>1</strong> / 2"),
        "{}",
        preview.body
    );
    assert!(
        preview.body.contains("<mark>дизайн</mark>ера"),
        "{}",
        preview.body
    );
    assert!(
        !preview.body.contains("<html"),
        "htmx gets the fragment alone"
    );

    let saved = bed
        .post(
            &format!("/sources/{ch}"),
            &s,
            &[("include", "дизайн"), ("exclude", "курс")],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER);
    let row = bed.store.source(ch.into()).await.unwrap().unwrap();
    assert_eq!(row.include, ["дизайн"]);
    assert_eq!(row.exclude, ["курс"]);
}

#[tokio::test]
async fn an_accepted_report_becomes_a_training_example() {
    let bed = bed().await;
    let s = bed.login().await;
    let post = bed.post_in("@jobs", "Курс по фотошопу со скидкой").await;
    let report = bed
        .store
        .insert_report(
            &NewReport {
                chat_id: 42,
                post_id: Some(post),
                kind: ReportKind::Wrong,
                text: "this is an ad".into(),
                link: None,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let page = bed.get("/reports", Some(&s)).await;
    assert!(page.body.contains("this is an ad"));
    let a = bed
        .post(
            &format!("/reports/{}/accept", report.get()),
            &s,
            &[("kind", "ad")],
        )
        .await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.body);
    let r = bed.store.report(report).await.unwrap().unwrap();
    assert_eq!(r.status, ReportStatus::Accepted);
    let examples = bed.store.examples(ExampleId(0), 100).await.unwrap();
    assert!(
        examples
            .iter()
            .any(|e| e.text.contains("фотошопу") && e.kind.as_str() == "ad")
    );
    let again = bed
        .post(&format!("/reports/{}/dismiss", report.get()), &s, &[])
        .await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bed.get("/reports", Some(&s))
            .await
            .body
            .contains("No reports waiting")
    );
}

#[tokio::test]
async fn the_panel_speaks_russian_when_asked() {
    let bed = bed().await;
    let s = bed.login().await;
    let ru = bed.get("/?lang=ru", Some(&s)).await;
    assert!(ru.body.contains("Прочитано постов"), "{}", ru.body);
    assert!(
        ru.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("jw_lang=ru")
    );
    let login = bed.get("/login?lang=ru", None).await;
    assert!(login.body.contains("Вход в jobwire"));
}

#[tokio::test]
async fn static_files_are_served_without_a_login() {
    let bed = bed().await;
    for (path, kind) in [
        ("/static/htmx.min.js", "javascript"),
        ("/static/panel.css", "text/css"),
        ("/static/uPlot.iife.min.js", "javascript"),
    ] {
        let a = bed.get(path, None).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        assert!(
            a.headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .contains(kind),
            "{path}"
        );
    }
    assert_eq!(
        bed.get("/static/nope.js", None).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_post_goes_back_to_the_classifier_and_a_dead_letter_is_retried_or_discarded() {
    let bed = bed().await;
    let s = bed.login().await;
    let post = bed.post_in("@jobs", "Нужен бэкендер на Rust").await;
    let again = bed
        .post(&format!("/posts/{}/reclassify", post.get()), &s, &[])
        .await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    // Due at once: the scheduler's next look for stuck work takes it.
    let stuck = bed
        .store
        .take_stuck(Utc::now() - chrono::Duration::seconds(1), Utc::now(), 100)
        .await
        .unwrap();
    assert!(stuck.queued.contains(&post), "{stuck:?}");
    let none = bed
        .post(&format!("/posts/{}/redeliver", post.get()), &s, &[])
        .await;
    assert_eq!(none.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(none.body.contains("no failed deliveries"), "{}", none.body);

    for topic in ["jobwire.classify", "jobwire.send"] {
        bed.store
            .add_dead_letter(
                &jobwire_store::NewDeadLetter {
                    topic: topic.into(),
                    payload: format!("{{\"v\":1,\"post_id\":{}}}", post.get()),
                    attempts: 5,
                    reason: "classifier kept failing".into(),
                },
                Utc::now(),
            )
            .await
            .unwrap();
    }
    let letters = bed.store.dead_letters(10).await.unwrap();
    let page = bed.get("/dead-letters", Some(&s)).await;
    assert!(page.body.contains("classifier kept failing"));
    let (newest, oldest) = (letters[0].id.0, letters[1].id.0);
    let retried = bed
        .post(&format!("/dead-letters/{oldest}/retry"), &s, &[])
        .await;
    assert_eq!(retried.status, StatusCode::SEE_OTHER, "{}", retried.body);
    let discarded = bed
        .post(&format!("/dead-letters/{newest}/discard"), &s, &[])
        .await;
    assert_eq!(discarded.status, StatusCode::SEE_OTHER);
    assert!(bed.store.dead_letters(10).await.unwrap().is_empty());
    let audit: Vec<String> = bed
        .store
        .audit_log(10, None)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    for action in [
        "post.reclassify",
        "dead_letter.retry",
        "dead_letter.discard",
    ] {
        assert!(audit.iter().any(|a| a == action), "{action} in {audit:?}");
    }
    let gone = bed
        .post(&format!("/dead-letters/{newest}/retry"), &s, &[])
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

/// A send-topic dead letter of wire version 2 names a run of deliveries (`delivery_id` and
/// `more`): retrying it puts every one of them back for the scheduler, not only the first.
#[tokio::test]
async fn retrying_a_dead_letter_that_names_a_run_of_deliveries_rewinds_each_of_them() {
    let bed = bed().await;
    let s = bed.login().await;
    let post = bed.post_in("@jobs", "Rust backend, $900").await;
    bed.store
        .record_classification(post, &common::job_verdict("web"), Utc::now())
        .await
        .unwrap();
    let mut deliveries = Vec::new();
    for chat in [701, 702, 703] {
        let id = bed
            .store
            .upsert_subscriber(&common::subscriber_spec(chat, None, "web"), Utc::now())
            .await
            .unwrap();
        deliveries.push(jobwire_store::NewDelivery {
            subscriber_id: id,
            chat_id: chat,
            bot: "dev".into(),
            not_before: None,
        });
    }
    let ids = bed
        .store
        .fan_out(post, &["<b>Rust</b>".to_owned()], &deliveries, Utc::now())
        .await
        .unwrap();
    assert_eq!(ids.len(), 3);
    // Fresh pending rows: the scheduler leaves them to the messages that name them.
    let due = |at: chrono::DateTime<Utc>| {
        let store = bed.store.clone();
        async move {
            store
                .take_stuck(at, Utc::now(), 100)
                .await
                .unwrap()
                .deliveries
        }
    };
    let before = Utc::now() - chrono::Duration::seconds(60);
    assert!(due(before).await.is_empty());
    bed.store
        .add_dead_letter(
            &jobwire_store::NewDeadLetter {
                topic: "jobwire.send".into(),
                payload: format!(
                    "{{\"v\":2,\"delivery_id\":{},\"more\":[{},{}]}}",
                    ids[0].get(),
                    ids[1].get(),
                    ids[2].get()
                ),
                attempts: 8,
                reason: "the database was away".into(),
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let letter = bed.store.dead_letters(10).await.unwrap()[0].id.0;
    let retried = bed
        .post(&format!("/dead-letters/{letter}/retry"), &s, &[])
        .await;
    assert_eq!(retried.status, StatusCode::SEE_OTHER, "{}", retried.body);
    let mut again = due(before).await;
    again.sort_unstable();
    assert_eq!(again, ids, "every delivery the message named is due again");
    assert!(bed.store.dead_letters(10).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_admin_extends_and_ends_a_subscription() {
    let bed = bed().await;
    let s = bed.login().await;
    bed.store
        .upsert_subscriber(
            &common::subscriber_spec(555, Some("<i>Ann</i>"), "web"),
            Utc::now(),
        )
        .await
        .unwrap();
    let list = bed.get("/subscribers?q=ann", Some(&s)).await;
    assert!(list.body.contains("/subscribers/555"), "{}", list.body);
    assert!(!list.body.contains("<i>Ann</i>"));

    let bad = bed
        .post("/subscribers/555/extend", &s, &[("days", "forever")])
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        bad.body.contains("a whole number from 1 to 366"),
        "{}",
        bad.body
    );
    assert!(bed.store.access_periods(555).await.unwrap().is_empty());

    let ok = bed
        .post("/subscribers/555/extend", &s, &[("days", "30")])
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let more = bed
        .post("/subscribers/555/extend", &s, &[("days", "5")])
        .await;
    assert_eq!(more.status, StatusCode::SEE_OTHER);
    let periods = bed.store.access_periods(555).await.unwrap();
    assert_eq!(
        periods.len(),
        1,
        "the second extension lengthens the same period"
    );
    let days = (periods[0].ends_at - Utc::now()).num_hours() as f64 / 24.0;
    assert!((34.9..=35.0).contains(&days), "{days}");

    let page = bed.get("/subscribers/555", Some(&s)).await;
    assert!(page.body.contains("current"), "{}", page.body);
    let refund = bed
        .post(
            "/subscribers/555/refund",
            &s,
            &[("charge_id", "no-such-charge")],
        )
        .await;
    assert_eq!(refund.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refund.body.contains("no payment"), "{}", refund.body);

    let end = bed.post("/subscribers/555/end", &s, &[]).await;
    assert_eq!(end.status, StatusCode::SEE_OTHER);
    let periods = bed.store.access_periods(555).await.unwrap();
    assert!(periods[0].revoked_at.is_some());
    let again = bed.post("/subscribers/555/end", &s, &[]).await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        bed.get("/subscribers/1", Some(&s)).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_dashboard_shows_spend_jobs_per_category_and_telegrams_waits() {
    let bed = bed().await;
    let s = bed.login().await;
    for (n, cost) in [(1, 0.5), (2, 0.25)] {
        let post = bed
            .post_in("@jobs", &format!("Нужен дизайнер лендинга {n}"))
            .await;
        bed.store
            .record_classification(
                post,
                &ClassificationRecord {
                    model: "gpt-x".into(),
                    prompt_version: Some("classify.v4".into()),
                    tokens_in: 1000,
                    tokens_out: 234,
                    latency_ms: 1200,
                    cost_usd: cost,
                    ..common::job_verdict("design")
                },
                Utc::now(),
            )
            .await
            .unwrap();
    }
    let wait = |kind, who: &str, seconds| TelegramWait {
        kind,
        who: who.to_owned(),
        seconds,
        at: Utc::now(),
    };
    bed.store
        .record_telegram_waits(&[
            wait(WaitKind::Bot429, "dev", 3),
            wait(WaitKind::Bot429, "dev", 4),
            wait(WaitKind::Bot429, "dev", 5),
            wait(WaitKind::FloodWait, "<i>acc1</i>", 120),
        ])
        .await
        .unwrap();

    for path in ["/", "/dashboard/live", "/dashboard/live?period=7d"] {
        let page = bed.get(path, Some(&s)).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        let body = &page.body;
        for shown in [
            r#"id="stat-spend">$0.75<"#,
            r#"id="stat-tokens">2468<"#,
            r#"id="stat-429">3<"#,
            r#"id="stat-flood">1<"#,
            r#"<td>design</td><td class="num">2</td>"#,
            r#"<td>dev</td><td class="num">3</td><td class="num">12</td>"#,
            r#"<td>&#60;i&#62;acc1&#60;/i&#62;</td><td class="num">1</td><td class="num">120</td>"#,
            "100.0%",
            "1200 ms",
        ] {
            assert!(body.contains(shown), "{path}: {shown} in {body}");
        }
        assert!(!body.contains("<i>acc1"), "{path}: shown as text");
        // Without JS: the charts' numbers by time.
        let by_time = body.split(r#"id="by-time""#).nth(1).expect("the table");
        // The two verdicts are seconds apart but may straddle a bucket's edge: the rows'
        // spend adds up to the total either way.
        let in_one = by_time.contains(r#"<td class="num">$0.75</td>"#);
        let in_two = by_time.contains(r#"<td class="num">$0.50</td>"#)
            && by_time.contains(r#"<td class="num">$0.25</td>"#);
        assert!(in_one || in_two, "{path}: {by_time}");
        assert_eq!(body.matches(r#"class="chart""#).count(), 5, "{path}");
    }
    let ru = bed.get("/?lang=ru", Some(&s)).await;
    for shown in [
        "Расходы на LLM",
        "Ответы 429 Bot API",
        "Флуд-ожидание (аккаунт MTProto)",
    ] {
        assert!(ru.body.contains(shown), "{shown}");
    }
}

#[tokio::test]
async fn an_admin_renames_a_category_moves_it_to_another_bot_and_the_change_is_audited() {
    let bed = bed_with_bots(&["dev", "design-bot"]).await;
    bed.app_categories().await;
    let s = bed.login().await;
    let before = bed.store.categories_version().await.unwrap();

    let page = bed.get("/categories", Some(&s)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(r#"action="/categories/web""#));
    assert!(page.body.contains(r#"action="/categories/design""#));
    // Stored names are shown as text.
    assert!(
        page.body.contains("Web &#60;b&#62;sites&#60;/b&#62;"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<b>sites</b>"));

    // Without the CSRF token nothing changes.
    let forged = bed
        .send(
            Request::post("/categories/web")
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::COOKIE, &s.cookie)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("name=Hacked&bot=dev&description=x"))
                .unwrap(),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    // Bad input: each problem named, nothing stored, what was typed kept.
    for (form, says) in [
        (
            vec![("name", " "), ("bot", "dev")],
            "name: a category needs a name",
        ),
        (vec![("name", "Web"), ("bot", "nobody")], "no bot named"),
        (
            vec![
                ("name", "Web"),
                ("bot", "dev"),
                ("description", "two\nlines"),
            ],
            "description: one line",
        ),
    ] {
        let a = bed.post("/categories/web", &s, &form).await;
        assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{form:?}");
        assert!(a.body.contains(says), "{says} in {}", a.body);
    }
    let unknown = bed
        .post("/categories/nope", &s, &[("name", "X"), ("bot", "dev")])
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(bed.store.categories_version().await.unwrap(), before);

    let ok = bed
        .post(
            "/categories/web",
            &s,
            &[
                ("name", "Сайты <и> лендинги"),
                ("description", "sites, landing pages, web apps"),
                ("bot", "design-bot"),
            ],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    assert_eq!(ok.headers[header::LOCATION], "/categories?saved=web#c-web");
    let rows = bed.store.categories().await.unwrap();
    let web = rows.iter().find(|r| r.slug.as_str() == "web").unwrap();
    assert_eq!(web.name, "Сайты <и> лендинги");
    assert_eq!(web.description, "sites, landing pages, web apps");
    assert_eq!(web.bot, "design-bot");
    assert!(!web.digest, "the unchecked box turns the digest off");
    assert_eq!(web.updated_by.as_deref(), Some("ops"));
    assert!(bed.store.categories_version().await.unwrap() > before);
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(audit[0].action, "category.update");
    assert_eq!(audit[0].target, "category web");
    assert!(
        audit[0].detail.contains("bot: dev → design-bot"),
        "{}",
        audit[0].detail
    );
    assert!(audit[0].detail.contains("digest: off"));
    let after = bed.get("/categories?saved=web", Some(&s)).await;
    assert!(after.body.contains("Сайты &#60;и&#62; лендинги"));
    assert!(after.body.contains("ops, "), "who changed it is shown");
}

impl Bed {
    /// A paid placement of `chat` waiting for approval (categories `web`, 100 Stars).
    async fn placement_awaiting(
        &self,
        chat: i64,
        title: &str,
        charge: &str,
    ) -> jobwire_store::PlacementId {
        common::paid_placement(self.store.as_ref(), chat, title, Some("300 USD"), charge).await
    }
}

/// The Placements page: the queue shows each paid placement as it will be posted (text as
/// text), with its employer, categories and amount; a moderator approves one and refuses
/// another with a reason (kept for the employer's message), each audited; without the
/// CSRF token nothing changes; the history shows both.
#[tokio::test]
async fn a_moderator_approves_and_refuses_placements_from_the_queue() {
    use jobwire_store::{AdminRole, PlacementStatus};
    let bed = bed().await;
    bed.add_account("mod", AdminRole::Moderator).await;
    let m = bed.login_as("mod").await;
    let first = bed
        .placement_awaiting(515, "<script>alert(1)</script> Landing", "ch-1")
        .await;
    let second = bed
        .placement_awaiting(616, "Logo for a bakery", "ch-2")
        .await;

    let page = bed.get("/placements", Some(&m)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(!page.body.contains("<script>alert(1)"), "shown as text");
    assert!(
        page.body
            .contains("&lt;script&gt;alert(1)&lt;/script&gt; Landing")
    );
    assert!(page.body.contains("Budget: 300 USD") && page.body.contains("@coffee_hr"));
    assert!(page.body.contains("515") && page.body.contains("100 XTR"));
    let (a, b) = (
        page.body.find(&format!("placement-{first}\"")).unwrap(),
        page.body.find(&format!("placement-{second}\"")).unwrap(),
    );
    assert!(a < b, "oldest first");

    // Without the token (or from another site), nothing is decided.
    let forged = bed
        .send(
            Request::post(format!("/placements/{first}/approve"))
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::COOKIE, &m.cookie)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("csrf=0"))
                .unwrap(),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let forged = bed
        .send(
            Request::post(format!("/placements/{second}/refuse"))
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::COOKIE, &m.cookie)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("reason=no"))
                .unwrap(),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    for id in [first, second] {
        let p = bed.store.placement(id).await.unwrap().unwrap();
        assert_eq!(p.status, PlacementStatus::AwaitingApproval);
    }

    let ok = bed
        .post(&format!("/placements/{first}/approve"), &m, &[])
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let ok = bed
        .post(
            &format!("/placements/{second}/refuse"),
            &m,
            &[("reason", "  We do not publish logo contests.  ")],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let p1 = bed.store.placement(first).await.unwrap().unwrap();
    let p2 = bed.store.placement(second).await.unwrap().unwrap();
    assert_eq!(p1.status, PlacementStatus::Approved);
    assert_eq!(
        (p2.status, p2.reason.as_deref(), p2.decided_by.as_deref()),
        (
            PlacementStatus::Refused,
            Some("We do not publish logo contests."),
            Some("mod")
        )
    );
    // Decided once: a second decision is refused and changes nothing.
    let again = bed
        .post(&format!("/placements/{first}/refuse"), &m, &[])
        .await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        again.body.contains("not awaiting approval"),
        "{}",
        again.body
    );

    let audit: Vec<(String, String, String, String)> = bed
        .store
        .audit_log(10, None)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.actor, e.action, e.target, e.detail))
        .collect();
    assert_eq!(
        audit[..2],
        [
            (
                "mod".to_owned(),
                "placement.refuse".to_owned(),
                format!("placement {second}"),
                "We do not publish logo contests.".to_owned()
            ),
            (
                "mod".to_owned(),
                "placement.approve".to_owned(),
                format!("placement {first}"),
                String::new()
            ),
        ],
        "one line per decision, written by the operation"
    );
    let page = bed.get("/placements", Some(&m)).await;
    assert!(
        page.body.contains("id=\"no-placements\""),
        "the queue is empty"
    );
    assert!(page.body.contains(&format!("id=\"history-{first}\"")));
    assert!(page.body.contains("We do not publish logo contests."));
}

/// Admins: an account is added with a generated password shown once (never audited), which
/// logs in; a reset shows a new one and ends the account's sessions; disabling ends them and
/// refuses the login; an admin cannot disable itself; each change needs the CSRF token and
/// is audited.
#[tokio::test]
async fn an_admin_adds_resets_and_disables_an_account() {
    let bed = bed().await;
    let s = bed.login().await;
    let forged = |path: &str| {
        Request::post(path)
            .header(header::HOST, "panel.test")
            .header(header::ORIGIN, "http://panel.test")
            .header(header::COOKIE, &s.cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from("username=erin&role=moderator"))
            .unwrap()
    };
    assert_eq!(
        bed.send(forged("/admins")).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(bed.store.admin_by_username("erin").await.unwrap(), None);

    let shown_password = |body: &str| {
        body.split("id=\"password-value\">")
            .nth(1)
            .and_then(|rest| rest.split('<').next())
            .expect("the password is shown")
            .to_owned()
    };
    let added = bed
        .post(
            "/admins",
            &s,
            &[("username", "Erin"), ("role", "moderator")],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.body);
    assert!(
        added.headers[header::CACHE_CONTROL]
            .to_str()
            .unwrap()
            .contains("no-store")
    );
    let first = shown_password(&added.body);
    assert!(first.len() >= 20, "{first}");
    let erin = bed.store.admin_by_username("erin").await.unwrap().unwrap();
    assert_eq!(erin.role, jobwire_store::AdminRole::Moderator);
    let page = bed.get("/admins", Some(&s)).await;
    assert!(page.body.contains("id=\"admin-erin\"") && !page.body.contains(&first));

    let login = |password: String| {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("username", "erin")
            .append_pair("password", &password)
            .finish();
        Request::post("/login")
            .header(header::HOST, "panel.test")
            .header(header::ORIGIN, "http://panel.test")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(form))
            .unwrap()
    };
    let ok = bed.send(login(first.clone())).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let erin_cookie = common::Login {
        cookie: ok.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned(),
        csrf: String::new(),
    };
    assert_eq!(
        bed.get("/posts", Some(&erin_cookie)).await.status,
        StatusCode::OK
    );

    assert_eq!(
        bed.send(forged("/admins/erin/reset")).await.status,
        StatusCode::FORBIDDEN
    );
    let reset = bed.post("/admins/erin/reset", &s, &[]).await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    let second = shown_password(&reset.body);
    assert_ne!(first, second);
    assert_eq!(
        bed.get("/posts", Some(&erin_cookie)).await.status,
        StatusCode::SEE_OTHER,
        "a new password ends the sessions"
    );
    assert_eq!(
        bed.send(login(first.clone())).await.status,
        StatusCode::UNAUTHORIZED
    );
    let ok = bed.send(login(second.clone())).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    let erin_cookie = common::Login {
        cookie: ok.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned(),
        csrf: String::new(),
    };

    assert_eq!(
        bed.send(forged("/admins/erin/disable")).await.status,
        StatusCode::FORBIDDEN
    );
    let off = bed.post("/admins/erin/disable", &s, &[]).await;
    assert_eq!(off.status, StatusCode::SEE_OTHER, "{}", off.body);
    assert_eq!(
        bed.get("/posts", Some(&erin_cookie)).await.status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        bed.send(login(second.clone())).await.status,
        StatusCode::UNAUTHORIZED
    );
    let own = bed.post("/admins/ops/disable", &s, &[]).await;
    assert_eq!(own.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(own.body.contains("your own account"));

    let audit: Vec<(String, String, String, String)> = bed
        .store
        .audit_log(50, None)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.action.starts_with("admin."))
        .map(|e| (e.actor, e.action, e.target, e.detail))
        .collect();
    assert_eq!(
        audit,
        [
            (
                "ops".into(),
                "admin.disable".into(),
                "admin erin".into(),
                String::new()
            ),
            (
                "ops".into(),
                "admin.reset_password".into(),
                "admin erin".into(),
                String::new()
            ),
            (
                "ops".into(),
                "admin.create".into(),
                "admin erin".into(),
                "moderator".into()
            ),
        ]
    );
    let log = bed.get("/audit", Some(&s)).await;
    assert!(!log.body.contains(&first) && !log.body.contains(&second));
}

/// The Plans page: each configured plan with its prices and the subscriptions active now on
/// it; a plan no longer configured still shows its subscribers.
#[tokio::test]
async fn plans_show_their_prices_and_active_subscriptions() {
    use jobwire_core::billing::{Plan, PlanId};
    let month = Plan {
        id: PlanId::parse("month").unwrap(),
        title: "Month <b>pro</b>".into(),
        stars: 250,
        days: 30,
        categories: vec![],
        provider_price: Some(49_900),
    };
    let bed = common::open(None, |s| s.plans(vec![month], 3)).await;
    for (charge, chat, plan) in [("a", 1, "month"), ("b", 2, "month"), ("c", 3, "week")] {
        common::pay_stars(bed.store.as_ref(), (chat, charge), plan, 250, 30).await;
    }
    let s = bed.login().await;
    let page = bed.get("/plans", Some(&s)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let row = |id: &str| {
        page.body
            .split(&format!("id=\"plan-{id}\">"))
            .nth(1)
            .and_then(|r| r.split("</tr>").next())
            .unwrap_or_default()
            .to_owned()
    };
    let m = row("month");
    assert!(m.contains("Month &#60;b&#62;pro&#60;/b&#62;"), "{m}");
    assert!(
        m.contains(">250<") && m.contains(">49900<") && m.contains(">30<"),
        "{m}"
    );
    assert!(m.ends_with("<td class=\"num\">2</td>"), "two active: {m}");
    assert!(row("trial").contains(">3<"), "trial days");
    assert!(page.body.contains("<code>week</code>") && page.body.contains("no longer configured"));
}

/// Broadcasts: a preview shows the message as read and how many chats the audience reaches,
/// sending nothing; bad HTML is refused with Telegram's reason; sending and stopping need
/// the CSRF token, and each is audited; the live list shows the progress.
#[tokio::test]
async fn an_admin_previews_sends_and_stops_a_broadcast() {
    let bed = common::open(None, common::with_broadcasts).await;
    for (chat, cat) in [(1, "web"), (2, "web"), (3, "design")] {
        let spec = common::subscriber_spec(chat, None, cat);
        bed.store
            .upsert_subscriber(&spec, Utc::now())
            .await
            .unwrap();
    }
    let s = bed.login().await;
    let text = "<b>New:</b> a digest &amp; more";
    let p = bed
        .post(
            "/broadcasts/preview",
            &s,
            &[("text", text), ("category", "web")],
        )
        .await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    assert!(
        p.body.contains("<strong id=\"reach\">2</strong>"),
        "{}",
        p.body
    );
    assert!(
        p.body.contains("<b>New:</b> a digest &amp; more"),
        "rendered as Telegram shows it: {}",
        p.body
    );
    assert!(
        bed.store
            .broadcasts(10, Utc::now())
            .await
            .unwrap()
            .is_empty()
    );
    let bad = bed
        .post("/broadcasts/preview", &s, &[("text", "<b>unclosed")])
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.body.contains("Telegram would refuse"), "{}", bad.body);

    let forged = |path: &str, body: &'static str| {
        Request::post(path)
            .header(header::HOST, "panel.test")
            .header(header::ORIGIN, "http://panel.test")
            .header(header::COOKIE, &s.cookie)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap()
    };
    let refused = bed
        .send(forged("/broadcasts", "text=hello&category=web"))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(
        bed.store
            .broadcasts(10, Utc::now())
            .await
            .unwrap()
            .is_empty()
    );

    let sent = bed
        .post("/broadcasts", &s, &[("text", text), ("category", "web")])
        .await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER, "{}", sent.body);
    let list = bed.store.broadcasts(10, Utc::now()).await.unwrap();
    assert_eq!(list.len(), 1);
    let id = list[0].id;
    assert_eq!(list[0].progress.total(), 2);
    let live = bed.get("/broadcasts/live", Some(&s)).await;
    assert!(live.body.contains(&format!("id=\"broadcast-{id}\"")));
    assert!(
        live.body.contains("0 / 2") && live.body.contains("running"),
        "{}",
        live.body
    );

    let refused = bed
        .send(forged(&format!("/broadcasts/{id}/cancel"), "csrf=0"))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let stop = bed.post(&format!("/broadcasts/{id}/cancel"), &s, &[]).await;
    assert_eq!(stop.status, StatusCode::SEE_OTHER, "{}", stop.body);
    let b = bed.store.broadcast(id, Utc::now()).await.unwrap().unwrap();
    assert_eq!(b.status.as_str(), "canceled");
    let audit: Vec<(String, String)> = bed
        .store
        .audit_log(2, None)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.action, e.target))
        .collect();
    assert_eq!(
        audit,
        [
            ("broadcast.cancel".to_owned(), format!("broadcast {id}")),
            ("broadcast.start".to_owned(), format!("broadcast {id}")),
        ]
    );
}
