//! The Telegram user-account reader wired into jobwire: the `[mtproto]` section, the reader's
//! state in the store, `jobwire doctor` against the fake Telegram and fake LLM, and the
//! reader's events reaching the store and the admin chat (accounts scripted in memory, since
//! no local server can stand in for MTProto).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use jobwire::config::{Config, Environment, Settings};
use jobwire::telegram::{
    self, MtprotoSection, NS_ASSIGN, NS_CURSOR, NS_PEER, NS_RUN, SqlReaderStore,
};
use jobwire::testbed::ScriptedReader;
use jobwire_intake::stage::IntakeStage;
use jobwire_mtproto::{
    Account, AccountError, ChannelRef, FileSession, PeerKind, RawMessage, ReaderConfig,
    ReaderStore, ResolvedPeer, ScriptedAccount,
};
use jobwire_store::{PostStatus, SourceEdit, SourceInput, SourceSpec, SqliteStore, Store};
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, FaultPlan};
use jobwire_testkit::telegram::{FakeTelegram, FakeTelegramConfig};
use jobwire_testkit::wait::eventually;

use common::{init, joined_at, loopback, raw_message};

const TOKEN: &str = "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const TOKEN_SECRET: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const API_HASH: &str = "0123456789abcdef0123456789abcdef";
const LLM_KEY: &str = "sk-test-secret-key";
const ADMIN_CHAT: i64 = 777;
/// How long a test waits for the reader to do something.
const SOON: Duration = Duration::from_secs(20);

struct FakeEnv(HashMap<&'static str, String>);

impl Environment for FakeEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

fn env() -> FakeEnv {
    FakeEnv(
        [
            ("JOBWIRE_BOT_DEV_TOKEN", TOKEN.to_owned()),
            ("JOBWIRE_LLM_API_KEY", LLM_KEY.to_owned()),
            ("JOBWIRE_TELEGRAM_API_HASH", API_HASH.to_owned()),
        ]
        .into_iter()
        .collect(),
    )
}

fn section(doc: &str) -> MtprotoSection {
    toml::from_str(doc).expect("section parses")
}

async fn sqlite(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    Arc::new(
        SqliteStore::open_path(&dir.path().join("jobwire.db"))
            .await
            .expect("sqlite opens"),
    )
}

/// Settings pointing at the fakes and a temp SQLite file.
fn settings(dir: &tempfile::TempDir, telegram: &FakeTelegram, llm: Option<&FakeLlm>) -> Settings {
    let db = dir.path().join("jobwire.db");
    let mut doc = format!(
        "[database]\nurl = \"sqlite://{}\"\n[telegram]\napi_url = \"{}\"\n[[bots]]\nname = \"dev\"\n",
        db.display(),
        telegram.url()
    );
    if let Some(llm) = llm {
        doc.push_str(&format!(
            "[llm]\nbase_url = \"{}\"\nmodel = \"fake-llm\"\n",
            llm.url()
        ));
    }
    Config::from_toml(&doc)
        .expect("config parses")
        .resolve(&env())
        .expect("config resolves")
}

// ---------------------------------------------------------------------------------------
// [mtproto]
// ---------------------------------------------------------------------------------------

#[test]
fn the_section_defaults_to_the_readers_pacing() {
    let s = section(
        "channels = [\"@RustJobs\", \"https://t.me/+AbCdEf123\"]\n\
         [[accounts]]\nid = \"parser1\"\napi_id = 12345\n",
    );
    let d = ReaderConfig::default();
    let r = s.reader_config();
    assert_eq!(r.join_interval, d.join_interval);
    assert_eq!(r.join_jitter, d.join_jitter);
    assert_eq!(r.max_joins_per_day, d.max_joins_per_day);
    assert_eq!(r.channels_per_account, d.channels_per_account);
    assert_eq!(r.poll_interval, d.poll_interval);
    assert_eq!(r.initial_backfill, 0);

    let accounts = s
        .settings()
        .and_then(|m| m.account_configs(&env()))
        .expect("resolves");
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].id, "parser1");
    assert_eq!(accounts[0].api_id, 12345);
    assert_eq!(accounts[0].api_hash, API_HASH);
    assert_eq!(
        accounts[0].session_path,
        std::path::PathBuf::from("parser1.session")
    );
    let keys: Vec<String> = s
        .channel_refs()
        .unwrap()
        .iter()
        .map(ChannelRef::key)
        .collect();
    assert_eq!(keys, ["@rustjobs", "+AbCdEf123"]);
}

