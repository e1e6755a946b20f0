//! The Telegram user-account reader inside `jobwire`: the `[mtproto]` configuration section,
//! `jobwire login`, `jobwire doctor`, and the parser role's reader task.
//!
//! The reader itself lives in `jobwire-mtproto`; this module connects it to the rest of the
//! pipeline:
//!
//! - [`MtprotoSection`] — accounts, channels, the admin chat for alerts, reader pacing.
//! - [`SqlReaderStore`] — the reader's cursors, peers and assignments in the store's source
//!   state (`tg.cursor`, `tg.peer`, `tg.assign`), so they live in the same database as the
//!   posts and survive restarts.
//! - [`login`] / [`login_command`] — signs an account in once from the terminal.
//! - [`doctor`] / [`print`] — checks everything the configuration points at, one line each.
//! - [`run_reader`] / [`spawn_reader`] — connects the accounts and hands every post to the
//!   intake stage; alerts go to the admin chat through a bot.

use std::collections::HashSet;
use std::future::Future;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use jobwire_deliver::BotConfig;
use jobwire_intake::stage::IntakeStage;
use jobwire_mtproto::{
    Account, AccountConfig, ChannelRef, Clock, GrammersAccount, LoginError, LoginPrompts, Reader,
    ReaderConfig, ReaderEvent, ReaderStore, ResolvedPeer, SessionStatus, StoreError, SystemClock,
};
use jobwire_store::Store;
use serde::Deserialize;
use teloxide::prelude::*;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, Environment, ProcessEnv, Settings};

// ---------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------

/// `[mtproto]`: the Telegram user accounts that read channels, and how fast they may join.
///
/// The reader reads every channel in `channels` plus every enabled `[[channels]]` entry whose
/// handle is a Telegram reference (`@name` or a `t.me` link). Defaults of the pacing keys are
/// those of [`ReaderConfig`], which stay well under Telegram's anti-abuse limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MtprotoSection {
    /// The user accounts (`[[mtproto.accounts]]`), in preference order.
    #[serde(default)]
    pub accounts: Vec<AccountSection>,
    /// Channels to read: `@username`, `t.me/username` or an invite link `t.me/+HASH`.
    #[serde(default)]
    pub channels: Vec<String>,
    /// The chat that receives the reader's alerts (silent channels, dead sessions, failed
    /// joins). Without it alerts are only logged.
    pub admin_chat_id: Option<i64>,
    /// The `[[bots]]` name that sends the alerts; default: the first bot.
    pub admin_bot: Option<String>,
    /// Least seconds between two joins of one account.
    #[serde(default = "default_join_interval_secs")]
    pub join_interval_secs: u64,
    /// Random extra seconds added to each join interval.
    #[serde(default = "default_join_jitter_secs")]
    pub join_jitter_secs: u64,
    /// Most joins per account in 24 hours.
    #[serde(default = "default_max_joins_per_day")]
    pub max_joins_per_day: usize,
    /// Most channels one account reads (Telegram's limit is about 500).
    #[serde(default = "default_channels_per_account")]
    pub channels_per_account: usize,
    /// A channel without a live update for this many seconds is polled.
    #[serde(default = "default_poll_interval_secs")]
    pub poll_interval_secs: u64,
    /// Newest posts handed on when a channel is first joined (0: start from now).
    #[serde(default)]
    pub initial_backfill: usize,
}

/// `[[mtproto.accounts]]`: one Telegram user account.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountSection {
    /// A short name for logs, alerts and `jobwire login --account` (`"parser1"`).
    pub id: String,
    /// The API id of your application at my.telegram.org.
    pub api_id: i32,
    /// The environment variable holding the application's API hash (a secret, read only
    /// from the environment); default `JOBWIRE_TELEGRAM_API_HASH`.
    #[serde(default = "default_api_hash_env")]
    pub api_hash_env: String,
    /// The session file `jobwire login` writes (mode 0600); default `<id>.session`.
    pub session_path: Option<PathBuf>,
}

