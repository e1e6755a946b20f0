//! Telegram payments and Stars in the fake Bot API, driven by the real teloxide client.

use std::{net::SocketAddr, time::Duration};

use chrono::{DateTime, Utc};
use jobwire_testkit::telegram::{
    FakeTelegram, FakeTelegramConfig, PayOptions, PayOutcome, PayUser, PaymentError, RefundOrigin,
    SUBSCRIPTION_PERIOD_SECS, StarTransactionKind,
};
use serde_json::json;
use teloxide::{
    ApiError, Bot, RequestError,
    payloads::{
        AnswerPreCheckoutQuerySetters, CreateInvoiceLinkSetters, GetUpdatesSetters,
        SendInvoiceSetters,
    },
    prelude::Requester,
    types::{
        ChatId, LabeledPrice, MessageKind, PreCheckoutQuery, Seconds, StarTransaction,
        SuccessfulPayment, TelegramTransactionId, TransactionPartner, Update, UpdateKind, UserId,
    },
};

mod common;
use common::Exchange;

const BOT_ID: u64 = 424_242;
const SECRET: &str = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";
const MONTH: u32 = 2_592_000;

fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

async fn start() -> (FakeTelegram, Bot) {
    let fake = FakeTelegram::start(
        any_port(),
        FakeTelegramConfig {
            limits: None,
            ..FakeTelegramConfig::default()
        },
    )
    .await
    .expect("fake telegram starts");
    let bot = Bot::new(format!("{BOT_ID}:{SECRET}")).set_api_url(fake.url());
    (fake, bot)
}

/// The description of a 400 teloxide does not know by name.
fn bad_request(r: Result<impl std::fmt::Debug, RequestError>) -> String {
    match r {
        Err(RequestError::Api(ApiError::Unknown(description))) => description,
        other => panic!("expected an unknown API error, got {other:?}"),
    }
}

fn stars(amount: u32) -> Vec<LabeledPrice> {
    vec![LabeledPrice::new("Pro", amount)]
}

fn ann() -> PayUser {
    PayUser {
        id: 777,
        first_name: "Ann".into(),
        language_code: Some("en".into()),
    }
}

/// Long-polls the bot's updates from `offset`, moving it past what was returned.
async fn poll(bot: &Bot, offset: &mut i32) -> Vec<Update> {
    let updates = bot
        .get_updates()
        .offset(*offset)
        .timeout(5)
        .await
        .expect("getUpdates");
    if let Some(last) = updates.last() {
        *offset = i32::try_from(last.id.0).expect("update id") + 1;
    }
    updates
}

/// Polls until there is nothing (the fake answers an empty list after `timeout` = 0).
async fn nothing_pending(bot: &Bot, offset: i32) -> bool {
    let updates = bot
        .get_updates()
        .offset(offset)
        .timeout(0)
        .await
        .expect("getUpdates");
    updates.is_empty()
}

fn pre_checkout(update: &Update) -> PreCheckoutQuery {
    match &update.kind {
        UpdateKind::PreCheckoutQuery(q) => q.clone(),
        other => panic!("expected a pre_checkout_query, got {other:?}"),
    }
}

fn successful_payment(update: &Update) -> SuccessfulPayment {
    match &update.kind {
        UpdateKind::Message(m) => m
            .successful_payment()
            .cloned()
            .unwrap_or_else(|| panic!("expected successful_payment, got {m:?}")),
        other => panic!("expected a message, got {other:?}"),
    }
}

/// `user` pays `invoice` while the bot, through teloxide, answers the pre-checkout query
/// with `answer` (`Ok` or the error message).
/// The fake Telegram and a bot that has sent chat 777 the invoice `nonce-1` (250 Stars).
async fn start_with_invoice() -> (FakeTelegram, Bot) {
    let (fake, bot) = start().await;
    bot.send_invoice(ChatId(777), "Pro", "30 days", "nonce-1", "XTR", stars(250))
        .await
        .expect("sendInvoice");
    (fake, bot)
}