/// The error of resolving the section `doc` in `env`, which must be refused.
fn resolve_error(doc: &str, env: &FakeEnv) -> String {
    match section(doc).settings().and_then(|m| m.account_configs(env)) {
        Ok(_) => panic!("resolved, not refused:\n{doc}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn section_errors_are_one_line_and_name_the_key() {
    let err = toml::from_str::<MtprotoSection>("join_intervall_secs = 3\n")
        .expect_err("unknown key refused");
    assert!(err.to_string().contains("join_intervall_secs"), "{err}");

    let msg = resolve_error(
        "[[accounts]]\nid = \"parser1\"\napi_id = 1\napi_hash_env = \"MY_HASH\"\n",
        &env(),
    );
    assert!(msg.contains("mtproto.accounts[0] (parser1)"), "{msg}");
    assert!(msg.contains("MY_HASH"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");

    let msg = resolve_error(
        "channels = [\"@rustjobs\", \"https://t.me/c/12345/6\"]\n\
         [[accounts]]\nid = \"parser1\"\napi_id = 1\n",
        &env(),
    );
    assert!(msg.starts_with("mtproto.channels[1]:"), "{msg}");
    assert!(msg.contains("invite link"), "{msg}");

    let msg = resolve_error(
        "[[accounts]]\nid = \"a\"\napi_id = 1\n[[accounts]]\nid = \"a\"\napi_id = 2\n",
        &env(),
    );
    assert!(msg.contains("mtproto.accounts[1].id"), "{msg}");

    let bad_hash = FakeEnv(
        [("JOBWIRE_TELEGRAM_API_HASH", "not-a-hash".to_owned())]
            .into_iter()
            .collect(),
    );
    let msg = resolve_error("[[accounts]]\nid = \"a\"\napi_id = 1\n", &bad_hash);
    assert!(msg.contains("does not look like an API hash"), "{msg}");
    assert!(
        !msg.contains("not-a-hash"),
        "the value is not echoed: {msg}"
    );
}

// ---------------------------------------------------------------------------------------
// SqlReaderStore
// ---------------------------------------------------------------------------------------

fn peer(id: i64, hash: i64) -> ResolvedPeer {
    ResolvedPeer {
        id,
        access_hash: hash,
        kind: PeerKind::Channel,
        username: Some("rustjobs".into()),
        title: "Rust Jobs".into(),
        invite_hash: None,
        joined: true,
    }
}

/// The cursor of `channel` as the store holds it (under [`NS_CURSOR`]).
async fn stored_cursor(store: &Arc<dyn Store>, channel: &str) -> Option<String> {
    store.state_get(NS_CURSOR, channel).await.unwrap()
}

#[tokio::test]
async fn reader_state_lives_in_the_store_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir).await;
    let rs = SqlReaderStore::new(store.clone());

    assert_eq!(rs.cursor("@rustjobs").await.unwrap(), None);
    rs.set_cursor("@rustjobs", 10).await.unwrap();
    rs.set_cursor("@rustjobs", 7).await.unwrap();
    assert_eq!(
        rs.cursor("@rustjobs").await.unwrap(),
        Some(10),
        "a cursor never moves back"
    );
    rs.set_cursor("@rustjobs", 12).await.unwrap();
    assert_eq!(rs.cursor("@rustjobs").await.unwrap(), Some(12));
    assert_eq!(rs.cursor("@other").await.unwrap(), None);

    rs.cache_peer("a1", "@rustjobs", &peer(100, 1))
        .await
        .unwrap();
    rs.cache_peer("a2", "@rustjobs", &peer(100, 2))
        .await
        .unwrap();
    assert_eq!(
        rs.cached_peer("a1", "@rustjobs").await.unwrap(),
        Some(peer(100, 1))
    );
    assert_eq!(
        rs.cached_peer("a2", "@rustjobs")
            .await
            .unwrap()
            .map(|p| p.access_hash),
        Some(2),
        "access hashes are per account"
    );
    assert_eq!(rs.cached_peer("a3", "@rustjobs").await.unwrap(), None);

    rs.assign("@rustjobs", "a1").await.unwrap();
    rs.assign("@design", "a2").await.unwrap();
    rs.assign("@rustjobs", "a2").await.unwrap();
    assert_eq!(
        rs.assignments().await.unwrap(),
        vec![
            ("@design".to_owned(), "a2".to_owned()),
            ("@rustjobs".to_owned(), "a2".to_owned())
        ]
    );

    // The namespaces are the documented ones, and a new process sees the same state.
    assert_eq!(
        stored_cursor(&store, "@rustjobs").await.as_deref(),
        Some("12")
    );
    assert_eq!(store.state_list(NS_PEER).await.unwrap().len(), 2);
    assert_eq!(store.state_list(NS_ASSIGN).await.unwrap().len(), 2);
    drop(rs);
    drop(store);
    let reopened = SqlReaderStore::new(sqlite(&dir).await);
    assert_eq!(reopened.cursor("@rustjobs").await.unwrap(), Some(12));
    assert_eq!(
        reopened.cached_peer("a1", "@rustjobs").await.unwrap(),
        Some(peer(100, 1))
    );
}

#[tokio::test]
async fn only_a_run_that_did_not_stop_cleanly_makes_the_next_start_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir).await;
    let reader_store = || SqlReaderStore::new(store.clone()).with_restart_rewind(20);

    // The first start, and one after a run that never noted a clean stop (a crash), read
    // 20 messages before each cursor again.
    let rs = reader_store();
    assert!(!rs.begin_run().await.unwrap());
    assert_eq!(rs.restart_rewind().await.unwrap(), 20);
    rs.set_cursor("@rustjobs", 100).await.unwrap();
    let rs = reader_store();
    assert!(!rs.begin_run().await.unwrap());
    assert_eq!(rs.restart_rewind().await.unwrap(), 20);
    rs.note_clean_stop().await.unwrap();

    // After a clean stop the cursors are exact, and still only move forward.
    let rs = reader_store();
    assert!(rs.begin_run().await.unwrap());
    assert_eq!(rs.restart_rewind().await.unwrap(), 0);
    assert_eq!(rs.cursor("@rustjobs").await.unwrap(), Some(100));
    rs.set_cursor("@rustjobs", 90).await.unwrap();
    assert_eq!(rs.cursor("@rustjobs").await.unwrap(), Some(100));
    assert_eq!(
        store.state_get(NS_RUN, "stop").await.unwrap().as_deref(),
        Some("running"),
        "the clean stop counts for one start: this run is running now"
    );
    assert!(!reader_store().begin_run().await.unwrap());
}