fn default_api_hash_env() -> String {
    "JOBWIRE_TELEGRAM_API_HASH".to_owned()
}
fn default_join_interval_secs() -> u64 {
    ReaderConfig::default().join_interval.as_secs()
}
fn default_join_jitter_secs() -> u64 {
    ReaderConfig::default().join_jitter.as_secs()
}
fn default_max_joins_per_day() -> usize {
    ReaderConfig::default().max_joins_per_day
}
fn default_channels_per_account() -> usize {
    ReaderConfig::default().channels_per_account
}
fn default_poll_interval_secs() -> u64 {
    ReaderConfig::default().poll_interval.as_secs()
}

impl Default for MtprotoSection {
    fn default() -> Self {
        Self {
            accounts: Vec::new(),
            channels: Vec::new(),
            admin_chat_id: None,
            admin_bot: None,
            join_interval_secs: default_join_interval_secs(),
            join_jitter_secs: default_join_jitter_secs(),
            max_joins_per_day: default_max_joins_per_day(),
            channels_per_account: default_channels_per_account(),
            poll_interval_secs: default_poll_interval_secs(),
            initial_backfill: 0,
        }
    }
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

impl AccountSection {
    /// Where the session file lives.
    pub fn session_path(&self) -> PathBuf {
        self.session_path
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}.session", self.id)))
    }
}

impl MtprotoSection {
    /// The accounts with their API hashes read from `env`. Errors name the key:
    /// `mtproto.accounts[0] (parser1): environment variable … is not set`.
    pub fn resolve(&self, env: &dyn Environment) -> Result<Vec<AccountConfig>, ConfigError> {
        if self.accounts.is_empty() {
            return Err(invalid(
                "mtproto.accounts",
                "no account is configured (add a [[mtproto.accounts]] with id and api_id)",
            ));
        }
        let mut ids = HashSet::new();
        let mut configs = Vec::new();
        for (i, a) in self.accounts.iter().enumerate() {
            if !ids.insert(a.id.as_str()) {
                return Err(invalid(
                    format!("mtproto.accounts[{i}].id"),
                    format!("account {:?} is defined twice", a.id),
                ));
            }
            configs.push(self.account(i, env)?);
        }
        self.channel_refs()?;
        Ok(configs)
    }

    /// The `i`-th account with its API hash read from `env`.
    fn account(&self, i: usize, env: &dyn Environment) -> Result<AccountConfig, ConfigError> {
        let a = &self.accounts[i];
        let key = format!("mtproto.accounts[{i}] ({})", a.id);
        if a.id.is_empty()
            || !a
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(invalid(
                format!("mtproto.accounts[{i}].id"),
                format!(
                    "{:?} is not a valid account id (letters, digits, '_', '-')",
                    a.id
                ),
            ));
        }
        if a.api_id <= 0 {
            return Err(invalid(
                format!("mtproto.accounts[{i}].api_id"),
                "must be the positive API id from my.telegram.org",
            ));
        }
        let var = &a.api_hash_env;
        let hash = env.var(var).ok_or_else(|| {
            invalid(
                &key,
                format!(
                    "environment variable {var} is not set (the API hash is read only from the environment)"
                ),
            )
        })?;
        let hash = hash.trim();
        if hash.len() != 32 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(invalid(
                &key,
                format!(
                    "{var} does not look like an API hash (32 hexadecimal digits from my.telegram.org)"
                ),
            ));
        }
        Ok(AccountConfig::new(&a.id, a.api_id, hash, a.session_path()))
    }

    /// The configured channels, parsed. Errors name the entry.
    pub fn channel_refs(&self) -> Result<Vec<ChannelRef>, ConfigError> {
        self.channels
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                ChannelRef::parse(raw)
                    .map_err(|e| invalid(format!("mtproto.channels[{i}]"), e.to_string()))
            })
            .collect()
    }

    /// The channels to read: `channels` plus every enabled `[[channels]]` entry whose handle
    /// is a Telegram reference, without repeats.
    pub fn all_channel_refs(&self, settings: &Settings) -> Result<Vec<ChannelRef>, ConfigError> {
        let mut refs = self.channel_refs()?;
        for ch in settings.channels.iter().filter(|c| c.enabled) {
            if looks_like_telegram(&ch.handle)
                && let Ok(r) = ChannelRef::parse(&ch.handle)
            {
                refs.push(r);
            }
        }
        let mut seen = HashSet::new();
        refs.retain(|r| seen.insert(r.key()));
        Ok(refs)
    }

    /// The reader's tunables: this section's keys over [`ReaderConfig::default`].
    pub fn reader_config(&self) -> ReaderConfig {
        ReaderConfig {
            join_interval: Duration::from_secs(self.join_interval_secs),
            join_jitter: Duration::from_secs(self.join_jitter_secs),
            max_joins_per_day: self.max_joins_per_day.max(1),
            channels_per_account: self.channels_per_account.max(1),
            poll_interval: Duration::from_secs(self.poll_interval_secs.max(1)),
            initial_backfill: self.initial_backfill,
            ..ReaderConfig::default()
        }
    }

    /// The bot and chat that receive alerts: `None` without `admin_chat_id`. An `admin_bot`
    /// that names no `[[bots]]` entry, or no bot at all, is an error naming the key.
    pub fn admin_target(
        &self,
        settings: &Settings,
    ) -> Result<Option<(BotConfig, i64)>, ConfigError> {
        let Some(chat) = self.admin_chat_id else {
            if let Some(bot) = &self.admin_bot {
                return Err(invalid(
                    "mtproto.admin_bot",
                    format!("bot {bot:?} is set but mtproto.admin_chat_id is not"),
                ));
            }
            return Ok(None);
        };
        let bot = match &self.admin_bot {
            Some(name) => settings
                .bots
                .iter()
                .find(|b| &b.name == name)
                .ok_or_else(|| {
                    invalid(
                        "mtproto.admin_bot",
                        format!("no bot named {name:?} in [[bots]]"),
                    )
                })?,
            None => settings.bots.first().ok_or_else(|| {
                invalid(
                    "mtproto.admin_chat_id",
                    "alerts need a bot, but no [[bots]] is configured",
                )
            })?,
        };
        Ok(Some((bot.clone(), chat)))
    }
}