/// [`pay_and_answer`] by Ann, with the default options, the bot accepting.
async fn pay_accepted(
    fake: &FakeTelegram,
    bot: &Bot,
    offset: &mut i32,
    invoice: &str,
) -> (PayOutcome, PreCheckoutQuery) {
    pay_and_answer(
        fake,
        bot,
        offset,
        ann(),
        invoice,
        PayOptions::default(),
        Ok(()),
    )
    .await
}

async fn pay_and_answer(
    fake: &FakeTelegram,
    bot: &Bot,
    offset: &mut i32,
    user: PayUser,
    invoice: &str,
    opts: PayOptions,
    answer: Result<(), &str>,
) -> (PayOutcome, PreCheckoutQuery) {
    let st = fake.state();
    let invoice = invoice.to_owned();
    let payer = tokio::spawn(async move { st.pay(BOT_ID, &user, &invoice, opts).await });
    let updates = poll(bot, offset).await;
    assert_eq!(updates.len(), 1, "one pre_checkout_query: {updates:?}");
    let query = pre_checkout(&updates[0]);
    match answer {
        Ok(()) => bot.answer_pre_checkout_query(query.id.clone(), true).await,
        Err(message) => {
            bot.answer_pre_checkout_query(query.id.clone(), false)
                .error_message(message)
                .await
        }
    }
    .expect("answerPreCheckoutQuery");
    let outcome = payer.await.expect("pay task").expect("pay");
    (outcome, query)
}

#[tokio::test]
async fn send_invoice_in_stars_is_accepted_and_checked() {
    let (fake, bot) = start().await;
    let msg = bot
        .send_invoice(
            ChatId(777),
            "Pro",
            "30 days of Pro",
            "nonce-1",
            "XTR",
            stars(250),
        )
        .need_email(true)
        .await
        .expect("sendInvoice in Stars");
    let invoice = msg.invoice().expect("an invoice message");
    assert_eq!(
        (invoice.currency.as_str(), invoice.total_amount),
        ("XTR", 250)
    );
    assert_eq!(invoice.title, "Pro");

    let recorded = fake.invoices(BOT_ID);
    assert_eq!(recorded.len(), 1);
    let inv = &recorded[0];
    assert_eq!(inv.method, "sendInvoice");
    assert_eq!(inv.chat_id, Some(777));
    assert_eq!(inv.message_id, Some(i64::from(msg.id.0)));
    assert_eq!((inv.payload.as_str(), inv.total_amount), ("nonce-1", 250));
    assert_eq!(inv.params["need_email"], json!(true));
    let messages = fake.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].method, "sendInvoice");

    let two_items = vec![LabeledPrice::new("a", 1), LabeledPrice::new("b", 2)];
    let e = bad_request(
        bot.send_invoice(ChatId(777), "Pro", "d", "nonce-2", "XTR", two_items)
            .await,
    );
    assert!(e.contains("STARS_INVOICE_INVALID"), "{e}");
    let e = bad_request(
        bot.send_invoice(ChatId(777), "Pro", "d", "nonce-3", "XTR", stars(0))
            .await,
    );
    assert!(e.contains("CURRENCY_TOTAL_AMOUNT_INVALID"), "{e}");
    let e = bad_request(
        bot.send_invoice(ChatId(777), "Pro", "d", "nonce-4", "XTR", stars(5))
            .provider_token("284685063:TEST:abc")
            .await,
    );
    assert!(e.contains("PAYMENT_PROVIDER_INVALID"), "{e}");
    let e = bad_request(
        bot.send_invoice(ChatId(777), "Pro", "d", "nonce-5", "USD", stars(500))
            .await,
    );
    assert!(e.contains("PAYMENT_PROVIDER_INVALID"), "{e}");
    let e = bad_request(
        bot.send_invoice(ChatId(777), "Pro", "d", "x".repeat(129), "XTR", stars(5))
            .await,
    );
    assert!(e.contains("INVOICE_PAYLOAD_INVALID"), "{e}");
    let e = bad_request(
        bot.send_invoice(ChatId(777), "x".repeat(33), "d", "n", "XTR", stars(5))
            .await,
    );
    assert!(e.contains("title"), "{e}");
    bot.send_invoice(ChatId(777), "Pro", "d", "nonce-6", "USD", stars(500))
        .provider_token("284685063:TEST:abc")
        .await
        .expect("a card invoice with a provider token");
    assert_eq!(fake.invoices(BOT_ID).len(), 2);
    assert_eq!(
        fake.messages().len(),
        2,
        "refused invoices are not recorded"
    );
}