// ---------------------------------------------------------------------------------------
// doctor
// ---------------------------------------------------------------------------------------

async fn fakes() -> (FakeTelegram, FakeLlm) {
    let telegram = FakeTelegram::start(
        loopback(),
        FakeTelegramConfig {
            limits: None,
            ..FakeTelegramConfig::default()
        },
    )
    .await
    .expect("fake Telegram starts");
    let llm = FakeLlm::start(loopback(), FakeLlmConfig::default())
        .await
        .expect("fake LLM starts");
    (telegram, llm)
}

fn printed(checks: &[telegram::Check]) -> String {
    let mut out = Vec::new();
    telegram::print(checks, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[tokio::test]
async fn doctor_passes_when_everything_answers_and_names_the_fix_when_a_token_is_refused() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let (fake_tg, fake_llm) = fakes().await;
    let mut settings = settings(&dir, &fake_tg, Some(&fake_llm));

    let checks = telegram::doctor(&settings, None, &env()).await;
    let out = printed(&checks);
    assert!(checks.iter().all(|c| c.ok), "{out}");
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["database", "queue", "bot dev", "llm"], "{out}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("ok   database  sqlite://"),
        "{out}"
    );
    assert!(out.contains("model fake-llm is listed"), "{out}");
    assert_eq!(out.lines().count(), checks.len());

    settings.bots[0].token = "123456:sh0rtT0k".into();
    let checks = telegram::doctor(&settings, None, &env()).await;
    let out = printed(&checks);
    let bad: Vec<&telegram::Check> = checks.iter().filter(|c| !c.ok).collect();
    assert_eq!(bad.len(), 1, "{out}");
    assert_eq!(
        bad[0].line(),
        "FAIL bot dev: getMe answered 401 Unauthorized — check the token in \
         JOBWIRE_BOT_DEV_TOKEN (or the bot's token_env)"
    );
    for secret in [TOKEN_SECRET, "sh0rtT0k", LLM_KEY] {
        assert!(!out.contains(secret), "{secret} printed: {out}");
    }
}

