//! Telegram for the browser test, as production runs it: the project's fake Bot API
//! (`jobwire_testkit::telegram`), the bots' runtime against it (the main bot's placements
//! loop refunds a refused placement and tells the employer why), and the send stage's
//! broadcast sender (`jobwire_deliver::broadcast`), which sends what the panel starts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use jobwire_bot::{
    BotIdentity, BotOptions, Bots, BotsConfig, CategoryBot, MemoryDedup, PlacementsConfig,
    StoreDialogues, UpdateMode,
};
use jobwire_core::CategorySlug;
use jobwire_core::placement::PlacementPayload;
use jobwire_deliver::{BotConfig, SendStage, SendStageConfig};
use jobwire_store::{PlacementStatus, Store};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig, PayOptions, PayUser};
use teloxide::prelude::*;
use teloxide::types::LabeledPrice;
use tokio_util::sync::CancellationToken;

/// The main bot: subscriptions, placements, broadcasts.
pub const MAIN_TOKEN: &str = "1001:MAINmainMAINmainMAINmainMAIN";
pub const MAIN_ID: u64 = 1001;
/// The bot of both categories.
const DEV_TOKEN: &str = "2002:DEVdevDEVdevDEVdevDEVdevDEV";

/// The fake Telegram with the bots and the broadcast sender running against it.
pub struct Telegram {
    pub fake: FakeTelegram,
    bots: Bots,
    shutdown: CancellationToken,
    store: Arc<dyn Store>,
}

fn slug(s: &str) -> CategorySlug {
    CategorySlug::parse(s).unwrap()
}

impl Telegram {
    /// Starts the fake (no rate limits: this test is about the panel, not pacing), the bots
    /// (the main bot with placements that wait for an admin's approval, `dev` delivering web
    /// and design) and the broadcast sender.
    pub async fn start(store: Arc<dyn Store>) -> Telegram {
        let fake = FakeTelegram::start(
            "127.0.0.1:0".parse().unwrap(),
            FakeTelegramConfig {
                limits: None,
                ..FakeTelegramConfig::default()
            },
        )
        .await
        .unwrap();
        let ident = |name: &str, token: &str| BotIdentity {
            name: name.into(),
            token: token.into(),
            api_url: fake.url(),
        };
        let category = |s: &str, name: &str| CategoryBot {
            slug: slug(s),
            name: name.into(),
            bot: ident("dev", DEV_TOKEN),
            digest: false,
        };
        let config = BotsConfig {
            main: Some(ident("main", MAIN_TOKEN)),
            categories: vec![
                category("web", "Web development"),
                category("design", "Design"),
            ],
            spare_bots: Vec::new(),
            mode: UpdateMode::Polling,
            options: BotOptions {
                poll_timeout: Duration::from_secs(1),
                ..BotOptions::default()
            },
            billing: jobwire_bot::BillingConfig::default(),
            digest: None,
            placements: Some(PlacementsConfig {
                approval: true,
                prices: BTreeMap::from([(slug("web"), 100), (slug("design"), 80)]),
                every: Duration::from_millis(100),
                publish: None,
            }),
        };
        let shutdown = CancellationToken::new();
        let bots = Bots::start(
            config,
            store.clone(),
            Arc::new(StoreDialogues::new(store.clone())),
            Arc::new(MemoryDedup::default()),
            shutdown.clone(),
        )
        .await
        .unwrap();
        let sender = SendStage::new(
            store.clone(),
            Arc::new(jobwire_queue::MemoryQueue::new()),
            &[
                BotConfig {
                    name: "main".into(),
                    token: MAIN_TOKEN.into(),
                },
                BotConfig {
                    name: "dev".into(),
                    token: DEV_TOKEN.into(),
                },
            ],
            SendStageConfig {
                api_url: fake.url(),
                ..SendStageConfig::default()
            },
        )
        .unwrap();
        tokio::spawn(Arc::new(sender).run_broadcasts(shutdown.clone()));
        Telegram {
            fake,
            bots,
            shutdown,
            store,
        }
    }

    /// An employer (`chat`) pays for a placement in web through the main bot: the draft and
    /// its invoice stored as the bot's `/post` dialogue stores them, the invoice sent, the
    /// payment made at the fake Telegram, answered and recorded by the running bot. Returns
    /// the placement, waiting for approval.
    pub async fn paid_placement(&self, chat: i64, title: &str) -> jobwire_store::PlacementId {
        let store = &self.store;
        let draft = jobwire_store::PlacementDraft {
            lang: "en".into(),
            title: Some(title.into()),
            body: Some("A landing page on Tilda, the design is ready, one week.".into()),
            budget: Some("300 USD".into()),
            contact: Some("@coffee_hr".into()),
            categories: vec![slug("web")],
        };
        let p = store
            .save_placement_draft(chat, &draft, Utc::now())
            .await
            .unwrap();
        // As the bot makes them: 16 hex digits.
        let nonce = format!("{:016x}", rand::random::<u64>());
        store
            .invoice_placement(p.id, chat, 100, &nonce, Utc::now())
            .await
            .unwrap()
            .unwrap();
        let payload = PlacementPayload {
            placement: p.id.get(),
            chat_id: chat,
            nonce,
        }
        .encode();
        let main = Bot::new(MAIN_TOKEN).set_api_url(self.fake.url());
        main.send_invoice(
            ChatId(chat),
            "Placement",
            format!("{title} · Web development"),
            payload.clone(),
            jobwire_core::billing::STARS,
            [LabeledPrice::new("Placement", 100)],
        )
        .provider_token("")
        .await
        .unwrap();
        let user = u64::try_from(chat).unwrap();
        let paid = self
            .fake
            .state()
            .pay(
                MAIN_ID,
                &PayUser::new(user, "Oleg"),
                &payload,
                PayOptions::default(),
            )
            .await
            .unwrap();
        assert!(paid.accepted, "the bot accepts the payment: {paid:?}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let row = store.placement(p.id).await.unwrap().unwrap();
            if row.status == PlacementStatus::AwaitingApproval {
                return p.id;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the payment of placement {} was not recorded: {}",
                p.id,
                row.status.as_str()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The texts the main bot sent into `chat`, as the reader sees them.
    pub fn main_bot_said(&self, chat: i64) -> Vec<String> {
        self.fake
            .chat_messages(MAIN_ID, chat)
            .into_iter()
            .map(|m| m.visible_text)
            .collect()
    }

    /// The texts any bot sent into `chat`.
    pub fn said_to(&self, chat: i64) -> Vec<String> {
        self.fake
            .messages()
            .into_iter()
            .filter(|m| m.chat_id == chat)
            .map(|m| m.visible_text)
            .collect()
    }

    /// Stops the bots and the sender.
    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(10), self.bots.wait())
            .await
            .expect("the bots stop within 10 s");
        self.fake.shutdown().await;
    }
}