#[tokio::test]
async fn create_invoice_link_subscription_rules() {
    let (fake, bot) = start().await;
    let link = bot
        .create_invoice_link("Pro", "Monthly", "sub-1", "XTR", stars(300))
        .subscription_period(Seconds::from_seconds(MONTH))
        .await
        .expect("a monthly subscription link");
    assert!(link.starts_with("https://t.me/$"), "{link}");
    let recorded = fake.invoices(BOT_ID);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].link.as_deref(), Some(link.as_str()));
    assert_eq!(
        recorded[0].subscription_period,
        Some(SUBSCRIPTION_PERIOD_SECS)
    );

    let e = bad_request(
        bot.create_invoice_link("Pro", "Daily", "sub-2", "XTR", stars(300))
            .subscription_period(Seconds::from_seconds(86_400))
            .await,
    );
    assert!(e.contains("SUBSCRIPTION_PERIOD_INVALID"), "{e}");
    let e = bad_request(
        bot.create_invoice_link("Pro", "Card", "sub-3", "USD", stars(300))
            .provider_token("284685063:TEST:abc")
            .subscription_period(Seconds::from_seconds(MONTH))
            .await,
    );
    assert!(e.contains("SUBSCRIPTION_PERIOD_INVALID"), "{e}");
    let e = bad_request(
        bot.create_invoice_link("Pro", "Too dear", "sub-4", "XTR", stars(10_001))
            .subscription_period(Seconds::from_seconds(MONTH))
            .await,
    );
    assert!(e.contains("CURRENCY_TOTAL_AMOUNT_INVALID"), "{e}");
    bot.create_invoice_link("Pro", "Dearest", "sub-5", "XTR", stars(10_000))
        .subscription_period(Seconds::from_seconds(MONTH))
        .await
        .expect("10000 Stars is the ceiling");
    bot.create_invoice_link("Pro", "One-off", "once", "XTR", stars(20_000))
        .await
        .expect("a one-off link has no subscription ceiling");
    assert_eq!(fake.invoices(BOT_ID).len(), 3);
}