/// The start-up check asks the LLM endpoint whether it takes the key and knows the model: a
/// refused key or an unknown model stops `jobwire run` with one line naming which, instead
/// of failing later post by post.
#[tokio::test]
async fn start_up_stops_on_a_refused_llm_key_or_an_unknown_model_with_one_line() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let (fake_tg, fake_llm) = fakes().await;
    let mut settings = settings(&dir, &fake_tg, Some(&fake_llm));
    jobwire::preflight::check(&settings).await.unwrap();

    fake_llm.set_faults(FaultPlan {
        refuse_key: true,
        ..FaultPlan::default()
    });
    let refused = format!(
        "{:#}",
        jobwire::preflight::check(&settings).await.unwrap_err()
    );
    assert!(
        refused.starts_with("llm: the LLM key is refused (HTTP 401)"),
        "{refused}"
    );
    assert!(refused.contains("JOBWIRE_LLM_API_KEY"), "{refused}");
    assert!(!refused.contains(LLM_KEY), "{refused}");
    assert_eq!(refused.lines().count(), 1, "{refused}");

    // A model the endpoint does not list is asked for once; one it does not know is named.
    let model = "gpt-4o-mini-typo";
    settings.llm.as_mut().unwrap().client.model = model.to_owned();
    fake_llm.set_faults(FaultPlan {
        unknown_models: vec![model.to_owned()],
        ..FaultPlan::default()
    });
    let unknown = format!(
        "{:#}",
        jobwire::preflight::check(&settings).await.unwrap_err()
    );
    assert!(unknown.starts_with("llm.model: "), "{unknown}");
    assert!(unknown.contains("\"gpt-4o-mini-typo\""), "{unknown}");
    assert_eq!(unknown.lines().count(), 1, "{unknown}");

    // An unlisted model the endpoint answers for passes.
    fake_llm.set_faults(FaultPlan::default());
    jobwire::preflight::check(&settings).await.unwrap();
}

#[tokio::test]
async fn doctor_checks_sessions_channels_and_the_alert_target() {
    init();
    let dir = tempfile::tempdir().unwrap();
    let (fake_tg, _llm) = fakes().await;
    let mut settings = settings(&dir, &fake_tg, None);
    settings.channels = Config::from_toml(
        "[[channels]]\nhandle = \"@RustJobs\"\n[[channels]]\nhandle = \"@designjobs\"\n\
         [[channels]]\nhandle = \"https://example.com/feed.xml\"\n",
    )
    .unwrap()
    .channels
    .iter()
    .enumerate()
    .map(|(i, c)| c.resolve(i).unwrap())
    .collect();
    let session = dir.path().join("parser1.session");
    let mtproto = section(&format!(
        "channels = [\"@rustjobs\", \"t.me/c/1/2\"]\nadmin_chat_id = {ADMIN_CHAT}\n\
         admin_bot = \"dev\"\n\
         [[accounts]]\nid = \"parser1\"\napi_id = 1\nsession_path = \"{}\"\n\
         [[accounts]]\nid = \"parser2\"\napi_id = 1\napi_hash_env = \"UNSET_HASH\"\n",
        session.display()
    ));

    let checks = telegram::doctor(&settings, Some(&mtproto), &env()).await;
    let out = printed(&checks);
    let line = |name: &str| {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} check in {out}"))
            .line()
    };
    assert!(
        line("session parser1").starts_with("FAIL session parser1: not logged in"),
        "{out}"
    );
    for (name, end) in [
        ("session parser1", "— run `jobwire login --account parser1`"),
        ("channel channels[0]", "— write the handle as \"@rustjobs\""),
    ] {
        assert!(line(name).ends_with(end), "{name} ends with {end:?}\n{out}");
    }
    for (name, part) in [
        ("session parser2", "UNSET_HASH is not set"),
        (
            "channel mtproto.channels[1]",
            "invite link (t.me/+...) instead",
        ),
    ] {
        assert!(line(name).contains(part), "{name} contains {part:?}\n{out}");
    }
    assert_eq!(
        line("channels"),
        "ok   channels  1 in [mtproto] and 1 in [[channels]] are valid Telegram references"
    );
    assert_eq!(
        line("alerts"),
        format!("ok   alerts  bot dev → chat {ADMIN_CHAT}")
    );
    assert!(!out.contains(API_HASH), "{out}");
    assert!(!session.exists(), "a check does not create a session file");

    let wrong_bot = section("admin_chat_id = 1\nadmin_bot = \"ops\"\n");
    let checks = telegram::doctor(&settings, Some(&wrong_bot), &env()).await;
    let out = printed(&checks);
    for want in [
        "FAIL alerts: mtproto.admin_bot: no bot named \"ops\" in [[bots]]",
        "FAIL mtproto: no account is configured",
    ] {
        assert!(out.contains(want), "{want}\n{out}");
    }
}

// ---------------------------------------------------------------------------------------
// The reader's events
// ---------------------------------------------------------------------------------------

/// Message `id` of channel `peer`, posted `id` minutes after 09:00 on 1 March 2025.
fn message(peer: i64, id: i64, text: &str) -> RawMessage {
    let date =
        Utc.with_ymd_and_hms(2025, 3, 1, 9, 0, 0).single().unwrap() + chrono::Duration::minutes(id);
    raw_message(peer, id, text, date)
}

