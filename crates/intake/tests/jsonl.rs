//! The JSONL dataset source: fields, batching and bad lines.

mod common;

use chrono::{DateTime, TimeZone, Utc};
use common::{drain, write_temp};
use jobwire_core::IncomingPost;
use jobwire_intake::{JsonlSource, MAX_BATCH, Source, SourceError};
use tempfile::NamedTempFile;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0)
        .single()
        .expect("valid date")
}

async fn open(file: &NamedTempFile) -> JsonlSource {
    JsonlSource::open(file.path(), now()).await.expect("open")
}

/// The ids of the posts of `batches`, in order.
fn ids(batches: Vec<Vec<IncomingPost>>) -> Vec<String> {
    batches
        .into_iter()
        .flatten()
        .map(|p| p.external_id)
        .collect()
}

#[tokio::test]
async fn records_become_posts() {
    let file = write_temp(concat!(
        r#"{"id": "d001", "channel": "@freelance_hub", "text": "need a bot", "is_job": true, "kind": "job", "categories": ["bots"], "lang": "en", "dup_group": null}"#,
        "\n\n",
        r#"{"id": "42", "channel": "@remote_jobs", "text": "Ищем дизайнера"}"#,
        "\r\n",
        r#"{"id": "7", "channel": "Some Chat Title", "text": "hello"}"#,
    ));
    let mut source = open(&file).await;
    assert!(source.describe().contains("JSONL"));
    let (batches, err) = drain(&mut source).await;
    assert!(err.is_none(), "{err:?}");
    let posts: Vec<IncomingPost> = batches.into_iter().flatten().collect();
    assert_eq!(
        posts,
        [
            IncomingPost {
                channel: "@freelance_hub".into(),
                external_id: "d001".into(),
                text: "need a bot".into(),
                author: None,
                url: None,
                posted_at: now(),
            },
            IncomingPost {
                channel: "@remote_jobs".into(),
                external_id: "42".into(),
                text: "Ищем дизайнера".into(),
                author: None,
                url: Some("https://t.me/remote_jobs/42".into()),
                posted_at: now(),
            },
            IncomingPost {
                channel: "Some Chat Title".into(),
                external_id: "7".into(),
                text: "hello".into(),
                author: None,
                url: None,
                posted_at: now(),
            },
        ]
    );
}

fn numbered_lines(n: usize) -> String {
    (1..=n)
        .map(|i| format!("{{\"id\": \"{i}\", \"channel\": \"@c\", \"text\": \"post {i}\"}}\n"))
        .collect()
}

#[tokio::test]
async fn large_files_come_in_bounded_batches() {
    let file = write_temp(numbered_lines(1234));
    let mut source = open(&file).await;
    let (batches, err) = drain(&mut source).await;
    assert!(err.is_none(), "{err:?}");
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    assert_eq!(sizes, [MAX_BATCH, MAX_BATCH, 234]);
    let expected: Vec<String> = (1..=1234).map(|i| i.to_string()).collect();
    assert_eq!(ids(batches), expected);
}

#[tokio::test]
async fn long_texts_are_bounded() {
    let text = "ж".repeat(40_000); // 80 KB
    let file = write_temp(format!(
        "{{\"id\": \"1\", \"channel\": \"@c\", \"text\": \"{text}\"}}\n"
    ));
    let mut source = open(&file).await;
    let (batches, _) = drain(&mut source).await;
    let post = &batches[0][0];
    assert!(post.text.len() <= jobwire_core::post::MAX_POST_BYTES + 3);
    assert!(post.text.ends_with('…'));
}

const BAD: &str = concat!(
    r#"{"id": "1", "channel": "@c", "text": "one"}"#,
    "\n",
    r#"{"id": "2", "channel": "@c", "text": "two"}"#,
    "\n",
    r#"{"id": "3", "channel": "@c", "text": "three", "is_job": true, "kind": "spam"}"#,
    "\n",
    r#"{"id": "4", "channel": "@c", "text": "four"}"#,
    "\n",
    "{not json\n",
    r#"{"id": "6", "channel": "@c", "text": "six"}"#,
    "\n",
);

#[tokio::test]
async fn a_bad_line_stops_the_source_after_the_good_ones() {
    let file = write_temp(BAD);
    let mut source = open(&file).await;
    let (batches, err) = drain(&mut source).await;
    assert_eq!(ids(batches), ["1", "2"]);
    let err = err.expect("the bad line is an error");
    assert!(
        matches!(&err, SourceError::BadLine { line: 3, reason, .. } if reason.contains("spam")),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains(":3: "), "{message}");
    assert!(
        !message.contains("line 3"),
        "the line is not repeated: {message}"
    );
}

#[tokio::test]
async fn bad_lines_can_be_skipped_and_counted() {
    let mut content = BAD.to_owned();
    content.push_str("\u{FFFD}\n");
    let mut bytes = content.into_bytes();
    bytes.extend_from_slice(b"\xff\xfe not utf-8\n");
    bytes.extend_from_slice(br#"{"id": "9", "channel": "@c", "text": "nine"}"#);
    let file = write_temp(&bytes);

    let mut source = open(&file).await.skip_bad_lines(true);
    let (batches, err) = drain(&mut source).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(ids(batches), ["1", "2", "4", "6", "9"]);
    assert_eq!(source.skipped_lines(), 4);
}

#[tokio::test]
async fn an_over_long_line_is_a_bad_line_and_the_next_one_still_reads() {
    let long = format!(
        "{{\"id\": \"1\", \"channel\": \"@c\", \"text\": \"{}\"}}\n",
        "a".repeat(jobwire_intake::jsonl::MAX_LINE_BYTES)
    );
    let file = write_temp(long + &numbered_lines(2));
    let mut source = open(&file).await.skip_bad_lines(true);
    let (batches, err) = drain(&mut source).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(source.skipped_lines(), 1);
    assert_eq!(batches.concat().len(), 2);
}

#[tokio::test]
async fn a_missing_file_is_an_io_error_naming_it() {
    let err = JsonlSource::open("/nonexistent/dir/posts.jsonl", now())
        .await
        .expect_err("missing");
    assert!(matches!(err, SourceError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/dir/posts.jsonl"));
}
