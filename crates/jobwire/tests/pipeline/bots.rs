//! The bot role in the running pipeline: a user starts a category bot, gets that
//! category's jobs from it, reports a wrong one (the report points at the post), and stops
//! getting them after /stop.

use std::time::Duration;

use chrono::Utc;
use jobwire::config::UpdatesMode;
use jobwire::testbed::{Bed, bot_id, temp_db};
use jobwire_testkit::wait::eventually;
use serde_json::json;

use crate::support::*;

const USER: i64 = 777_001;
/// How long the test waits for the bot to act on an update.
const SOON: Duration = Duration::from_secs(20);

fn command(update_id: i64, text: &str) -> serde_json::Value {
    json!({
        "update_id": update_id,
        "message": {
            "message_id": 1000 + update_id,
            "from": {"id": USER, "is_bot": false, "first_name": "Анна", "language_code": "ru"},
            "chat": {"id": USER, "type": "private", "first_name": "Анна"},
            "date": 1_767_000_000,
            "text": text,
            "entities": [{"type": "bot_command", "offset": 0, "length": text.encode_utf16().count()}],
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_who_starts_a_category_bot_gets_its_jobs_until_stop() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    let bed = Bed {
        main_bot: Some("creative".into()),
        updates: UpdatesMode::Polling,
        ..dev_and_creative_bed()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (mut running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();

    // The user starts the web bot: they become a subscriber of web.
    telegram
        .inject_update(bot_id(0), command(1, "/start"))
        .unwrap();
    let subscriber = eventually("/start to subscribe the user", SOON, || async {
        store
            .subscriber_by_chat(USER)
            .await
            .unwrap()
            .filter(|s| s.categories == ["web"])
    })
    .await;
    assert!(!subscriber.blocked);
    // The subscription is stored before the welcome is sent: wait for the answer too.
    eventually("the bot to answer /start", SOON, || async {
        !telegram.chat_messages(bot_id(0), USER).is_empty()
    })
    .await;

    let web_job = dataset()
        .into_iter()
        .find(|p| {
            p.label.as_ref().is_some_and(|l| {
                l.is_job && l.categories.len() == 1 && l.categories[0].as_str() == "web"
            })
        })
        .unwrap();
    let ingest = |id: &str| jobwire_core::IncomingPost {
        channel: web_job.channel.clone(),
        external_id: id.to_owned(),
        text: web_job.text.clone(),
        author: None,
        url: None,
        posted_at: Utc::now(),
    };
    let before = telegram.chat_messages(bot_id(0), USER).len();
    running.intake.ingest(ingest("job-1")).await.unwrap();
    running.wait_settled(Duration::from_secs(30)).await.unwrap();
    let after = telegram.chat_messages(bot_id(0), USER);
    assert_eq!(after.len(), before + 1, "the web job reached the user");
    assert!(
        after
            .last()
            .is_some_and(|m| collapse(&m.text).contains(&gist(&web_job.text, 30))),
        "the delivered card holds the job"
    );

    // /wrong in reply to the delivered card files a report that points at the post.
    let card = after.last().unwrap();
    let sent = store.sent_deliveries().await.unwrap();
    let delivered = sent
        .iter()
        .find(|d| d.chat_id == USER && d.message_ids.contains(&card.message_id))
        .expect("the card's delivery is stored");
    let mut wrong = command(2, "/wrong это не веб");
    wrong["message"]["entities"] = json!([{"type": "bot_command", "offset": 0, "length": 6}]);
    wrong["message"]["reply_to_message"] = json!({
        "message_id": card.message_id,
        "from": {"id": bot_id(0), "is_bot": true, "first_name": "dev"},
        "chat": {"id": USER, "type": "private", "first_name": "Анна"},
        "date": 1_767_000_000,
        "text": card.visible_text,
    });
    telegram.inject_update(bot_id(0), wrong).unwrap();
    let report = eventually("/wrong to file a report", SOON, || async {
        store.reports(None, 10).await.unwrap().pop()
    })
    .await;
    assert_eq!(report.post_id, Some(delivered.post_id));
    assert!(report.text.ends_with("// это не веб"), "{}", report.text);

    // /stop takes the user off the bot's categories.
    telegram
        .inject_update(bot_id(0), command(3, "/stop"))
        .unwrap();
    eventually("/stop to unsubscribe the user", SOON, || async {
        let s = store.subscriber_by_chat(USER).await.unwrap().unwrap();
        s.categories.is_empty()
    })
    .await;
    running.shutdown().await.unwrap();
}
