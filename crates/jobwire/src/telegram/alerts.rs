//! Alerts to the admin chat (`[mtproto] admin_chat_id`, sent through `admin_bot`): the
//! reader's alerts, and [`admin_alert_fn`] for any role.

use std::sync::Arc;

use teloxide::prelude::*;

use super::MtprotoSettings;
use super::doctor::bot_client;
use crate::config::Settings;

/// Sends alerts to the admin chat through the admin bot (or nowhere without one).
pub(super) struct AdminAlerts {
    target: Option<(Bot, ChatId)>,
    /// What the messages start with (`jobwire reader:`, `jobwire:`).
    prefix: &'static str,
}

/// Sends a message to the admin chat (`[mtproto] admin_chat_id` through `admin_bot`) from
/// any role, in the background: `None` when no admin chat is configured.
pub fn admin_alert_fn(
    settings: &Settings,
    section: &MtprotoSettings,
) -> anyhow::Result<Option<jobwire_classify::cascade::AlertFn>> {
    let mut alerts = AdminAlerts::new(settings, section)?;
    if alerts.target.is_none() {
        return Ok(None);
    }
    alerts.prefix = "jobwire:";
    let alerts = Arc::new(alerts);
    Ok(Some(Arc::new(move |message: String| {
        let alerts = alerts.clone();
        tokio::spawn(async move { alerts.send(&message).await });
    })))
}

/// Telegram's limit on a message's text, in characters.
const MAX_ALERT_CHARS: usize = 4000;

impl AdminAlerts {
    pub(super) fn new(settings: &Settings, section: &MtprotoSettings) -> anyhow::Result<Self> {
        let Some((bot, chat)) = section.admin_target(settings)? else {
            return Ok(Self {
                target: None,
                prefix: "jobwire reader:",
            });
        };
        let api = Bot::with_client(bot.token.expose(), bot_client()?)
            .set_api_url(settings.api_url.clone());
        Ok(Self {
            target: Some((api, ChatId(chat))),
            prefix: "jobwire reader:",
        })
    }

    /// Sends `message` as plain text (no parse mode: channel names cannot inject markup).
    /// Failures are logged; a 429 is waited out up to three times.
    pub(super) async fn send(&self, message: &str) {
        let Some((bot, chat)) = &self.target else {
            return;
        };
        let text: String = format!("{} {message}", self.prefix)
            .chars()
            .take(MAX_ALERT_CHARS)
            .collect();
        for _ in 0..3 {
            match bot.send_message(*chat, text.clone()).await {
                Ok(_) => return,
                Err(teloxide::RequestError::RetryAfter(wait)) => {
                    tokio::time::sleep(wait.duration()).await;
                }
                Err(e) => {
                    tracing::warn!(chat = chat.0, error = %e, "cannot send an alert to the admin chat");
                    return;
                }
            }
        }
        tracing::warn!(
            chat = chat.0,
            "cannot send an alert to the admin chat: rate-limited"
        );
    }
}
