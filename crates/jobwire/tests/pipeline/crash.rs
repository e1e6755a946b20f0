//! A crash in the middle of delivery: `jobwire run` is killed with SIGKILL while sending,
//! started again on the same database, and finishes the job without losing anyone. The same
//! for a broadcast started with `jobwire broadcast send`: killed halfway, restarted, it
//! reaches everyone once, and the one send cut off mid-call is never repeated.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use jobwire::testbed::{Bed, bot_token, deliveries_to, seed_job, start_pipeline, temp_db};
use jobwire_store::{
    BroadcastStore, DeliveryStatus, DeliveryStore, ReportingStore, SqliteStore, SubscriberStore,
};
use jobwire_testkit::telegram::RateLimits;
use jobwire_testkit::wait::eventually;

use crate::support::*;

const SUBSCRIBERS: i64 = 300;

/// The crash tests each run `jobwire run` twice on a 2-core machine: one at a time, so
/// neither waits on the other's start-up.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const JOBS: usize = 3;
/// The fake Telegram's limits in both crash tests.
const TELEGRAM_LIMITS: RateLimits = RateLimits {
    global_per_sec: 150,
    per_chat_per_sec: 10,
    per_group_per_min: 600,
};

fn spawn(config: &std::path::Path, log: &std::path::Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_jobwire"))
        .args(["run", "--config"])
        .arg(config)
        .env("JOBWIRE_BOT_DEV_TOKEN", bot_token(0))
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("jobwire run starts")
}

/// A database with `subscribers` web subscribers (chats 1..) and a config file for
/// `jobwire run` against `telegram`: one bot, `dev`, delivering `web`.
async fn world(
    telegram: &jobwire_testkit::telegram::FakeTelegram,
    subscribers: i64,
) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let (dir, db) = temp_db().unwrap();
    let config = dir.path().join("jobwire.toml");
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"sqlite://{}\"\n[telegram]\napi_url = \"{}\"\nglobal_per_sec = 150\nper_chat_per_sec = 10\n\
             [scheduler]\ntick_ms = 50\n[[bots]]\nname = \"dev\"\n\
             [[categories]]\nslug = \"web\"\nname = \"Web\"\nbot = \"dev\"\n",
            db.display(),
            telegram.url()
        ),
    )
    .unwrap();
    let store = SqliteStore::open_path(&db).await.unwrap();
    let subs: Vec<_> = (1..=subscribers)
        .map(|chat| subscriber(chat, &["web"]))
        .collect();
    jobwire::subscribers::store_all(&store, &subs)
        .await
        .unwrap();
    (dir, db, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_process_resumes_delivery_without_losing_or_repeating() {
    let _alone = ONE_AT_A_TIME.lock().await;
    init();
    let telegram = fake_telegram(Some(TELEGRAM_LIMITS)).await;
    let (dir, db, config) = world(&telegram, SUBSCRIBERS).await;
    {
        let store = SqliteStore::open_path(&db).await.unwrap();
        for j in 0..JOBS {
            seed_job(
                &store,
                "@crash",
                &j.to_string(),
                &format!("Crash-test job number {j}: a landing page, $300"),
                &["web"],
            )
            .await
            .unwrap();
        }
    }
    let expected = SUBSCRIBERS as usize * JOBS;
    let log = dir.path().join("run.log");

    let mut first = spawn(&config, &log);
    eventually("the first deliveries", Duration::from_secs(60), || async {
        telegram.messages().len() >= expected / 3
    })
    .await;
    first.kill().unwrap(); // SIGKILL: no chance to finish anything
    first.wait().unwrap();
    let at_kill = telegram.messages().len();
    assert!(
        at_kill < expected,
        "the kill landed in the middle of delivery ({at_kill} of {expected})"
    );

    let store = SqliteStore::open_path(&db).await.unwrap();
    let in_flight = store
        .deliveries_in_status(DeliveryStatus::Sending, u32::MAX)
        .await
        .unwrap()
        .len();

    let mut second = spawn(&config, &log);
    eventually(
        "delivery to complete after restart",
        Duration::from_secs(90),
        || async {
            let c = store.pipeline_counts().await.unwrap();
            if c.deliveries_sent as usize == expected {
                Ok(())
            } else {
                Err(format!("{c:?}"))
            }
        },
    )
    .await;
    // A graceful stop (SIGTERM) ends the process promptly.
    let stopped = Command::new("kill")
        .arg("-TERM")
        .arg(second.id().to_string())
        .status()
        .unwrap();
    assert!(stopped.success());
    let status = eventually(
        "jobwire run to stop on SIGTERM",
        Duration::from_secs(15),
        || std::future::ready(second.try_wait().unwrap()),
    )
    .await;
    assert!(status.success(), "jobwire run exits 0 on SIGTERM: {status}");

    let messages = telegram.messages();
    let mut per_pair: BTreeMap<(i64, usize), usize> = BTreeMap::new();
    for m in &messages {
        let job = (0..JOBS)
            .find(|j| m.visible_text.contains(&format!("job number {j}:")))
            .expect("every message is one of the jobs");
        *per_pair.entry((m.chat_id, job)).or_default() += 1;
    }
    let duplicated: usize = per_pair.values().map(|n| n - 1).sum();
    assert_eq!(
        per_pair.len(),
        expected,
        "every subscriber got every job: nothing lost"
    );
    assert!(
        duplicated <= in_flight,
        "only deliveries in flight at the kill may repeat: duplicated {duplicated}, in flight {in_flight}"
    );
    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_resent_after_crash as usize, in_flight);
    let log = std::fs::read_to_string(dir.path().join("run.log")).unwrap();
    assert!(
        !log.contains(&bot_token(0)),
        "the bot token never reaches the log"
    );
    eprintln!(
        "crash test: {at_kill} of {expected} sent at the kill, {in_flight} in flight, {duplicated} duplicated"
    );
}

