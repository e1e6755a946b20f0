//! Edits of channel posts: applied while the post is not fanned out yet, never re-sent after.

use std::time::Duration;

use jobwire::testbed::{Bed, start_pipeline, temp_db};
use jobwire_core::PostId;
use jobwire_intake::stage::{EditOutcome, IntakeOutcome};

use crate::support::*;

fn post(id: &str, text: &str) -> jobwire_core::IncomingPost {
    incoming("@edits", id, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_before_fan_out_is_delivered_and_one_after_is_not_sent_again() {
    init();
    let original = "Нужен лендинг на Tilda, бюджет 20 000 ₽, пишите @first_client";
    let edited = "Нужен лендинг на Tilda, бюджет 35 000 ₽ (подняли), пишите @first_client";
    let telegram = fake_telegram(None).await;
    let llm = fake_llm(vec![web_job(original), web_job(edited)]).await;
    // The LLM answers slowly, so the edit arrives while the post is still queued.
    llm.set_latency(Duration::from_millis(800));
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (mut running, store) = start_pipeline(&settings).await.unwrap();
    jobwire::subscribers::store_all(store.as_ref(), &[subscriber(5, &["web"])])
        .await
        .unwrap();

    let queued = running.intake.ingest(post("1", original)).await.unwrap();
    assert!(matches!(queued, IntakeOutcome::Queued { .. }));
    let outcome = running.intake.edit(post("1", edited)).await.unwrap();
    assert!(
        matches!(outcome, EditOutcome::Updated { .. }),
        "{outcome:?}"
    );
    running.wait_settled(Duration::from_secs(30)).await.unwrap();
    let messages = telegram.messages();
    assert_eq!(messages.len(), 1);
    assert!(
        messages[0].visible_text.contains("35 000"),
        "the edited text is what was sent"
    );

    // After delivery an edit changes nothing for subscribers.
    let late = running
        .intake
        .edit(post("1", "Уже нашли исполнителя"))
        .await
        .unwrap();
    assert!(
        matches!(
            late,
            EditOutcome::TooLate {
                status: "fanned_out",
                ..
            }
        ),
        "{late:?}"
    );
    // An edit of a message never seen is taken in as a new post.
    let unseen = running.intake.edit(post("2", original)).await.unwrap();
    assert!(matches!(unseen, EditOutcome::New(_)), "{unseen:?}");
    running.wait_settled(Duration::from_secs(30)).await.unwrap();
    running.shutdown().await.unwrap();
    assert_eq!(
        telegram.messages().len(),
        1,
        "no second message for an edit, and the re-post of the same vacancy is a duplicate"
    );
    let stored = store.post(PostId(1)).await.unwrap().unwrap();
    assert!(
        stored.text.contains("35 000"),
        "a late edit does not rewrite what was delivered"
    );
}
