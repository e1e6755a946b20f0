//! `jobwire doctor`: checks everything the configuration points at (database, queue, Redis,
//! bots, the LLM endpoint, MTProto sessions, channels, the alert target) and prints one line
//! per check. The probes of the bots and the LLM endpoint are also what
//! [`crate::preflight::check`] runs at start-up.

use std::future::Future;
use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use jobwire_deliver::BotConfig;
use jobwire_mtproto::{AccountConfig, ChannelRef, LoginError};
use teloxide::prelude::*;
use teloxide::types::Me;

use super::MtprotoSection;
use super::login::describe;
use super::section::looks_like_telegram;
use crate::config::{ConfigError, Environment, Settings};

/// One result of `jobwire doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked: `database`, `bot dev`, `session parser1`, `channel @x`.
    pub name: String,
    /// Whether it is fine.
    pub ok: bool,
    /// What was found (never a secret).
    pub detail: String,
    /// What to do when it is not fine.
    pub fix: Option<String>,
}

impl Check {
    fn pass(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ok: false,
            detail: detail.into().replace('\n', " "),
            fix: Some(fix.into()),
        }
    }

    /// The check as one line: `ok   database  sqlite://jobwire.db` or
    /// `FAIL bot dev: getMe answered 401 Unauthorized — check …`.
    pub fn line(&self) -> String {
        if self.ok {
            format!("ok   {}  {}", self.name, self.detail)
        } else {
            match &self.fix {
                Some(fix) => format!("FAIL {}: {} — {}", self.name, self.detail, fix),
                None => format!("FAIL {}: {}", self.name, self.detail),
            }
        }
    }
}

/// Writes one line per check.
pub fn print(checks: &[Check], out: &mut dyn Write) -> std::io::Result<()> {
    for c in checks {
        writeln!(out, "{}", c.line())?;
    }
    Ok(())
}

const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

async fn within<T>(
    limit: Duration,
    fut: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r,
        Err(_) => anyhow::bail!("no answer within {} s", limit.as_secs()),
    }
}

fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

/// The environment variable a bot's token is read from by default.
fn default_token_env(bot: &str) -> String {
    format!(
        "JOBWIRE_BOT_{}_TOKEN",
        bot.to_ascii_uppercase().replace('-', "_")
    )
}

/// Checks everything the configuration points at: the database, the queue, Redis (when
/// configured), every bot (`getMe`), the LLM endpoint (`GET …/models` with the key), every
/// MTProto session, the channel references and the alert target. Never fails itself and
/// never reports a secret.
pub async fn doctor(
    settings: &Settings,
    mtproto: Option<&MtprotoSection>,
    env: &dyn Environment,
) -> Vec<Check> {
    let mut checks = Vec::new();
    checks.push(check_database(settings).await);
    checks.push(check_queue(settings).await);
    if let Some(redis) = &settings.redis {
        checks.push(check_redis(redis.url.expose()).await);
    }
    checks.extend(check_bots(settings).await);
    if let Some(llm) = &settings.llm {
        checks.push(check_llm(llm).await);
    }
    if let Some(section) = mtproto {
        checks.extend(check_mtproto(settings, section, env).await);
    }
    checks
}

async fn check_database(settings: &Settings) -> Check {
    let shown = settings.database_url.to_string();
    let r = within(PROBE_TIMEOUT, async {
        let store = crate::pipeline::open_store(settings).await?;
        store.ping().await.context("ping")?;
        Ok(())
    })
    .await;
    match r {
        Ok(()) => Check::pass("database", shown),
        Err(e) => Check::fail(
            "database",
            one_line(&e),
            "check database.url and that the database is running",
        ),
    }
}

async fn check_queue(settings: &Settings) -> Check {
    let shown = settings.queue_url.to_string();
    let r = within(PROBE_TIMEOUT, async {
        let queue = crate::pipeline::open_queue(settings).await?;
        for topic in jobwire_queue::Topic::ALL {
            queue
                .depth(topic)
                .await
                .with_context(|| format!("the depth of {} is unavailable", topic.name()))?;
        }
        Ok(())
    })
    .await;
    match r {
        Ok(()) => Check::pass("queue", shown),
        Err(e) => Check::fail(
            "queue",
            one_line(&e),
            "check queue.url and that the broker is running",
        ),
    }
}

async fn check_redis(url: &str) -> Check {
    let shown = crate::config::redact_url(url);
    let r = within(PROBE_TIMEOUT, async {
        let client = redis::Client::open(url).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| anyhow::anyhow!("PING: {e}"))?;
        Ok(())
    })
    .await;
    match r {
        Ok(()) => Check::pass("redis", shown),
        Err(e) => Check::fail(
            "redis",
            one_line(&e).replace(url, &shown),
            "check redis.url and that Redis is running",
        ),
    }
}

/// The HTTP client of the bot probes and of the admin alerts (at most [`PROBE_TIMEOUT`] a
/// request).
pub(crate) fn bot_client() -> anyhow::Result<reqwest012::Client> {
    teloxide::net::default_reqwest_settings()
        .timeout(PROBE_TIMEOUT)
        .build()
        .context("building the HTTP client")
}

