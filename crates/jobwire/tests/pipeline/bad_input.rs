//! Hostile and odd posts go through the whole pipeline without a panic: each yields valid
//! Telegram messages or a clear rejection.

use std::time::Duration;

use chrono::Utc;
use jobwire::testbed::{Bed, seed_job, temp_db};
use jobwire_intake::stage::IntakeOutcome;
use jobwire_store::PostStatus;

use crate::support::*;

/// Waits (up to two minutes) until everything in flight has been handled.
async fn settled(running: &mut jobwire::pipeline::Pipeline) -> jobwire_store::PipelineCounts {
    running
        .wait_settled(Duration::from_secs(120))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_posts_become_valid_messages_or_clear_rejections() {
    init();
    let long: String = "Нужен сайт на <b>WordPress</b> & магазин, бюджет $500. ".repeat(2000); // ~100 KB
    let binary: String = (0u8..=255).map(char::from).cycle().take(3000).collect();
    let markup = "<script>alert(1)</script> **bold** __it__ [link](javascript:alert(1)) \
                  &amp; &lt;b&gt; <a href=\"javascript:x\">x</a> </b></i> <pre>` ``` `</pre> \
                  Need a landing page, $300";
    let rtl = "\u{202B}مطلوب مطور مواقع لمتجر إلكتروني، الميزانية 300$ \u{200F}שלום";
    let emoji = "🔥💰🔥💰👨‍💻🏳️‍🌈".repeat(700); // grapheme clusters and > 4096 scalars
    let posts = [long.as_str(), binary.as_str(), markup, rtl, emoji.as_str()];

    let telegram = fake_telegram(Some(scaled_limits(50).0)).await;
    let llm = fake_llm(posts.iter().map(|t| web_job(t)).collect()).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        limits: scaled_limits(50).1,
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (mut running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    jobwire::subscribers::store_all(store.as_ref(), &[subscriber(1, &["web"])])
        .await
        .unwrap();

    let ingest = |id: &str, text: &str| jobwire_core::IncomingPost {
        channel: "@odd".into(),
        external_id: id.into(),
        text: text.into(),
        author: Some("<b>evil</b>".into()),
        url: Some("javascript:alert(1)".into()),
        posted_at: Utc::now(),
    };
    for (i, empty) in ["", "   \n\t "].iter().enumerate() {
        let outcome = running
            .intake
            .ingest(ingest(&format!("empty{i}"), empty))
            .await
            .unwrap();
        match outcome {
            IntakeOutcome::Filtered { reason, post_id } => {
                assert_eq!(reason, "empty text");
                assert_eq!(
                    store.post(post_id).await.unwrap().unwrap().status,
                    PostStatus::Filtered
                );
            }
            other => panic!("an empty post is rejected with a reason, got {other:?}"),
        }
    }
    // Through the classifier: whatever the LLM makes of them, nothing crashes or is lost.
    for (i, text) in posts.iter().enumerate() {
        running
            .intake
            .ingest(ingest(&i.to_string(), text))
            .await
            .unwrap();
    }
    let counts = settled(&mut running).await;
    assert_eq!(counts.posts, 2 + posts.len() as u64);
    assert_eq!(
        counts.jobs + counts.resumes + counts.not_job,
        posts.len() as u64,
        "every post got a verdict: {counts:?}"
    );
    assert_eq!(
        counts.deliveries_sent, counts.jobs,
        "every job was delivered: {counts:?}"
    );
    // And every one of them as a job card: valid messages, whatever the text.
    for (i, text) in posts.iter().enumerate() {
        let id = seed_job(
            store.as_ref(),
            "@odd",
            &format!("seeded{i}"),
            text,
            &["web"],
        )
        .await
        .unwrap();
        jobwire_queue::publish(
            running.queue.as_ref(),
            &jobwire_queue::wire::JobReady::new(id),
        )
        .await
        .unwrap();
    }
    let counts = settled(&mut running).await;
    running.shutdown().await.unwrap();
    assert_eq!(counts.deliveries_failed, 0);
    assert!(counts.deliveries_sent >= posts.len() as u64, "{counts:?}");
    let stats = telegram.stats();
    assert_eq!(stats.rejected_400, 0, "Telegram accepted every message");
    let messages = telegram.messages();
    for m in &messages {
        assert!(m.visible_text.chars().count() <= 4096);
        assert!(
            !m.text.contains("<script>"),
            "post HTML is escaped: {}",
            m.text
        );
        assert!(
            !m.text.contains("href=\"javascript"),
            "unsafe links are not linked: {}",
            m.text
        );
    }
    let long_parts = messages
        .iter()
        .filter(|m| m.visible_text.contains("WordPress"))
        .count();
    assert!(
        long_parts >= 10,
        "the 100 KB post is split into many parts: {long_parts}"
    );
}
