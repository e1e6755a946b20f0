//! What the panel shows before an admin acts, over HTTP (the router driven in-process, a
//! SQLite store on a temp file): a broadcast's preview rendered as Telegram shows it (and
//! hostile markup never rendered), its reach narrowed to the subscribers active in the last
//! N days (in the panel and the JSON API), a placement's card as subscribers will get it, and
//! the last reconciliation with Telegram on the payments page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{Duration, Utc};
use common::Bed;
use jobwire_core::CategorySlug;
use jobwire_store::{NewReport, ReconciliationRun, ReportKind};

const TOKEN: &str = "api-token-for-the-previews-test-0123456789";

/// The panel with broadcasts (categories `web` and `design`, the main bot `main`) and the
/// API's token.
async fn broadcasting() -> Bed {
    common::open(Some(TOKEN), common::with_broadcasts).await
}

/// A subscriber of web, saved (by the bot, as far as the store knows) `days_ago`.
async fn subscriber(bed: &Bed, chat_id: i64, days_ago: i64) {
    let spec = common::subscriber_spec(chat_id, None, "web");
    bed.store
        .upsert_subscriber(&spec, Utc::now() - Duration::days(days_ago))
        .await
        .unwrap();
}

/// The reach the preview shows.
fn reach(body: &str) -> &str {
    body.split("<strong id=\"reach\">")
        .nth(1)
        .and_then(|s| s.split('<').next())
        .unwrap_or_else(|| panic!("no reach in {body}"))
}

/// The preview's HTML.
fn preview(body: &str) -> &str {
    body.split("id=\"preview-html\">")
        .nth(1)
        .and_then(|s| s.split("</div>").next())
        .unwrap_or_else(|| panic!("no preview in {body}"))
}

/// The broadcast preview shows the message formatted as its readers see it; what Telegram
/// would not show as markup (an `onerror` attribute, a `javascript:` link) is not on the
/// page, and a `<script>` is refused as Telegram refuses it, never echoed as markup.
#[tokio::test]
async fn the_broadcast_preview_is_rendered_and_hostile_markup_is_not() {
    let bed = broadcasting().await;
    subscriber(&bed, 1, 0).await;
    let s = bed.login().await;
    let text = "<b>New:</b> <i>daily</i> digests &amp; <u>more</u>, \
                <a href=\"https://jobwire.test/news\">read</a> <code>/digest</code>";
    let p = bed.post("/broadcasts/preview", &s, &[("text", text)]).await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    let shown = preview(&p.body);
    assert_eq!(
        shown,
        "<b>New:</b> <i>daily</i> digests &amp; <u>more</u>, <a href=\"https://jobwire.test/news\" \
         rel=\"nofollow noopener noreferrer\" target=\"_blank\">read</a> <code>/digest</code>"
    );

    let hostile = "<b onerror=\"alert(1)\">bold</b> <a href=\"javascript:alert(2)\">click</a> \
                   &lt;img src=x onerror=alert(3)&gt;";
    let p = bed
        .post("/broadcasts/preview", &s, &[("text", hostile)])
        .await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    let shown = preview(&p.body);
    assert_eq!(
        shown,
        "<b>bold</b> click &lt;img src=x onerror=alert(3)&gt;"
    );
    assert!(!shown.contains("javascript"), "{shown}");

    let script = "<b>hi</b><script>alert(4)</script>";
    let p = bed
        .post("/broadcasts/preview", &s, &[("text", script)])
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.body.contains("Telegram would refuse"), "{}", p.body);
    assert!(!p.body.contains("<script>alert(4)"), "{}", p.body);
    assert!(!p.body.contains("id=\"preview-html\""));
}