/// Asks Telegram (at `telegram.api_url`) who `bot` is: `getMe` with its token.
pub(crate) async fn get_me(
    settings: &Settings,
    bot: &BotConfig,
    client: &reqwest012::Client,
) -> Result<Me, teloxide::RequestError> {
    Bot::with_client(bot.token.expose(), client.clone())
        .set_api_url(settings.api_url.clone())
        .get_me()
        .await
}

async fn check_bots(settings: &Settings) -> Vec<Check> {
    let client = match bot_client() {
        Ok(c) => c,
        Err(e) => {
            return vec![Check::fail(
                "bots",
                one_line(&e),
                "this machine cannot make HTTPS requests",
            )];
        }
    };
    let mut checks = Vec::new();
    for bot in &settings.bots {
        let name = format!("bot {}", bot.name);
        let token_fix = format!(
            "check the token in {} (or the bot's token_env)",
            default_token_env(&bot.name)
        );
        checks.push(match get_me(settings, bot, &client).await {
            Ok(me) => Check::pass(name, format!("@{} (id {})", me.username(), me.id)),
            Err(teloxide::RequestError::Api(teloxide::ApiError::InvalidToken)) => {
                Check::fail(name, "getMe answered 401 Unauthorized", token_fix)
            }
            Err(teloxide::RequestError::Network(e)) => Check::fail(
                name,
                format!("cannot reach {}: {e}", settings.api_url),
                "check telegram.api_url and the network",
            ),
            Err(e) => Check::fail(name, format!("getMe failed: {e}"), token_fix),
        });
    }
    checks
}

/// Asks the LLM endpoint for its models: `GET {llm.base_url}/models` with the API key, at
/// most [`PROBE_TIMEOUT`]. The outer error: no HTTP client could be built; otherwise the URL
/// asked and its answer (with any status), or why there is none.
pub(crate) async fn llm_models(
    llm: &crate::config::LlmSettings,
) -> Result<(String, reqwest012::Result<reqwest012::Response>), reqwest012::Error> {
    let url = format!("{}/models", llm.client.base_url.trim_end_matches('/'));
    let client = reqwest012::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()?;
    let mut request = client.get(url.as_str());
    if let Some(key) = &llm.client.api_key {
        request = request.bearer_auth(key.expose());
    }
    Ok((url, request.send().await))
}

async fn check_llm(llm: &crate::config::LlmSettings) -> Check {
    let name = "llm";
    let (url, sent) = match llm_models(llm).await {
        Ok(asked) => asked,
        Err(e) => {
            return Check::fail(
                name,
                e.to_string(),
                "this machine cannot make HTTPS requests",
            );
        }
    };
    let response = match sent {
        Ok(r) => r,
        Err(e) => {
            return Check::fail(
                name,
                format!("cannot reach {url}: {}", e.without_url()),
                "check llm.base_url and that the server is running",
            );
        }
    };
    let status = response.status();
    if status == reqwest012::StatusCode::UNAUTHORIZED || status == reqwest012::StatusCode::FORBIDDEN
    {
        return Check::fail(
            name,
            format!("GET {url} answered {status}"),
            "check the API key (the variable named by llm.api_key_env, default JOBWIRE_LLM_API_KEY)",
        );
    }
    if !status.is_success() {
        return Check::fail(
            name,
            format!("GET {url} answered {status}"),
            "check llm.base_url (it should end where /chat/completions starts, e.g. …/v1)",
        );
    }
    let listed = crate::preflight::lists_model(response, &llm.client.model).await;
    let note = match listed {
        Some(true) => format!("model {} is listed", llm.client.model),
        Some(false) => format!(
            "model {} is not in its list; requests may fail",
            llm.client.model
        ),
        None => "no model list".to_owned(),
    };
    Check::pass(name, format!("{} answered ({note})", llm.client.base_url))
}

fn session_fix(e: &LoginError, id: &str) -> String {
    match e {
        LoginError::NotLoggedIn(_) => format!("run `jobwire login --account {id}`"),
        LoginError::Session(_) => format!(
            "check the session file's path and permissions, or run `jobwire login --account {id}` again"
        ),
        LoginError::FloodWait(_) => "wait, then run `jobwire doctor` again".to_owned(),
        _ => "check the network connection to Telegram, then run `jobwire doctor` again".to_owned(),
    }
}

