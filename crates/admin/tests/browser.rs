//! The panel in a real browser: headless Chromium driven over WebDriver (chromedriver from
//! `JOBWIRE_TEST_CHROMEDRIVER`), the panel served on 127.0.0.1 with a SQLite store. One
//! admin's working session, step by step, with a screenshot of every page (desktop and
//! phone width) in `JOBWIRE_SCREENSHOTS` (default `target/screenshots`). Telegram is the
//! project's fake Bot API with the bots and the broadcast sender running against it, so
//! what the panel decides reaches the chats as it would in production.
//!
//! Compiled in when `JOBWIRE_TEST_CHROMEDRIVER` is set (see build.rs); `.ci/run` installs
//! Debian's chromium and chromium-driver and sets it.
#![cfg(jobwire_browser_tests)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "browser/telegram.rs"]
mod telegram;
#[path = "browser/webdriver.rs"]
mod webdriver;

use std::net::SocketAddr;
use std::sync::Arc;

use chrono::Utc;
use fantoccini::Locator;
use jobwire_admin::AdminSettings;
use jobwire_core::{CategorySlug, PostKind};
use jobwire_store::{ClassificationRecord, NewDelivery, NewReport, PostId, ReportKind, Store};
use serde_json::json;

use common::PASSWORD;
use telegram::Telegram;
use webdriver::{browser, click, driver, eventually, path, shot, text_of, type_into};

struct Seeded {
    store: Arc<dyn Store>,
}