#[tokio::test]
async fn accepted_payment_reaches_teloxide_and_the_star_ledger() {
    let (fake, bot) = start_with_invoice().await;
    let mut offset = 0;
    let (outcome, query) = pay_accepted(&fake, &bot, &mut offset, "nonce-1").await;
    assert_eq!(query.from.id, UserId(777));
    assert_eq!(query.from.language_code.as_deref(), Some("en"));
    assert_eq!((query.currency.as_str(), query.total_amount), ("XTR", 250));
    assert_eq!(query.invoice_payload, "nonce-1");
    assert!(outcome.accepted && !outcome.timed_out);
    let charge = outcome.charge_id.clone().expect("a charge id");

    let updates = poll(&bot, &mut offset).await;
    assert_eq!(updates.len(), 1);
    let UpdateKind::Message(msg) = &updates[0].kind else {
        panic!("expected a message");
    };
    assert_eq!(msg.chat.id, ChatId(777));
    assert_eq!(msg.from.as_ref().map(|u| u.id), Some(UserId(777)));
    let payment = successful_payment(&updates[0]);
    assert_eq!(
        payment.telegram_payment_charge_id,
        TelegramTransactionId(charge.clone())
    );
    assert_eq!(
        (payment.currency.as_str(), payment.total_amount),
        ("XTR", 250)
    );
    assert_eq!(payment.invoice_payload, "nonce-1");
    assert!(!payment.is_recurring);
    assert_eq!(payment.subscription_expiration_date, None);
    assert_eq!(
        Some(payment.provider_payment_charge_id),
        outcome.provider_charge_id
    );

    let txs = bot
        .get_star_transactions()
        .await
        .expect("getStarTransactions");
    assert_eq!(txs.transactions.len(), 1);
    let tx: &StarTransaction = &txs.transactions[0];
    assert_eq!(tx.id, TelegramTransactionId(charge.clone()));
    assert_eq!(tx.amount, 250);
    assert!(tx.receiver.is_none());
    let Some(TransactionPartner::User(partner)) = &tx.source else {
        panic!("expected a user source, got {:?}", tx.source);
    };
    assert_eq!(partner.user.id, UserId(777));
    let invoice_payment = partner.invoice_payment().expect("an invoice payment");
    assert_eq!(invoice_payment.invoice_payload.as_deref(), Some("nonce-1"));
    assert_eq!(invoice_payment.subscription_period, None);
    let balance = bot.get_my_star_balance().await.expect("getMyStarBalance");
    assert_eq!(balance.amount, 250);

    let ledger = fake.star_transactions(BOT_ID);
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].kind, StarTransactionKind::Payment);
    let answers = fake.pre_checkout_answers();
    assert_eq!(answers.len(), 1);
    assert!(answers[0].ok);
    assert!(nothing_pending(&bot, offset).await);
}

#[tokio::test]
async fn refused_pre_checkout_takes_no_money() {
    let (fake, bot) = start_with_invoice().await;
    let mut offset = 0;
    let changed_price = PayOptions {
        total_amount: Some(200),
        ..PayOptions::default()
    };
    let (outcome, query) = pay_and_answer(
        &fake,
        &bot,
        &mut offset,
        ann(),
        "nonce-1",
        changed_price,
        Err("The price changed, please ask for a new invoice"),
    )
    .await;
    assert_eq!(query.total_amount, 200);
    assert!(!outcome.accepted);
    assert_eq!(
        outcome.error_message.as_deref(),
        Some("The price changed, please ask for a new invoice")
    );
    assert_eq!(outcome.charge_id, None);
    let answers = fake.pre_checkout_answers();
    assert_eq!(answers.len(), 1);
    assert!(!answers[0].ok);
    assert_eq!(answers[0].total_amount, 200);
    assert!(fake.star_transactions(BOT_ID).is_empty());
    assert!(nothing_pending(&bot, offset).await);

    // Each query is answered once; unknown ids are refused.
    let again = bad_request(bot.answer_pre_checkout_query(query.id, true).await);
    assert_eq!(again, "Bad Request: QUERY_ID_INVALID");
    let unknown = bad_request(
        bot.answer_pre_checkout_query("12345".to_owned().into(), true)
            .await,
    );
    assert_eq!(unknown, "Bad Request: QUERY_ID_INVALID");
    let st = fake.state();
    let unknown_invoice = st
        .pay(BOT_ID, &ann(), "no-such-invoice", PayOptions::default())
        .await;
    assert!(matches!(
        unknown_invoice,
        Err(PaymentError::UnknownInvoice { .. })
    ));
}

