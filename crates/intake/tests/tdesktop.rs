//! Telegram Desktop export import: both real-world fixture formats, the full-account shape,
//! streaming a big export, and broken files.

mod common;

use std::path::Path;
use std::time::Instant;

use chrono::{DateTime, TimeZone, Utc};
use common::{drain, write_temp};
use jobwire_core::IncomingPost;
use jobwire_intake::{ImportOptions, ImportStats, MAX_BATCH, SourceError, TdesktopExport};

fn fixture(name: &str) -> String {
    format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .expect("valid date")
}

type Imported = (TdesktopExport, Vec<Vec<IncomingPost>>, Option<SourceError>);

/// Imports `path` to the end: the source, its batches, and the error that ended it, if any.
async fn import(path: impl AsRef<Path>, progress: bool) -> Imported {
    let mut source = TdesktopExport::open(path, progress).await.expect("open");
    let (batches, err) = drain(&mut source).await;
    (source, batches, err)
}

async fn import_ok(path: impl AsRef<Path>) -> (Vec<IncomingPost>, ImportStats) {
    // `progress: true` draws nothing when stderr is not a terminal (as under `cargo test`).
    let (source, batches, err) = import(path, true).await;
    assert!(err.is_none(), "{err:?}");
    let stats = source.stats().expect("stats after the end");
    (batches.concat(), stats)
}

fn find<'a>(posts: &'a [IncomingPost], id: &str) -> &'a IncomingPost {
    posts
        .iter()
        .find(|p| p.external_id == id)
        .unwrap_or_else(|| panic!("post {id} missing"))
}

#[tokio::test]
async fn old_channel_export() {
    let (posts, stats) = import_ok(&fixture("tdesktop-export-channel-tg2md.json")).await;
    // 19 messages: 1 service (id 1), 5 media without text (3, 7, 8, 24, 25).
    let ids: Vec<&str> = posts.iter().map(|p| p.external_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "2", "4", "5", "9", "10", "11", "13", "14", "15", "21", "22", "23", "26"
        ]
    );
    assert_eq!(
        stats,
        ImportStats {
            chats: 1,
            messages: 19,
            posts: 13,
            skipped_service: 1,
            skipped_without_text: 5,
            skipped_malformed: 0,
        }
    );
    assert_eq!(
        find(&posts, "2"),
        &IncomingPost {
            channel: "test".into(),
            external_id: "2".into(),
            text: "test text post".into(),
            author: Some("test".into()),
            url: Some("https://t.me/c/1292077344/2".into()),
            posted_at: utc(2020, 11, 12, 12, 54, 7),
        }
    );
    // Text arrays: formatted parts concatenated in order.
    assert_eq!(
        find(&posts, "5").text,
        "italic\n\nbold\n\nunderline\n\nstrikethrough\n\nmonospace"
    );
    assert_eq!(
        find(&posts, "9").text,
        "italic in text\n\nitalic on whole line"
    );
    // Links keep their visible text only (no href).
    assert_eq!(
        find(&posts, "14").text,
        "text link\n\nexample.com\n\nexample@example.com"
    );
    assert_eq!(find(&posts, "21").text, "тестирование utf-8.");
    assert_eq!(find(&posts, "26").posted_at, utc(2021, 7, 14, 19, 20, 23));
}

