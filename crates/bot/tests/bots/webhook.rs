//! Webhook mode: Telegram (the fake) posts to the router; several copies share the
//! dialogue state and the dedup.

use std::net::SocketAddr;
use std::sync::Arc;

use jobwire_bot::{Bots, MemoryDedup, SECRET_HEADER, UpdateMode};
use jobwire_store::ReportKind;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::common::*;

const CID: i64 = 703;

/// A free local port, bound, so its address is known before the bots register webhooks.
async fn bind() -> (tokio::net::TcpListener, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// Serves the bots' webhooks under `/hooks` on `listener` until `stop` is cancelled.
fn serve_on(listener: tokio::net::TcpListener, bots: &Bots, stop: CancellationToken) {
    let router = axum::Router::new().nest("/hooks", bots.webhook_router());
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await
            .unwrap();
    });
}

/// A copy of the bot role in webhook mode (Telegram told `public`), with the shared
/// dialogue state and its own in-memory dedup, served on a port of its own.
async fn webhook_copy(
    env: &Env,
    public: SocketAddr,
    stop: &CancellationToken,
) -> (Running, SocketAddr) {
    let running = env
        .start_with(
            webhook_mode(public),
            env.dialogues(),
            Arc::new(MemoryDedup::default()),
        )
        .await;
    let (listener, addr) = bind().await;
    serve_on(listener, &running.bots, stop.clone());
    (running, addr)
}

fn webhook_mode(addr: SocketAddr) -> UpdateMode {
    UpdateMode::Webhook {
        public_url: url::Url::parse(&format!("http://{addr}/hooks")).unwrap(),
        secret: SECRET.into(),
    }
}

/// Starts the bots in webhook mode behind a server whose address is known before they
/// register their webhooks.
async fn start_webhook(env: &Env) -> (Running, SocketAddr, CancellationToken) {
    let stop = CancellationToken::new();
    let (listener, addr) = bind().await;
    let running = env.start(webhook_mode(addr)).await;
    serve_on(listener, &running.bots, stop.clone());
    (running, addr, stop)
}

/// Posts `update` to the main bot of the copy at `addr` (answered 200), then waits for the
/// main bot's `n`th message to the chat; returns them all.
async fn post_and_wait(
    env: &Env,
    addr: SocketAddr,
    update: &Value,
    n: usize,
) -> Vec<jobwire_testkit::telegram::RecordedMessage> {
    assert_eq!(post(addr, "main", Some(SECRET), update).await, 200);
    env.wait_sent(MAIN_ID, CID, n).await
}

