//! The fake Bot API driven over real HTTP by teloxide (and raw reqwest where teloxide can't).

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use axum::{extract::State, http::HeaderMap, routing::post};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RateLimits};
use serde_json::{Value, json};
use teloxide::{
    ApiError, Bot, RequestError,
    payloads::{EditMessageTextSetters, GetUpdatesSetters, SendMessageSetters, SetWebhookSetters},
    prelude::Requester,
    types::{
        BotCommand, CallbackQueryId, ChatId, InlineKeyboardButton, InlineKeyboardMarkup,
        MessageEntityKind, MessageId, ParseMode, UpdateKind,
    },
};
use tokio::sync::mpsc;

mod common;
use common::Exchange;

const BOT_ID: u64 = 123_456;
const SECRET: &str = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";

fn token() -> String {
    format!("{BOT_ID}:{SECRET}")
}

fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

async fn start(limits: Option<RateLimits>) -> (FakeTelegram, Bot) {
    let fake = FakeTelegram::start(
        any_port(),
        FakeTelegramConfig {
            limits,
            ..FakeTelegramConfig::default()
        },
    )
    .await
    .expect("fake telegram starts");
    let bot = Bot::new(token()).set_api_url(fake.url());
    (fake, bot)
}

fn api_error(r: Result<impl std::fmt::Debug, RequestError>) -> ApiError {
    match r {
        Err(RequestError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// The wait, in seconds, of an answer that must be a 429.
fn retry_after(r: Result<impl std::fmt::Debug, RequestError>) -> u32 {
    match r {
        Err(RequestError::RetryAfter(s)) => s.seconds(),
        other => panic!("expected RetryAfter, got {other:?}"),
    }
}

#[tokio::test]
async fn html_message_is_parsed_recorded_and_returned_with_utf16_entities() {
    let (fake, bot) = start(None).await;
    let me = bot.get_me().await.expect("getMe");
    assert_eq!(me.id.0, BOT_ID);
    assert_eq!(me.username(), format!("test{BOT_ID}_bot"));

    let html = "<b>Hi</b> &amp; <a href=\"https://example.com/x\">link</a> 😀 <i>it</i>";
    let msg = bot
        .send_message(ChatId(42), html)
        .parse_mode(ParseMode::Html)
        .await
        .expect("sendMessage with HTML");
    assert_eq!(msg.text(), Some("Hi & link 😀 it"));
    assert_eq!(msg.chat.id, ChatId(42));
    assert!(msg.chat.is_private());
    let ents: Vec<(MessageEntityKind, usize, usize)> = msg
        .entities()
        .expect("entities")
        .iter()
        .map(|e| (e.kind.clone(), e.offset, e.length))
        .collect();
    assert_eq!(
        ents,
        vec![
            (MessageEntityKind::Bold, 0, 2),
            (
                MessageEntityKind::TextLink {
                    url: "https://example.com/x".parse().expect("url")
                },
                5,
                4
            ),
            // The emoji takes two UTF-16 code units.
            (MessageEntityKind::Italic, 13, 2),
        ]
    );

    let second = bot.send_message(ChatId(43), "plain").await.expect("plain");
    let third = bot
        .send_message(ChatId(-100_555), "group")
        .await
        .expect("group");
    assert!(third.chat.is_supergroup());
    assert_eq!(second.id, MessageId(1));

    let recorded = fake.messages();
    assert_eq!(recorded.len(), 3);
    assert_eq!(recorded[0].bot_id, BOT_ID);
    assert_eq!(recorded[0].chat_id, 42);
    assert_eq!(recorded[0].message_id, msg.id.0 as i64);
    assert_eq!(recorded[0].text, html);
    assert_eq!(recorded[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(recorded[0].visible_text, "Hi & link 😀 it");
    assert_eq!(recorded[2].chat_id, -100_555);
    let dump = serde_json::to_string(&recorded).expect("serialize") + &format!("{recorded:?}");
    assert!(
        !dump.contains(SECRET),
        "the token's secret must never be recorded"
    );
    assert_eq!(fake.stats().accepted, 3);
}

#[tokio::test]
async fn bad_html_is_a_400_with_telegrams_description() {
    let (fake, bot) = start(None).await;
    let cases = [
        (
            "<b>bold",
            "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            "<foo>x</foo>",
            "Bad Request: can't parse entities: Unsupported start tag \"foo\" at byte offset 0",
        ),
        (
            "<b><i>x</b></i>",
            "Bad Request: can't parse entities: Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\"",
        ),
    ];
    for (html, want) in cases {
        let e = api_error(
            bot.send_message(ChatId(1), html)
                .parse_mode(ParseMode::Html)
                .await,
        );
        assert_eq!(
            e,
            ApiError::CantParseEntities(want.to_owned()),
            "for {html}"
        );
    }
    let e = api_error(bot.send_message(ChatId(1), " \n ").await);
    assert_eq!(e, ApiError::MessageTextIsEmpty);
    assert!(fake.messages().is_empty());
    assert_eq!(fake.stats().rejected_400, 4);
}

#[tokio::test]
async fn length_limit_counts_unicode_scalars_after_entity_parsing() {
    let (_fake, bot) = start(None).await;
    let ok = "😀".repeat(4096);
    bot.send_message(ChatId(1), ok)
        .await
        .expect("4096 emoji pass");
    let long = "😀".repeat(4097);
    let e = api_error(bot.send_message(ChatId(1), long).await);
    assert_eq!(e, ApiError::MessageIsTooLong);

    // `&amp;` is one character.
    let amps = "&amp;".repeat(4096);
    let m = bot
        .send_message(ChatId(2), amps.clone())
        .parse_mode(ParseMode::Html)
        .await
        .expect("4096 escaped ampersands pass");
    assert_eq!(m.text().map(|t| t.chars().count()), Some(4096));
    let e = api_error(
        bot.send_message(ChatId(2), format!("{amps}x"))
            .parse_mode(ParseMode::Html)
            .await,
    );
    assert_eq!(e, ApiError::MessageIsTooLong);
}

#[tokio::test]
async fn second_message_to_a_chat_within_a_second_gets_429_with_retry_after() {
    let (fake, bot) = start(Some(RateLimits::default())).await;
    bot.send_message(ChatId(7), "one")
        .await
        .expect("first passes");
    assert_eq!(retry_after(bot.send_message(ChatId(7), "two").await), 1);
    // Another chat is not affected.
    bot.send_message(ChatId(8), "other chat")
        .await
        .expect("other chat passes");
    assert_eq!(fake.messages().len(), 2);
    assert_eq!(fake.stats().rejected_429, 1);
}

#[tokio::test]
async fn group_and_global_windows() {
    let (fake, bot) = start(Some(RateLimits {
        global_per_sec: 3,
        per_chat_per_sec: 10,
        per_group_per_min: 2,
    }))
    .await;
    bot.send_message(ChatId(-1_001), "g1").await.expect("g1");
    bot.send_message(ChatId(-1_001), "g2").await.expect("g2");
    let group_wait = retry_after(bot.send_message(ChatId(-1_001), "g3").await);
    assert!((58..=60).contains(&group_wait), "{group_wait} s");
    bot.send_message(ChatId(5), "p1")
        .await
        .expect("third in the second");
    let bot_wait = retry_after(bot.send_message(ChatId(6), "p2").await);
    assert_eq!(bot_wait, 1, "the bot's window");
    // Another bot has its own window.
    let other = Bot::new(format!("999:{SECRET}")).set_api_url(fake.url());
    other
        .send_message(ChatId(6), "x")
        .await
        .expect("other bot passes");

    // Lifting the limits lets a burst through.
    fake.set_limits(None);
    for i in 0..20 {
        bot.send_message(ChatId(6), format!("burst {i}"))
            .await
            .expect("no limits");
    }
}

#[tokio::test]
async fn blocked_chat_is_403_and_not_recorded() {
    let (fake, bot) = start(Some(RateLimits::default())).await;
    fake.block_chat(BOT_ID, 77);
    let e = api_error(bot.send_message(ChatId(77), "hi").await);
    assert_eq!(e, ApiError::BotBlocked);
    // 403 comes before the rate limit and does not use up the chat's slot.
    fake.unblock_chat(BOT_ID, 77);
    bot.send_message(ChatId(77), "hi").await.expect("unblocked");
    assert_eq!(fake.stats().rejected_403, 1);
    assert_eq!(fake.messages().len(), 1);
}

#[tokio::test]
async fn inline_keyboard_checks() {
    let (fake, bot) = start(None).await;
    let kb = |data: String| {
        InlineKeyboardMarkup::new(vec![vec![InlineKeyboardButton::callback("Go", data)]])
    };
    let e = api_error(
        bot.send_message(ChatId(1), "x")
            .reply_markup(kb("a".repeat(65)))
            .await,
    );
    assert_eq!(e, ApiError::ButtonDataInvalid);
    let m = bot
        .send_message(ChatId(1), "x")
        .reply_markup(kb("a".repeat(64)))
        .await
        .expect("64 bytes pass");
    assert!(m.reply_markup().is_some());
    let bad_url = InlineKeyboardMarkup::new(vec![vec![InlineKeyboardButton::url(
        "Open",
        "javascript:alert(1)".parse().expect("url"),
    )]]);
    let e = api_error(bot.send_message(ChatId(1), "x").reply_markup(bad_url).await);
    assert_eq!(e, ApiError::ButtonUrlInvalid);
    let recorded = fake.messages();
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        recorded[0].reply_markup.as_ref().expect("markup")["inline_keyboard"][0][0]["callback_data"],
        json!("a".repeat(64))
    );
}

#[tokio::test]
async fn edit_delete_commands_and_callback_answers() {
    let (fake, bot) = start(None).await;
    let m = bot.send_message(ChatId(3), "draft").await.expect("send");
    let edited = bot
        .edit_message_text(ChatId(3), m.id, "<b>final</b>")
        .parse_mode(ParseMode::Html)
        .await
        .expect("edit");
    assert_eq!(edited.text(), Some("final"));
    let e = api_error(
        bot.edit_message_text(ChatId(3), m.id, "<b>final</b>")
            .parse_mode(ParseMode::Html)
            .await,
    );
    assert_eq!(e, ApiError::MessageNotModified);
    let e = api_error(bot.edit_message_text(ChatId(3), MessageId(99), "x").await);
    assert_eq!(e, ApiError::MessageToEditNotFound);
    bot.delete_message(ChatId(3), m.id).await.expect("delete");
    let rec = &fake.chat_messages(BOT_ID, 3)[0];
    assert_eq!(rec.visible_text, "final");
    assert!(rec.edited_at.is_some());
    assert!(rec.deleted);

    let cmds = vec![
        BotCommand::new("start", "Start"),
        BotCommand::new("help", "Help"),
    ];
    bot.set_my_commands(cmds.clone())
        .await
        .expect("setMyCommands");
    assert_eq!(bot.get_my_commands().await.expect("getMyCommands"), cmds);
    let e = api_error(
        bot.set_my_commands(vec![BotCommand::new("Bad Command", "x")])
            .await,
    );
    assert_eq!(
        e,
        ApiError::Unknown("Bad Request: BOT_COMMAND_INVALID".into())
    );

    bot.answer_callback_query(CallbackQueryId("cb-1".into()))
        .await
        .expect("answerCallbackQuery");
    let calls = fake.calls();
    assert!(
        calls
            .iter()
            .any(|c| c.method == "answerCallbackQuery" && c.params["callback_query_id"] == "cb-1"),
        "{calls:?}"
    );
}

#[tokio::test]
async fn get_updates_long_poll_returns_an_injected_update() {
    let (fake, bot) = start(None).await;
    // Nothing queued: the poll waits for its timeout and returns empty.
    let t = Instant::now();
    let none = bot.get_updates().timeout(1).await.expect("empty poll");
    assert!(none.is_empty());
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );

    let poll = tokio::spawn({
        let bot = bot.clone();
        async move { bot.get_updates().timeout(10).await }
    });
    let mut update: Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/bot-api-samples/update-message-private-text.json"
    ))
    .expect("fixture");
    update.as_object_mut().expect("object").remove("update_id");
    let id = fake.inject_update(BOT_ID, update).expect("inject");
    let t = Instant::now();
    let updates = poll.await.expect("join").expect("getUpdates");
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(updates.len(), 1);
    assert_eq!(i64::from(updates[0].id.0), id);
    match &updates[0].kind {
        UpdateKind::Message(m) => assert_eq!(m.text(), Some("hello there")),
        other => panic!("unexpected update {other:?}"),
    }
    // Confirming with offset removes it.
    let after = bot
        .get_updates()
        .offset(updates[0].id.as_offset())
        .await
        .expect("confirm");
    assert!(after.is_empty());
}

#[tokio::test]
async fn webhook_delivery_carries_the_secret_and_blocks_get_updates() {
    let (fake, bot) = start(None).await;
    let (tx, mut rx) = mpsc::unbounded_channel::<(Option<String>, Value)>();
    let receiver = axum::Router::new()
        .route(
            "/hook",
            post(
                |State(tx): State<mpsc::UnboundedSender<(Option<String>, Value)>>,
                 headers: HeaderMap,
                 axum::Json(v): axum::Json<Value>| async move {
                    let secret = headers
                        .get("X-Telegram-Bot-Api-Secret-Token")
                        .and_then(|h| h.to_str().ok())
                        .map(str::to_owned);
                    let _ = tx.send((secret, v));
                    "ok"
                },
            ),
        )
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind(any_port())
        .await
        .expect("bind");
    let hook_addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let hook_url: url::Url = format!("http://{hook_addr}/hook").parse().expect("url");
    bot.set_webhook(hook_url.clone())
        .secret_token("s3cret-Token_1".to_owned())
        .await
        .expect("setWebhook");
    let info = bot.get_webhook_info().await.expect("getWebhookInfo");
    assert_eq!(
        info.url.as_ref().map(url::Url::as_str),
        Some(hook_url.as_str())
    );

    let update: Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/bot-api-samples/update-callback-query.json"
    ))
    .expect("fixture");
    fake.inject_update(BOT_ID, update.clone()).expect("inject");
    let (secret, body) = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("delivered in time")
        .expect("channel open");
    assert_eq!(secret.as_deref(), Some("s3cret-Token_1"));
    assert_eq!(body, update);

    let e = api_error(bot.get_updates().await);
    assert_eq!(
        e,
        ApiError::Unknown(
            "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first".into()
        )
    );
    bot.delete_webhook().await.expect("deleteWebhook");
    fake.inject_update(BOT_ID, json!({"message": {"message_id": 1, "date": 0, "chat": {"id": 1, "type": "private", "first_name": "A"}, "text": "x"}}))
        .expect("inject");
    assert_eq!(bot.get_updates().await.expect("polling again").len(), 1);
    assert_eq!(fake.stats().webhook_delivered, 1);
}

