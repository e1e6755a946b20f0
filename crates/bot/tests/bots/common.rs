//! The harness: a fake Telegram, a SQLite store on a temp file, the bots started against
//! them, and builders of the updates Telegram would send.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jobwire_bot::{
    BotIdentity, BotOptions, Bots, BotsConfig, CategoryBot, DialogueStore, MemoryDedup,
    StoreDialogues, UpdateDedup, UpdateMode,
};
use jobwire_core::CategorySlug;
use jobwire_store::{SqliteStore, Store, SubscriberRow};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, RecordedMessage};
pub use jobwire_testkit::wait::eventually;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const MAIN_TOKEN: &str = "1001:MAINmainMAINmainMAINmain";
pub const WEB_TOKEN: &str = "2002:WEBwebWEBwebWEBwebWEBweb";
pub const DESIGN_TOKEN: &str = "3003:DESIGNdesignDESIGNdesign";
pub const MAIN_ID: u64 = 1001;
pub const WEB_ID: u64 = 2002;
pub const DESIGN_ID: u64 = 3003;
pub const SECRET: &str = "s3cret_Token-for-tests-0123456789abcdef";

/// How long a test waits for the bots to do something.
pub const SOON: Duration = Duration::from_secs(10);

/// A fake Telegram (no rate limits: the tests are about dialogue, not pacing) and a store.
pub struct Env {
    pub fake: FakeTelegram,
    pub store: Arc<dyn Store>,
    _dir: tempfile::TempDir,
}

impl Env {
    pub async fn new() -> Env {
        Self::with_config(FakeTelegramConfig {
            limits: None,
            ..FakeTelegramConfig::default()
        })
        .await
    }

    /// With Telegram's rate limits (1 message per second into a chat).
    pub async fn with_limits() -> Env {
        Self::with_config(FakeTelegramConfig::default()).await
    }

    async fn with_config(config: FakeTelegramConfig) -> Env {
        let fake = FakeTelegram::start("127.0.0.1:0".parse().unwrap(), config)
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(
            SqliteStore::open_path(&dir.path().join("bot.db"))
                .await
                .unwrap(),
        );
        Env {
            fake,
            store,
            _dir: dir,
        }
    }

    fn ident(&self, name: &str, token: &str) -> BotIdentity {
        BotIdentity {
            name: name.into(),
            token: token.into(),
            api_url: self.fake.url(),
        }
    }

    /// The main bot, `webbot` delivering `web` and `bots`, `designbot` delivering `design`.
    pub fn config(&self, mode: UpdateMode) -> BotsConfig {
        self.config_with(mode, jobwire_bot::BillingConfig::default())
    }

    /// [`Self::config`] with billing settings.
    pub fn config_with(&self, mode: UpdateMode, billing: jobwire_bot::BillingConfig) -> BotsConfig {
        let cat = |slug: &str, name: &str, bot: BotIdentity| CategoryBot {
            slug: CategorySlug::parse(slug).unwrap(),
            name: name.into(),
            bot,
            digest: true,
        };
        BotsConfig {
            main: Some(self.ident("main", MAIN_TOKEN)),
            categories: vec![
                cat("web", "Веб-разработка", self.ident("webbot", WEB_TOKEN)),
                cat("bots", "Боты", self.ident("webbot", WEB_TOKEN)),
                cat("design", "Дизайн", self.ident("designbot", DESIGN_TOKEN)),
            ],
            spare_bots: Vec::new(),
            mode,
            options: BotOptions::default(),
            billing,
            digest: None,
            placements: None,
        }
    }

    pub fn dialogues(&self) -> Arc<dyn DialogueStore> {
        Arc::new(StoreDialogues::new(self.store.clone()))
    }

    /// Starts the bots with the embedded dialogue store and dedup.
    pub async fn start(&self, mode: UpdateMode) -> Running {
        self.start_with(mode, self.dialogues(), Arc::new(MemoryDedup::default()))
            .await
    }

    pub async fn start_with(
        &self,
        mode: UpdateMode,
        dialogues: Arc<dyn DialogueStore>,
        dedup: Arc<dyn UpdateDedup>,
    ) -> Running {
        self.start_config(self.config(mode), dialogues, dedup).await
    }

    /// Starts the bots with a whole configuration.
    pub async fn start_config(
        &self,
        config: BotsConfig,
        dialogues: Arc<dyn DialogueStore>,
        dedup: Arc<dyn UpdateDedup>,
    ) -> Running {
        let shutdown = CancellationToken::new();
        let bots = Bots::start(
            config,
            Arc::clone(&self.store),
            dialogues,
            dedup,
            shutdown.clone(),
        )
        .await
        .unwrap();
        Running { bots, shutdown }
    }

    /// What a bot sent into a chat, in order.
    pub fn sent(&self, bot_id: u64, chat: i64) -> Vec<RecordedMessage> {
        self.fake.chat_messages(bot_id, chat)
    }

    /// Waits until the bot has sent `n` messages into the chat; returns them all.
    pub async fn wait_sent(&self, bot_id: u64, chat: i64, n: usize) -> Vec<RecordedMessage> {
        eventually(
            &format!("{n} messages from bot {bot_id} in chat {chat}"),
            SOON,
            || async {
                let got = self.sent(bot_id, chat);
                (got.len() >= n).then_some(got)
            },
        )
        .await
    }