async fn post(addr: SocketAddr, bot: &str, secret: Option<&str>, body: &Value) -> u16 {
    let mut req = reqwest012::Client::new()
        .post(format!("http://{addr}/hooks/telegram/{bot}"))
        .json(body);
    if let Some(s) = secret {
        req = req.header(SECRET_HEADER, s);
    }
    req.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn webhooks_are_registered_and_updates_arrive_through_them() {
    let env = Env::new().await;
    let (running, addr, stop) = start_webhook(&env).await;
    let hooks = env.calls(MAIN_ID, "setWebhook");
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(
        hooks[0]["url"],
        format!("http://{addr}/hooks/telegram/main")
    );
    assert_eq!(hooks[0]["secret_token"], SECRET);
    let allowed = hooks[0]["allowed_updates"].to_string();
    for kind in ["message", "callback_query", "my_chat_member"] {
        assert!(allowed.contains(kind), "{allowed}");
    }
    assert_eq!(
        env.calls(WEB_ID, "setWebhook")[0]["url"],
        format!("http://{addr}/hooks/telegram/webbot")
    );

    // The fake delivers injected updates to the webhook, with the secret.
    env.inject(MAIN_ID, text(CID, "/start"));
    env.inject(WEB_ID, text(CID, "/start"));
    let menu = env.wait_sent(MAIN_ID, CID, 1).await;
    assert!(menu[0].visible_text.contains("jobwire"));
    env.wait_sent(WEB_ID, CID, 1).await;
    assert_eq!(
        env.subscriber(CID).await.unwrap().categories,
        ["web", "bots"]
    );
    // The fake counts a delivery once the webhook answered, which may be after the reply.
    eventually("both updates counted as delivered", SOON, || async {
        env.fake.stats().webhook_delivered >= 2
    })
    .await;
    running.stop().await;
    stop.cancel();
}

#[tokio::test]
async fn a_wrong_or_missing_secret_is_refused() {
    let env = Env::new().await;
    let (running, addr, stop) = start_webhook(&env).await;
    let update = with_id(text(CID, "/start"), 9001);
    assert_eq!(post(addr, "main", Some("wrong-secret"), &update).await, 401);
    assert_eq!(
        post(addr, "main", Some(&SECRET[..SECRET.len() - 1]), &update).await,
        401
    );
    assert_eq!(post(addr, "main", None, &update).await, 401);
    assert_eq!(post(addr, "nobody", Some(SECRET), &update).await, 404);
    // Without the secret, an unknown bot looks like any other: nothing to enumerate.
    assert_eq!(
        post(addr, "nobody", Some("wrong-secret"), &update).await,
        401
    );
    assert!(
        env.subscriber(CID).await.is_none(),
        "a refused update changed nothing"
    );
    assert!(env.sent(MAIN_ID, CID).is_empty());
    let not_json = serde_json::json!({"hello": "world"});
    assert_eq!(post(addr, "main", Some(SECRET), &not_json).await, 400);

    assert_eq!(post(addr, "main", Some(SECRET), &update).await, 200);
    env.wait_sent(MAIN_ID, CID, 1).await;
    assert!(env.subscriber(CID).await.is_some());
    running.stop().await;
    stop.cancel();
}

#[tokio::test]
async fn a_report_delivered_twice_is_filed_once() {
    let env = Env::new().await;
    let (running, addr, stop) = start_webhook(&env).await;
    assert_eq!(
        post(
            addr,
            "main",
            Some(SECRET),
            &with_id(text(CID, "/report"), 10)
        )
        .await,
        200
    );
    env.wait_sent(MAIN_ID, CID, 1).await;
    let vacancy = with_id(
        text(
            CID,
            "Нужен дизайнер логотипа, 15 000 ₽, пишите https://t.me/client_ann",
        ),
        11,
    );
    // Telegram retries a webhook it considers failed: the same update arrives again.
    assert_eq!(post(addr, "main", Some(SECRET), &vacancy).await, 200);
    assert_eq!(post(addr, "main", Some(SECRET), &vacancy).await, 200);
    let sent = env.wait_sent(MAIN_ID, CID, 2).await;
    let reports = env.store.reports(None, 10).await.unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].kind, ReportKind::Missed);
    assert_eq!(reports[0].link.as_deref(), Some("https://t.me/client_ann"));
    assert!(
        sent[1]
            .visible_text
            .contains(&format!("№{}", reports[0].id))
    );
    // One thanks, nothing for the repeat: stopping waits for the handling of every update
    // accepted (the repeat's included), so the count is final.
    running.stop().await;
    assert_eq!(env.sent(MAIN_ID, CID).len(), 2);
    stop.cancel();
}

#[tokio::test]
async fn a_dialogue_started_on_one_copy_continues_on_another() {
    let env = Env::new().await;
    // Two copies of the bot role: one database (embedded dialogue state), separate
    // processes' worth of everything else (their own in-memory dedup).
    let stop = CancellationToken::new();
    let public = "127.0.0.1:9".parse().unwrap();
    let (first, a) = webhook_copy(&env, public, &stop).await;
    let (second, b) = webhook_copy(&env, public, &stop).await;

    post_and_wait(&env, a, &with_id(text(CID, "/include"), 20), 1).await;
    let sent = post_and_wait(&env, b, &with_id(text(CID, "rust, tokio"), 21), 2).await;
    assert!(
        sent[1].visible_text.contains("rust, tokio"),
        "{}",
        sent[1].visible_text
    );
    assert_eq!(
        env.subscriber(CID).await.unwrap().include,
        ["rust", "tokio"]
    );

    // And the other way round, for the report dialogue.
    post_and_wait(&env, b, &with_id(text(CID, "/report"), 22), 3).await;
    let missed = with_id(text(CID, "Вакансия: бот для магазина"), 23);
    post_and_wait(&env, a, &missed, 4).await;
    assert_eq!(env.store.reports(None, 10).await.unwrap().len(), 1);
    first.stop().await;
    second.stop().await;
    stop.cancel();
}