/// `@name` or a `t.me` / `telegram.me` link (a plain word could be a chat title).
fn looks_like_telegram(handle: &str) -> bool {
    let h = handle.trim().to_ascii_lowercase();
    let h = h
        .strip_prefix("https://")
        .or_else(|| h.strip_prefix("http://"))
        .unwrap_or(&h);
    handle.trim().starts_with('@')
        || [
            "t.me/",
            "www.t.me/",
            "telegram.me/",
            "www.telegram.me/",
            "telegram.dog/",
        ]
        .iter()
        .any(|p| h.starts_with(p))
}

// ---------------------------------------------------------------------------------------
// Reader state in the store
// ---------------------------------------------------------------------------------------

/// Source-state namespace of the per-channel cursors (key: channel key, value: message id).
pub const NS_CURSOR: &str = "tg.cursor";
/// Source-state namespace of resolved peers (key: `account/channel`, value: JSON).
pub const NS_PEER: &str = "tg.peer";
/// Source-state namespace of assignments (key: channel key, value: account id).
pub const NS_ASSIGN: &str = "tg.assign";

/// How many message ids a restarted reader re-reads before each stored cursor.
///
/// The reader moves a channel's cursor as soon as a post is in the event channel, so a crash
/// can lose the post being ingested and the one waiting in the channel (capacity 1; an album
/// is one post of up to 10 messages). Re-reading a few messages after a restart costs nothing
/// extra (every channel is polled once at start anyway), and intake drops what it already
/// has by `(channel, message id)`.
pub const RESTART_REWIND: i64 = 20;

type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// [`ReaderStore`] over the [`Store`]'s source state: the reader's cursors, peers and
/// assignments live in the pipeline's database.
#[derive(Debug, Clone)]
pub struct SqlReaderStore {
    store: Arc<dyn Store>,
    rewind: i64,
}

fn store_err(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("{what}: {e}"))
}