#[tokio::test]
async fn an_unanswered_query_times_out_and_then_is_invalid() {
    let (fake, bot) = start_with_invoice().await;
    let opts = PayOptions {
        timeout: Duration::from_millis(200),
        ..PayOptions::default()
    };
    let outcome = fake
        .pay(BOT_ID, &ann(), "msg:777:1", opts)
        .await
        .expect("pay by invoice message");
    assert!(outcome.timed_out && !outcome.accepted);
    let mut offset = 0;
    let query = pre_checkout(&poll(&bot, &mut offset).await[0]);
    let late = bad_request(bot.answer_pre_checkout_query(query.id, true).await);
    assert_eq!(late, "Bad Request: QUERY_ID_INVALID");
    assert!(fake.star_transactions(BOT_ID).is_empty());
    assert!(fake.pre_checkout_answers().is_empty());
}

#[tokio::test]
async fn refund_star_payment_once_per_charge() {
    let (fake, bot) = start_with_invoice().await;
    let mut offset = 0;
    let (outcome, _) = pay_accepted(&fake, &bot, &mut offset, "nonce-1").await;
    let charge = TelegramTransactionId(outcome.charge_id.expect("charge"));
    successful_payment(&poll(&bot, &mut offset).await[0]);

    let e = bad_request(bot.refund_star_payment(UserId(778), charge.clone()).await);
    assert_eq!(e, "Bad Request: CHARGE_NOT_FOUND", "another user's charge");
    bot.refund_star_payment(UserId(777), charge.clone())
        .await
        .expect("first refund");
    let e = bad_request(bot.refund_star_payment(UserId(777), charge.clone()).await);
    assert_eq!(e, "Bad Request: CHARGE_ALREADY_REFUNDED");
    let unknown = TelegramTransactionId("stxNope".to_owned());
    let e = bad_request(bot.refund_star_payment(UserId(777), unknown).await);
    assert_eq!(e, "Bad Request: CHARGE_NOT_FOUND");

    let refunds = fake.refunds(BOT_ID);
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].origin, RefundOrigin::Bot);
    assert_eq!(refunds[0].amount, 250);
    // Newest first: the refund, with the payment's id, as `receiver`.
    let txs = bot
        .get_star_transactions()
        .await
        .expect("getStarTransactions")
        .transactions;
    assert_eq!(txs.len(), 2);
    assert_eq!(txs[0].id, charge);
    assert!(txs[0].source.is_none());
    assert!(
        matches!(&txs[0].receiver, Some(TransactionPartner::User(u)) if u.user.id == UserId(777))
    );
    assert!(txs[1].source.is_some());
    let balance = bot.get_my_star_balance().await.expect("balance");
    assert_eq!(balance.amount, 0);
    // A refund by the bot sends no update.
    assert!(nothing_pending(&bot, offset).await);
}