const JOB_TEXTS: [&str; 6] = [
    "Looking for a Rust developer to build a Telegram bot, budget $800",
    "Need a designer for a landing page, paid, 3 days",
    "Hiring: backend developer (Go), remote, full-time",
    "Wanted: video editor for YouTube shorts, $20 per video",
    "Copywriter needed for 10 product descriptions",
    "Translator EN→DE for a mobile app, 2000 words, paid",
];

fn account(channels: &[(&str, i64)]) -> Arc<ScriptedAccount> {
    let a = Arc::new(ScriptedAccount::new("a1"));
    for (c, peer) in channels {
        a.add_channel(&ChannelRef::parse(c).unwrap(), *peer);
    }
    a
}

/// The queued posts of the store: `(channel, external id, text)`.
async fn queued(store: &Arc<dyn Store>) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for id in store
        .posts_in_status(PostStatus::Queued, 1000)
        .await
        .unwrap()
    {
        let p = store.post(id).await.unwrap().unwrap();
        out.push((p.channel_handle, p.external_id, p.text));
    }
    out.sort_by_key(|(c, id, _)| (c.clone(), id.parse::<i64>().unwrap_or(0)));
    out
}

struct Running {
    reader: ScriptedReader,
}

impl Running {
    /// The reader over `account`, with the channels of `section` seeded as sources (as a
    /// first start does) and the sources followed as in the parser role.
    async fn start(
        settings: &Settings,
        section: &MtprotoSection,
        account: &Arc<ScriptedAccount>,
        store: &Arc<dyn Store>,
    ) -> Self {
        for r in section.channel_refs().unwrap() {
            store
                .seed_channel(&SourceSpec::telegram(&r), Utc::now())
                .await
                .unwrap();
        }
        let queue = Arc::new(jobwire_queue::MemoryQueue::new());
        let intake = Arc::new(IntakeStage::new(store.clone(), queue));
        let accounts: Vec<Arc<dyn Account>> = vec![account.clone()];
        Self {
            reader: ScriptedReader::start(
                settings,
                &section.settings().expect("the section resolves"),
                accounts,
                store,
                &intake,
            ),
        }
    }

    /// Waits until the sources were read again after a change, and returns how long that
    /// took.
    async fn reloaded(&mut self) -> Duration {
        let started = std::time::Instant::now();
        tokio::time::timeout(SOON, self.reader.sources.changed())
            .await
            .expect("the sources read again")
            .expect("the watcher runs");
        started.elapsed()
    }

    async fn stop(self) {
        self.reader.stop().await.expect("the reader stops cleanly");
    }
}

/// What a reader test runs against: a temp dir, the fakes (the LLM unused but running), the
/// settings pointing at them and a SQLite store in the dir.
struct ReaderBed {
    _dir: tempfile::TempDir,
    fake_tg: FakeTelegram,
    _llm: FakeLlm,
    settings: Settings,
    store: Arc<dyn Store>,
}

impl ReaderBed {
    /// The settings, the store and the directory they live in, and the fakes, to keep
    /// while they are used.
    fn into_parts(self) -> (Settings, Arc<dyn Store>, tempfile::TempDir, impl Sized) {
        (
            self.settings,
            self.store,
            self._dir,
            (self.fake_tg, self._llm),
        )
    }
}

async fn reader_bed() -> ReaderBed {
    init();
    let dir = tempfile::tempdir().unwrap();
    let (fake_tg, llm) = fakes().await;
    let settings = settings(&dir, &fake_tg, None);
    let store = sqlite(&dir).await;
    ReaderBed {
        _dir: dir,
        fake_tg,
        _llm: llm,
        settings,
        store,
    }
}