impl SqlReaderStore {
    /// Over `store`; [`ReaderStore::cursor`] answers exactly what was stored.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store, rewind: 0 }
    }

    /// [`ReaderStore::cursor`] answers `messages` ids before what was stored (never below
    /// 0), so a restarted reader hands on again what a crash may have caught in flight
    /// (see [`RESTART_REWIND`]). Stored cursors still only move forward.
    pub fn with_restart_rewind(mut self, messages: i64) -> Self {
        self.rewind = messages.max(0);
        self
    }

    /// The cursor as stored, without the rewind.
    pub async fn stored_cursor(&self, channel: &str) -> Result<Option<i64>, StoreError> {
        let Some(v) = self
            .store
            .state_get(NS_CURSOR, channel)
            .await
            .map_err(|e| store_err("reading a cursor", e))?
        else {
            return Ok(None);
        };
        v.trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| StoreError(format!("{NS_CURSOR} {channel}: {v:?} is not a message id")))
    }

    async fn get_cursor(&self, channel: &str) -> Result<Option<i64>, StoreError> {
        Ok(self.stored_cursor(channel).await?.map(|c| {
            if self.rewind > 0 {
                (c - self.rewind).max(0)
            } else {
                c
            }
        }))
    }

    async fn put_cursor(&self, channel: &str, last_id: i64) -> Result<(), StoreError> {
        // One reader task writes cursors, so read-then-write does not race.
        if self
            .stored_cursor(channel)
            .await?
            .is_some_and(|old| old >= last_id)
        {
            return Ok(());
        }
        self.store
            .state_put(NS_CURSOR, channel, &last_id.to_string(), Utc::now())
            .await
            .map_err(|e| store_err("writing a cursor", e))
    }

    fn peer_key(account: &str, channel: &str) -> String {
        format!("{account}/{channel}")
    }

    async fn get_peer(
        &self,
        account: &str,
        channel: &str,
    ) -> Result<Option<ResolvedPeer>, StoreError> {
        let key = Self::peer_key(account, channel);
        let Some(v) = self
            .store
            .state_get(NS_PEER, &key)
            .await
            .map_err(|e| store_err("reading a peer", e))?
        else {
            return Ok(None);
        };
        serde_json::from_str(&v)
            .map(Some)
            .map_err(|e| store_err(&format!("{NS_PEER} {key}"), e))
    }

    async fn put_peer(
        &self,
        account: &str,
        channel: &str,
        peer: &ResolvedPeer,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(peer).map_err(|e| store_err("encoding a peer", e))?;
        self.store
            .state_put(
                NS_PEER,
                &Self::peer_key(account, channel),
                &json,
                Utc::now(),
            )
            .await
            .map_err(|e| store_err("writing a peer", e))
    }

    async fn get_assignments(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.store
            .state_list(NS_ASSIGN)
            .await
            .map_err(|e| store_err("reading assignments", e))
    }

    async fn put_assignment(&self, channel: &str, account: &str) -> Result<(), StoreError> {
        self.store
            .state_put(NS_ASSIGN, channel, account, Utc::now())
            .await
            .map_err(|e| store_err("writing an assignment", e))
    }
}

// `ReaderStore` is an `#[async_trait]` trait; this is the expansion the macro would write.
impl ReaderStore for SqlReaderStore {
    fn cursor<'a, 'b, 'f>(&'a self, channel: &'b str) -> StoreFuture<'f, Option<i64>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(self.get_cursor(channel))
    }

    fn set_cursor<'a, 'b, 'f>(&'a self, channel: &'b str, last_id: i64) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(self.put_cursor(channel, last_id))
    }

    fn cached_peer<'a, 'b, 'c, 'f>(
        &'a self,
        account: &'b str,
        channel: &'c str,
    ) -> StoreFuture<'f, Option<ResolvedPeer>>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        Box::pin(self.get_peer(account, channel))
    }

    fn cache_peer<'a, 'b, 'c, 'd, 'f>(
        &'a self,
        account: &'b str,
        channel: &'c str,
        peer: &'d ResolvedPeer,
    ) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        'd: 'f,
        Self: 'f,
    {
        Box::pin(self.put_peer(account, channel, peer))
    }

    fn assignments<'a, 'f>(&'a self) -> StoreFuture<'f, Vec<(String, String)>>
    where
        'a: 'f,
        Self: 'f,
    {
        Box::pin(self.get_assignments())
    }

    fn assign<'a, 'b, 'c, 'f>(&'a self, channel: &'b str, account: &'c str) -> StoreFuture<'f, ()>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        Box::pin(self.put_assignment(channel, account))
    }
}

// ---------------------------------------------------------------------------------------
// Login
// ---------------------------------------------------------------------------------------

/// Asks on the terminal (stderr for questions, stdin for answers).
///
/// The 2FA password is read as a plain line and is visible while typed: no crate for hidden
/// terminal input is among jobwire's dependencies, and the person is told so.
#[derive(Debug, Default)]
struct TerminalPrompts;