#[tokio::test]
async fn shutting_down_refuses_new_updates_with_503() {
    let env = Env::new().await;
    let (running, addr, stop) = start_webhook(&env).await;
    let bots: Bots = running.bots.clone();
    running.shutdown.cancel();
    bots.wait().await;
    assert_eq!(
        post(
            addr,
            "main",
            Some(SECRET),
            &with_id(text(CID, "/start"), 30)
        )
        .await,
        503
    );
    assert!(env.subscriber(CID).await.is_none());
    stop.cancel();
}

/// Two bot processes (webhook mode, each with its own in-memory dedup, one database) get
/// the same `successful_payment` at once: the payment is applied once and acknowledged once.
#[tokio::test]
async fn one_payment_delivered_to_two_processes_at_once_extends_once() {
    let env = Env::new().await;
    let billing = jobwire_bot::BillingConfig {
        enabled: true,
        plans: vec![jobwire_core::billing::Plan {
            id: jobwire_core::billing::PlanId::parse("month").unwrap(),
            title: "30 days".into(),
            stars: 250,
            days: 30,
            categories: vec![],
            provider_price: None,
        }],
        ..jobwire_bot::BillingConfig::default()
    };
    let stop = CancellationToken::new();
    let mut processes = Vec::new();
    for _ in 0..2 {
        let (listener, addr) = bind().await;
        let running = env
            .start_config(
                env.config_with(webhook_mode(addr), billing.clone()),
                env.dialogues(),
                Arc::new(MemoryDedup::default()),
            )
            .await;
        serve_on(listener, &running.bots, stop.clone());
        processes.push((running, addr));
    }
    let user = 704;
    let expires = chrono::Utc::now().timestamp() + 30 * 86_400;
    let mut update = text(user, "");
    update["update_id"] = serde_json::json!(90_001);
    let message = update["message"].as_object_mut().unwrap();
    message.remove("text");
    message.insert(
        "successful_payment".into(),
        serde_json::json!({
            "currency": "XTR",
            "total_amount": 250,
            "invoice_payload": "jw1:month:704:abcdef0123456789",
            "subscription_expiration_date": expires,
            "is_recurring": true,
            "is_first_recurring": true,
            "telegram_payment_charge_id": "stxTWICE",
            "provider_payment_charge_id": "",
        }),
    );
    let (a, b) = tokio::join!(
        post(processes[0].1, "main", Some(SECRET), &update),
        post(processes[1].1, "main", Some(SECRET), &update),
    );
    assert_eq!((a, b), (200, 200));
    let ledger = eventually("the payment in the ledger", SOON, || async {
        let rows = env.store.ledger(Some(user), 10).await.unwrap();
        (!rows.is_empty()).then_some(rows)
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(ledger.len(), 1);
    let periods = env.store.access_periods(user).await.unwrap();
    assert_eq!(periods.len(), 1, "{periods:?}");
    assert_eq!(periods[0].ends_at.timestamp(), expires);
    let thanks: Vec<_> = env
        .sent(MAIN_ID, user)
        .into_iter()
        .filter(|m| m.visible_text.contains("Оплата получена"))
        .collect();
    assert_eq!(thanks.len(), 1, "acknowledged once");
    stop.cancel();
    for (running, _) in processes {
        running.stop().await;
    }
}
