//! The category bots over long polling.

use jobwire_bot::UpdateMode;
use jobwire_store::ReportKind;

use crate::common::*;

const BOB: i64 = 602;

#[tokio::test]
async fn start_subscribes_to_the_bots_categories_and_stop_unsubscribes() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;

    // `webbot` delivers web and bots: a plain /start subscribes to both.
    env.inject(WEB_ID, text(BOB, "/start"));
    let sent = env.wait_sent(WEB_ID, BOB, 1).await;
    assert!(
        sent[0].visible_text.contains("«Веб-разработка», «Боты»"),
        "{}",
        sent[0].visible_text
    );
    assert!(
        sent[0].visible_text.contains("@test1001_bot"),
        "{}",
        sent[0].visible_text
    );
    let sub = env
        .subscriber(BOB)
        .await
        .expect("created by the category bot");
    assert_eq!(sub.categories, ["web", "bots"]);

    // A deep link from the main bot's menu names one category.
    env.inject(DESIGN_ID, text(BOB, "/start design"));
    let sent = env.wait_sent(DESIGN_ID, BOB, 1).await;
    assert!(
        sent[0].visible_text.contains("«Дизайн»"),
        "{}",
        sent[0].visible_text
    );
    assert_eq!(
        env.subscriber(BOB).await.unwrap().categories,
        ["web", "bots", "design"]
    );

    env.inject(WEB_ID, text(BOB, "/stop bots"));
    let sent = env.wait_sent(WEB_ID, BOB, 2).await;
    assert!(
        sent[1].visible_text.contains("Подписка выключена: «Боты»"),
        "{}",
        sent[1].visible_text
    );
    assert_eq!(
        env.subscriber(BOB).await.unwrap().categories,
        ["web", "design"]
    );

    env.inject(WEB_ID, text(BOB, "/stop"));
    env.wait_sent(WEB_ID, BOB, 3).await;
    assert_eq!(env.subscriber(BOB).await.unwrap().categories, ["design"]);

    // The category bots do not run the main bot's dialogue.
    env.inject(WEB_ID, text(BOB, "/include"));
    let sent = env.wait_sent(WEB_ID, BOB, 4).await;
    assert!(
        sent[3].visible_text.contains("/start — подписаться"),
        "{}",
        sent[3].visible_text
    );
    bots.stop().await;
}

/// The bots that cannot reach `chat`, by name.
async fn blocked_bots(env: &Env, chat: i64) -> Vec<String> {
    env.store
        .bot_blocks(Some(chat))
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.bot)
        .collect()
}

#[tokio::test]
async fn blocking_a_category_bot_stops_that_bot_only_until_it_is_started_again() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    env.inject(WEB_ID, text(BOB, "/start"));
    env.wait_sent(WEB_ID, BOB, 1).await;

    env.inject(WEB_ID, member_status(BOB, WEB_ID, "member", "kicked"));
    eventually("the web bot blocked", SOON, || async {
        (blocked_bots(&env, BOB).await == ["webbot"]).then_some(())
    })
    .await;
    assert!(
        !env.subscriber(BOB).await.unwrap().blocked,
        "the other bots may still write"
    );
    // The main bot's status says which bot and what to do.
    env.inject(MAIN_ID, text(BOB, "/status"));
    let status = env.wait_sent(MAIN_ID, BOB, 1).await.remove(0);
    assert!(
        status.text.contains("@test2002_bot") && status.text.contains("Веб-разработка"),
        "{}",
        status.text
    );

    // Restarting the bot (member again) unblocks it, and so does /start.
    env.inject(WEB_ID, member_status(BOB, WEB_ID, "kicked", "member"));
    eventually("unblocked", SOON, || async {
        blocked_bots(&env, BOB).await.is_empty().then_some(())
    })
    .await;
    env.inject(WEB_ID, member_status(BOB, WEB_ID, "member", "kicked"));
    eventually("blocked again", SOON, || async {
        (!blocked_bots(&env, BOB).await.is_empty()).then_some(())
    })
    .await;
    env.inject(WEB_ID, text(BOB, "/start"));
    env.wait_sent(WEB_ID, BOB, 2).await;
    eventually("unblocked by /start", SOON, || async {
        blocked_bots(&env, BOB).await.is_empty().then_some(())
    })
    .await;

    // Blocking the main bot alone does not stop deliveries (it delivers nothing).
    env.inject(MAIN_ID, member_status(BOB, MAIN_ID, "member", "kicked"));
    env.inject(MAIN_ID, text(BOB, "/status"));
    env.wait_sent(MAIN_ID, BOB, 2).await;
    assert!(!env.subscriber(BOB).await.unwrap().blocked);
    assert!(blocked_bots(&env, BOB).await.is_empty());
    bots.stop().await;
}