#[tokio::test]
async fn posts_reach_the_store_as_queued_and_alerts_reach_the_admin_chat() {
    let ReaderBed {
        _dir,
        fake_tg,
        _llm,
        settings,
        store,
    } = reader_bed().await;
    let mtproto = section(&format!(
        "channels = [\"@rustjobs\", \"@closedjobs\"]\nadmin_chat_id = {ADMIN_CHAT}\n\
         admin_bot = \"dev\"\njoin_interval_secs = 0\njoin_jitter_secs = 0\n\
         initial_backfill = 10\n"
    ));
    let a = account(&[("@rustjobs", 100), ("@closedjobs", 200)]);
    a.set_join_error(
        &ChannelRef::parse("@closedjobs").unwrap(),
        AccountError::NotFound,
    );
    for id in 1..=3 {
        a.post(message(100, id, JOB_TEXTS[id as usize - 1]), false);
    }
    let bot_id = settings.bots[0].bot_id();

    let running = Running::start(&settings, &mtproto, &a, &store).await;
    // The backfill of a newly joined channel arrives as queued posts, in order.
    let posts = eventually("3 queued posts", SOON, || async {
        let q = queued(&store).await;
        (q.len() == 3).then_some(q)
    })
    .await;
    for (i, (channel, id, text)) in posts.iter().enumerate() {
        assert_eq!(channel, "@rustjobs");
        assert_eq!(id, &(i + 1).to_string());
        assert_eq!(text, JOB_TEXTS[i]);
    }
    // A live post follows.
    a.post(message(100, 4, JOB_TEXTS[3]), true);
    eventually("the live post", SOON, || async {
        queued(&store)
            .await
            .iter()
            .any(|(_, id, _)| id == "4")
            .then_some(())
    })
    .await;

    // A channel that cannot be joined, and a session that dies, are told to the admin.
    let alert = |needle: &'static str| {
        let state = fake_tg.state();
        async move {
            state
                .chat_messages(bot_id, ADMIN_CHAT)
                .into_iter()
                .find(|m| m.text.contains(needle))
        }
    };
    let join = eventually("the join alert", SOON, || alert("cannot join @closedjobs")).await;
    assert!(join.text.contains("no such channel"), "{}", join.text);
    a.kill(AccountError::SessionDead);
    let dead = eventually("the session alert", SOON, || alert("lost its session")).await;
    assert!(dead.text.contains("account a1"), "{}", dead.text);
    assert!(dead.parse_mode.is_none(), "alerts are plain text");
    assert!(
        fake_tg
            .state()
            .messages()
            .iter()
            .all(|m| m.chat_id == ADMIN_CHAT),
        "nothing else was sent"
    );
    running.stop().await;
    assert_eq!(queued(&store).await.len(), 4);
}

