//! Checks at start-up that what the configuration points at answers, so a typo in a URL is
//! a one-line error naming the key instead of a pipeline that silently stalls.

use std::time::Duration;

use anyhow::Context;
use teloxide::prelude::*;

use crate::config::Settings;

/// Every bot answers `getMe`; the LLM endpoint answers at all.
pub async fn check(settings: &Settings) -> anyhow::Result<()> {
    let client = teloxide::net::default_reqwest_settings()
        .timeout(Duration::from_secs(10))
        .build()
        .context("building the HTTP client")?;
    for bot in &settings.bots {
        let api = Bot::with_client(bot.token.expose(), client.clone())
            .set_api_url(settings.api_url.clone());
        match api.get_me().await {
            Ok(me) => {
                tracing::info!(bot = %bot.name, username = ?me.username, "bot token accepted")
            }
            Err(teloxide::RequestError::Network(e)) => {
                anyhow::bail!("telegram.api_url: cannot reach {}: {e}", settings.api_url)
            }
            Err(e) => anyhow::bail!("bots.{}: Telegram refused the token: {e}", bot.name),
        }
    }
    if let Some(llm) = &settings.llm {
        let url = llm.base_url.clone();
        let probe = reqwest012::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .context("building the HTTP client")?;
        // Any HTTP answer (even 401/404) proves the endpoint is there.
        if let Err(e) = probe.get(url.clone()).send().await {
            anyhow::bail!("llm.base_url: cannot reach {url}: {}", e.without_url());
        }
    }
    Ok(())
}