/// "Active in the last N days": the preview's reach, the broadcast the panel starts and the
/// one the JSON API starts count only the subscribers who did something in the bots in that
/// window (saved their settings, reported a post, …); a bad number is refused.
#[tokio::test]
async fn a_broadcast_to_the_subscribers_active_lately() {
    let bed = broadcasting().await;
    // 1 saved its settings today, 2 a month ago but reported a post two days ago; 3 and 4
    // did nothing for a month.
    subscriber(&bed, 1, 0).await;
    for chat in [2, 3, 4] {
        subscriber(&bed, chat, 30).await;
    }
    bed.store
        .insert_report(
            &NewReport {
                chat_id: 2,
                post_id: None,
                kind: ReportKind::Missed,
                text: "a missed vacancy".to_owned(),
                link: None,
            },
            Utc::now() - Duration::days(2),
        )
        .await
        .unwrap();
    let s = bed.login().await;

    let everyone = bed
        .post("/broadcasts/preview", &s, &[("text", "Hello")])
        .await;
    assert_eq!(reach(&everyone.body), "4");
    let lately = bed
        .post(
            "/broadcasts/preview",
            &s,
            &[("text", "Hello"), ("active_days", "7")],
        )
        .await;
    assert_eq!(lately.status, StatusCode::OK, "{}", lately.body);
    assert_eq!(reach(&lately.body), "2");
    assert!(
        lately.body.contains("name=\"active_days\""),
        "the field keeps its value"
    );
    assert!(lately.body.contains("value=\"7\""));
    let month = bed
        .post(
            "/broadcasts/preview",
            &s,
            &[("text", "Hello"), ("active_days", "31")],
        )
        .await;
    assert_eq!(reach(&month.body), "4");
    for bad in ["0", "seven", "-1", "100000"] {
        let refused = bed
            .post(
                "/broadcasts/preview",
                &s,
                &[("text", "Hello"), ("active_days", bad)],
            )
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert!(refused.body.contains("days"), "{bad}: {}", refused.body);
    }

    // Started from the panel: 2 recipients, the window in its audience and its audit entry.
    let sent = bed
        .post(
            "/broadcasts",
            &s,
            &[("text", "<b>News</b> for the active"), ("active_days", "7")],
        )
        .await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER, "{}", sent.body);
    let list = bed.store.broadcasts(10, Utc::now()).await.unwrap();
    assert_eq!(list[0].progress.total(), 2);
    assert_eq!(list[0].audience["active_days"], 7);
    let live = bed.get("/broadcasts/live", Some(&s)).await;
    assert!(live.body.contains("active_days 7"), "{}", live.body);
    let audit = bed.store.audit_log(1, None).await.unwrap();
    assert_eq!(audit[0].action, "broadcast.start");
    assert!(
        audit[0].detail.contains("\"active_days\":7"),
        "{:?}",
        audit[0]
    );

    // The JSON API takes `active_days` too.
    let api = |body: serde_json::Value| {
        Request::post("/api/broadcasts")
            .header(header::HOST, "panel.test")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let made = bed
        .send(api(
            serde_json::json!({"text": "Only the last day", "active_days": 1}),
        ))
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let made: serde_json::Value = serde_json::from_str(&made.body).unwrap();
    assert_eq!(made["broadcast"]["total"], 1);
    assert_eq!(made["broadcast"]["audience"]["active_days"], 1);
    let refused = bed
        .send(api(serde_json::json!({"text": "Nobody", "active_days": 0})))
        .await;
    assert!(refused.status.is_client_error(), "{}", refused.body);
}

/// The moderation queue shows a placement as the card subscribers get: the deliver
/// stage's rendering (the direct-placement header in bold, the categories by name, the
/// text) and the buttons under it, in the panel's language.
#[tokio::test]
async fn a_placement_waits_as_the_card_subscribers_will_get() {
    let bed = broadcasting().await;
    bed.store
        .seed_categories(
            &[(
                CategorySlug::parse("web").unwrap(),
                jobwire_store::CategoryFields {
                    name: "Web <development>".to_owned(),
                    description: String::new(),
                    bot: "dev".to_owned(),
                    digest: true,
                },
            )],
            Utc::now(),
        )
        .await
        .unwrap();
    let id = common::paid_placement(
        bed.store.as_ref(),
        515,
        "Landing <b>page</b>",
        Some("300 USD"),
        "ch-1",
    )
    .await;
    let s = bed.login().await;
    let page = bed.get("/placements", Some(&s)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let card = page
        .body
        .split(&format!("id=\"card-{id}\""))
        .nth(1)
        .and_then(|c| c.split("</form>").next())
        .unwrap();
    assert!(
        card.contains("📌 <b>Direct placement</b>"),
        "the header is bold: {card}"
    );
    assert!(card.contains("Web &lt;development&gt;"), "{card}");
    assert!(card.contains("Landing &lt;b&gt;page&lt;/b&gt;"), "{card}");
    assert!(
        !card.contains("<b>page</b>"),
        "the employer's markup is text"
    );
    for button in ["Not a vacancy", "Wrong category", "Hide this author"] {
        assert!(card.contains(button), "{button}: {card}");
    }
    let russian = bed
        .send(
            Request::get("/placements")
                .header(header::HOST, "panel.test")
                .header(header::COOKIE, format!("{}; jw_lang=ru", s.cookie))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert!(russian.body.contains("Не вакансия"), "{}", russian.body);
}

/// The payments page says when reconciliation with Telegram last ran and what it found
/// ("never" before the first run).
#[tokio::test]
async fn the_payments_page_shows_the_last_reconciliation() {
    let bed = broadcasting().await;
    let s = bed.login().await;
    let before = bed.get("/payments", Some(&s)).await;
    assert_eq!(before.status, StatusCode::OK, "{}", before.body);
    let line = |body: &str| {
        body.split("id=\"last-reconciliation\">")
            .nth(1)
            .and_then(|l| l.split("</p>").next())
            .unwrap_or_else(|| panic!("no last reconciliation in {body}"))
            .to_owned()
    };
    assert_eq!(
        line(&before.body),
        "Last reconciliation: <strong>never</strong>"
    );
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-06T09:30:00Z")
        .unwrap()
        .with_timezone(&Utc);
    bed.store
        .record_reconciliation(&ReconciliationRun {
            finished_at: at,
            transactions: 40,
            payments: 2,
            refunds: 1,
        })
        .await
        .unwrap();
    let after = bed.get("/payments", Some(&s)).await;
    let shown = line(&after.body);
    assert!(shown.contains("2026-12-06 09:30"), "{shown}");
    assert!(
        shown.contains("found <strong id=\"reconciliation-found\">3</strong>"),
        "{shown}"
    );
    assert!(shown.contains("40"), "{shown}");
}