/// A crash in the middle of a fan-out larger than the in-process send queue (256 messages
/// of up to 64 deliveries, about 16,000): the restart re-drives the pending deliveries beside
/// the send stage. Before, it published them all before any sender ran, and the start-up
/// waited for ever on the full queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_over_more_pending_deliveries_than_the_send_queue_holds_sends_each_once() {
    const JOBS: usize = 10;
    const PER_JOB: i64 = 2_100;
    let _alone = ONE_AT_A_TIME.lock().await;
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        bots: vec!["dev".into()],
        routes: vec![("web".into(), "dev".into())],
        ..Bed::unlimited()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    {
        // What a crash right after the fan-outs leaves: every delivery pending.
        let store = SqliteStore::open_path(&db).await.unwrap();
        let subs: Vec<_> = (1..=PER_JOB)
            .map(|chat| subscriber(chat, &["web"]))
            .collect();
        jobwire::subscribers::store_all(&store, &subs)
            .await
            .unwrap();
        let deliveries = deliveries_to(&store.subscribers().await.unwrap(), "dev");
        for j in 0..JOBS {
            let text = format!("Backlog job number {j}: a shop front, $200");
            let post = seed_job(&store, "@backlog", &j.to_string(), &text, &["web"])
                .await
                .unwrap();
            store
                .fan_out(post, &[text], &deliveries, chrono::Utc::now())
                .await
                .unwrap();
        }
        let pending = store
            .deliveries_in_status(DeliveryStatus::Pending, u32::MAX)
            .await
            .unwrap();
        assert_eq!(pending.len(), JOBS * PER_JOB as usize);
    }
    let expected = JOBS * PER_JOB as usize;

    let (mut running, store) =
        tokio::time::timeout(Duration::from_secs(60), start_pipeline(&settings))
            .await
            .expect("the pipeline starts with 21,000 deliveries pending")
            .unwrap();
    let counts = running
        .wait_settled(Duration::from_secs(240))
        .await
        .unwrap();
    running.shutdown().await.unwrap();

    assert_eq!(counts.deliveries_sent as usize, expected, "{counts:?}");
    let mut per_pair: BTreeMap<(i64, usize), usize> = BTreeMap::new();
    for m in telegram.messages() {
        let job = (0..JOBS)
            .find(|j| m.visible_text.contains(&format!("job number {j}:")))
            .expect("every message is one of the jobs");
        *per_pair.entry((m.chat_id, job)).or_default() += 1;
    }
    assert_eq!(per_pair.len(), expected, "every subscriber got every job");
    assert!(per_pair.values().all(|&n| n == 1), "nothing was sent twice");
    assert!(
        store
            .deliveries_in_status(DeliveryStatus::Pending, u32::MAX)
            .await
            .unwrap()
            .is_empty()
    );
}