#[tokio::test]
async fn current_personal_export() {
    let (posts, stats) = import_ok(&fixture("tdesktop-export-personal-tkonverter.json")).await;
    // 87 messages: 61 service (23..=83), 1 unsupported (87), 14 media without text.
    let ids: Vec<&str> = posts.iter().map(|p| p.external_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "1", "2", "3", "11", "12", "16", "21", "22", "84", "85", "86"
        ]
    );
    assert_eq!(
        stats,
        ImportStats {
            chats: 1,
            messages: 87,
            posts: 11,
            skipped_service: 62,
            skipped_without_text: 14,
            skipped_malformed: 0,
        }
    );
    assert_eq!(
        find(&posts, "1"),
        &IncomingPost {
            channel: "Alice Example".into(),
            external_id: "1".into(),
            text: "Base text with entities".into(),
            author: Some("Me".into()),
            url: None, // a personal chat has no public link
            posted_at: utc(2026, 2, 1, 9, 0, 0),
        }
    );
    assert_eq!(find(&posts, "2").author.as_deref(), Some("Alice Example"));
    assert_eq!(find(&posts, "22").text, "Unavailable file sample");
    // Dates come from date_unixtime.
    assert_eq!(find(&posts, "84").posted_at, utc(2025, 12, 31, 23, 50, 0));
    assert_eq!(find(&posts, "86").posted_at, utc(2027, 1, 2, 8, 30, 0));
}

/// A full-account export, keys in the order Telegram Desktop writes them.
const FULL_ACCOUNT: &str = r##"{
 "about": "Here is the data you requested.",
 "personal_information": { "user_id": 777000, "first_name": "Me", "phone_number": "+0" },
 "contacts": { "about": "...", "list": [ { "first_name": "A", "phone_number": "+1" } ] },
 "chats": {
  "about": "This page lists all chats from this export.",
  "list": [
   {
    "name": "Remote Jobs",
    "type": "public_channel",
    "id": 1500000001,
    "messages": [
     { "id": 10, "type": "message", "date": "2026-01-05T10:00:00",
       "date_unixtime": "1767607200", "from": "Remote Jobs", "from_id": "channel1500000001",
       "text": ["Ищем ", { "type": "bold", "text": "Rust" }, " разработчика ",
                { "type": "hashtag", "text": "#remote" }],
       "text_entities": [] },
     { "id": 11, "type": "service", "date": "2026-01-05T10:01:00",
       "action": "pin_message", "text": "" }
    ]
   },
   {
    "type": "private_supergroup",
    "id": 1500000002,
    "messages": [
     { "id": 3, "type": "message", "date": "2021-03-01T08:00:00",
       "from": null, "from_id": 123456, "text": "old format, deleted author" }
    ]
   }
  ]
 },
 "left_chats": {
  "about": "...",
  "list": [
   {
    "name": "Old Chat",
    "type": "private_group",
    "id": 42,
    "messages": [
     { "id": 1, "type": "message", "date": "2019-01-01T00:00:00",
       "from": "Bob", "from_id": "user5", "text": "bye" }
    ]
   }
  ]
 },
 "other_data": { "about": "...", "changes_log": [1, 2, 3] }
}"##;

fn full_account_posts() -> Vec<IncomingPost> {
    vec![
        IncomingPost {
            channel: "Remote Jobs".into(),
            external_id: "10".into(),
            text: "Ищем Rust разработчика #remote".into(),
            author: Some("Remote Jobs".into()),
            url: Some("https://t.me/c/1500000001/10".into()),
            posted_at: utc(2026, 1, 5, 10, 0, 0),
        },
        IncomingPost {
            channel: "channel1500000002".into(),
            external_id: "3".into(),
            text: "old format, deleted author".into(),
            author: Some("123456".into()),
            url: Some("https://t.me/c/1500000002/3".into()),
            posted_at: utc(2021, 3, 1, 8, 0, 0),
        },
        IncomingPost {
            channel: "Old Chat".into(),
            external_id: "1".into(),
            text: "bye".into(),
            author: Some("Bob".into()),
            url: None,
            posted_at: utc(2019, 1, 1, 0, 0, 0),
        },
    ]
}

#[tokio::test]
async fn full_account_export_reads_every_chat() {
    let file = write_temp(FULL_ACCOUNT);
    let (posts, stats) = import_ok(file.path()).await;
    assert_eq!(stats.chats, 3);
    assert_eq!(stats.posts, 3);
    assert_eq!(stats.skipped_service, 1);
    assert_eq!(posts, full_account_posts());
}

