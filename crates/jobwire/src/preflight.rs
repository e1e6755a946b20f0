//! Checks at start-up that what the configuration points at answers, so a typo in a URL is
//! a one-line error naming the key instead of a pipeline that silently stalls.
//!
//! The probes are `jobwire doctor`'s ([`crate::telegram::doctor()`]); this only turns the first
//! failure into an error.

use std::time::Duration;

use crate::config::{LlmSettings, Settings};
use crate::telegram::doctor::{bot_client, get_me, llm_models};

/// How long the LLM check waits for each answer.
const LLM_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Every bot answers `getMe`; the LLM endpoint answers, takes the key and knows the model.
pub async fn check(settings: &Settings) -> anyhow::Result<()> {
    check_for(settings, true, true).await
}

/// [`check`] for what a process's roles use: the bots (`bots`: the sender role) and the LLM
/// (`llm`: the classifier role).
pub async fn check_for(settings: &Settings, bots: bool, llm: bool) -> anyhow::Result<()> {
    if bots {
        check_bots(settings).await?;
    }
    if llm && let Some(llm) = &settings.llm {
        check_llm(llm).await?;
    }
    Ok(())
}

async fn check_bots(settings: &Settings) -> anyhow::Result<()> {
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
    Ok(())
}

/// What the LLM endpoint said about the key and the model.
#[derive(Debug, PartialEq, Eq)]
enum LlmVerdict {
    /// The key is accepted and the model known (or nothing said otherwise).
    Fine,
    KeyRefused(u16),
    UnknownModel(u16),
}

fn key_refused(status: reqwest012::StatusCode) -> bool {
    status == reqwest012::StatusCode::UNAUTHORIZED || status == reqwest012::StatusCode::FORBIDDEN
}

/// Reads an OpenAI-style error answer: 401/403 refuse the key; 404, or an error whose code
/// is `model_not_found` (some providers answer 400 for it), mean the model is unknown.
fn verdict(status: reqwest012::StatusCode, body: &str) -> LlmVerdict {
    if key_refused(status) {
        return LlmVerdict::KeyRefused(status.as_u16());
    }
    if status.is_success() {
        return LlmVerdict::Fine;
    }
    let code = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .and_then(|e| e.get("code"))
                .and_then(|c| c.as_str())
                .map(str::to_owned)
        });
    if status == reqwest012::StatusCode::NOT_FOUND || code.as_deref() == Some("model_not_found") {
        return LlmVerdict::UnknownModel(status.as_u16());
    }
    LlmVerdict::Fine
}

/// The LLM endpoint answers, accepts the key and knows the model: `GET /models` first (no
/// tokens spent); when it does not list the model (or has no model list), one chat
/// completion of one token for the model decides. Any other answer (a 429, a 5xx) passes
/// with a warning: the endpoint is there, and the classifier retries what is transient.
async fn check_llm(llm: &LlmSettings) -> anyhow::Result<()> {
    let url = &llm.client.base_url;
    let model = &llm.client.model;
    let (_, answer) = llm_models(llm)
        .await
        .map_err(|e| anyhow::Error::new(e).context("building the HTTP client"))?;
    let response = match answer {
        Ok(r) => r,
        Err(e) => anyhow::bail!("llm.base_url: cannot reach {url}: {}", e.without_url()),
    };
    let status = response.status();
    if key_refused(status) {
        return Err(refused_key(status.as_u16()));
    }
    if status.is_success() {
        let listed = lists_model(response, model).await;
        if listed == Some(true) {
            tracing::info!(%url, %model, "LLM key accepted; the model is listed");
            return Ok(());
        }
    }
    let (status, body) = match tiny_completion(llm).await {
        Ok(answer) => answer,
        Err(ProbeError::Client(e)) => {
            return Err(anyhow::Error::new(e).context("building the HTTP client"));
        }
        // The model list answered a moment ago: a slow answer is the model's load, not a
        // wrong key or model, and the classifier waits and retries such requests.
        Err(ProbeError::Send(e)) if e.is_timeout() => {
            tracing::warn!(%url, %model, "the LLM endpoint did not answer a test request in time; starting anyway");
            return Ok(());
        }
        Err(ProbeError::Send(e)) => {
            anyhow::bail!("llm.base_url: cannot reach {url}: {}", e.without_url())
        }
    };
    match verdict(status, &body) {
        LlmVerdict::KeyRefused(code) => Err(refused_key(code)),
        LlmVerdict::UnknownModel(code) => Err(anyhow::anyhow!(
            "llm.model: the LLM endpoint {url} does not know the model {model:?} (HTTP {code}); \
             check llm.model"
        )),
        LlmVerdict::Fine if status.is_success() => {
            tracing::info!(%url, %model, "LLM key and model accepted");
            Ok(())
        }
        LlmVerdict::Fine => {
            tracing::warn!(%url, %model, status = status.as_u16(), "the LLM endpoint answered a test request with an error; starting anyway");
            Ok(())
        }
    }
}

fn refused_key(status: u16) -> anyhow::Error {
    anyhow::anyhow!(
        "llm: the LLM key is refused (HTTP {status}); check JOBWIRE_LLM_API_KEY (or the \
         variable llm.api_key_env names)"
    )
}

enum ProbeError {
    Client(reqwest012::Error),
    Send(reqwest012::Error),
}

/// `POST {base_url}/chat/completions` for the model with one short message and one output
/// token: what the classifier's requests will meet, at the cost of a few tokens.
async fn tiny_completion(
    llm: &LlmSettings,
) -> Result<(reqwest012::StatusCode, String), ProbeError> {
    let url = format!(
        "{}/chat/completions",
        llm.client.base_url.trim_end_matches('/')
    );
    let client = reqwest012::Client::builder()
        .timeout(LLM_PROBE_TIMEOUT)
        .build()
        .map_err(ProbeError::Client)?;
    let mut request = client.post(url.as_str()).json(&serde_json::json!({
        "model": llm.client.model,
        "messages": [{"role": "user", "content": "ping"}],
        "max_completion_tokens": 1,
    }));
    if let Some(key) = &llm.client.api_key {
        request = request.bearer_auth(key.expose());
    }
    let response = request.send().await.map_err(ProbeError::Send)?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    Ok((status, body))
}

/// Whether a `GET …/models` answer lists `model` (`None`: the body is not such a list).
pub async fn lists_model(response: reqwest012::Response, model: &str) -> Option<bool> {
    let v = response.json::<serde_json::Value>().await.ok()?;
    let models = v.get("data")?.as_array()?;
    Some(
        models
            .iter()
            .any(|m| m.get("id").and_then(|i| i.as_str()) == Some(model)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_the_key_or_the_model() {
        use reqwest012::StatusCode as S;
        assert_eq!(verdict(S::OK, "{}"), LlmVerdict::Fine);
        assert_eq!(verdict(S::UNAUTHORIZED, ""), LlmVerdict::KeyRefused(401));
        assert_eq!(verdict(S::FORBIDDEN, ""), LlmVerdict::KeyRefused(403));
        assert_eq!(verdict(S::NOT_FOUND, ""), LlmVerdict::UnknownModel(404));
        assert_eq!(
            verdict(
                S::BAD_REQUEST,
                r#"{"error":{"message":"no such model","code":"model_not_found"}}"#
            ),
            LlmVerdict::UnknownModel(400)
        );
        assert_eq!(verdict(S::TOO_MANY_REQUESTS, ""), LlmVerdict::Fine);
        assert_eq!(verdict(S::INTERNAL_SERVER_ERROR, ""), LlmVerdict::Fine);
    }
}