fn ask(question: &str) -> std::io::Result<String> {
    let mut err = std::io::stderr().lock();
    write!(err, "{question}")?;
    err.flush()?;
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "no answer (standard input is closed)",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

impl LoginPrompts for TerminalPrompts {
    fn phone(&mut self) -> std::io::Result<String> {
        ask("Phone number of the account, international format (e.g. +491701234567): ")
    }

    fn code(&mut self) -> std::io::Result<String> {
        ask("Login code (sent to your Telegram app, or by SMS): ")
    }

    fn password(&mut self, hint: Option<&str>) -> std::io::Result<String> {
        eprintln!("Note: the password is shown while you type it (make sure nobody is watching).");
        match hint {
            Some(h) if !h.is_empty() => {
                ask(&format!("Two-step verification password (hint: {h}): "))
            }
            _ => ask("Two-step verification password: "),
        }
    }
}

fn describe(status: &SessionStatus) -> String {
    match &status.username {
        Some(u) => format!("{u} ({}, id {})", status.name, status.user_id),
        None => format!("{} (id {})", status.name, status.user_id),
    }
}

/// Signs `config`'s account in from the terminal (phone, code, 2FA password) and keeps the
/// session file; an account already logged in is left as is. Prints who it is logged in as.
pub async fn login(config: &AccountConfig) -> anyhow::Result<()> {
    println!(
        "account {}: session {}",
        config.id,
        config.session_path.display()
    );
    let mut prompts = TerminalPrompts;
    let status = jobwire_mtproto::login(config, &mut prompts)
        .await
        .with_context(|| format!("account {}", config.id))?;
    if status.already_logged_in {
        println!(
            "account {}: already logged in as {}",
            config.id,
            describe(&status)
        );
    } else {
        println!(
            "account {}: logged in as {}; session saved to {}",
            config.id,
            describe(&status),
            config.session_path.display()
        );
    }
    Ok(())
}

/// `jobwire login [--account ID]`: logs in the named account, or every configured account
/// in turn.
pub async fn login_command(
    section: Option<&MtprotoSection>,
    account: Option<&str>,
    env: &dyn Environment,
) -> anyhow::Result<()> {
    let section = section.context(
        "[mtproto]: no Telegram account is configured (add [[mtproto.accounts]] with id and api_id)",
    )?;
    let configs = section.resolve(env)?;
    let chosen: Vec<&AccountConfig> = match account {
        Some(id) => {
            let c = configs.iter().find(|c| c.id == id).with_context(|| {
                let ids: Vec<&str> = configs.iter().map(|c| c.id.as_str()).collect();
                format!(
                    "--account: no account {id:?} in [[mtproto.accounts]] (configured: {})",
                    ids.join(", ")
                )
            })?;
            vec![c]
        }
        None => configs.iter().collect(),
    };
    for c in chosen {
        login(c).await?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Doctor
// ---------------------------------------------------------------------------------------

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
        checks.push(check_redis(&redis.url).await);
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
    let shown = crate::config::redact_url(&settings.database_url);
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
    let shown = crate::config::redact_url(&settings.queue_url);
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

fn bot_client() -> anyhow::Result<reqwest012::Client> {
    teloxide::net::default_reqwest_settings()
        .timeout(PROBE_TIMEOUT)
        .build()
        .context("building the HTTP client")
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
        let api = Bot::with_client(bot.token.expose(), client.clone())
            .set_api_url(settings.api_url.clone());
        let token_fix = format!(
            "check the token in {} (or the bot's token_env)",
            default_token_env(&bot.name)
        );
        checks.push(match api.get_me().await {
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

async fn check_llm(llm: &crate::config::LlmSettings) -> Check {
    let mut url = llm.base_url.clone();
    let path = format!("{}/models", url.path().trim_end_matches('/'));
    url.set_path(&path);
    let name = "llm";
    let client = match reqwest012::Client::builder().timeout(PROBE_TIMEOUT).build() {
        Ok(c) => c,
        Err(e) => {
            return Check::fail(
                name,
                e.to_string(),
                "this machine cannot make HTTPS requests",
            );
        }
    };
    let mut request = client.get(url.clone());
    if let Some(key) = &llm.api_key {
        request = request.bearer_auth(key.expose());
    }
    let response = match request.send().await {
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
    let listed = response
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|v| {
            v.get("data").and_then(|d| d.as_array()).map(|models| {
                models
                    .iter()
                    .any(|m| m.get("id").and_then(|i| i.as_str()) == Some(llm.model.as_str()))
            })
        });
    let note = match listed {
        Some(true) => format!("model {} is listed", llm.model),
        Some(false) => format!("model {} is not in its list; requests may fail", llm.model),
        None => "no model list".to_owned(),
    };
    Check::pass(name, format!("{} answered ({note})", llm.base_url))
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
        .map(|i| (section.accounts[i].id.clone(), section.account(i, env)))
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

    match section.admin_target(settings) {
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

// ---------------------------------------------------------------------------------------
// The reader
// ---------------------------------------------------------------------------------------

const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// The parser role's Telegram reader: connects every account of `section`, reads the
/// configured channels and hands each post to `intake` until `shutdown`. Accounts whose
/// session does not work are reported (log and admin chat) and left out; with none left it
/// fails, saying to run `jobwire login`.
pub async fn run_reader(
    settings: &Settings,
    section: &MtprotoSection,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let configs = section.resolve(&ProcessEnv)?;
    let alerts = AdminAlerts::new(settings, section)?;
    let mut accounts: Vec<Arc<dyn Account>> = Vec::new();
    let mut failures = Vec::new();
    for config in &configs {
        let connected = tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            r = tokio::time::timeout(CONNECT_TIMEOUT, GrammersAccount::connect(config)) => r,
        };
        match connected {
            Ok(Ok(account)) => {
                tracing::info!(account = %config.id, "Telegram account connected");
                accounts.push(Arc::new(account));
            }
            Ok(Err(e)) => failures.push(format!("account {} cannot connect: {e}", config.id)),
            Err(_) => failures.push(format!(
                "account {} cannot connect: Telegram did not answer within {} s",
                config.id,
                CONNECT_TIMEOUT.as_secs()
            )),
        }
    }
    for message in &failures {
        tracing::warn!(%message, "Telegram account left out");
        alerts.send(message).await;
    }
    if accounts.is_empty() {
        anyhow::bail!(
            "mtproto.accounts: no Telegram account could connect ({}); run `jobwire login`",
            failures.join("; ")
        );
    }
    read_channels(
        settings,
        section,
        accounts,
        Arc::new(SystemClock),
        intake,
        store,
        shutdown,
    )
    .await
}

/// [`run_reader`] on its own task, with owned copies of its arguments.
pub fn spawn_reader(
    settings: &Settings,
    section: &MtprotoSection,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<anyhow::Result<()>> {
    let (settings, section) = (settings.clone(), section.clone());
    tokio::spawn(async move { run_reader(&settings, &section, intake, store, shutdown).await })
}

/// The reader over accounts that are already connected: builds the [`Reader`] with a
/// [`SqlReaderStore`], adds the channels ([`MtprotoSection::all_channel_refs`]) and consumes
/// its events until `shutdown` or until the reader stops.
///
/// - `Post` → [`IntakeStage::ingest`], retried with backoff until it succeeds (the reader's
///   cursor has already moved past the post). The event channel holds one event and the next
///   is received only after the post is stored, so at most two posts are between the reader
///   and the database; [`RESTART_REWIND`] re-reads them after a crash.
/// - `Edited` → logged. An edit of a post that was not delivered yet should update its text
///   and classify it again; an edit of a delivered post is kept as is (subscribers are not
///   notified twice). Intake has no "update a post" operation yet, so edits are only logged.
/// - `Alert`, `JoinFailed` → logged at warn and sent to the admin chat.
pub async fn read_channels(
    settings: &Settings,
    section: &MtprotoSection,
    accounts: Vec<Arc<dyn Account>>,
    clock: Arc<dyn Clock>,
    intake: Arc<IntakeStage>,
    store: Arc<dyn Store>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let refs = section.all_channel_refs(settings)?;
    let alerts = AdminAlerts::new(settings, section)?;
    for r in &refs {
        // Visible in the store (and the admin panel) before the first post; rules an admin
        // set are kept.
        store
            .ensure_channel(&r.handle(), Utc::now())
            .await
            .with_context(|| format!("storing channel {}", r.handle()))?;
    }
    let reader_store = Arc::new(SqlReaderStore::new(store).with_restart_rewind(RESTART_REWIND));
    let (tx, mut events) = mpsc::channel(1);
    let mut reader = Reader::new(section.reader_config(), accounts, reader_store, clock, tx);
    for r in refs.iter().cloned() {
        reader.add_channel(r);
    }
    tracing::info!(channels = refs.len(), "Telegram reader starting");
    let mut task = tokio::spawn(reader.run());
    let result = loop {
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => break Ok(()),
            event = events.recv() => match event {
                Some(event) => {
                    if !handle_event(event, &intake, &alerts, &shutdown).await {
                        break Ok(());
                    }
                }
                None => {
                    // The reader ended on its own: it only does so on a store failure.
                    break match (&mut task).await {
                        Ok(Ok(())) => Err(anyhow::anyhow!("the Telegram reader stopped")),
                        Ok(Err(e)) => Err(anyhow::Error::new(e).context("the Telegram reader failed")),
                        Err(e) => Err(anyhow::anyhow!("the Telegram reader panicked: {e}")),
                    };
                }
            },
        }
    };
    drop(events);
    task.abort();
    let _ = task.await;
    result
}

/// Handles one reader event. Returns `false` when shutdown interrupted it.
async fn handle_event(
    event: ReaderEvent,
    intake: &IntakeStage,
    alerts: &AdminAlerts,
    shutdown: &CancellationToken,
) -> bool {
    match event {
        ReaderEvent::Post(post) => {
            let (channel, id) = (post.channel.clone(), post.external_id.clone());
            let mut wait = Duration::from_millis(500);
            loop {
                match intake.ingest(post.clone()).await {
                    Ok(outcome) => {
                        tracing::debug!(%channel, external_id = %id, outcome = outcome.name(), "post taken in");
                        return true;
                    }
                    Err(e) => {
                        tracing::error!(%channel, external_id = %id, error = %e, retry_in_ms = wait.as_millis() as u64, "cannot store a Telegram post; retrying");
                    }
                }
                tokio::select! {
                    _ = shutdown.cancelled() => return false,
                    _ = tokio::time::sleep(wait) => {}
                }
                wait = (wait * 2).min(Duration::from_secs(30));
            }
        }
        ReaderEvent::Edited(post) => {
            // An edit of a post that was not fanned out yet replaces its text; after that the
            // subscribers keep the version they were sent (no second message for an edit).
            let (channel, id) = (post.channel.clone(), post.external_id.clone());
            match intake.edit(post).await {
                Ok(outcome) => {
                    tracing::info!(%channel, external_id = %id, ?outcome, "post edited");
                }
                Err(e) => {
                    tracing::error!(%channel, external_id = %id, error = %e, "cannot apply an edit");
                }
            }
            true
        }
        ReaderEvent::Alert {
            account,
            channel,
            message,
        } => {
            tracing::warn!(account = ?account, channel = ?channel, %message, "Telegram reader alert");
            alerts.send(&message).await;
            true
        }
        ReaderEvent::JoinFailed { channel, reason } => {
            tracing::warn!(%channel, %reason, "cannot join a channel");
            alerts
                .send(&format!("cannot join {channel}: {reason}"))
                .await;
            true
        }
    }
}

/// Sends alerts to the admin chat through the admin bot (or nowhere without one).
struct AdminAlerts {
    target: Option<(Bot, ChatId)>,
    /// What the messages start with (`jobwire reader:`, `jobwire:`).
    prefix: &'static str,
}

/// Sends a message to the admin chat (`[mtproto] admin_chat_id` through `admin_bot`) from
/// any role, in the background: `None` when no admin chat is configured.
pub fn admin_alert_fn(
    settings: &Settings,
    section: &MtprotoSection,
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
    fn new(settings: &Settings, section: &MtprotoSection) -> anyhow::Result<Self> {
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
    async fn send(&self, message: &str) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telegram_handles_are_told_from_titles_and_feeds() {
        for h in [
            "@jobs",
            "t.me/jobs",
            "https://t.me/+AbCdE1",
            "HTTPS://Telegram.me/x",
        ] {
            assert!(looks_like_telegram(h), "{h}");
        }
        for h in ["Freelance", "https://example.com/feed.xml", "jobs chat"] {
            assert!(!looks_like_telegram(h), "{h}");
        }
    }

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
