//! Redis (the dialogue state) away for a moment, or for longer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use jobwire_bot::{BotError, DialogueState, DialogueStore, MemoryDedup, UpdateMode};

use crate::common::*;

const DAN: i64 = 905;

/// A dialogue store whose first `failures` calls fail like a Redis that went away.
#[derive(Debug)]
struct Flaky {
    inner: Arc<dyn DialogueStore>,
    failures: AtomicU32,
}

impl Flaky {
    fn check(&self) -> Result<(), BotError> {
        let left = self.failures.load(Ordering::SeqCst);
        if left == 0 {
            return Ok(());
        }
        self.failures.store(left - 1, Ordering::SeqCst);
        Err(BotError::Redis(redis::RedisError::from((
            redis::ErrorKind::Io,
            "connection refused",
        ))))
    }
}

#[async_trait]
impl DialogueStore for Flaky {
    async fn get(&self, bot: &str, chat_id: i64) -> Result<Option<DialogueState>, BotError> {
        self.check()?;
        self.inner.get(bot, chat_id).await
    }

    async fn set(&self, bot: &str, chat_id: i64, state: DialogueState) -> Result<(), BotError> {
        self.check()?;
        self.inner.set(bot, chat_id, state).await
    }

    async fn clear(&self, bot: &str, chat_id: i64) -> Result<(), BotError> {
        self.check()?;
        self.inner.clear(bot, chat_id).await
    }
}

async fn start_flaky(env: &Env, failures: u32) -> Running {
    let flaky = Arc::new(Flaky {
        inner: env.dialogues(),
        failures: AtomicU32::new(failures),
    });
    env.start_with(UpdateMode::Polling, flaky, Arc::new(MemoryDedup::default()))
        .await
}

#[tokio::test]
async fn a_brief_outage_is_retried_unnoticed() {
    let env = Env::new().await;
    let bots = start_flaky(&env, 2).await;
    env.inject(MAIN_ID, text(DAN, "/include"));
    let sent = env.wait_sent(MAIN_ID, DAN, 1).await;
    assert!(
        sent[0].visible_text.contains("ключевые слова"),
        "{}",
        sent[0].visible_text
    );
    env.inject(MAIN_ID, text(DAN, "rust"));
    env.wait_sent(MAIN_ID, DAN, 2).await;
    assert_eq!(env.subscriber(DAN).await.unwrap().include, ["rust"]);
    assert!(
        env.sent(MAIN_ID, DAN)
            .iter()
            .all(|m| !m.visible_text.contains("Временная ошибка"))
    );
    bots.stop().await;
}

#[tokio::test]
async fn a_lasting_outage_asks_the_user_to_try_again() {
    let env = Env::new().await;
    let bots = start_flaky(&env, u32::MAX).await;
    env.inject(MAIN_ID, text(DAN, "/include"));
    let sent = env.wait_sent(MAIN_ID, DAN, 1).await;
    assert!(
        sent[0].visible_text.contains("Временная ошибка"),
        "{}",
        sent[0].visible_text
    );
    // Stopping waits for the update's handling to end: nothing can follow the apology.
    bots.stop().await;
    assert_eq!(env.sent(MAIN_ID, DAN).len(), 1, "one apology, no prompt");
}