#[tokio::test]
async fn key_order_does_not_matter() {
    // serde_json's `Value` sorts keys: "messages" now comes before "name" and "type".
    let sorted: serde_json::Value = serde_json::from_str(FULL_ACCOUNT).expect("valid JSON");
    let file = write_temp(sorted.to_string());
    let (posts, _) = import_ok(file.path()).await;
    assert_eq!(posts, full_account_posts());
}

/// A single-channel export of `n` messages; every 10th is a service message.
fn big_export(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 300);
    out.extend_from_slice(
        b"{\n \"name\": \"Big Channel\",\n \"type\": \"public_channel\",\n \"id\": 777,\n \"messages\": [\n",
    );
    for i in 1..=n {
        let message = if i % 10 == 0 {
            serde_json::json!({ "id": i, "type": "service", "date": "2026-01-01T00:00:00",
                                "date_unixtime": "1767225600", "action": "pin_message", "text": "" })
        } else {
            serde_json::json!({
                "id": i, "type": "message", "date": "2026-01-01T00:00:00",
                "date_unixtime": (1_767_225_600 + i).to_string(),
                "from": "Big Channel", "from_id": "channel777",
                "text": ["Вакансия ", { "type": "bold", "text": format!("№{i}") },
                         ": Python developer, remote, $3000. Пишите @hr_bot"],
                "text_entities": [
                    { "type": "plain", "text": "Вакансия " },
                    { "type": "bold", "text": format!("№{i}") },
                    { "type": "plain", "text": ": Python developer, remote, $3000. Пишите @hr_bot" }
                ]
            })
        };
        if i > 1 {
            out.extend_from_slice(b",\n");
        }
        out.extend_from_slice(b"  ");
        out.extend_from_slice(message.to_string().as_bytes());
    }
    out.extend_from_slice(b"\n ]\n}\n");
    out
}

#[tokio::test]
async fn a_big_export_streams_in_batches() {
    const N: usize = 50_000;
    let bytes = big_export(N);
    let file = write_temp(&bytes);
    let started = Instant::now();
    let (source, batches, err) = import(file.path(), false).await;
    let elapsed = started.elapsed();
    assert!(err.is_none(), "{err:?}");
    eprintln!(
        "imported {} MB, {N} messages in {elapsed:?} ({:.1} MB/s)",
        bytes.len() / 1_000_000,
        bytes.len() as f64 / 1e6 / elapsed.as_secs_f64()
    );
    assert!(
        batches
            .iter()
            .all(|b| !b.is_empty() && b.len() <= MAX_BATCH)
    );
    assert_eq!(batches.len(), (N * 9 / 10).div_ceil(MAX_BATCH));
    let posts = batches.concat();
    assert_eq!(posts.len(), N * 9 / 10);
    assert_eq!(source.stats().map(|s| s.messages), Some(N));
    let last = posts.last().expect("posts");
    assert_eq!(last.external_id, (N - 1).to_string());
    assert_eq!(
        last.text,
        format!(
            "Вакансия №{}: Python developer, remote, $3000. Пишите @hr_bot",
            N - 1
        )
    );
    assert_eq!(last.posted_at.timestamp(), 1_767_225_600 + (N as i64 - 1));
}