#[tokio::test]
async fn wrong_in_reply_to_a_delivered_message_files_a_report() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    env.inject(WEB_ID, text(BOB, "/start"));
    let welcome = env.wait_sent(WEB_ID, BOB, 1).await.remove(0);
    // Stands in for a delivered job card (the send stage's message).
    let card = jobwire_testkit::telegram::RecordedMessage {
        visible_text: "Продам гараж, недорого. Подробности: https://example.com/garage".into(),
        ..welcome
    };

    // Without a reply the bot explains how.
    env.inject(WEB_ID, text(BOB, "/wrong"));
    let sent = env.wait_sent(WEB_ID, BOB, 2).await;
    assert!(
        sent[1].visible_text.contains("Ответьте командой /wrong"),
        "{}",
        sent[1].visible_text
    );
    assert!(env.store.reports(None, 10).await.unwrap().is_empty());

    env.inject(WEB_ID, reply(BOB, "/wrong это не вакансия", WEB_ID, &card));
    let sent = env.wait_sent(WEB_ID, BOB, 3).await;
    let reports = env.store.reports(None, 10).await.unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(r.kind, ReportKind::Wrong);
    assert_eq!(r.chat_id, BOB);
    assert!(r.text.starts_with("Продам гараж, недорого."), "{}", r.text);
    assert!(r.text.ends_with("// это не вакансия"), "{}", r.text);
    assert_eq!(r.link.as_deref(), Some("https://example.com/garage"));
    assert!(
        sent[2].visible_text.contains(&format!("№{}", r.id)),
        "{}",
        sent[2].visible_text
    );

    // /report in reply works the same.
    env.inject(WEB_ID, reply(BOB, "/report", WEB_ID, &card));
    env.wait_sent(WEB_ID, BOB, 4).await;
    assert_eq!(env.store.reports(None, 10).await.unwrap().len(), 2);
    bots.stop().await;
}

#[tokio::test]
async fn the_main_bot_tells_a_user_once_to_start_a_bot_that_may_not_write_first() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    env.inject(MAIN_ID, text(BOB, "/start"));
    env.wait_sent(MAIN_ID, BOB, 1).await;
    // A delivery through the web bot was refused: BOB never pressed Start there.
    env.store
        .set_bot_block(
            BOB,
            "webbot",
            Some(jobwire_store::BlockScope::NotStarted),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let notice = env.wait_sent(MAIN_ID, BOB, 2).await.remove(1);
    assert!(
        notice.text.contains("@test2002_bot") && notice.text.contains("Веб-разработка"),
        "{}",
        notice.text
    );
    let markup = notice
        .reply_markup
        .clone()
        .expect("a button to open the bot");
    assert!(
        markup
            .to_string()
            .contains("https://t.me/test2002_bot?start="),
        "{markup}"
    );
    // Once: later looks find nothing new.
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert_eq!(env.sent(MAIN_ID, BOB).len(), 2);
    bots.stop().await;
}

#[tokio::test]
async fn an_edited_category_is_served_by_its_new_bot_under_its_new_name() {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    let live = |slug: &str, name: &str, bot: &str| jobwire_bot::LiveCategory {
        slug: jobwire_core::CategorySlug::parse(slug).unwrap(),
        name: name.into(),
        bot: bot.into(),
        digest: true,
    };
    // An admin renames web and moves design from `designbot` to `webbot`; a move to a bot
    // that is not running keeps the category where it was.
    bots.bots.set_categories(&[
        live("web", "Сайты и лендинги", "webbot"),
        live("bots", "Боты", "nobot"),
        live("design", "Дизайн", "webbot"),
    ]);

    env.inject(WEB_ID, text(BOB, "/start"));
    let sent = env.wait_sent(WEB_ID, BOB, 1).await;
    assert!(
        sent[0]
            .visible_text
            .contains("«Сайты и лендинги», «Боты», «Дизайн»"),
        "{}",
        sent[0].visible_text
    );
    assert_eq!(
        env.subscriber(BOB).await.unwrap().categories,
        ["web", "bots", "design"]
    );
    // `designbot` serves no category any more: its /start subscribes to nothing.
    env.inject(DESIGN_ID, text(BOB + 1, "/start"));
    env.wait_sent(DESIGN_ID, BOB + 1, 1).await;
    assert!(
        env.subscriber(BOB + 1)
            .await
            .is_none_or(|s| s.categories.is_empty()),
        "designbot subscribed someone to a category it no longer serves"
    );
    bots.stop().await;
}
