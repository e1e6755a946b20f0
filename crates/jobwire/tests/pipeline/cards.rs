//! The buttons under a delivered vacancy, in the running pipeline against the fake Telegram:
//! a card with its four buttons; each report acknowledged once even when tapped twice; the
//! report threshold withholding the post from a subscriber who has not got it yet (and an
//! admin's rejection releasing it); a hidden author never delivered to that user again,
//! still delivered to others, and shown again from `/status`; one card naming the three
//! channels a vacancy was posted in; "Resume" catching up on at most N missed cards, best
//! first; the daily digest at its time, one vacancy per category.

use std::sync::Arc;
use std::time::Duration;

use jobwire::testbed::{bot_id, temp_db};
use jobwire_core::{IncomingPost, PostId};
use jobwire_intake::stage::IntakeOutcome;
use jobwire_store::{DeliveryStatus, QuietHoursSpec, ReportKind, ReportStatus, Store};
use jobwire_testkit::llm::FakeLlm;
use jobwire_testkit::telegram::{FakeTelegram, RecordedMessage};
use jobwire_testkit::wait::eventually;
use serde_json::Value;

use crate::support::*;

const SOON: Duration = Duration::from_secs(20);
/// The web bot (`dev`) delivers; the main bot is `creative`.
const WEB: usize = 0;
const MAIN: usize = 1;

struct World {
    telegram: FakeTelegram,
    llm: FakeLlm,
    store: std::sync::Arc<dyn Store>,
    running: jobwire::pipeline::Pipeline,
    _dir: tempfile::TempDir,
    taps: u32,
}

/// A web vacancy with its own words (the fake LLM's oracle knows it).
fn vacancy(n: u32) -> String {
    format!(
        "Ищем разработчика на Rust для проекта номер {n}: нужен backend на axum, \
         PostgreSQL и очереди. Бюджет 150 000 ₽, срок месяц, удалённо. Задача {n} \
         описана подробно в техническом задании."
    )
}

fn post(channel: &str, id: &str, text: &str, author: Option<&str>) -> IncomingPost {
    IncomingPost {
        channel: channel.into(),
        external_id: id.into(),
        text: text.into(),
        author: author.map(Into::into),
        url: Some(format!(
            "https://t.me/{}/{id}",
            channel.trim_start_matches('@')
        )),
        posted_at: chrono::Utc::now(),
    }
}

impl World {
    async fn new(texts: &[String], threshold: u32) -> World {
        Self::with(texts, |s| s.bot_role.report_threshold = threshold).await
    }

    async fn with(texts: &[String], tune: impl FnOnce(&mut jobwire::config::Settings)) -> World {
        let oracle = texts.iter().map(|t| web_job(t)).collect();
        Self::at(oracle, tune, Arc::new(jobwire_core::clock::SystemClock)).await
    }

    /// A world whose bots read the time from `clock`, with the LLM answering `oracle`.
    async fn at(
        oracle: Vec<jobwire_testkit::llm::OracleEntry>,
        tune: impl FnOnce(&mut jobwire::config::Settings),
        clock: Arc<dyn jobwire_core::clock::Clock>,
    ) -> World {
        let (telegram, llm, dir, mut settings) = web_and_main_world(oracle).await;
        tune(&mut settings);
        let (running, store) = jobwire::testbed::start_pipeline_at(&settings, clock)
            .await
            .unwrap();
        World {
            telegram,
            llm,
            store,
            running,
            _dir: dir,
            taps: 0,
        }
    }

    async fn subscribe(&self, chats: &[i64]) {
        let specs: Vec<_> = chats.iter().map(|c| subscriber(*c, &["web"])).collect();
        jobwire::subscribers::store_all(self.store.as_ref(), &specs)
            .await
            .unwrap();
    }