#[tokio::test]
async fn an_edit_that_meets_a_database_error_is_applied_once_the_database_is_back() {
    let (settings, store, _dir, _fakes) = reader_bed().await.into_parts();
    let mtproto = section(
        "channels = [\"@rustjobs\"]\njoin_interval_secs = 0\njoin_jitter_secs = 0\n\
         initial_backfill = 10\n",
    );
    let a = account(&[("@rustjobs", 100)]);
    a.post(message(100, 1, JOB_TEXTS[0]), false);
    let running = Running::start(&settings, &mtproto, &a, &store).await;
    eventually("the post", SOON, || async {
        (queued(&store).await.len() == 1).then_some(())
    })
    .await;

    // The database refuses every change of a post for a while; an edit arrives meanwhile.
    let db = _dir.path().join("jobwire.db");
    let url = format!("sqlite://{}", db.display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    // Nothing can be written in an outage: not the edit, nor a dead letter setting it aside.
    for sql in [
        "CREATE TRIGGER outage BEFORE UPDATE ON posts BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
        "CREATE TRIGGER outage_dead_letters BEFORE INSERT ON dead_letters \
         BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
    ] {
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    }
    let edited = "Looking for a Rust developer to build a Telegram bot, budget $1200 (edited)";
    let mut edit = message(100, 1, edited);
    edit.edit_date = Some(edit.date + chrono::Duration::minutes(5));
    a.edit(edit, true);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(queued(&store).await[0].2, JOB_TEXTS[0], "not applied yet");
    sqlx::query("DROP TRIGGER outage")
        .execute(&mut conn)
        .await
        .unwrap();

    eventually("the edit to be applied", SOON, || async {
        (queued(&store).await[0].2 == edited).then_some(())
    })
    .await;
    running.stop().await;
}

#[tokio::test]
async fn a_restarted_reader_recovers_posts_a_crash_caught_in_flight_without_duplicates() {
    let (settings, store, _dir, _fakes) = reader_bed().await.into_parts();
    let mtproto = section("channels = [\"@rustjobs\"]\ninitial_backfill = 10\n");

    let first = account(&[("@rustjobs", 100)]);
    for id in 1..=3 {
        first.post(message(100, id, &nth_job(id)), false);
    }
    let running = Running::start(&settings, &mtproto, &first, &store).await;
    eventually("3 posts stored", SOON, || async {
        (stored_ids(&store, "@rustjobs").await.len() == 3).then_some(())
    })
    .await;
    running.stop().await;
    assert_eq!(
        stored_cursor(&store, "@rustjobs").await.as_deref(),
        Some("3")
    );

    // The process dies after the reader handed on posts 4 and 5 (moving its cursor) but
    // before intake stored them, so its run never notes a clean stop; 152 more appear while
    // jobwire is down. The restarted reader re-reads from 20 before its cursor — here 0,
    // the channel's first message, not "no cursor", so more than one page of history is
    // paged through — and intake drops what it has: nothing lost, nothing stored twice.
    crashed(&store, "@rustjobs", 5).await;
    let second = account(&[("@rustjobs", 100)]);
    let running = restart_after_missing(&settings, &mtproto, &second, &store, 1..=157).await;
    running.stop().await;
    assert_eq!(stored_ids(&store, "@rustjobs").await.len(), 157);
    assert!(
        second.resolve_count(&ChannelRef::parse("@rustjobs").unwrap()) == 0,
        "the peer came from the store, not from Telegram"
    );
}

/// Leaves the reader's state as a run that crashed with `channel`'s cursor at `cursor`
/// leaves it: the run began and never noted a clean stop.
async fn crashed(store: &Arc<dyn Store>, channel: &str, cursor: i64) {
    SqlReaderStore::new(store.clone())
        .begin_run()
        .await
        .unwrap();
    store
        .state_put(NS_CURSOR, channel, &cursor.to_string(), Utc::now())
        .await
        .unwrap();
}

/// A vacancy text for message `id`.
fn nth_job(id: i64) -> String {
    format!(
        "{} (reference {id}, {} applicants wanted)",
        JOB_TEXTS[id as usize % JOB_TEXTS.len()],
        id * 7 % 13 + 1
    )
}

/// Every post of `channel` stored, by message id: `(external id, how many rows)`.
async fn stored_ids(store: &Arc<dyn Store>, channel: &str) -> Vec<(i64, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    for (id, _) in posts_of(store, channel).await {
        *counts.entry(id.parse::<i64>().unwrap()).or_insert(0) += 1;
    }
    counts.into_iter().collect()
}

/// `@rustjobs` (peer 100) posts `missed` on `account` while jobwire is down (no live
/// update); the reader starts over it and the store ends up with every post from 1 to the
/// last once, and the cursor there.
async fn restart_after_missing(
    settings: &Settings,
    mtproto: &MtprotoSection,
    account: &Arc<ScriptedAccount>,
    store: &Arc<dyn Store>,
    missed: std::ops::RangeInclusive<i64>,
) -> Running {
    let last = *missed.end();
    for id in missed {
        account.post(message(100, id, &nth_job(id)), false);
    }
    let running = Running::start(settings, mtproto, account, store).await;
    let stored = eventually("every post stored", SOON, || async {
        let ids = stored_ids(store, "@rustjobs").await;
        (ids.len() == last as usize).then_some(ids)
    })
    .await;
    assert_eq!(
        stored,
        (1..=last).map(|id| (id, 1)).collect::<Vec<_>>(),
        "every post once"
    );
    eventually("the cursor at the last post", SOON, || async {
        (stored_cursor(store, "@rustjobs").await == Some(last.to_string())).then_some(())
    })
    .await;
    running
}

#[tokio::test]
async fn a_clean_restart_takes_250_missed_posts_from_get_channel_difference_once_each() {
    let (settings, store, _dir, _fakes) = reader_bed().await.into_parts();
    let mtproto = section("channels = [\"@rustjobs\"]\n");
    let path = _dir.path().join("a1.session");
    let first = Arc::new(ScriptedAccount::with_session("a1", &path).unwrap());
    first.add_channel(&ChannelRef::parse("@rustjobs").unwrap(), 100);
    let running = Running::start(&settings, &mtproto, &first, &store).await;
    eventually("the channel joined and started from now", SOON, || async {
        stored_cursor(&store, "@rustjobs").await
    })
    .await;
    for id in 1..=3 {
        first.post(message(100, id, &nth_job(id)), true);
    }
    eventually("3 live posts stored", SOON, || async {
        (stored_ids(&store, "@rustjobs").await.len() == 3).then_some(())
    })
    .await;
    // The account's update state reaches the session file while it runs.
    eventually("the channel's pts in the session file", SOON, || async {
        let saved = FileSession::open(&path).unwrap().channel_pts();
        (saved == [(100, 3)]).then_some(())
    })
    .await;
    running.stop().await;

    // 250 posts while jobwire is down.
    let second = Arc::new(first.restart().unwrap());
    let running = restart_after_missing(&settings, &mtproto, &second, &store, 4..=253).await;
    assert_eq!(
        second.channel_differences(),
        [(100, 3), (100, 103), (100, 203)],
        "from the pts the session kept, 100 updates an answer"
    );
    assert_eq!(second.history_calls(), 0, "no history poll");
    running.stop().await;
    assert_eq!(stored_ids(&store, "@rustjobs").await.len(), 253);
}

/// Waits until the panel shows the source joined, and for the reader to start it from its
/// newest message (a live post sent earlier would be taken for history).
async fn joined(store: &Arc<dyn Store>, id: jobwire_store::ChannelId) {
    joined_at(store, id).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// The posts of `channel` the store holds: `(external id, status)`.
async fn posts_of(store: &Arc<dyn Store>, channel: &str) -> Vec<(String, PostStatus)> {
    let mut out = Vec::new();
    for status in PostStatus::ALL {
        for id in store.posts_in_status(status, 1000).await.unwrap() {
            let p = store.post(id).await.unwrap().unwrap();
            if p.channel_handle == channel {
                out.push((p.external_id, p.status));
            }
        }
    }
    out.sort_by_key(|(id, _)| id.parse::<i64>().unwrap_or(0));
    out
}

#[tokio::test]
async fn sources_changed_in_the_database_apply_to_the_running_reader_within_seconds() {
    let (settings, store, _dir, _fakes) = reader_bed().await.into_parts();
    let mtproto =
        section("channels = [\"@rustjobs\"]\njoin_interval_secs = 0\njoin_jitter_secs = 0\n");
    let a = account(&[("@rustjobs", 100), ("@gojobs", 200)]);
    let mut running = Running::start(&settings, &mtproto, &a, &store).await;
    let rustjobs = store.source_by_handle("@rustjobs").await.unwrap().unwrap();
    joined(&store, rustjobs.id).await;
    a.post(message(100, 1, JOB_TEXTS[0]), true);
    eventually("the seeded channel's post", SOON, || async {
        (posts_of(&store, "@rustjobs").await.len() == 1).then_some(())
    })
    .await;

    // An admin adds a channel with a rule: the reader joins it and its next post reaches
    // intake within seconds.
    let gojobs = store
        .add_source(
            &SourceInput {
                address: "https://t.me/GoJobs".into(),
                enabled: true,
                include: vec!["backend".into()],
                ..SourceInput::default()
            }
            .parse()
            .unwrap(),
            Utc::now(),
        )
        .await
        .unwrap();
    let added = std::time::Instant::now();
    joined(&store, gojobs.id).await;
    assert!(
        added.elapsed() < Duration::from_secs(5),
        "joined after {:?}",
        added.elapsed()
    );
    a.post(message(200, 1, JOB_TEXTS[2]), true);
    let posted = std::time::Instant::now();
    eventually("the new channel's post", SOON, || async {
        (posts_of(&store, "@gojobs").await.len() == 1).then_some(())
    })
    .await;
    assert!(posted.elapsed() < Duration::from_secs(5));
    assert_eq!(
        posts_of(&store, "@gojobs").await[0].1,
        PostStatus::Queued,
        "the rule passed it"
    );

    // The admin edits the rule: the next post meets the new one.
    running.reloaded().await;
    store
        .update_source(
            gojobs.id,
            &SourceEdit {
                title: None,
                enabled: true,
                include: vec!["rust".into()],
                exclude: Vec::new(),
            },
            Utc::now(),
        )
        .await
        .unwrap()
        .unwrap();
    let took = running.reloaded().await;
    assert!(
        took < Duration::from_secs(3),
        "the edit was seen after {took:?}"
    );
    a.post(message(200, 2, JOB_TEXTS[2]), true);
    let go = eventually("the post after the edit", SOON, || async {
        let posts = posts_of(&store, "@gojobs").await;
        (posts.len() == 2).then_some(posts)
    })
    .await;
    assert_eq!(go[1].1, PostStatus::Filtered, "the new rule held it back");

    // The admin disables the first channel: its posts are no longer read at all.
    store
        .update_source(
            rustjobs.id,
            &SourceEdit {
                enabled: false,
                ..SourceEdit::default()
            },
            Utc::now(),
        )
        .await
        .unwrap()
        .unwrap();
    running.reloaded().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.post(message(100, 2, JOB_TEXTS[1]), true);
    a.post(
        message(200, 3, "Rust developer for a backend service, paid"),
        true,
    );
    eventually("the enabled channel's next post", SOON, || async {
        (posts_of(&store, "@gojobs").await.len() == 3).then_some(())
    })
    .await;
    assert_eq!(
        posts_of(&store, "@rustjobs").await.len(),
        1,
        "nothing read from the disabled channel"
    );
    running.stop().await;
}