#[tokio::test]
async fn a_truncated_export_is_an_error_after_the_posts_before_the_cut() {
    let bytes = big_export(5_000);
    let cut = bytes.len() * 3 / 5;
    let file = write_temp(&bytes[..cut]);
    let (source, batches, err) = import(file.path(), false).await;
    // Streaming: what came before the cut was delivered before the error was known.
    let delivered = batches.concat().len();
    assert!(
        (MAX_BATCH..4_500 * 3 / 5).contains(&delivered),
        "{delivered} posts delivered"
    );
    let err = err.expect("a truncated file is an error");
    match &err {
        SourceError::BadDocument { offset, reason, .. } => {
            assert_eq!(*offset, cut as u64);
            assert!(reason.contains("truncated"), "{reason}");
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains(&format!("byte {cut}")), "{err}");
    assert!(
        source.stats().is_none(),
        "a failed import has no final stats"
    );
}

#[tokio::test]
async fn an_invalid_export_names_the_line() {
    let doc = "{\n \"name\": \"x\",\n \"id\": 1,\n \"messages\": [\n  {\"id\": 1, \"type\": \"message\", \"date\": \"2020-01-01T00:00:00\", \"text\": \"ok\"},\n  {\"id\": 2, \"text\": \"oops\" \"date\": 5}\n ]\n}\n";
    let file = write_temp(doc);
    let (_, _, err) = import(file.path(), false).await;
    let err = err.expect("invalid JSON");
    // The offending byte is the quote opening "date" after "oops" (a comma is missing).
    let expected_offset = doc.find("\"date\": 5").expect("in doc") as u64 + 1;
    assert!(
        matches!(err, SourceError::BadDocument { line: 6, offset, .. } if offset == expected_offset),
        "{err:?}"
    );
}

/// Good messages around four malformed ones: no date, an id that is a list, a text that is
/// a number, a date of the wrong type.
const WITH_MALFORMED: &str = r#"{"name": "x", "type": "public_channel", "id": 1, "messages": [
  {"id": 1, "type": "message", "date": "2020-01-01T00:00:00", "text": "first"},
  {"id": 5, "type": "message", "text": "hi"},
  {"id": [6], "type": "message", "date": "2020-01-01T00:00:00", "text": "odd id"},
  {"id": 7, "type": "message", "date": "2020-01-01T00:00:00", "text": 42},
  {"id": 8, "type": "message", "date": 5, "text": "numeric date"},
  {"id": 9, "type": "message", "date": "2020-01-01T00:00:09", "text": "last"}
]}"#;

#[tokio::test]
async fn malformed_messages_are_skipped_and_counted_and_the_rest_imported() {
    let file = write_temp(WITH_MALFORMED);
    let (posts, stats) = import_ok(file.path()).await;
    let ids: Vec<_> = posts.iter().map(|p| p.external_id.as_str()).collect();
    assert_eq!(
        ids,
        ["1", "9"],
        "the good messages on both sides were imported"
    );
    assert_eq!(stats.skipped_malformed, 4, "{stats:?}");
    assert_eq!((stats.messages, stats.posts), (6, 2), "{stats:?}");
}

#[tokio::test]
async fn a_strict_import_stops_at_the_first_malformed_message_naming_it() {
    let file = write_temp(WITH_MALFORMED);
    let options = ImportOptions {
        progress: false,
        strict: true,
    };
    let mut source = TdesktopExport::open_with(file.path(), options)
        .await
        .expect("open");
    let (batches, err) = drain(&mut source).await;
    assert!(batches.concat().len() <= 1, "nothing after the bad message");
    let err = err.expect("a strict import fails").to_string();
    assert!(err.contains("message 5") && err.contains("date"), "{err}");
}

#[tokio::test]
async fn json_that_is_not_an_export_is_refused() {
    for doc in [r#"{"hello": "world"}"#, "[1, 2, 3]", "\"text\"", ""] {
        let file = write_temp(doc);
        let (_, batches, err) = import(file.path(), false).await;
        assert!(batches.is_empty());
        let err = err.unwrap_or_else(|| panic!("{doc:?} was accepted"));
        assert!(
            matches!(
                err,
                SourceError::Unrecognized { .. } | SourceError::BadDocument { .. }
            ),
            "{err:?}"
        );
    }
    let file = write_temp(br#"{"name": "x", "id": 1, "messages": []} trailing"#);
    let (_, _, err) = import(file.path(), false).await;
    assert!(err.is_some(), "trailing garbage");
}

#[tokio::test]
async fn a_missing_file_fails_at_open() {
    let err = TdesktopExport::open("/nonexistent/result.json", true)
        .await
        .expect_err("missing");
    assert!(matches!(err, SourceError::Io { .. }), "{err:?}");
}
