//! The panel against a hostile internet (issue 26): login floods, guessing from one client
//! while the owner logs in from another, open redirects, forged usernames, tokens in the
//! audit log, links with other schemes, disabled admins, and the refund's audit entry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::Utc;
use common::{Bed, PASSWORD, login_from, login_request, retry_after};
use jobwire_admin::panel::{MAX_ACCOUNT_FAILURES, MAX_PASSWORD_CHECKS};

async fn bed() -> Bed {
    common::open(None, |s| s).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_wrong_logins_from_one_client_is_counted_before_hashing_and_ends_in_429s() {
    let bed = Arc::new(bed().await);
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let bed = bed.clone();
            tokio::spawn(async move {
                login_from(&bed, "198.51.100.7", "ops", "wrong password guess").await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    let unauthorized = answers
        .iter()
        .filter(|a| a.status == StatusCode::UNAUTHORIZED)
        .count();
    let limited: Vec<_> = answers
        .iter()
        .filter(|a| a.status == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    assert_eq!(unauthorized + limited.len(), 100);
    assert!(
        unauthorized <= MAX_ACCOUNT_FAILURES as usize,
        "only the free attempts reach the password check: {unauthorized} did"
    );
    assert!(limited.iter().all(|a| retry_after(a) >= 1));
    assert!(
        bed.panel.busiest_password_checks() <= MAX_PASSWORD_CHECKS,
        "{} password checks ran at once",
        bed.panel.busiest_password_checks()
    );
    // The flood ends in 429s: the next attempt is refused without a check.
    let after = login_from(&bed, "198.51.100.7", "ops", "wrong again").await;
    assert_eq!(after.status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_guessing_client_is_slowed_down_while_the_owner_logs_in_from_elsewhere() {
    let bed = bed().await;
    let guesser = "198.51.100.7";
    for _ in 0..MAX_ACCOUNT_FAILURES {
        let a = login_from(&bed, guesser, "ops", "guess guess guess").await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
    }
    // The guesser now waits, even with the right password (it is not checked).
    let slowed = login_from(&bed, guesser, "ops", PASSWORD).await;
    assert_eq!(slowed.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        (1..=2).contains(&retry_after(&slowed)),
        "slowed, not locked"
    );
    assert!(slowed.headers.get(header::SET_COOKIE).is_none());
    // The account is not locked: its owner logs in from another client.
    let owner = login_from(&bed, "192.0.2.10", "ops", PASSWORD).await;
    assert_eq!(owner.status, StatusCode::SEE_OTHER, "{}", owner.body);
    assert!(owner.headers.contains_key(header::SET_COOKIE));
    // A client that guesses many accounts is slowed down too.
    let roamer = "198.51.100.8";
    let mut statuses = Vec::new();
    for i in 0..25 {
        let a = login_from(&bed, roamer, &format!("user{i}"), "guess guess guess").await;
        statuses.push(a.status);
    }
    assert!(
        statuses[..20]
            .iter()
            .all(|s| *s == StatusCode::UNAUTHORIZED)
    );
    assert_eq!(statuses[20], StatusCode::TOO_MANY_REQUESTS, "{statuses:?}");
}

#[tokio::test]
async fn after_login_only_a_path_of_this_site_is_followed() {
    let bed = bed().await;
    for (i, (next, expected)) in [
        ("/\t/evil.example", "/"),
        ("/\n/evil.example", "/"),
        ("//evil.example", "/"),
        ("/\\evil.example", "/"),
        ("/%09/evil.example", "/"),
        ("/%2e%2e//evil.example", "/"),
        ("https://evil.example/", "/"),
        ("/posts?q=rust", "/posts?q=rust"),
    ]
    .into_iter()
    .enumerate()
    {
        // Each from its own client: the successes are not limited anyway.
        let client = format!("192.0.2.{}", i + 1);
        let a = bed
            .send(login_request(&client, "ops", PASSWORD, Some(next)))
            .await;
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{next:?}");
        assert_eq!(a.headers[header::LOCATION], expected, "{next:?}");
        // The login page carries the same cleaned value.
        let page = bed
            .get(
                &format!(
                    "/login?next={}",
                    url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
                ),
                None,
            )
            .await;
        assert!(!page.body.contains("evil.example"), "{next:?}");
    }
}

#[tokio::test]
async fn a_forged_username_is_neither_audited_nor_shown() {
    let bed = bed().await;
    let forged = "ops\n2026-01-01T00:00:00Z INFO panel: logged in user=root";
    let huge = "a".repeat(200 * 1024);
    for name in [forged, huge.as_str(), "<script>x</script>"] {
        let a = login_from(&bed, "192.0.2.1", name, "wrong password here").await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED);
        assert!(!a.body.contains("logged in user=root"));
        assert!(!a.body.contains(&"a".repeat(100)));
        assert!(!a.body.contains("&#60;script"));
    }
    let audit = bed.store.audit_log(10, None).await.unwrap();
    assert_eq!(audit.len(), 3);
    for e in &audit {
        assert_eq!(e.action, "login.failed");
        assert_eq!(e.actor, "(invalid username)");
        assert_eq!(e.target, "client 192.0.2.1");
    }
    // A valid (unknown) username is audited as given, folded.
    login_from(&bed, "192.0.2.1", "Mallory", "wrong password here").await;
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(audit[0].actor, "mallory");
}

#[tokio::test]
async fn a_feeds_token_stays_out_of_the_audit_log() {
    let bed = bed().await;
    let s = bed.login().await;
    let url = "https://www.upwork.com/ab/feed/jobs/rss?q=rust&securityToken=SECRET0123456789";
    let ok = bed
        .post(
            "/sources",
            &s,
            &[("address", url), ("name", "feed:upwork-rust")],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(audit[0].action, "source.add");
    assert_eq!(audit[0].detail, "feed:upwork-rust www.upwork.com");
    let page = bed.get("/audit", Some(&s)).await;
    assert!(page.body.contains("www.upwork.com"), "{}", page.body);
    for secret in ["SECRET0123456789", "securityToken", "/ab/feed"] {
        assert!(!page.body.contains(secret), "{secret} on /audit");
    }
}

#[tokio::test]
async fn only_http_https_and_tg_links_are_rendered_as_links() {
    let bed = bed().await;
    let s = bed.login().await;
    let channel = bed
        .store
        .ensure_channel("feed:hostile", Utc::now())
        .await
        .unwrap();
    let mut ids = Vec::new();
    for (i, url) in [
        "javascript:alert(document.cookie)",
        " JavaScript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "https://example.com/job/1",
        "tg://resolve?domain=jobs",
    ]
    .into_iter()
    .enumerate()
    {
        let id = common::queued_post(
            bed.store.as_ref(),
            channel.id,
            format!("x{i}"),
            "A job",
            Some(url),
        )
        .await;
        ids.push((url, id));
    }
    for (url, id) in ids {
        let page = bed.get(&format!("/posts/{}", id.get()), Some(&s)).await;
        assert_eq!(page.status, StatusCode::OK);
        let hrefs: Vec<&str> = page
            .body
            .split("href=\"")
            .skip(1)
            .filter_map(|h| h.split('"').next())
            .collect();
        let followable = url.starts_with("https:") || url.starts_with("tg:");
        for h in &hrefs {
            let lower = h.to_ascii_lowercase();
            assert!(
                lower.starts_with('/')
                    || lower.starts_with('?')
                    || lower.starts_with("https:")
                    || lower.starts_with("tg:"),
                "{url}: href {h:?}"
            );
        }
        let linked = hrefs
            .iter()
            .any(|h| h.starts_with("https:") || h.starts_with("tg:"));
        assert_eq!(linked, followable, "{url}");
    }
}

#[tokio::test]
async fn a_disabled_admin_cannot_log_in_and_its_session_ends() {
    let bed = common::open(Some("s3cret-admin-token-0123456789abcdef"), |s| s).await;
    let s = bed.login().await;
    let api = |login: &common::Login| {
        Request::get("/api/reports")
            .header(header::HOST, "panel.test")
            .header(header::COOKIE, &login.cookie)
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(bed.send(api(&s)).await.status, StatusCode::OK);
    jobwire_admin::accounts::disable(bed.store.as_ref(), "ops")
        .await
        .unwrap();
    assert_eq!(bed.get("/", Some(&s)).await.status, StatusCode::SEE_OTHER);
    assert_eq!(bed.send(api(&s)).await.status, StatusCode::UNAUTHORIZED);
    let again = login_from(&bed, "192.0.2.1", "ops", PASSWORD).await;
    assert_eq!(again.status, StatusCode::UNAUTHORIZED);
    assert!(again.headers.get(header::SET_COOKIE).is_none());
}

#[tokio::test]
async fn a_new_password_ends_the_admins_sessions() {
    let bed = bed().await;
    let s = bed.login().await;
    assert_eq!(bed.get("/", Some(&s)).await.status, StatusCode::OK);
    jobwire_admin::accounts::apply(
        bed.store.as_ref(),
        jobwire_admin::accounts::Change::SetPassword,
        "ops",
        "a brand new password",
    )
    .await
    .unwrap();
    assert_eq!(bed.get("/", Some(&s)).await.status, StatusCode::SEE_OTHER);
}

/// A Telegram Bot API that says yes to everything (`refundStarPayment` included).
async fn yes_telegram() -> url::Url {
    let app = axum::Router::new()
        .fallback(|| async { axum::Json(serde_json::json!({"ok": true, "result": true})) });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/").parse().unwrap()
}

/// The panel with a main bot whose Telegram says yes to every call (a refund goes through).
async fn bed_with_main_bot() -> Bed {
    let telegram = yes_telegram().await;
    common::open(None, |s| {
        s.main_bot(
            telegram,
            "555:MAINmainMAINmainMAINmainMAIN".to_owned().into(),
        )
    })
    .await
}

#[tokio::test]
async fn a_refund_is_audited_with_the_payments_chat_whatever_the_url_says() {
    use jobwire_store::{LedgerKind, NewLedgerEntry};
    let bed = bed_with_main_bot().await;
    let paid = common::pay_stars(bed.store.as_ref(), (4242, "stx-1"), "week", 80, 7).await;
    let s = bed.login().await;
    let r = bed
        .post("/subscribers/777/refund", &s, &[("charge_id", "stx-1")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(audit[0].action, "payment.refund");
    assert_eq!(audit[0].target, "chat 4242");
    assert!(
        bed.store
            .ledger_entry("stx-1", LedgerKind::Refund)
            .await
            .unwrap()
            .is_some()
    );
    // Telegram's report of the same refund is not a second one.
    let reported = NewLedgerEntry {
        kind: LedgerKind::Refunded,
        ..paid
    };
    assert_eq!(
        bed.store.apply_refund(&reported, Utc::now()).await.unwrap(),
        None
    );
}

/// The Payments page: the ledger filtered by user, plan and kind; revenue per plan and
/// month; a refund from the ledger needs the CSRF token, is made through the main bot with
/// its reason audited, and the payment cannot be refunded twice.
#[tokio::test]
async fn payments_are_filtered_summed_and_refunded_from_the_ledger() {
    use jobwire_store::LedgerKind;
    let bed = bed_with_main_bot().await;
    for (charge, chat, plan, amount) in [
        ("stx-a", 4242, "week", 80),
        ("stx-b", 5151, "month", 250),
        ("stx-c", 4242, "month", 250),
    ] {
        common::pay_stars(bed.store.as_ref(), (chat, charge), plan, amount, 7).await;
    }
    let s = bed.login().await;
    let page = bed.get("/payments", Some(&s)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.body.matches("action=\"/payments/stx-").count(), 3);
    assert!(
        page.body
            .contains("<td>month</td><td class=\"num\">500 XTR</td>"),
        "{}",
        page.body
    );
    let month = Utc::now().format("%Y-%m").to_string();
    assert!(
        page.body
            .contains(&format!("<td>{month}</td><td class=\"num\">580 XTR</td>"))
    );
    let only = bed.get("/payments?chat=4242&plan=month", Some(&s)).await;
    assert!(
        only.body.contains("stx-c") && !only.body.contains("stx-a") && !only.body.contains("stx-b")
    );
    let bad = bed.get("/payments?kind=gift", Some(&s)).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);

    let forged = bed
        .send(
            Request::post("/payments/stx-b/refund")
                .header(header::HOST, "panel.test")
                .header(header::ORIGIN, "http://panel.test")
                .header(header::COOKIE, &s.cookie)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("reason=x"))
                .unwrap(),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert!(
        bed.store
            .ledger_entry("stx-b", LedgerKind::Refund)
            .await
            .unwrap()
            .is_none()
    );

    let r = bed
        .post("/payments/stx-b/refund", &s, &[("reason", "charged twice")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert!(
        bed.store
            .ledger_entry("stx-b", LedgerKind::Refund)
            .await
            .unwrap()
            .is_some()
    );
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(
        (
            audit[0].action.as_str(),
            audit[0].target.as_str(),
            audit[0].detail.as_str()
        ),
        (
            "payment.refund",
            "chat 5151",
            "stx-b 250 XTR: charged twice"
        )
    );
    let page = bed.get("/payments", Some(&s)).await;
    assert_eq!(
        page.body.matches("action=\"/payments/stx-").count(),
        2,
        "refunded once"
    );
    let again = bed.post("/payments/stx-b/refund", &s, &[]).await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(again.body.contains("refunded before"), "{}", again.body);
}
