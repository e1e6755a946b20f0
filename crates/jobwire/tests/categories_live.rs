//! Categories as data in the running service: a category edited in the database (as the
//! admin panel writes it) is what the running pipeline uses within seconds — the LLM's
//! prompt lists its new description, the cards show its new name, and its jobs go out
//! through the bot it was moved to — without a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use chrono::Utc;
use jobwire::testbed::{Bed, fake_llm_answering, start_pipeline, subscriber, temp_db};
use jobwire_core::CategorySlug;
use jobwire_intake::stage::IntakeOutcome;
use jobwire_store::CategoryFields;
use jobwire_testkit::llm::OracleEntry;
use jobwire_testkit::wait::eventually;

const CHAT: i64 = 777;
const FIRST: &str = "Нужен лендинг на Tilda для студии йоги, бюджет 20 000 ₽, пишите @yoga_owner";
const SECOND: &str = "Ищем разработчика сайта-каталога на WordPress, оплата 45 000 ₽, @shop_boss";
const DESCRIPTION: &str = "Landing pages, online shops and catalogues on any CMS";

fn post(id: &str, text: &str) -> jobwire_core::IncomingPost {
    common::incoming("@live_categories", id, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_category_reaches_the_prompt_the_cards_and_its_new_bot_within_seconds() {
    let telegram = jobwire::testbed::fake_telegram(None).await.unwrap();
    let llm = fake_llm_answering(vec![
        OracleEntry::job(FIRST, &["web"]),
        OracleEntry::job(SECOND, &["web"]),
    ])
    .await
    .unwrap();
    let (_dir, db) = temp_db().unwrap();
    // Two bots: `dev` delivers web jobs, `spare` none yet.
    let bed = Bed {
        bots: vec!["dev".into(), "spare".into()],
        routes: vec![("web".into(), "dev".into())],
        llm: Some(jobwire::cli::llm_section(&llm.url(), "fake-model")),
        ..Bed::default()
    };
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (running, store) = start_pipeline(&settings).await.unwrap();
    jobwire::subscribers::store_all(
        store.as_ref(),
        &[subscriber(CHAT, vec![CategorySlug::parse("web").unwrap()])],
    )
    .await
    .unwrap();
    let (dev, spare) = (bed.bot_id("dev").unwrap(), bed.bot_id("spare").unwrap());
    let queued = |o: IntakeOutcome| match o {
        IntakeOutcome::Queued { post_id } => post_id,
        other => panic!("not queued: {other:?}"),
    };

    // The configuration seeded the category.
    let seeded = store.categories().await.unwrap();
    let web = seeded.iter().find(|c| c.slug.as_str() == "web").unwrap();
    assert_eq!(web.bot, "dev");
    let old_name = web.name.clone();
    queued(running.intake.ingest(post("1", FIRST)).await.unwrap());
    let first = eventually(
        "the first job at the subscriber",
        Duration::from_secs(30),
        || async { telegram.chat_messages(dev, CHAT).into_iter().next() },
    )
    .await;
    assert!(
        first.visible_text.contains(&old_name),
        "{}",
        first.visible_text
    );
    assert!(!llm.requests_log()[0].system.contains(DESCRIPTION));

    // An admin renames the category, describes it anew and moves it to the other bot.
    let edited = Instant::now();
    store
        .update_category(
            &CategorySlug::parse("web").unwrap(),
            &CategoryFields {
                name: "Сайты и магазины".into(),
                description: DESCRIPTION.into(),
                bot: "spare".into(),
                digest: true,
            },
            "ops",
            Utc::now(),
        )
        .await
        .unwrap()
        .expect("the category exists");
    // The running processes follow the categories' version every `POLL` (1 s).
    tokio::time::sleep(jobwire::categories::POLL * 3).await;
    queued(running.intake.ingest(post("2", SECOND)).await.unwrap());
    let second = eventually(
        "the second job at the subscriber",
        Duration::from_secs(30),
        || async { telegram.chat_messages(spare, CHAT).into_iter().next() },
    )
    .await;
    let took = edited.elapsed();
    assert!(took < Duration::from_secs(10), "{took:?}");
    println!("category edited → the next job delivered by its new bot: {took:?}");
    assert!(
        second.visible_text.contains("Сайты и магазины"),
        "the card shows the new name: {}",
        second.visible_text
    );
    assert_eq!(
        telegram.chat_messages(dev, CHAT).len(),
        1,
        "the old bot sent only the first job"
    );
    let log = llm.requests_log();
    let asked_second = log
        .iter()
        .find(|r| r.user.contains("WordPress"))
        .expect("the second post was asked about");
    assert!(
        asked_second.system.contains(DESCRIPTION),
        "the prompt lists the new description: {}",
        asked_second.system
    );
    running.shutdown().await.unwrap();
}