    /// Takes in a post; returns its id.
    async fn ingest(&self, p: IncomingPost) -> PostId {
        match self.running.intake.ingest(p).await.unwrap() {
            IntakeOutcome::Queued { post_id }
            | IntakeOutcome::Filtered { post_id, .. }
            | IntakeOutcome::Duplicate { post_id }
            | IntakeOutcome::NearDuplicate { post_id, .. } => post_id,
        }
    }

    async fn stop(self) {
        self.running.shutdown().await.unwrap();
    }

    /// The card the web bot sent `user` that contains `needle` (waits for it).
    async fn card(&self, user: i64, needle: &str) -> RecordedMessage {
        eventually(
            &format!("a card with {needle:?} for {user}"),
            SOON,
            || async {
                self.cards(user)
                    .into_iter()
                    .find(|m| m.text.contains(needle))
            },
        )
        .await
    }

    fn cards(&self, user: i64) -> Vec<RecordedMessage> {
        self.telegram.chat_messages(bot_id(WEB), user)
    }

    /// Taps a card button of `card` as `user`; returns the toast it was answered with.
    async fn tap(&mut self, user: i64, card: &RecordedMessage, data: &str) -> String {
        self.tap_in(WEB, user, card.message_id, data).await
    }

    /// Taps a button of the bot's message `message_id` as `user`; returns the toast.
    async fn tap_in(&mut self, bot: usize, user: i64, message_id: i64, data: &str) -> String {
        self.taps += 1;
        let id = format!("cq-{user}-{}", self.taps);
        tap_button(&self.telegram, bot, &id, user, message_id, data).await
    }

    /// The card's buttons as the user sees them now: (text, callback data or URL).
    fn buttons(&self, card: &RecordedMessage) -> Vec<(String, String)> {
        let now = self
            .cards(card.chat_id)
            .into_iter()
            .find(|m| m.message_id == card.message_id)
            .unwrap();
        let markup: &Value = now.reply_markup.as_ref().expect("the card has buttons");
        markup["inline_keyboard"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|row| row.as_array().unwrap().iter())
            .map(|b| {
                let target = b["callback_data"]
                    .as_str()
                    .or_else(|| b["url"].as_str())
                    .unwrap_or("");
                (b["text"].as_str().unwrap().to_owned(), target.to_owned())
            })
            .collect()
    }

