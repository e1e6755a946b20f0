//! Checks at start-up that what the configuration points at answers, so a typo in a URL is
//! a one-line error naming the key instead of a pipeline that silently stalls.
//!
//! The probes are `jobwire doctor`'s ([`crate::telegram::doctor()`]); this only turns the first
//! failure into an error.

use crate::config::Settings;
use crate::telegram::doctor::{bot_client, get_me, llm_models};

/// Every bot answers `getMe`; the LLM endpoint answers at all.
pub async fn check(settings: &Settings) -> anyhow::Result<()> {
    let client = bot_client()?;
    for bot in &settings.bots {
        match get_me(settings, bot, &client).await {
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
        let url = &llm.client.base_url;
        let (_, answer) = llm_models(llm)
            .await
            .map_err(|e| anyhow::Error::new(e).context("building the HTTP client"))?;
        // Any HTTP answer (even 401/404) proves the endpoint is there.
        if let Err(e) = answer {
            anyhow::bail!("llm.base_url: cannot reach {url}: {}", e.without_url());
        }
    }
    Ok(())
}