#[tokio::test]
async fn subscriptions_cancel_and_renew() {
    let (fake, bot) = start().await;
    let link = bot
        .create_invoice_link("Pro", "Monthly", "sub-nonce", "XTR", stars(300))
        .subscription_period(Seconds::from_seconds(MONTH))
        .await
        .expect("link");
    let mut offset = 0;
    let before = Utc::now();
    let (outcome, query) = pay_accepted(&fake, &bot, &mut offset, &link).await;
    assert_eq!(query.invoice_payload, "sub-nonce");
    let first = outcome.charge_id.clone().expect("charge");
    let payment = successful_payment(&poll(&bot, &mut offset).await[0]);
    assert!(payment.is_recurring && payment.is_first_recurring);
    let expires = payment
        .subscription_expiration_date
        .expect("an expiration date");
    let month = chrono::Duration::seconds(SUBSCRIPTION_PERIOD_SECS);
    assert!(expires >= before + month - chrono::Duration::seconds(1));
    assert!(expires <= Utc::now() + month);
    let txs = bot.get_star_transactions().await.expect("transactions");
    let Some(TransactionPartner::User(partner)) = &txs.transactions[0].source else {
        panic!("expected a user source");
    };
    let period = partner
        .invoice_payment()
        .and_then(|p| p.subscription_period);
    assert_eq!(period, Some(Seconds::from_seconds(MONTH)));

    // Cancel, and the user's subscription is no longer renewed.
    let first_id = TelegramTransactionId(first.clone());
    bot.edit_user_star_subscription(UserId(777), first_id.clone(), true)
        .await
        .expect("cancel");
    assert_eq!(fake.subscription_canceled(BOT_ID, 777, &first), Some(true));
    let next = Utc::now() + month + month;
    assert!(matches!(
        fake.renew_subscription(BOT_ID, 777, &first, next),
        Err(PaymentError::SubscriptionCanceled(_))
    ));
    let unknown = TelegramTransactionId("stxUnknown".to_owned());
    let e = bad_request(
        bot.edit_user_star_subscription(UserId(777), unknown, true)
            .await,
    );
    assert_eq!(e, "Bad Request: CHARGE_NOT_FOUND");
    let e = bad_request(
        bot.edit_user_star_subscription(UserId(1), first_id.clone(), true)
            .await,
    );
    assert_eq!(e, "Bad Request: CHARGE_NOT_FOUND");
    assert_eq!(fake.subscription_canceled(BOT_ID, 1, &first), None);

    // Re-enable, then Telegram renews it.
    bot.edit_user_star_subscription(UserId(777), first_id, false)
        .await
        .expect("re-enable");
    assert_eq!(fake.subscription_canceled(BOT_ID, 777, &first), Some(false));
    let next = DateTime::from_timestamp(next.timestamp(), 0).expect("time");
    let renewal = fake
        .renew_subscription(BOT_ID, 777, &first, next)
        .expect("renewal");
    assert_ne!(renewal.charge_id, first);
    let renewed = successful_payment(&poll(&bot, &mut offset).await[0]);
    assert!(renewed.is_recurring && !renewed.is_first_recurring);
    assert_eq!(renewed.subscription_expiration_date, Some(next));
    assert_eq!(renewed.invoice_payload, "sub-nonce");
    assert_eq!(
        renewed.telegram_payment_charge_id,
        TelegramTransactionId(renewal.charge_id.clone())
    );
    // Any charge of the subscription names it.
    assert_eq!(
        fake.subscription_canceled(BOT_ID, 777, &renewal.charge_id),
        Some(false)
    );
    let kinds: Vec<StarTransactionKind> = fake
        .star_transactions(BOT_ID)
        .iter()
        .map(|t| t.kind)
        .collect();
    assert_eq!(
        kinds,
        vec![StarTransactionKind::Payment, StarTransactionKind::Renewal]
    );
}

#[tokio::test]
async fn user_refund_lost_and_duplicated_updates() {
    let (fake, bot) = start_with_invoice().await;
    let mut offset = 0;

    // Telegram took the money, the update was lost: only the ledger knows.
    let lost = PayOptions {
        deliver_update: false,
        ..PayOptions::default()
    };
    let (outcome, _) =
        pay_and_answer(&fake, &bot, &mut offset, ann(), "nonce-1", lost, Ok(())).await;
    assert!(outcome.accepted);
    assert_eq!(outcome.payment_update_id, None);
    assert!(nothing_pending(&bot, offset).await);
    let lost_charge = outcome.charge_id.expect("charge");
    let txs = bot.get_star_transactions().await.expect("transactions");
    assert_eq!(txs.transactions[0].id, TelegramTransactionId(lost_charge));

    // Redelivered: the same update twice.
    let twice = PayOptions {
        duplicate_update: true,
        ..PayOptions::default()
    };
    let (outcome, _) =
        pay_and_answer(&fake, &bot, &mut offset, ann(), "nonce-1", twice, Ok(())).await;
    let updates = poll(&bot, &mut offset).await;
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[0].id, updates[1].id);
    assert_eq!(
        successful_payment(&updates[0]),
        successful_payment(&updates[1])
    );
    let charge = outcome.charge_id.expect("charge");

    // Telegram refunds the user: a refunded_payment message.
    fake.user_refund(BOT_ID, 777, &charge).expect("user refund");
    let updates = poll(&bot, &mut offset).await;
    let UpdateKind::Message(msg) = &updates[0].kind else {
        panic!("expected a message");
    };
    let MessageKind::RefundedPayment(refunded) = &msg.kind else {
        panic!("expected refunded_payment, got {:?}", msg.kind);
    };
    assert_eq!(
        refunded.refunded_payment.telegram_payment_charge_id,
        TelegramTransactionId(charge.clone())
    );
    assert_eq!(refunded.refunded_payment.total_amount, 250);
    assert!(matches!(
        fake.user_refund(BOT_ID, 777, &charge),
        Err(PaymentError::AlreadyRefunded(_))
    ));
    let e = bad_request(
        bot.refund_star_payment(UserId(777), TelegramTransactionId(charge))
            .await,
    );
    assert_eq!(e, "Bad Request: CHARGE_ALREADY_REFUNDED");
    let refunds = fake.refunds(BOT_ID);
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].origin, RefundOrigin::User);
    assert_eq!(
        bot.get_my_star_balance().await.expect("balance").amount,
        250
    );
}