    async fn delivery_status(&self, chat: i64, post: PostId) -> Option<DeliveryStatus> {
        self.store
            .deliveries_of_post(post)
            .await
            .unwrap()
            .into_iter()
            .find(|d| d.chat_id == chat)
            .map(|d| d.status)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn card_buttons_report_once_and_enough_reports_withhold_the_post() {
    let text = vacancy(1);
    let mut w = World::new(std::slice::from_ref(&text), 2).await;
    w.subscribe(&[1, 2]).await;
    // A third subscriber is in quiet hours: the card waits for the morning.
    let mut quiet = subscriber(3, &["web"]);
    let now = chrono::Utc::now();
    quiet.quiet_hours = Some(QuietHoursSpec {
        start: (now - chrono::Duration::hours(1))
            .format("%H:%M")
            .to_string(),
        end: (now + chrono::Duration::hours(3))
            .format("%H:%M")
            .to_string(),
        time_zone: "UTC".into(),
    });
    jobwire::subscribers::store_all(w.store.as_ref(), &[quiet])
        .await
        .unwrap();
    let job = w.ingest(post("@webjobs", "1", &text, None)).await;

    let card1 = w.card(1, "проекта номер 1").await;
    let card2 = w.card(2, "проекта номер 1").await;
    let buttons = w.buttons(&card1);
    assert_eq!(buttons.len(), 4, "{buttons:?}");
    assert_eq!(buttons[0].0, "🚫 Не вакансия");
    assert!(buttons[0].1.starts_with("card:n:"), "{buttons:?}");
    assert_eq!(buttons[1].0, "🗂 Не та категория");
    assert_eq!(buttons[2].0, "🙈 Скрыть автора");
    assert_eq!(
        buttons[3],
        ("🔗 Оригинал".into(), "https://t.me/webjobs/1".into())
    );
    assert!(buttons.iter().all(|(_, data)| data.len() <= 64));
    assert_eq!(w.delivery_status(3, job).await, Some(DeliveryStatus::Held));

    // "Not a vacancy" twice: acknowledged twice, filed once, the button shows it.
    let data = buttons[0].1.clone();
    let first = w.tap(1, &card1, &data).await;
    assert!(first.contains("Спасибо"), "{first}");
    let second = w.tap(1, &card1, &data).await;
    assert!(second.contains("уже"), "{second}");
    let reports = w.store.reports(None, 50).await.unwrap();
    assert_eq!(
        reports
            .iter()
            .filter(|r| r.chat_id == 1 && r.kind == ReportKind::NotJob)
            .count(),
        1
    );
    assert!(
        w.buttons(&card1)[0].0.starts_with('✓'),
        "{:?}",
        w.buttons(&card1)
    );
    // "Wrong category" is its own report, once too.
    let wrong_category = w.buttons(&card1)[1].1.clone();
    assert!(
        w.tap(1, &card1, &wrong_category)
            .await
            .contains("категория")
    );
    assert!(w.tap(1, &card1, &wrong_category).await.contains("уже"));
    assert!(w.buttons(&card1)[1].0.starts_with('✓'));
    // One user, however many taps, is one reporter: nothing is withheld yet.
    assert_eq!(w.delivery_status(3, job).await, Some(DeliveryStatus::Held));
    // Someone else's card cannot be reported through this delivery's id.
    let foreign = w.tap(2, &card2, &data).await;
    assert!(foreign.contains("недоступна"), "{foreign}");

    // The second distinct user reaches the threshold: the post is withheld from user 3.
    let own = w.buttons(&card2)[0].1.clone();
    assert!(w.tap(2, &card2, &own).await.contains("Спасибо"));
    assert_eq!(
        w.delivery_status(3, job).await,
        Some(DeliveryStatus::Withheld)
    );
    let counts = w.store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_withheld, 1);

    // The admin rejects every complaint: the card goes back to waiting for user 3's morning.
    let pending: Vec<_> = w
        .store
        .reports(Some(ReportStatus::Pending), 50)
        .await
        .unwrap();
    assert_eq!(pending.len(), 3, "{pending:?}");
    for (i, r) in pending.iter().enumerate() {
        assert!(
            w.store
                .decide_report(r.id, None, chrono::Utc::now())
                .await
                .unwrap()
        );
        let expected = if i + 1 < pending.len() {
            DeliveryStatus::Withheld
        } else {
            DeliveryStatus::Held
        };
        assert_eq!(w.delivery_status(3, job).await, Some(expected));
    }
    assert!(w.cards(3).is_empty(), "user 3 is still in quiet hours");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hidden_author_is_never_delivered_to_that_user_again() {
    let texts: Vec<String> = (11..=13).map(vacancy).collect();
    let mut w = World::new(&texts, 3).await;
    w.subscribe(&[1, 2]).await;
    w.ingest(post("Freelance chat", "1", &texts[0], Some("@Client_One")))
        .await;
    let card = w.card(1, "проекта номер 11").await;
    let hide = w.buttons(&card)[2].1.clone();
    let toast = w.tap(1, &card, &hide).await;
    assert!(toast.contains("@client_one"), "{toast}");
    assert!(w.tap(1, &card, &hide).await.contains("уже"));
    assert!(w.buttons(&card)[2].0.starts_with('✓'));

    // The same author in another chat: user 2 gets it, user 1 never does.
    let second = w
        .ingest(post("Another chat", "2", &texts[1], Some("@client_one")))
        .await;
    w.card(2, "проекта номер 12").await;
    assert_eq!(w.delivery_status(1, second).await, None);
    assert!(
        !w.cards(1)
            .iter()
            .any(|m| m.text.contains("проекта номер 12")),
        "a hidden author reached the user"
    );

    // /status lists the author with a button to show them again.
    let main = bot_id(MAIN);
    let before = w.telegram.chat_messages(main, 1).len();
    w.telegram
        .inject_update(main, command(1, "ru", "/status"))
        .unwrap();
    let status = eventually("the status screen", SOON, || async {
        w.telegram.chat_messages(main, 1).get(before).cloned()
    })
    .await;
    assert!(
        status.visible_text.contains("@client_one"),
        "{}",
        status.visible_text
    );
    let show = status.reply_markup.as_ref().unwrap()["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter())
        .find(|b| b["text"].as_str().unwrap_or("").contains("@client_one"))
        .map(|b| b["callback_data"].as_str().unwrap().to_owned())
        .expect("a show-again button");
    w.telegram
        .inject_update(
            main,
            button_tap("cq-show", 1, main, status.message_id, &show),
        )
        .unwrap();
    eventually("the author shown again", SOON, || async {
        w.store.hidden_authors(1).await.unwrap().is_empty()
    })
    .await;
    // Shown again: the author's next post reaches user 1.
    w.ingest(post("Freelance chat", "3", &texts[2], Some("@client_one")))
        .await;
    w.card(1, "проекта номер 13").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_vacancy_posted_in_three_channels_is_one_card_naming_all_three() {
    let text = vacancy(21);
    let w = World::new(std::slice::from_ref(&text), 3).await;
    // The model takes a while, as real ones do; the re-posts arrive meanwhile.
    w.llm.state().set_latency(Duration::from_millis(800));
    w.subscribe(&[1]).await;
    w.ingest(post("@webjobs", "1", &text, None)).await;
    w.ingest(post(
        "@rustjobs",
        "5",
        &format!("{text}\n#rust #вакансия"),
        None,
    ))
    .await;
    w.ingest(post("@itwork", "9", &format!("🔥 {text}"), None))
        .await;
    let card = w.card(1, "проекта номер 21").await;
    let line = card
        .visible_text
        .lines()
        .find(|l| l.starts_with("📢"))
        .unwrap_or_else(|| panic!("no sources line in {}", card.visible_text));
    for ch in ["@webjobs", "@rustjobs", "@itwork"] {
        assert!(line.contains(ch), "{line}");
    }
    // A re-post after the card went out sends no second card.
    w.ingest(post(
        "@latejobs",
        "3",
        &format!("{text} Пишите в личку."),
        None,
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let cards: Vec<_> = w
        .cards(1)
        .into_iter()
        .filter(|m| m.text.contains("проекта номер 21"))
        .collect();
    assert_eq!(cards.len(), 1, "{cards:#?}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resume_offers_only_new_or_the_best_of_what_was_missed_capped() {
    let texts: Vec<String> = (31..=35).map(vacancy).collect();
    let mut w = World::with(&texts, |s| {
        s.bot_role.catch_up_max = 2;
        s.bot_role.report_threshold = 0;
    })
    .await;
    let mut paused = subscriber(1, &["web"]);
    paused.paused = true;
    jobwire::subscribers::store_all(w.store.as_ref(), &[paused, subscriber(2, &["web"])])
        .await
        .unwrap();
    for (i, text) in texts[..4].iter().enumerate() {
        w.ingest(post("@webjobs", &format!("{}", 31 + i), text, None))
            .await;
        w.card(2, &format!("проекта номер {}", 31 + i)).await;
    }
    // The newest one was reported as not a vacancy: it is not among the best.
    let newest = w.card(2, "проекта номер 34").await;
    let not_job = w.buttons(&newest)[0].1.clone();
    w.tap(2, &newest, &not_job).await;
    assert!(w.cards(1).is_empty(), "paused");

    // Resume from the menu (an old one, long scrolled away): the offer comes with its two
    // answers.
    let main = bot_id(MAIN);
    let toast = w.tap_in(MAIN, 1, 9999, "pause:0").await;
    assert!(!toast.is_empty());
    let offer = eventually("the catch-up offer", SOON, || async {
        w.telegram
            .chat_messages(main, 1)
            .into_iter()
            .find(|m| m.text.contains("пропущенного"))
    })
    .await;
    let answers: Vec<String> = offer.reply_markup.as_ref().unwrap()["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["callback_data"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(answers, vec!["resume:0", "resume:1"]);
    let toast = w.tap_in(MAIN, 1, offer.message_id, "resume:1").await;
    assert!(toast.contains('2'), "{toast}");
    // Two cards, best first (the newest unreported one first), and no more.
    eventually("two missed cards", SOON, || async { w.cards(1).len() >= 2 }).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got: Vec<String> = w.cards(1).iter().map(|m| gist(&m.text, 400)).collect();
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(got[0].contains("проекта номер 33"), "{got:#?}");
    assert!(got[1].contains("проекта номер 32"), "{got:#?}");
    // New vacancies flow again.
    w.ingest(post("@webjobs", "35", &texts[4], None)).await;
    w.card(1, "проекта номер 35").await;
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_daily_digest_posts_the_best_vacancy_of_each_category_once_at_its_time() {
    let web: Vec<String> = (41..=42).map(vacancy).collect();
    let design = "Нужен дизайнер логотипа для кофейни: фирменный стиль, вывеска и меню. \
                  Бюджет 40 000 ₽, срок две недели."
        .to_owned();
    let mut oracle: Vec<_> = web.iter().map(|t| web_job(t)).collect();
    oracle.push(jobwire_testkit::llm::OracleEntry {
        text: design.clone(),
        is_job: true,
        kind: "job".into(),
        categories: vec!["design".into()],
    });
    // 10:00 UTC today, whatever the real time: the digest's 11:00 is an hour away, not
    // behind us (as it would be with a real clock near midnight).
    let ten = chrono::Utc::now()
        .date_naive()
        .and_hms_opt(10, 0, 0)
        .unwrap()
        .and_utc();
    let clock = Arc::new(jobwire_core::clock::ManualClock::new(ten));
    let at = chrono::NaiveTime::from_hms_opt(11, 0, 0).unwrap();
    let mut w = World::at(
        oracle,
        |s| {
            s.bot_role.report_threshold = 0;
            s.digest = Some(jobwire_bot::DigestConfig {
                channel: "@jobwire_digest".into(),
                at,
                time_zone: chrono_tz::UTC,
                lang: jobwire_bot::texts::Lang::Ru,
                every: Duration::from_millis(100),
            });
        },
        clock.clone(),
    )
    .await;
    w.subscribe(&[1, 2]).await;
    let mut designer = subscriber(3, &["design"]);
    designer.name = Some("designer".into());
    jobwire::subscribers::store_all(w.store.as_ref(), &[designer])
        .await
        .unwrap();
    for (i, text) in web.iter().enumerate() {
        w.ingest(post("@webjobs", &format!("{}", 41 + i), text, None))
            .await;
        w.card(1, &format!("проекта номер {}", 41 + i)).await;
    }
    w.ingest(post("@designjobs", "7", &design, None)).await;
    eventually("the design card", SOON, || async {
        !w.telegram.chat_messages(bot_id(MAIN), 3).is_empty()
    })
    .await;
    // The newer web vacancy was reported: the older one is the day's best.
    let newer = w.card(1, "проекта номер 42").await;
    let not_job = w.buttons(&newer)[0].1.clone();
    w.tap(1, &newer, &not_job).await;

    let digests = |w: &World| -> Vec<RecordedMessage> {
        w.telegram
            .messages()
            .into_iter()
            .filter(|m| m.bot_id == bot_id(MAIN) && m.chat_id < -1_000_000_000_000)
            .collect()
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(digests(&w).is_empty(), "not before its time");
    clock.advance(chrono::Duration::hours(1));
    let posted = eventually("the digest", SOON, || async {
        digests(&w).into_iter().next()
    })
    .await;
    let text = &posted.visible_text;
    assert!(text.contains("Лучшие вакансии за сутки"), "{text}");
    assert!(text.contains("Web") && text.contains("Design"), "{text}");
    assert!(text.contains("проекта номер 41"), "{text}");
    assert!(
        !text.contains("проекта номер 42"),
        "the reported one is not the best: {text}"
    );
    assert!(text.contains("дизайнер логотипа"), "{text}");
    assert!(posted.text.contains("?start=digest"), "{}", posted.text);
    // Once a day, however many ticks pass.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(digests(&w).len(), 1);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resumes_reach_those_who_asked_for_them_and_never_mix_with_vacancies() {
    init();
    let telegram = fake_telegram(None).await;
    let (_dir, db) = temp_db().unwrap();
    // The local model: it reads a résumé's categories from the work it offers.
    let bed = web_and_main_bed(None);
    let settings = bed.settings(telegram.url(), &db).unwrap();
    let (running, store) = jobwire::testbed::start_pipeline(&settings).await.unwrap();
    jobwire::subscribers::store_all(
        store.as_ref(),
        &[
            subscriber(1, &["web"]),
            subscriber(2, &["web"]),
            subscriber(3, &["web"]),
        ],
    )
    .await
    .unwrap();
    // User 2 hires (résumés only), user 3 wants both; user 1 keeps the default.
    let main = bot_id(MAIN);
    for (user, data) in [(2, "wants:resumes"), (3, "wants:both")] {
        telegram
            .inject_update(
                main,
                button_tap(&format!("cq-wants-{user}"), user, main, 9999, data),
            )
            .unwrap();
    }
    eventually("both choices stored", SOON, || async {
        store.wants_of(2).await.unwrap() == jobwire_core::card::Wants::Resumes
            && store.wants_of(3).await.unwrap() == jobwire_core::card::Wants::Both
    })
    .await;
    let screen = eventually("the filters screen with the choice", SOON, || async {
        telegram
            .chat_messages(main, 2)
            .into_iter()
            .find(|m| m.visible_text.contains("Присылать"))
    })
    .await;
    assert!(
        screen.visible_text.contains("резюме"),
        "{}",
        screen.visible_text
    );

    let vacancy = "Лендинг на Tilda для косметического бренда, каталог 8 позиций + форма \
                   заявки. 7-10 дней, 25к. Пишите @anna_kosmetika";
    let resume = "Веб-разработчик (Laravel/Vue), 6 лет коммерческого опыта. Сейчас свободен, \
                  возьму проект или доработку существующего. Могу в поддержку на постоянку.\n\
                  GitHub: github.com/k-sergeev-dev\n@sergeev_fullstack";
    for (id, text) in [("1", vacancy), ("2", resume)] {
        running
            .intake
            .ingest(post("@freelance_board", id, text, None))
            .await
            .unwrap();
    }
    let web = |user: i64| telegram.chat_messages(bot_id(WEB), user);
    let has = |msgs: &[RecordedMessage], needle: &str| msgs.iter().any(|m| m.text.contains(needle));
    eventually("user 3 gets both", SOON, || async {
        let m = web(3);
        has(&m, "Tilda") && has(&m, "Laravel")
    })
    .await;
    eventually("user 2 gets the résumé", SOON, || async {
        has(&web(2), "Laravel")
    })
    .await;
    eventually("user 1 gets the vacancy", SOON, || async {
        has(&web(1), "Tilda")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!has(&web(1), "Laravel"), "a résumé reached a job seeker");
    assert!(
        !has(&web(2), "Tilda"),
        "a vacancy reached someone who asked for résumés only"
    );
    let card = web(2)
        .into_iter()
        .find(|m| m.text.contains("Laravel"))
        .unwrap();
    assert!(
        card.visible_text.starts_with("👤 Résumé"),
        "{}",
        card.visible_text
    );
    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!((counts.jobs, counts.resumes), (1, 1));
    running.shutdown().await.unwrap();
}
