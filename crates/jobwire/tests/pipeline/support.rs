use std::time::Duration;

use jobwire::pipeline::SHIPPED_TRAINING_DATA;
use jobwire_core::dataset::LabeledPost;
use jobwire_deliver::RateLimitConfig;
use jobwire_store::SubscriberSpec;
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, OracleEntry, load_oracle_jsonl};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RateLimits, RecordedMessage};
use jobwire_testkit::wait::eventually;

#[path = "../common/mod.rs"]
mod common;

#[allow(unused_imports)] // `incoming` is used by the pipeline binary, not `distributed`
pub use common::{incoming, init, loopback};

/// How long the helpers here wait for the pipeline or a bot.
const SOON: Duration = Duration::from_secs(20);

/// `{process id}_{nanoseconds mod 10⁹}`: a name part no other test run shares.
#[cfg(jobwire_distributed_tests)]
pub fn unique_suffix() -> String {
    format!(
        "{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
            % 1_000_000_000
    )
}

/// Creates the database `name` on the PostgreSQL server at `base`; returns the connection
/// to the server (to drop it with at the end) and the new database's URL.
#[cfg(jobwire_distributed_tests)]
pub async fn create_pg_database(base: &str, name: &str) -> (sqlx::PgConnection, String) {
    use sqlx::Connection;
    let mut server = sqlx::PgConnection::connect(base).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut server)
        .await
        .unwrap();
    let mut url = url::Url::parse(base).unwrap();
    url.set_path(&format!("/{name}"));
    (server, url.to_string())
}

/// The first of `messages`, after the first `after`, whose visible text contains `needle`.
pub fn first_containing(
    messages: Vec<RecordedMessage>,
    after: usize,
    needle: &str,
) -> Option<RecordedMessage> {
    messages
        .into_iter()
        .skip(after)
        .find(|m| m.visible_text.contains(needle))
}

/// How many of `messages` contain `needle` in their visible text.
pub fn count_containing(messages: &[RecordedMessage], needle: &str) -> usize {
    messages
        .iter()
        .filter(|m| m.visible_text.contains(needle))
        .count()
}

pub fn dataset() -> Vec<LabeledPost> {
    LabeledPost::parse_all(SHIPPED_TRAINING_DATA).expect("shipped data parses")
}

/// Telegram's limits times `k`, on both the fake and our sender.
pub fn scaled_limits(k: u32) -> (RateLimits, RateLimitConfig) {
    (
        RateLimits {
            global_per_sec: 30 * k,
            per_chat_per_sec: k,
            per_group_per_min: 20 * k,
        },
        RateLimitConfig {
            global_per_sec: 30 * k,
            per_chat_per_sec: k,
            per_group_per_min: 20 * k,
            ..RateLimitConfig::default()
        },
    )
}

pub async fn fake_telegram(limits: Option<RateLimits>) -> FakeTelegram {
    FakeTelegram::start(
        loopback(),
        FakeTelegramConfig {
            limits,
            ..FakeTelegramConfig::default()
        },
    )
    .await
    .expect("fake Telegram starts")
}

pub async fn fake_llm(oracle: Vec<OracleEntry>) -> FakeLlm {
    FakeLlm::start(
        loopback(),
        FakeLlmConfig {
            oracle,
            ..FakeLlmConfig::default()
        },
    )
    .await
    .expect("fake LLM starts")
}

/// The LLM's answer for `text`: a job in the `web` category.
pub fn web_job(text: &str) -> OracleEntry {
    OracleEntry::job(text, &["web"])
}

pub fn shipped_oracle() -> Vec<OracleEntry> {
    load_oracle_jsonl(SHIPPED_TRAINING_DATA).expect("oracle parses")
}

pub fn subscriber(chat_id: i64, categories: &[&str]) -> SubscriberSpec {
    SubscriberSpec {
        chat_id,
        name: Some(format!("chat {chat_id}")),
        categories: categories
            .iter()
            .map(|c| jobwire_core::CategorySlug::parse(c).unwrap())
            .collect(),
        include: vec![],
        exclude: vec![],
        paused: false,
        quiet_hours: None,
        min_budget: None,
    }
}

pub fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

/// Whitespace-collapsed prefix of a text, for finding a post inside a rendered message.
pub fn gist(text: &str, chars: usize) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(chars)
        .collect()
}

pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Feeds dataset posts to intake as if they had just been posted in their channels.
pub async fn ingest_all<'a>(
    running: &jobwire::pipeline::Pipeline,
    posts: impl IntoIterator<Item = &'a LabeledPost>,
) {
    for post in posts {
        running
            .intake
            .ingest(jobwire_core::IncomingPost {
                channel: post.channel.clone(),
                external_id: post.id.clone(),
                text: post.text.clone(),
                author: None,
                url: None,
                posted_at: chrono::Utc::now(),
            })
            .await
            .unwrap();
    }
}

/// A Russian-speaking user's command to a bot, as Telegram delivers it.
pub fn command(user: i64, lang: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"message": {
        "message_id": 5000,
        "from": {"id": user, "is_bot": false, "first_name": "Анна", "language_code": lang},
        "chat": {"id": user, "type": "private", "first_name": "Анна"},
        "date": 1_767_000_000,
        "text": text,
        "entities": [{"type": "bot_command", "offset": 0,
                      "length": text.split_whitespace().next().unwrap_or("").encode_utf16().count()}],
    }})
}

/// A tap (callback query `id`) by `user` on a button of the bot's message `message_id`.
pub fn button_tap(id: &str, user: i64, bot: u64, message_id: i64, data: &str) -> serde_json::Value {
    serde_json::json!({"callback_query": {
        "id": id,
        "from": {"id": user, "is_bot": false, "first_name": "Анна", "language_code": "ru"},
        "message": {
            "message_id": message_id,
            "from": {"id": bot, "is_bot": true, "first_name": "Bot"},
            "chat": {"id": user, "type": "private", "first_name": "Анна"},
            "date": 1_767_000_000,
            "text": "menu",
        },
        "chat_instance": "ci",
        "data": data,
    }})
}

/// Taps `data` under bot `bot`'s message `message_id` as `user` (callback query `id`); waits
/// for the bot's answer and returns its toast.
pub async fn tap_button(
    telegram: &FakeTelegram,
    bot: usize,
    id: &str,
    user: i64,
    message_id: i64,
    data: &str,
) -> String {
    let bot_id = jobwire::testbed::bot_id(bot);
    telegram
        .inject_update(bot_id, button_tap(id, user, bot_id, message_id, data))
        .unwrap();
    eventually(&format!("the answer to {data}"), SOON, || async {
        telegram
            .calls()
            .into_iter()
            .find(|c| c.method == "answerCallbackQuery" && c.params["callback_query_id"] == id)
            .map(|c| c.params["text"].as_str().unwrap_or("").to_owned())
    })
    .await
}

/// Two bots talked to by users: `dev` delivers web, `creative` is the main bot and delivers
/// design; updates by long polling; the LLM answers every post when `llm` is given.
pub fn web_and_main_bed(llm: Option<&FakeLlm>) -> jobwire::testbed::Bed {
    jobwire::testbed::Bed {
        main_bot: Some("creative".into()),
        updates: jobwire::config::UpdatesMode::Polling,
        llm: llm.map(|l| jobwire::cli::llm_section(&l.url(), "fake-model")),
        ..dev_and_creative_bed()
    }
}

/// [`init`], the fake Telegram, a fake LLM answering `oracle`, a temporary database (kept
/// while the directory lives) and the settings of [`web_and_main_bed`] over them.
pub async fn web_and_main_world(
    oracle: Vec<OracleEntry>,
) -> (
    FakeTelegram,
    FakeLlm,
    tempfile::TempDir,
    jobwire::config::Settings,
) {
    init();
    let telegram = fake_telegram(None).await;
    let llm = fake_llm(oracle).await;
    let (dir, db) = jobwire::testbed::temp_db().unwrap();
    let settings = web_and_main_bed(Some(&llm))
        .settings(telegram.url(), &db)
        .unwrap();
    (telegram, llm, dir, settings)
}

/// Two bots: `dev` delivers web, `creative` design; the rest as [`Bed::default`].
///
/// [`Bed::default`]: jobwire::testbed::Bed::default
pub fn dev_and_creative_bed() -> jobwire::testbed::Bed {
    jobwire::testbed::Bed {
        bots: vec!["dev".into(), "creative".into()],
        routes: vec![
            ("web".into(), "dev".into()),
            ("design".into(), "creative".into()),
        ],
        ..jobwire::testbed::Bed::default()
    }
}