impl Seeded {
    async fn post(&self, channel: &str, text: &str) -> PostId {
        let ch = self.store.source_by_handle(channel).await.unwrap().unwrap();
        let n = Utc::now().timestamp_nanos_opt().unwrap_or(0).to_string();
        common::queued_post(self.store.as_ref(), ch.id, n, text, None).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admins_day_in_the_panel() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::store_with_admin(&dir).await;
    let category = |slug: &str, name: &str, description: &str| {
        (
            jobwire_core::CategorySlug::parse(slug).unwrap(),
            jobwire_store::CategoryFields {
                name: name.to_owned(),
                description: description.to_owned(),
                bot: "dev".to_owned(),
                digest: true,
            },
        )
    };
    store
        .seed_categories(
            &[
                category("web", "Web development", "sites, landing pages, web apps"),
                category("design", "Design", "logos, UI/UX, illustrations"),
            ],
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    // Telegram: the fake Bot API, the bots and the broadcast sender.
    let tg = Telegram::start(store.clone()).await;
    let api = AdminSettings::new(None, ["web".to_owned(), "design".to_owned()])
        // The admin's refunds go through the main bot to the fake, as in production.
        .main_bot(tg.fake.url(), telegram::MAIN_TOKEN.to_owned().into())
        .broadcasts(jobwire_admin::broadcasts::BroadcastSetup {
            routes: ["web", "design"]
                .iter()
                .map(|c| jobwire_fanout::CategoryRoute {
                    slug: jobwire_core::CategorySlug::parse(c).unwrap(),
                    name: (*c).to_owned(),
                    bot: "dev".to_owned(),
                })
                .collect(),
            plans: vec![],
            main_bot: Some("main".to_owned()),
        })
        .build(store.clone());
    let app = jobwire_admin::router(api);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    let seed = Seeded {
        store: store.clone(),
    };
    let d = driver().await;
    let c = browser(&d).await;

    // Not logged in: any page leads to the login, which leads back.
    c.goto(&format!("{base}/sources")).await.unwrap();
    assert_eq!(path(&c).await, "/login");
    shot(&c, "01-login").await;
    type_into(&c, Locator::Id("username"), "ops").await;
    type_into(&c, Locator::Id("password"), "wrong password!").await;
    click(&c, Locator::Css("button[type=submit]")).await;
    eventually("the wrong password is refused", || async {
        text_of(&c, ".flash-error").await.contains("Wrong")
    })
    .await;
    type_into(&c, Locator::Id("password"), PASSWORD).await;
    click(&c, Locator::Css("button[type=submit]")).await;
    eventually("logged in, back on /sources", || async {
        path(&c).await == "/sources"
    })
    .await;

    // Add a channel and see it listed.
    type_into(&c, Locator::Id("address"), "https://t.me/Rust_Jobs").await;
    click(&c, Locator::Id("add-source")).await;
    eventually("on the new source's page", || async {
        path(&c).await.starts_with("/sources/")
    })
    .await;
    let source_page = c.current_url().await.unwrap().to_string();
    c.goto(&format!("{base}/sources")).await.unwrap();
    assert!(text_of(&c, "#sources").await.contains("@rust_jobs"));
    shot(&c, "02-sources").await;

    // Its posts, one with markup in it, a job with a delivery, and a report.
    seed.post("@rust_jobs", "Ищем дизайнера лендинга, бюджет 30 000 ₽")
        .await;
    seed.post("@rust_jobs", "Продам курс по Python").await;
    let evil = seed
        .post(
            "@rust_jobs",
            "Rust dev needed <script>document.title='pwned'</script>",
        )
        .await;
    store
        .record_classification(
            evil,
            &ClassificationRecord {
                is_job: true,
                kind: PostKind::Job,
                categories: vec![CategorySlug::parse("web").unwrap()],
                confidence: 0.93,
                model: "gpt-4o-mini".into(),
                prompt_version: Some("classify.v4".into()),
                tokens_in: 610,
                tokens_out: 41,
                latency_ms: 1830,
                extraction: None,
                cost_usd: 0.0001,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let sub = store
        .upsert_subscriber(
            &common::subscriber_spec(777, Some("Ann"), "web"),
            Utc::now(),
        )
        .await
        .unwrap();
    store
        .fan_out(
            evil,
            &["<b>Rust dev</b>".to_owned()],
            &[NewDelivery {
                subscriber_id: sub,
                chat_id: 777,
                bot: "web_bot".into(),
                not_before: None,
            }],
            Utc::now(),
        )
        .await
        .unwrap();
    let ad = seed.post("@rust_jobs", "Скидка 50% на курс фотошопа").await;
    store
        .insert_report(
            &NewReport {
                chat_id: 777,
                post_id: Some(ad),
                kind: ReportKind::Wrong,
                text: "это реклама".into(),
                link: None,
            },
            Utc::now(),
        )
        .await
        .unwrap();

    // Edit a rule and watch the preview change as the rule is typed.
    c.goto(&source_page).await.unwrap();
    eventually("all four posts pass without rules", || async {
        text_of(&c, "#preview-count").await == "4 / 4"
    })
    .await;
    type_into(&c, Locator::Id("include"), "дизайн").await;
    eventually("only the designer post passes", || async {
        text_of(&c, "#preview-count").await == "1 / 4"
    })
    .await;
    let marked = text_of(&c, "#preview mark").await;
    assert_eq!(marked.to_lowercase(), "дизайн");
    shot(&c, "03-source-preview").await;
    c.find(Locator::Id("include"))
        .await
        .unwrap()
        .clear()
        .await
        .unwrap();
    type_into(&c, Locator::Id("exclude"), "курс").await;
    eventually("two posts with курс are excluded", || async {
        text_of(&c, "#preview-count").await == "2 / 4"
    })
    .await;
    click(&c, Locator::Id("save-rules")).await;
    eventually("saved", || async {
        c.current_url().await.unwrap().query() == Some("saved=1")
    })
    .await;
    let row = store.source_by_handle("@rust_jobs").await.unwrap().unwrap();
    assert_eq!(row.exclude, ["курс"]);

    // A post's trace: its text as text (the script did not run), its verdict, its delivery.
    c.goto(&format!("{base}/posts")).await.unwrap();
    shot(&c, "04-posts").await;
    c.find(Locator::Css(&format!("a[href='/posts/{}']", evil.get())))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    eventually("on the trace", || async {
        path(&c).await == format!("/posts/{}", evil.get())
    })
    .await;
    let text = text_of(&c, "#post-text").await;
    assert!(
        text.contains("<script>document.title='pwned'</script>"),
        "{text}"
    );
    assert_ne!(c.title().await.unwrap(), "pwned");
    let verdict = text_of(&c, "#verdict").await;
    assert!(
        verdict.contains("LLM")
            && verdict.contains("gpt-4o-mini")
            && verdict.contains("classify.v4"),
        "{verdict}"
    );
    let deliveries = text_of(&c, "#deliveries").await;
    assert!(
        deliveries.contains("777")
            && deliveries.contains("web_bot")
            && deliveries.contains("pending"),
        "{deliveries}"
    );
    shot(&c, "05-post-trace").await;

    // Accept a report as an ad.
    c.goto(&format!("{base}/reports")).await.unwrap();
    assert!(text_of(&c, ".report").await.contains("это реклама"));
    shot(&c, "06-reports").await;
    click(&c, Locator::Css(
        ".report select[name=kind] option[value=ad], .report select[name=kind] option:nth-child(3)",
    )).await;
    click(&c, Locator::Css(".report form[action$='/accept'] button")).await;
    eventually("no reports left", || async {
        text_of(&c, "#no-reports").await.contains("No reports")
    })
    .await;
    let decided = store.reports(None, 10).await.unwrap();
    assert_eq!(decided[0].status.as_str(), "accepted");

    // Placements, paid through the main bot: approve one, refuse another with a reason.
    let approved = tg.paid_placement(515, "Landing page").await;
    let refused = tg.paid_placement(616, "Logo contest").await;
    c.goto(&format!("{base}/placements")).await.unwrap();
    // Each waits as the card subscribers will get: rendered, with its buttons.
    let card = text_of(&c, &format!("#card-{approved}")).await;
    assert!(
        card.contains("Direct placement")
            && card.contains("Landing page")
            && card.contains("Not a vacancy"),
        "{card}"
    );
    shot(&c, "16-placements").await;
    click(
        &c,
        Locator::Css(&format!(
            "#placement-{approved} form[action$='/approve'] button"
        )),
    )
    .await;
    eventually("the approved one leaves the queue", || async {
        path(&c).await == "/placements"
            && c.find(Locator::Id(&format!("placement-{approved}")))
                .await
                .is_err()
    })
    .await;
    type_into(
        &c,
        Locator::Id(&format!("reason-{refused}")),
        "We do not publish contests.",
    )
    .await;
    click(
        &c,
        Locator::Css(&format!(
            "#placement-{refused} form[action$='/refuse'] button"
        )),
    )
    .await;
    eventually("the queue is empty", || async {
        !text_of(&c, "#no-placements").await.is_empty()
    })
    .await;
    assert!(
        text_of(&c, &format!("#history-{refused}"))
            .await
            .contains("We do not publish contests.")
    );
    // The main bot refunds the refused one and tells the employer why, in their chat.
    eventually("the employer reads the reason in Telegram", || async {
        tg.main_bot_said(616)
            .iter()
            .any(|m| m.contains("We do not publish contests."))
    })
    .await;
    let refunds = tg.fake.refunds(telegram::MAIN_ID);
    assert_eq!(
        refunds.iter().map(|r| r.user_id).collect::<Vec<_>>(),
        [616],
        "the refused one is refunded, the approved one is not"
    );
    let p = store.placement(refused).await.unwrap().unwrap();
    assert_eq!(
        (p.status.as_str(), p.reason.as_deref()),
        ("refunded", Some("We do not publish contests."))
    );
    assert!(
        !tg.main_bot_said(515)
            .iter()
            .any(|m| m.contains("We do not publish")),
        "the approved employer is told nothing of a refusal"
    );
    let p = store.placement(approved).await.unwrap().unwrap();
    assert!(
        matches!(p.status.as_str(), "approved" | "published"),
        "{}",
        p.status.as_str()
    );

    // Payments: refund one from the ledger, with a reason.
    for (charge, chat, amount) in [("stx-1", 4242, 80), ("stx-2", 5151, 250)] {
        common::pay_stars(store.as_ref(), (chat, charge), "month", amount, 30).await;
    }
    c.goto(&format!("{base}/payments")).await.unwrap();
    shot(&c, "22-payments").await;
    // The main bot reconciled with Telegram when it started (the fake had no transactions
    // then); the page says when and what it found.
    let last = text_of(&c, "#last-reconciliation").await;
    assert!(
        last.starts_with("Last reconciliation: 20") && last.contains("found 0"),
        "{last}"
    );
    c.execute(
        "document.getElementById('last-reconciliation').scrollIntoView()",
        vec![],
    )
    .await
    .unwrap();
    shot(&c, "29-payments-reconciliation").await;
    // The approved employer's payment, made at the fake and recorded by the bot: refunded
    // from the ledger, through the main bot, at Telegram.
    let charge = store
        .placement(approved)
        .await
        .unwrap()
        .unwrap()
        .charge_id
        .expect("the approved placement was paid");
    let refund_form = format!("form[action='/payments/{charge}/refund']");
    let refund_form = refund_form.as_str();
    type_into(
        &c,
        Locator::Css(&format!("{refund_form} input[name=reason]")),
        "charged twice",
    )
    .await;
    click(&c, Locator::Css(&format!("{refund_form} button"))).await;
    eventually("the refunded payment has no refund button", || async {
        path(&c).await == "/payments" && c.find(Locator::Css(refund_form)).await.is_err()
    })
    .await;
    assert!(
        store
            .ledger_entry(&charge, jobwire_store::LedgerKind::Refund)
            .await
            .unwrap()
            .is_some()
    );
    let refunds = tg.fake.refunds(telegram::MAIN_ID);
    assert_eq!(
        refunds.iter().map(|r| r.user_id).collect::<Vec<_>>(),
        [616, 515],
        "Telegram refunded the refused placement (the bot) and the payment refunded from the ledger"
    );
    assert_eq!(
        refunds[1].charge_id, charge,
        "the charge refunded at Telegram"
    );

    // Broadcasts: to the 3 of 5 subscribers in `web` (Ann and two more), previewed (the
    // message rendered as Telegram shows it), sent, and watched until all 3 went out.
    for (chat, cat) in [(1, "web"), (2, "web"), (4, "design"), (5, "design")] {
        let spec = common::subscriber_spec(chat, None, cat);
        store.upsert_subscriber(&spec, Utc::now()).await.unwrap();
    }
    c.goto(&format!("{base}/broadcasts")).await.unwrap();
    type_into(
        &c,
        Locator::Id("b-text"),
        "<b>New:</b> daily digests are here",
    )
    .await;
    click(&c, Locator::Css("#b-category option[value=web]")).await;
    click(&c, Locator::Id("b-preview")).await;
    eventually("the preview", || async {
        path(&c).await == "/broadcasts/preview"
    })
    .await;
    let reach = text_of(&c, "#reach").await;
    assert_eq!(reach, "3", "{}", text_of(&c, ".flash-error").await);
    assert_eq!(text_of(&c, "#preview-html b").await, "New:");
    assert_eq!(
        text_of(&c, "#preview-html").await,
        "New: daily digests are here"
    );
    shot(&c, "26-broadcast-preview").await;
    click(&c, Locator::Id("b-send")).await;
    eventually("the live progress reaches 3 sent of 3", || async {
        path(&c).await == "/broadcasts" && text_of(&c, "#broadcast-list td.sent").await == "3 / 3"
    })
    .await;
    assert_eq!(text_of(&c, "#broadcast-list td.left").await, "0");
    shot(&c, "27-broadcasts").await;
    for chat in [777, 1, 2] {
        assert_eq!(
            tg.said_to(chat),
            ["New: daily digests are here"],
            "chat {chat}"
        );
    }
    for chat in [4, 5] {
        assert!(tg.said_to(chat).is_empty(), "chat {chat} is not in web");
    }

    // Admins: add a moderator; its password is shown once.
    c.goto(&format!("{base}/admins")).await.unwrap();
    type_into(&c, Locator::Id("new-username"), "bob").await;
    click(&c, Locator::Id("add-admin")).await;
    eventually("the new password is shown", || async {
        text_of(&c, "#password-value").await.len() >= 20
    })
    .await;
    assert!(text_of(&c, "#admin-bob").await.contains("moderator"));
    shot(&c, "20-admins").await;

    // The other pages, on a desktop and on a phone (nothing wider than the screen).
    for (name, page) in [
        ("07-dashboard", "/"),
        ("08-subscribers", "/subscribers"),
        ("09-dead-letters", "/dead-letters"),
        ("14-prompt", "/prompt"),
        ("15-categories", "/categories"),
        ("24-plans", "/plans"),
        ("10-audit", "/audit"),
    ] {
        c.goto(&format!("{base}{page}")).await.unwrap();
        shot(&c, name).await;
    }
    assert!(text_of(&c, "#audit").await.contains("source.rules"));
    c.goto(&format!("{base}/categories")).await.unwrap();
    assert!(
        text_of(&c, "#c-web").await.contains("web"),
        "the categories are listed"
    );
    c.set_window_size(390, 844).await.unwrap();
    for (name, page) in [
        ("11-phone-dashboard", "/"),
        ("12-phone-sources", "/sources"),
        ("13-phone-trace", &*format!("/posts/{}", evil.get())),
        ("17-phone-placements", "/placements"),
        ("21-phone-admins", "/admins"),
        ("23-phone-payments", "/payments"),
        ("25-phone-plans", "/plans"),
        ("28-phone-broadcasts", "/broadcasts"),
    ] {
        c.goto(&format!("{base}{page}")).await.unwrap();
        let fits = c
            .execute(
                "return document.documentElement.scrollWidth <= window.innerWidth + 1",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(fits, json!(true), "{page} is wider than a phone");
        shot(&c, name).await;
    }
    c.set_window_size(1280, 900).await.unwrap();

    // Logging out ends access.
    c.goto(&format!("{base}/")).await.unwrap();
    click(&c, Locator::Id("logout")).await;
    eventually("back on the login", || async { path(&c).await == "/login" }).await;
    c.goto(&format!("{base}/posts")).await.unwrap();
    assert_eq!(path(&c).await, "/login");

    // A moderator: its pages only; no way to subscribers (refunds), the prompt or the log.
    jobwire_admin::accounts::apply(
        store.as_ref(),
        jobwire_admin::accounts::Change::Create(jobwire_store::AdminRole::Moderator),
        "mod",
        PASSWORD,
    )
    .await
    .unwrap();
    type_into(&c, Locator::Id("username"), "mod").await;
    type_into(&c, Locator::Id("password"), PASSWORD).await;
    click(&c, Locator::Css("button[type=submit]")).await;
    eventually("the moderator is in", || async {
        path(&c).await == "/posts"
    })
    .await;
    let nav = text_of(&c, "nav").await;
    assert!(
        nav.contains("Placements") && nav.contains("Reports"),
        "{nav}"
    );
    for hidden in [
        "Broadcasts",
        "Payments",
        "Subscribers",
        "Prompt",
        "Audit",
        "Categories",
        "Admins",
    ] {
        assert!(
            !nav.contains(hidden),
            "{hidden} in a moderator's nav: {nav}"
        );
    }
    shot(&c, "18-moderator-posts").await;
    c.goto(&format!("{base}/payments")).await.unwrap();
    assert!(text_of(&c, "h1").await.contains("403"));
    shot(&c, "19-moderator-refused").await;

    c.close().await.unwrap();
    drop(d.child);
    tg.stop().await;
}
