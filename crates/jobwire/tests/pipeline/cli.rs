//! The binary as a user runs it: configuration errors, the demo, eval and import.

use std::process::{Command, Output};

use crate::support::*;

fn jobwire(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jobwire"));
    cmd.args(args)
        .env_remove("JOBWIRE_CONFIG")
        .env("RUST_LOG", "error");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("jobwire runs")
}

fn refuses(config: &str, env: &[(&str, &str)], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobwire.toml");
    std::fs::write(&path, config).unwrap();
    let out = jobwire(&["run", "--config", path.to_str().unwrap()], env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{config:?} must be refused");
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(
        lines[0].contains(expected),
        "{:?} should mention {expected:?}",
        lines[0]
    );
}

const TOKEN: &str = "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

#[test]
fn bad_configuration_is_one_clear_line_naming_the_key() {
    refuses("[telegram]\nper_chat = 1\n", &[], "per_chat");
    refuses("[[bots]]\nname = \"dev\"\n", &[], "JOBWIRE_BOT_DEV_TOKEN");
    refuses(
        "[telegram]\napi_url = \"http://127.0.0.1:9/\"\n[[bots]]\nname = \"dev\"\n",
        &[("JOBWIRE_BOT_DEV_TOKEN", TOKEN)],
        "telegram.api_url: cannot reach",
    );
    // A webhook secret short enough to be guessed stops the start-up.
    refuses(
        "[[bots]]\nname = \"dev\"\n[telegram]\nupdates = \"webhook\"\n\
         webhook_public_url = \"https://bots.example.com/\"\n",
        &[
            ("JOBWIRE_BOT_DEV_TOKEN", TOKEN),
            ("JOBWIRE_TELEGRAM_WEBHOOK_SECRET", "abc"),
        ],
        "JOBWIRE_TELEGRAM_WEBHOOK_SECRET: must be 32-256 characters",
    );
    let out = jobwire(&["run", "--config", "/nonexistent/jobwire.toml"], &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}

/// At Telegram's real pace (`--speed 1`: one message a second per chat, 20 a minute per
/// group, against a fake Telegram enforcing exactly that), every card arrives and Telegram
/// never answers 429, cards in two parts and the group chat included.
#[test]
fn the_demo_at_telegram_s_real_pace_gets_no_429() {
    let out = jobwire(&["demo", "--speed", "1", "--json"], &[("RUST_LOG", "warn")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(
        summary["deliveries_sent"].as_u64().unwrap() > 100,
        "{summary}"
    );
    let waits: Vec<&str> = stderr.lines().filter(|l| l.contains("429")).collect();
    assert_eq!(summary["telegram_429"], 0, "{waits:#?}");
}

#[test]
fn an_environment_override_is_applied_and_checked() {
    let out = jobwire(&["run"], &[("JOBWIRE__DATABASE__URL", "mysql://nope")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("database.url"));
}

#[test]
fn the_demo_runs_with_no_accounts_and_reports_in_json() {
    // Warnings too: a refused call names itself.
    let out = jobwire(&["demo", "--json"], &[("RUST_LOG", "warn")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap();
    let summary: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(summary["posts_read"], 260);
    assert!(summary["deliveries_sent"].as_u64().unwrap() > 100);
    let refused: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("400"))
        .map(str::to_owned)
        .collect();
    assert_eq!(summary["telegram_400"], 0, "refused calls: {refused:#?}");
    assert_eq!(summary["telegram_429"], 0);
    assert!(
        summary["deliveries_held"].as_u64().unwrap() > 0,
        "quiet hours hold messages"
    );
    assert!(stdout.contains("Anna (designer)"));

    // The README's demo block is what the demo prints (the time and memory line aside).
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let block: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("Summary ("))
        .take_while(|l| !l.starts_with("```"))
        .collect();
    let printed: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Summary ("))
        .take_while(|l| !l.starts_with('{'))
        .collect();
    assert!(!block.is_empty(), "README.md has no demo summary block");
    assert_eq!(
        block.len(),
        printed.len(),
        "README:\n{block:#?}\nprinted:\n{printed:#?}"
    );
    for (readme_line, printed_line) in block.iter().zip(&printed) {
        if printed_line.trim_start().starts_with("time ") {
            assert!(
                readme_line.trim_start().starts_with("time "),
                "{readme_line}"
            );
        } else {
            assert_eq!(
                readme_line, printed_line,
                "README.md's demo block is out of date"
            );
        }
    }
    // Every demo subscriber is in the README's list of who they are.
    let list = readme
        .split("## What the demo shows")
        .nth(1)
        .and_then(|r| r.split("```").next())
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for who in [
        "designer",
        "bots",
        "WordPress",
        "marketer",
        "paused",
        "blocked",
        "quiet hours",
        "assistant",
        "group chat",
    ] {
        assert!(
            list.contains(who),
            "README.md's demo description does not mention the {who}"
        );
    }
}

#[test]
fn eval_reports_cross_validated_quality_as_json() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
    let out = jobwire(&["eval", "--dataset", data, "--cv", "5", "--json"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["cross_validated"], 5);
    assert!(report["is_job"]["f1"].as_f64().unwrap() >= 0.85, "{report}");
    assert!(
        report["categories"]["micro_f1"].as_f64().unwrap() >= 0.50,
        "{report}"
    );
    assert!(report["kinds"]["job"]["job"].as_u64().unwrap() > 100);

    // The shipped model on its own training data says so.
    let out = jobwire(&["eval", "--dataset", data], &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("training data"));
}

#[tokio::test(flavor = "multi_thread")]
async fn eval_of_the_shipped_model_routes_unseen_channels_as_production_does() {
    // Channels in no training file, an LLM that always answers right.
    let unseen = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/unseen.jsonl");
    let doc = std::fs::read_to_string(unseen).unwrap();
    let llm = fake_llm(jobwire_testkit::llm::load_oracle_jsonl(&doc).unwrap()).await;
    let url = llm.url().to_string();
    let out = tokio::task::spawn_blocking(move || {
        jobwire(
            &[
                "eval",
                "--dataset",
                unseen,
                "--classifier",
                "cascade",
                "--model",
                "shipped",
                "--llm-url",
                &url,
                "--json",
            ],
            &[],
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("the shipped model"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let n = doc.lines().filter(|l| !l.trim().is_empty()).count() as u64;
    // Every post, none of them trained on, no folds.
    assert_eq!(report["n_posts"], n, "{report}");
    assert_eq!(report["trained_on_eval_posts"], 0, "{report}");
    assert_eq!(report["cross_validated"], serde_json::Value::Null);
    assert_eq!(report["local"]["n_posts"], n);
    // The unsure posts went to the LLM, the rest stayed local, and it paid.
    let share = report["llm_share"].as_f64().unwrap();
    assert!(share > 0.02 && share < 0.6, "LLM share {share}");
    let f1 = |r: &serde_json::Value| r["is_job"]["f1"].as_f64().unwrap();
    let micro = |r: &serde_json::Value| r["categories"]["micro_f1"].as_f64().unwrap();
    assert!(f1(&report) >= f1(&report["local"]), "{report}");
    assert!(micro(&report) > micro(&report["local"]), "{report}");
    assert!(f1(&report) >= 0.9, "{report}");
}

#[test]
fn simulate_learning_shows_the_llm_share_falling_as_the_model_learns() {
    let unseen = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/unseen.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("learning.csv");
    let svg = dir.path().join("learning.svg");
    let out = jobwire(
        &[
            "eval",
            "--dataset",
            unseen,
            "--simulate-learning",
            "--retrain-every",
            "200",
            "--csv",
            csv.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let blocks = summary["blocks"].as_array().unwrap();
    assert!(blocks.len() >= 4, "{summary}");
    // The oracle is the LLM; the local model learns from its answers block by block.
    assert!(
        blocks.iter().all(|b| b["llm_is_job_f1"] == 1.0),
        "{summary}"
    );
    let share = |b: &serde_json::Value| b["llm_share"].as_f64().unwrap();
    let first = share(&blocks[0]);
    let after = summary["llm_share_after_500"].as_f64().unwrap();
    assert!(first > 0.0, "{summary}");
    assert!(after < first, "LLM share {first} then {after}: {summary}");
    // The same posts through the shipped model, which learned nothing: what learning buys.
    let shipped = summary["shipped_llm_share_after_500"].as_f64().unwrap();
    assert!(
        after <= shipped * 0.75,
        "learning {after}, no learning {shipped}: {summary}"
    );
    let micro = summary["micro_f1_after_500"].as_f64().unwrap();
    assert!(micro >= 0.95, "{summary}");
    assert_eq!(summary["is_job_f1_after_500"], 1.0, "{summary}");
    assert!(
        blocks
            .windows(2)
            .all(|w| w[1]["examples"].as_u64() >= w[0]["examples"].as_u64())
    );
    assert_ne!(
        blocks[0]["model"],
        blocks[blocks.len() - 1]["model"],
        "retrained"
    );
    // The CSV has a line per block, the plot draws them.
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().count(), blocks.len() + 1, "{csv}");
    assert!(csv.starts_with("posts_before,posts,llm_share,"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("LLM share") && svg.contains("<polyline"));
}

#[test]
fn import_reads_a_desktop_export_into_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("j.db").display());
    let export = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/tdesktop-export-channel-tg2md.json"
    );
    let out = jobwire(
        &["import", export, "--quiet"],
        &[("JOBWIRE__DATABASE__URL", &db)],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("posts read"), "{stdout}");
    // Importing again finds every post already known.
    let again = jobwire(
        &["import", export, "--quiet"],
        &[("JOBWIRE__DATABASE__URL", &db)],
    );
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(again.contains(" 0 queued"), "{again}");
    let _ = gist("", 0);
}

#[test]
fn a_malformed_post_is_reported_skipped_and_counted_unless_strict() {
    let dir = tempfile::tempdir().unwrap();
    let data =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl"))
            .unwrap();
    let mut lines: Vec<&str> = data.lines().take(12).collect();
    lines.insert(2, "{\"id\": \"broken\", \"text\": ");
    let posts = dir.path().join("posts.jsonl");
    std::fs::write(&posts, lines.join("\n")).unwrap();
    let posts = posts.to_str().unwrap();

    let out = jobwire(
        &["demo", "--posts", posts, "--json"],
        &[("RUST_LOG", "warn")],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    // The 12 good lines, then each again as a reconnecting source re-reads them.
    assert_eq!(summary["posts_read"], 24, "every good line was read");
    assert_eq!(summary["duplicates"], 12);
    assert_eq!(summary["skipped_lines"], 1);
    assert!(
        stderr.contains("posts.jsonl:3:"),
        "the bad line is named: {stderr}"
    );

    let out = jobwire(&["demo", "--posts", posts, "--strict"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--strict stops at the bad line");
    assert!(stderr.contains("posts.jsonl:3:"), "{stderr}");
}

#[test]
fn a_malformed_export_message_is_reported_skipped_and_counted_unless_strict() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("j.db").display());
    let export = dir.path().join("result.json");
    std::fs::write(
        &export,
        r#"{"name": "Jobs", "type": "public_channel", "id": 77, "messages": [
  {"id": 1, "type": "message", "date": "2026-01-01T10:00:00", "text": "Need a React developer, budget $500"},
  {"id": 5, "type": "message", "text": "no date here"},
  {"id": 9, "type": "message", "date": "2026-01-01T11:00:00", "text": "Looking for a logo designer, $200"}
]}"#,
    )
    .unwrap();
    let export = export.to_str().unwrap();
    let env = [
        ("JOBWIRE__DATABASE__URL", db.as_str()),
        ("RUST_LOG", "warn"),
    ];

    let strict = jobwire(&["import", export, "--quiet", "--strict"], &env);
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(
        !strict.status.success(),
        "--strict stops at the bad message"
    );
    assert!(stderr.contains("message 5"), "{stderr}");

    let out = jobwire(&["import", export, "--quiet"], &env);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 malformed"), "{stdout}");
    assert!(stdout.contains("2 posts read"), "{stdout}");
    assert!(
        stderr.contains("message 5"),
        "the bad message is named: {stderr}"
    );
}

/// `jobwire admin create` with `password` on standard input.
fn admin(action: &str, username: &str, password: &str, db: &str) -> Output {
    admin_with(action, &[], username, password, db)
}

/// [`admin`] with more arguments (`--role moderator`).
fn admin_with(action: &str, extra: &[&str], username: &str, password: &str, db: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_jobwire"))
        .args(["admin", action, "--username", username, "--password-stdin"])
        .args(extra)
        .env_remove("JOBWIRE_CONFIG")
        .env("RUST_LOG", "info")
        .env("JOBWIRE__DATABASE__URL", db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("jobwire runs");
    // A refusal that needs no password (a bad name) may exit before reading it: the pipe is
    // then closed, which is not the test's failure; the exit status and stderr tell.
    match child.stdin.take().unwrap().write_all(password.as_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("writing the password: {e}"),
    }
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn an_admin_account_is_created_from_a_password_on_stdin_and_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("j.db").display());
    let secret = "correct horse battery staple";
    let shown = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };

    let out = admin("create", "Alice", &format!("{secret}\n"), &db);
    assert!(out.status.success(), "{}", shown(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "admin alice created"
    );
    assert!(!shown(&out).contains(secret));

    // The database holds an argon2id hash that verifies the password, not the password.
    let store = jobwire_store::open(&db).await.unwrap();
    let row = store.admin_by_username("alice").await.unwrap().unwrap();
    assert!(row.password_hash.starts_with("$argon2id$"));
    assert!(jobwire::admin_accounts::verify_password(
        secret,
        &row.password_hash
    ));
    assert!(!jobwire::admin_accounts::verify_password(
        "wrong password!",
        &row.password_hash
    ));
    assert_eq!(
        row.role,
        jobwire_store::AdminRole::Admin,
        "the default role"
    );

    // `--role moderator` makes a moderator; a role that does not exist is refused.
    let out = admin_with(
        "create",
        &["--role", "moderator"],
        "erin",
        &format!("{secret}\n"),
        &db,
    );
    assert!(out.status.success(), "{}", shown(&out));
    let erin = store.admin_by_username("erin").await.unwrap().unwrap();
    assert_eq!(erin.role, jobwire_store::AdminRole::Moderator);
    let out = admin_with(
        "create",
        &["--role", "owner"],
        "frank",
        &format!("{secret}\n"),
        &db,
    );
    assert!(!out.status.success());
    assert!(shown(&out).contains("moderator"), "{}", shown(&out));
    assert_eq!(store.admin_by_username("frank").await.unwrap(), None);

    // A second account of the same name (any case), a short password, a bad name and a
    // missing --password-stdin are refused with one clear line each; nothing changes.
    for (args, password, expected) in [
        (("create", "ALICE"), format!("{secret}\n"), "exists"),
        (("create", "bob"), "short\n".to_owned(), "too short"),
        (
            ("create", "<b>bob</b>"),
            format!("{secret}\n"),
            "a username is",
        ),
        (
            ("set-password", "carol"),
            format!("{secret}\n"),
            "no admin \"carol\"",
        ),
    ] {
        let out = admin(args.0, args.1, &password, &db);
        let text = shown(&out);
        assert!(!out.status.success(), "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?}: {text}");
        assert!(
            !text.contains(secret) && !text.contains("short\n"),
            "{text}"
        );
    }
    let without = jobwire(
        &["admin", "create", "--username", "dave"],
        &[("JOBWIRE__DATABASE__URL", &db)],
    );
    assert!(!without.status.success());
    assert!(String::from_utf8_lossy(&without.stderr).contains("--password-stdin"));
    assert_eq!(store.admin_by_username("bob").await.unwrap(), None);
    assert_eq!(store.admin_by_username("dave").await.unwrap(), None);

    // The password can be changed; the old one stops working.
    let out = admin("set-password", "alice", "another long password\n", &db);
    assert!(out.status.success(), "{}", shown(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "admin alice password changed; its sessions ended"
    );
    let row = store.admin_by_username("alice").await.unwrap().unwrap();
    assert!(jobwire::admin_accounts::verify_password(
        "another long password",
        &row.password_hash
    ));
    assert!(!jobwire::admin_accounts::verify_password(
        secret,
        &row.password_hash
    ));
}

/// The first log line `jobwire fake-telegram` writes (INFO) to a pipe, in each `--log-format`.
fn first_log_line(format: Option<&str>, env: &[(&str, &str)]) -> String {
    use std::io::BufRead;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jobwire"));
    if let Some(f) = format {
        cmd.args(["--log-format", f]);
    }
    cmd.args(["fake-telegram", "--listen", "127.0.0.1:0"])
        .env_remove("JOBWIRE_LOG_FORMAT")
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("jobwire starts");
    let mut line = String::new();
    let stderr = child.stderr.take().expect("stderr is piped");
    let read = std::io::BufReader::new(stderr).read_line(&mut line);
    let _ = child.kill();
    let _ = child.wait();
    read.expect("a log line");
    line
}

#[test]
fn logs_to_a_pipe_are_plain_text_or_json_lines_as_asked() {
    // Not a terminal: no colour codes in text logs.
    let text = first_log_line(None, &[]);
    assert!(
        !text.contains('\u{1b}'),
        "ANSI codes in a log file: {text:?}"
    );
    assert!(
        text.contains(" INFO ") && text.contains("listening"),
        "{text}"
    );
    // --log-format json (or the environment variable): one JSON object per line.
    for line in [
        first_log_line(Some("json"), &[]),
        first_log_line(None, &[("JOBWIRE_LOG_FORMAT", "JSON")]),
    ] {
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        assert_eq!(v["level"], "INFO", "{line}");
        assert!(v["fields"]["message"].is_string(), "{line}");
    }
    // A format it does not know is refused by name.
    let out = jobwire(&["--log-format", "xml", "doctor"], &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--log-format"));
}

/// `admin set-password` and `admin disable` end the admin's sessions; `admin list` shows the
/// accounts; a disabled admin's session is no longer live.
#[tokio::test]
async fn a_new_password_or_disabling_ends_the_admins_sessions_and_list_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("j.db").display());
    let env = [("JOBWIRE__DATABASE__URL", db.as_str())];
    for name in ["alice", "bob"] {
        let out = admin("create", name, "correct horse battery staple\n", &db);
        assert!(out.status.success());
    }
    let store = jobwire_store::open(&db).await.unwrap();
    let alice = store.admin_by_username("alice").await.unwrap().unwrap().id;
    let bob = store.admin_by_username("bob").await.unwrap().unwrap().id;
    let now = chrono::Utc::now();
    let session =
        |hash: &'static str, admin_id: jobwire_store::AdminId| jobwire_store::NewSession {
            token_hash: hash,
            admin_id,
            csrf: "c",
            client: "192.0.2.1",
            expires_at: now + chrono::Duration::hours(12),
        };
    for (hash, id) in [("a1", alice), ("a2", alice), ("b1", bob)] {
        store.create_session(&session(hash, id), now).await.unwrap();
    }

    let out = jobwire(&["admin", "list"], &env);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{listed}");
    let lines: Vec<_> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with("alice")
            && lines[0].contains(" admin ")
            && lines[0].contains("active")
            && lines[0].contains("sessions 2"),
        "{listed}"
    );
    assert!(!listed.contains("argon2"), "{listed}");

    let out = admin("set-password", "alice", "another long password\n", &db);
    assert!(out.status.success());
    assert!(store.session("a1", now).await.unwrap().is_none());
    assert!(store.session("a2", now).await.unwrap().is_none());
    assert!(
        store.session("b1", now).await.unwrap().is_some(),
        "bob's stays"
    );

    let out = jobwire(&["admin", "disable", "--username", "Bob"], &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "admin bob disabled; its sessions ended"
    );
    assert!(store.session("b1", now).await.unwrap().is_none());
    store
        .create_session(&session("b2", bob), now)
        .await
        .unwrap();
    assert!(
        store.session("b2", now).await.unwrap().is_none(),
        "a disabled admin has no live session"
    );
    let out = jobwire(&["admin", "list"], &env);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let bob_line = listed.lines().find(|l| l.starts_with("bob")).unwrap();
    assert!(bob_line.contains("disabled"), "{listed}");

    let out = jobwire(&["admin", "disable", "--username", "carol"], &env);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no admin \"carol\""), "{stderr}");
}