#[tokio::test]
async fn payment_control_endpoints_over_http() {
    let (fake, bot) = start().await;
    let http = reqwest012::Client::new();
    let base = fake.url();
    let call = move |path: &str| format!("{base}__testkit/{path}");
    bot.send_invoice(ChatId(777), "Pro", "30 days", "nonce-1", "XTR", stars(250))
        .await
        .expect("sendInvoice");

    let (status, body) = http
        .post(call("pay"))
        .json(
            &json!({"bot_id": BOT_ID, "user": {"id": 777, "first_name": "Ann"}, "invoice": "nope"}),
        )
        .exchange()
        .await;
    assert_eq!(status, 404);
    assert_eq!(body["ok"], false);

    let pay = http
        .post(call("pay"))
        .json(&json!({"bot_id": BOT_ID, "user": {"id": 777, "first_name": "Ann"}, "invoice": "nonce-1"}))
        .exchange();
    let answer = async {
        let mut offset = 0;
        let query = pre_checkout(&poll(&bot, &mut offset).await[0]);
        bot.answer_pre_checkout_query(query.id, true)
            .await
            .expect("answer");
    };
    let ((status, outcome), ()) = tokio::join!(pay, answer);
    assert_eq!(status, 200);
    assert_eq!(outcome["accepted"], true);
    let charge = outcome["charge_id"].as_str().expect("charge id").to_owned();

    let get = |path: String| http.get(call(&path)).exchange();
    let (_, invoices) = get(format!("invoices?bot_id={BOT_ID}")).await;
    assert_eq!(invoices[0]["payload"], "nonce-1");
    let (_, txs) = get(format!("star_transactions?bot_id={BOT_ID}")).await;
    assert_eq!(txs[0]["id"], charge.as_str());
    let (_, answers) = get(format!("pre_checkout_answers?bot_id={BOT_ID}")).await;
    assert_eq!(answers[0]["ok"], true);
    let (_, sub) = get(format!(
        "subscription?bot_id={BOT_ID}&user_id=777&charge_id={charge}"
    ))
    .await;
    assert_eq!(sub, json!({"canceled": null}));
    let (status, _) = http
        .post(call("renew_subscription"))
        .json(&json!({"bot_id": BOT_ID, "user_id": 777, "charge_id": charge, "expiration": 1_900_000_000}))
        .exchange()
        .await;
    assert_eq!(status, 409, "not a subscription");
    let (status, body) = http
        .post(call("user_refund"))
        .json(&json!({"bot_id": BOT_ID, "user_id": 777, "charge_id": charge}))
        .exchange()
        .await;
    assert_eq!(status, 200);
    assert!(body["update_id"].is_i64());
    let (_, refunds) = get(format!("refunds?bot_id={BOT_ID}")).await;
    assert_eq!(refunds[0]["origin"], "user");
}