/// `jobwire broadcast send` with `options`, on `config`, the text read from `text`; waits
/// for it to finish.
fn broadcast_send(options: &[&str], config: &Path, text: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_jobwire"))
        .args(["broadcast", "send"])
        .args(options)
        .arg("--config")
        .arg(config)
        .arg("--text-file")
        .arg(text)
        .env("JOBWIRE_BOT_DEV_TOKEN", bot_token(0))
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broadcast_killed_halfway_reaches_everyone_once_after_a_restart() {
    const RECIPIENTS: i64 = 900;
    let _alone = ONE_AT_A_TIME.lock().await;
    init();
    let telegram = fake_telegram(Some(TELEGRAM_LIMITS)).await;
    let (dir, db, config) = world(&telegram, RECIPIENTS).await;
    let text = dir.path().join("news.html");
    std::fs::write(&text, "<b>jobwire</b> news: placements are open").unwrap();
    // An audience window out of range is refused before anything is stored.
    let refused = broadcast_send(&["--active-days", "0"], &config, &text);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("days"),
        "{refused:?}"
    );
    let started = broadcast_send(&[], &config, &text);
    assert!(started.status.success(), "{started:?}");
    let log = dir.path().join("run.log");
    // Two users blocked the bot: counted blocked, and noted so fan-out stops using it.
    let blockers = [RECIPIENTS - 1, RECIPIENTS];
    for chat in blockers {
        telegram.block_chat(jobwire::testbed::bot_id(0), chat);
    }

    let mut first = spawn(&config, &log);
    eventually(
        "a third of the broadcast",
        Duration::from_secs(60),
        || async { telegram.messages().len() >= RECIPIENTS as usize / 3 },
    )
    .await;
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    let at_kill = telegram.messages().len();
    assert!(at_kill < RECIPIENTS as usize, "killed halfway: {at_kill}");
    let store = SqliteStore::open_path(&db).await.unwrap();
    let cut = store
        .broadcast(jobwire_store::BroadcastId(1), chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    let in_flight = cut.progress.sending;
    assert!(
        in_flight <= 1,
        "one recipient is claimed at a time: {:?}",
        cut.progress
    );

    let mut second = spawn(&config, &log);
    let after = eventually(
        "the broadcast to finish",
        Duration::from_secs(90),
        || async {
            let b = store
                .broadcast(jobwire_store::BroadcastId(1), chrono::Utc::now())
                .await
                .unwrap()
                .unwrap();
            (b.progress.pending == 0 && b.progress.sending <= in_flight).then_some(b.progress)
        },
    )
    .await;
    second.kill().unwrap();
    second.wait().unwrap();

    let mut per_chat: BTreeMap<i64, usize> = BTreeMap::new();
    for m in telegram.messages() {
        assert!(
            m.visible_text.contains("placements are open"),
            "{}",
            m.visible_text
        );
        *per_chat.entry(m.chat_id).or_default() += 1;
    }
    assert!(
        per_chat.values().all(|n| *n == 1),
        "nobody got the broadcast twice"
    );
    let missing = RECIPIENTS as usize - blockers.len() - per_chat.len();
    assert!(
        missing as u64 <= in_flight,
        "only the send cut off by the kill may be missing: {missing} missing, {in_flight} in flight"
    );
    let received = per_chat.len() as u64;
    assert!(
        received >= after.sent && received <= after.sent + in_flight,
        "what the store counts sent is what Telegram has: {received} received, {after:?}"
    );
    assert_eq!((after.failed, after.blocked), (0, 2), "{after:?}");
    let blocks = store.bot_blocks(None).await.unwrap();
    let mut noted: Vec<i64> = blocks.iter().map(|b| b.chat_id).collect();
    noted.sort_unstable();
    assert_eq!(noted, blockers, "{blocks:?}");
    eprintln!(
        "broadcast crash test: {at_kill} of {RECIPIENTS} sent at the kill, {in_flight} in flight, {missing} missing, 0 twice"
    );
}