#[tokio::test]
async fn raw_http_auth_methods_params_and_testkit_endpoints() {
    let (fake, _bot) = start(Some(RateLimits::default())).await;
    let http = reqwest012::Client::new();
    let base = fake.url();
    let call = |path: &str| format!("{base}{path}");
    let method = |name: &str| call(&format!("bot{}/{name}", token()));

    let (status, body) = http.post(call("bot123:short/getMe")).exchange().await;
    assert_eq!(status, 401);
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 401, "description": "Unauthorized"})
    );
    let (status, body) = http.post(method("fooBar")).exchange().await;
    assert_eq!(status, 404);
    assert_eq!(body["description"], "Not Found");

    // Case-insensitive method, urlencoded body.
    let form = http
        .post(method("SENDMESSAGE"))
        .form(&[("chat_id", "5"), ("text", "form body")]);
    assert_eq!(form.exchange().await.0, 200);
    // Query string.
    let query = method("sendMessage?chat_id=6&text=query");
    let (_, body) = http.get(query).exchange().await;
    assert_eq!(body["result"]["text"], "query");
    // Spec checks: missing and mistyped parameters.
    let send = |params: Value| http.post(method("sendMessage")).json(&params).exchange();
    let (status, body) = send(json!({"text": "no chat"})).await;
    assert_eq!(status, 400);
    assert_eq!(body["description"], "Bad Request: chat_id is empty");
    let soon = json!({"timeout": "soon"});
    let (_, body) = http.post(method("getUpdates")).json(&soon).exchange().await;
    assert_eq!(
        body["description"],
        "Bad Request: field \"timeout\" must be of type Integer"
    );
    // A spec method without dedicated behaviour answers after the checks.
    let typing = json!({"chat_id": 5, "action": "typing"});
    let (_, body) = http
        .post(method("sendChatAction"))
        .json(&typing)
        .exchange()
        .await;
    assert_eq!(body, json!({"ok": true, "result": true}));
    // The 429 body is Telegram's.
    let (status, body) = send(json!({"chat_id": 5, "text": "again"})).await;
    assert_eq!(status, 429);
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1", "parameters": {"retry_after": 1}})
    );

    // Testkit endpoints.
    let testkit = |path: &str, params: Value| http.post(call(path)).json(&params).exchange();
    let (_, msgs) = http
        .get(call(&format!(
            "__testkit/messages?bot_id={BOT_ID}&chat_id=5"
        )))
        .exchange()
        .await;
    assert_eq!(msgs.as_array().map(Vec::len), Some(1));
    assert_eq!(msgs[0]["text"], "form body");
    let block = json!({"bot_id": BOT_ID, "chat_id": 9});
    assert_eq!(testkit("__testkit/block", block).await.0, 200);
    let no_limits = json!({"limits": null});
    assert_eq!(testkit("__testkit/limits", no_limits).await.0, 200);
    let (status, _) = send(json!({"chat_id": 9, "text": "blocked"})).await;
    assert_eq!(status, 403);
    let update = json!({"bot_id": BOT_ID, "update": {"message": {"text": "hi"}}});
    let (_, r) = testkit("__testkit/updates", update).await;
    assert_eq!(r["update_id"], 1);
    let (_, stats) = http.get(call("__testkit/stats")).exchange().await;
    assert_eq!(stats["accepted"], 2);
    assert_eq!(stats["rejected_403"], 1);
    assert_eq!(stats["rejected_429"], 1);
    assert_eq!(stats["updates_injected"], 1);
    let (status, _) = http.post(call("__testkit/reset")).exchange().await;
    assert_eq!(status, 200);
    assert!(fake.messages().is_empty());
    assert_eq!(fake.stats().accepted, 0);
}