/// Resolves every configured channel through one authorised account (an invite link is
/// checked without joining): one line per channel, naming what is wrong.
async fn check_channels_reachable(
    config: &AccountConfig,
    account: &str,
    channels: &[String],
) -> Vec<Check> {
    use jobwire_mtproto::Account;
    let mut checks = Vec::new();
    let connected = tokio::time::timeout(
        SESSION_TIMEOUT,
        jobwire_mtproto::GrammersAccount::connect(config),
    )
    .await;
    let client = match connected {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            checks.push(Check::fail(
                format!("channels via {account}"),
                e.to_string(),
                "run `jobwire doctor` again; if it persists, `jobwire login`",
            ));
            return checks;
        }
        Err(_) => {
            checks.push(Check::fail(
                format!("channels via {account}"),
                "Telegram did not answer in time",
                "check the network connection to Telegram",
            ));
            return checks;
        }
    };
    for raw in channels {
        let Ok(channel) = ChannelRef::parse(raw) else {
            continue; // reported by the parse check
        };
        let name = format!("channel {}", channel.handle());
        let resolved = tokio::time::timeout(SESSION_TIMEOUT, client.resolve(&channel)).await;
        checks.push(match resolved {
            Ok(Ok(peer)) => Check::pass(name, format!("reachable via {account}: {}", peer.title)),
            Ok(Err(e)) => Check::fail(
                name,
                e.to_string(),
                "check the link; for a private channel ask for a fresh invite",
            ),
            Err(_) => Check::fail(name, "Telegram did not answer in time", "try again later"),
        });
    }
    checks
}

async fn check_mtproto(
    settings: &Settings,
    section: &MtprotoSection,
    env: &dyn Environment,
) -> Vec<Check> {
    let mut checks = Vec::new();
    if section.accounts.is_empty() {
        checks.push(Check::fail(
            "mtproto",
            "no account is configured",
            "add a [[mtproto.accounts]] with id and api_id, then run `jobwire login`",
        ));
    }
    // Resolve first: `env` is not `Sync`, so it is not held across the network checks.
    let accounts: Vec<(String, Result<AccountConfig, ConfigError>)> = (0..section.accounts.len())
        .map(|i| {
            (
                section.accounts[i].id.clone(),
                section.accounts[i].resolve(i, env),
            )
        })
        .collect();
    // The first account whose session works also checks that every channel answers.
    let mut reachability_checked = false;
    for (id, config) in accounts {
        let name = format!("session {id}");
        let config = match config {
            Ok(c) => c,
            Err(e) => {
                checks.push(Check::fail(
                    name,
                    e.to_string(),
                    "set the variable to the API hash from my.telegram.org",
                ));
                continue;
            }
        };
        let checked =
            tokio::time::timeout(SESSION_TIMEOUT, jobwire_mtproto::check_session(&config)).await;
        if matches!(checked, Ok(Ok(_))) && !reachability_checked {
            reachability_checked = true;
            checks.extend(check_channels_reachable(&config, &id, &section.channels).await);
        }
        checks.push(match checked {
            Ok(Ok(status)) => Check::pass(name, format!("logged in as {}", describe(&status))),
            Ok(Err(e)) => Check::fail(name, e.to_string(), session_fix(&e, &id)),
            Err(_) => Check::fail(
                name,
                format!(
                    "Telegram did not answer within {} s",
                    SESSION_TIMEOUT.as_secs()
                ),
                "check the network connection to Telegram",
            ),
        });
    }

    let mut parsed = 0;
    for (i, raw) in section.channels.iter().enumerate() {
        match ChannelRef::parse(raw) {
            Ok(_) => parsed += 1,
            Err(e) => checks.push(Check::fail(
                format!("channel mtproto.channels[{i}]"),
                e.to_string(),
                "write it as @username, t.me/username or an invite link t.me/+HASH",
            )),
        }
    }
    // Posts name their channel canonically (`@lowercase`, `https://t.me/+HASH`); rules
    // stored under another spelling would not apply to them.
    let mut configured = 0;
    for (i, ch) in settings.channels.iter().enumerate() {
        if !looks_like_telegram(&ch.handle) {
            continue;
        }
        match ChannelRef::parse(&ch.handle) {
            Ok(r) if r.handle() != ch.handle => checks.push(Check::fail(
                format!("channel channels[{i}]"),
                format!(
                    "handle {:?} does not match how its posts are named ({:?}), so its rules would not apply",
                    ch.handle,
                    r.handle()
                ),
                format!("write the handle as {:?}", r.handle()),
            )),
            Ok(_) => configured += 1,
            Err(e) => checks.push(Check::fail(
                format!("channel channels[{i}]"),
                e.to_string(),
                "write it as @username, t.me/username or an invite link t.me/+HASH",
            )),
        }
    }
    checks.push(Check::pass(
        "channels",
        format!(
            "{parsed} in [mtproto] and {configured} in [[channels]] are valid Telegram references"
        ),
    ));

    match super::section::admin_target(section.admin_chat_id, section.admin_bot.as_ref(), settings)
    {
        Ok(Some((bot, chat))) => checks.push(Check::pass(
            "alerts",
            format!("bot {} → chat {chat}", bot.name),
        )),
        Ok(None) => checks.push(Check::pass(
            "alerts",
            "only logged (set mtproto.admin_chat_id to receive them in Telegram)",
        )),
        Err(e) => checks.push(Check::fail(
            "alerts",
            e.to_string(),
            "name a [[bots]] entry in mtproto.admin_bot",
        )),
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_checks_are_one_line_with_their_fix() {
        let c = Check::fail("bot dev", "getMe answered\n401", "check X");
        assert_eq!(c.line(), "FAIL bot dev: getMe answered 401 — check X");
        assert_eq!(
            Check::pass("database", "sqlite://x.db").line(),
            "ok   database  sqlite://x.db"
        );
    }
}
