use std::net::SocketAddr;

use jobwire::pipeline::SHIPPED_TRAINING_DATA;
use jobwire_core::dataset::LabeledPost;
use jobwire_deliver::RateLimitConfig;
use jobwire_store::SubscriberSpec;
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, OracleEntry, load_oracle_jsonl};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RateLimits};

pub fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

pub fn init() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
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

/// Two bots talked to by users: `dev` delivers web, `creative` is the main bot and delivers
/// design; updates by long polling; the LLM answers every post when `llm` is given.
pub fn web_and_main_bed(llm: Option<&FakeLlm>) -> jobwire::testbed::Bed {
    jobwire::testbed::Bed {
        bots: vec!["dev".into(), "creative".into()],
        routes: vec![
            ("web".into(), "dev".into()),
            ("design".into(), "creative".into()),
        ],
        main_bot: Some("creative".into()),
        updates: jobwire::config::UpdatesMode::Polling,
        llm: llm.map(|l| jobwire::cli::llm_section(&l.url(), "fake-model")),
        ..jobwire::testbed::Bed::default()
    }
}