    pub async fn subscriber(&self, chat: i64) -> Option<SubscriberRow> {
        self.store.subscriber_by_chat(chat).await.unwrap()
    }

    /// Queues an update for a bot at the fake (served by getUpdates or its webhook).
    pub fn inject(&self, bot_id: u64, update: Value) -> i64 {
        self.fake.inject_update(bot_id, update).unwrap()
    }

    /// Calls of a method the fake answered, for a bot.
    pub fn calls(&self, bot_id: u64, method: &str) -> Vec<Value> {
        self.fake
            .calls()
            .into_iter()
            .filter(|c| c.bot_id == bot_id && c.method == method)
            .map(|c| c.params)
            .collect()
    }
}

pub struct Running {
    pub bots: Bots,
    pub shutdown: CancellationToken,
}

impl Running {
    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(10), self.bots.wait())
            .await
            .expect("the bots stop within 10 s");
    }
}

static MESSAGE_IDS: AtomicI64 = AtomicI64::new(100);

fn user(id: i64, lang: &str) -> Value {
    json!({"id": id, "is_bot": false, "first_name": "Анна", "username": format!("user{id}"), "language_code": lang})
}

fn chat(id: i64) -> Value {
    json!({"id": id, "type": "private", "first_name": "Анна", "username": format!("user{id}")})
}

/// A private text message from user `from` (a command gets its `bot_command` entity).
pub fn text(from: i64, body: &str) -> Value {
    text_in(from, body, "ru")
}

pub fn text_in(from: i64, body: &str, lang: &str) -> Value {
    let mut m = json!({
        "message_id": MESSAGE_IDS.fetch_add(1, Ordering::Relaxed),
        "from": user(from, lang),
        "chat": chat(from),
        "date": 1_767_000_000,
        "text": body,
    });
    if body.starts_with('/') {
        let len = body
            .split_whitespace()
            .next()
            .unwrap_or("")
            .encode_utf16()
            .count();
        m["entities"] = json!([{"type": "bot_command", "offset": 0, "length": len}]);
    }
    json!({"message": m})
}

/// Parses an update as teloxide does from a request body.
pub fn parse(update: &Value) -> teloxide::types::Update {
    serde_json::from_str(&update.to_string()).unwrap()
}

/// The same with an explicit update id (to deliver one update twice).
pub fn with_id(mut update: Value, id: i64) -> Value {
    update["update_id"] = json!(id);
    update
}

/// A reply `body` to the bot's message `replied` (as the user sees it: text and id).
pub fn reply(from: i64, body: &str, bot_id: u64, replied: &RecordedMessage) -> Value {
    let mut u = text(from, body);
    u["message"]["reply_to_message"] = json!({
        "message_id": replied.message_id,
        "from": {"id": bot_id, "is_bot": true, "first_name": "Bot", "username": format!("test{bot_id}_bot")},
        "chat": chat(from),
        "date": 1_767_000_000,
        "text": replied.visible_text,
    });
    u
}

/// A forwarded channel post.
pub fn forwarded(from: i64, body: &str, channel: &str, post_id: i64) -> Value {
    let mut u = text(from, body);
    u["message"]["forward_origin"] = json!({
        "type": "channel",
        "chat": {"id": -1_000_000_123, "type": "channel", "title": "Jobs", "username": channel},
        "message_id": post_id,
        "date": 1_766_999_000,
    });
    u
}

/// A tap on an inline button of the bot's message `message_id`.
pub fn tap(from: i64, bot_id: u64, message_id: i64, data: &str) -> Value {
    json!({"callback_query": {
        "id": format!("cq{}", MESSAGE_IDS.fetch_add(1, Ordering::Relaxed)),
        "from": user(from, "ru"),
        "message": {
            "message_id": message_id,
            "from": {"id": bot_id, "is_bot": true, "first_name": "Bot", "username": format!("test{bot_id}_bot")},
            "chat": chat(from),
            "date": 1_767_000_000,
            "text": "menu",
        },
        "chat_instance": "42",
        "data": data,
    }})
}

/// The user blocked (`kicked`) or restarted (`member`) a bot.
pub fn member_status(from: i64, bot_id: u64, old: &str, new: &str) -> Value {
    let bot_user = json!({"id": bot_id, "is_bot": true, "first_name": "Bot", "username": format!("test{bot_id}_bot")});
    let member = |status: &str| {
        let mut m = json!({"user": bot_user, "status": status});
        if status == "kicked" {
            m["until_date"] = json!(0);
        }
        m
    };
    json!({"my_chat_member": {
        "chat": chat(from),
        "from": user(from, "ru"),
        "date": 1_767_000_000,
        "old_chat_member": member(old),
        "new_chat_member": member(new),
    }})
}

/// The callback data of every inline button of a recorded message.
pub fn buttons(m: &RecordedMessage) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(rows) = m
        .reply_markup
        .as_ref()
        .and_then(|k| k.get("inline_keyboard"))
        .and_then(Value::as_array)
    {
        for row in rows {
            for b in row.as_array().into_iter().flatten() {
                let text = b["text"].as_str().unwrap_or("").to_owned();
                let action = b
                    .get("callback_data")
                    .or_else(|| b.get("url"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                out.push((text, action));
            }
        }
    }
    out
}
