//! The main bot over long polling.

use jobwire_bot::{Processed, UpdateMode};
use jobwire_core::extract::BudgetBasis;
use jobwire_core::subscriber::MinBudget;
use jobwire_store::QuietHoursSpec;
use jobwire_testkit::telegram::RecordedMessage;

use crate::common::*;

const ANN: i64 = 501;

/// The bots started over long polling against a fresh fake Telegram and store.
async fn polling() -> (Env, Running) {
    let env = Env::new().await;
    let bots = env.start(UpdateMode::Polling).await;
    (env, bots)
}

/// Sends `/start` and waits for the menu, the first message into the chat.
async fn open_menu(env: &Env) -> RecordedMessage {
    env.inject(MAIN_ID, text(ANN, "/start"));
    env.wait_sent(MAIN_ID, ANN, 1).await.remove(0)
}

/// Sends `body` to the main bot and waits for its `n`th message into the chat; returns its
/// text.
async fn say(env: &Env, body: &str, n: usize) -> String {
    env.inject(MAIN_ID, text(ANN, body));
    env.wait_sent(MAIN_ID, ANN, n).await[n - 1]
        .visible_text
        .clone()
}

/// [`say`], asserting that the `n`th message contains `want`.
async fn say_expecting(env: &Env, body: &str, n: usize, want: &str) {
    let reply = say(env, body, n).await;
    assert!(reply.contains(want), "{want:?} missing in {reply}");
}

/// No keywords are stored for the subscriber (or there is no subscriber at all).
async fn has_no_keywords(env: &Env) -> bool {
    env.subscriber(ANN)
        .await
        .is_none_or(|s| s.include.is_empty())
}

#[tokio::test]
async fn start_registers_the_subscriber_and_opens_the_menu() {
    let (env, bots) = polling().await;
    assert!(env.subscriber(ANN).await.is_none());

    let menu = open_menu(&env).await;
    assert!(
        menu.visible_text.contains("jobwire"),
        "{}",
        menu.visible_text
    );
    assert!(
        menu.visible_text.contains("Категории: не выбраны"),
        "{}",
        menu.visible_text
    );
    let actions: Vec<String> = buttons(&menu).into_iter().map(|(_, a)| a).collect();
    for want in [
        "menu:cats",
        "menu:filters",
        "pause:1",
        "menu:status",
        "ask:report",
    ] {
        assert!(
            actions.iter().any(|a| a == want),
            "{want} missing in {actions:?}"
        );
    }
    let sub = env
        .subscriber(ANN)
        .await
        .expect("a subscriber after /start");
    assert_eq!(sub.name.as_deref(), Some("@user501"));
    assert!(sub.categories.is_empty() && !sub.paused && !sub.blocked);

    // The command menus were registered, in Russian and by default.
    let commands = env.calls(MAIN_ID, "setMyCommands");
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(commands.iter().any(|c| c["language_code"] == "ru"));

    // An English-speaking user gets English.
    env.inject(MAIN_ID, text_in(777, "/start", "en"));
    let sent = env.wait_sent(MAIN_ID, 777, 1).await;
    assert!(
        sent[0].visible_text.contains("Categories: none selected"),
        "{}",
        sent[0].visible_text
    );
    bots.stop().await;
}

#[tokio::test]
async fn a_blocked_subscriber_is_unblocked_by_start() {
    let (env, bots) = polling().await;
    open_menu(&env).await;
    env.store
        .set_subscriber_blocked(ANN, true, chrono::Utc::now())
        .await
        .unwrap();
    say(&env, "/start", 2).await;
    assert!(!env.subscriber(ANN).await.unwrap().blocked);
    bots.stop().await;
}

/// Finds the button whose callback data starts with `prefix`.
fn button_data(m: &RecordedMessage, prefix: &str) -> Option<String> {
    buttons(m)
        .into_iter()
        .map(|(_, a)| a)
        .find(|a| a.starts_with(prefix))
}

/// Waits until the bot's message `menu` has been edited into one `pred` accepts; returns it.
async fn edited_into(
    env: &Env,
    what: &str,
    menu: &RecordedMessage,
    pred: impl Fn(&RecordedMessage) -> bool,
) -> RecordedMessage {
    eventually(what, SOON, || async {
        env.sent(MAIN_ID, ANN)
            .into_iter()
            .find(|m| m.message_id == menu.message_id && pred(m))
    })
    .await
}

#[tokio::test]
async fn category_toggles_set_explicit_states_and_survive_redelivery() {
    let (env, bots) = polling().await;
    let menu = open_menu(&env).await;

    // Menu → Categories: the menu message turns into the categories screen.
    env.inject(MAIN_ID, tap(ANN, MAIN_ID, menu.message_id, "menu:cats"));
    let screen = edited_into(&env, "the categories screen", &menu, |m| {
        m.visible_text.contains("Нажмите на категорию")
    })
    .await;
    assert_eq!(
        button_data(&screen, "cat:web:").as_deref(),
        Some("cat:web:1")
    );
    assert_eq!(
        button_data(&screen, "cat:design:").as_deref(),
        Some("cat:design:1")
    );

    // Switch web on.
    let on = tap(ANN, MAIN_ID, menu.message_id, "cat:web:1");
    env.inject(MAIN_ID, with_id(on.clone(), 500));
    eventually("web switched on", SOON, || async {
        (env.subscriber(ANN).await?.categories == ["web"]).then_some(())
    })
    .await;
    let screen = edited_into(&env, "the screen showing web on", &menu, |m| {
        button_data(m, "cat:web:").as_deref() == Some("cat:web:0")
    })
    .await;
    let labels: Vec<(String, String)> = buttons(&screen);
    assert!(
        labels.iter().any(|(t, _)| t == "✅ Веб-разработка"),
        "{labels:?}"
    );
    // The category bot to open, with a deep link that subscribes on Start.
    assert!(
        labels
            .iter()
            .any(|(_, a)| a == "https://t.me/test2002_bot?start=web"),
        "{labels:?}"
    );
    assert!(
        screen.visible_text.contains("@test2002_bot"),
        "{}",
        screen.visible_text
    );
    // The toast naming the category (answered after the screen is edited: wait for it).
    eventually("the toast naming the category", SOON, || async {
        env.calls(MAIN_ID, "answerCallbackQuery").iter().any(|c| {
            c["text"]
                .as_str()
                .is_some_and(|t| t.contains("Веб-разработка"))
        })
    })
    .await;

    // The same update delivered again is recognised and skipped…
    assert_eq!(
        bots.bots
            .handle_update("main", parse(&with_id(on.clone(), 500)))
            .await
            .unwrap(),
        Processed::Duplicate
    );
    // …and a second tap of the same (stale) button is a new update that sets the same state:
    // web stays on instead of flipping off.
    let version = env.store.subscribers_version().await.unwrap();
    let answered = env.calls(MAIN_ID, "answerCallbackQuery").len();
    env.inject(MAIN_ID, on);
    eventually("the stale tap answered", SOON, || async {
        (env.calls(MAIN_ID, "answerCallbackQuery").len() > answered).then_some(())
    })
    .await;
    assert_eq!(env.subscriber(ANN).await.unwrap().categories, ["web"]);
    // Nothing changed, so nothing was written (a write makes every dispatcher rebuild its
    // subscriber index).
    assert_eq!(env.store.subscribers_version().await.unwrap(), version);
    env.inject(MAIN_ID, tap(ANN, MAIN_ID, menu.message_id, "cat:design:1"));
    eventually("design switched on", SOON, || async {
        (env.subscriber(ANN).await?.categories.len() == 2).then_some(())
    })
    .await;
    assert_eq!(
        env.subscriber(ANN).await.unwrap().categories,
        ["web", "design"]
    );

    // Switch web off.
    env.inject(MAIN_ID, tap(ANN, MAIN_ID, menu.message_id, "cat:web:0"));
    eventually("web switched off", SOON, || async {
        (env.subscriber(ANN).await?.categories == ["design"]).then_some(())
    })
    .await;
    bots.stop().await;
}

/// Sends `/cmd`, waits for the prompt, sends `answer`, waits for the reply; returns both.
async fn ask_and_answer(env: &Env, cmd: &str, answer: &str) -> (String, String) {
    let before = env.sent(MAIN_ID, ANN).len();
    let prompt = say(env, cmd, before + 1).await;
    let reply = say(env, answer, before + 2).await;
    (prompt, reply)
}

#[tokio::test]
async fn include_and_exclude_words_take_two_messages() {
    let (env, bots) = polling().await;
    open_menu(&env).await;

    let (prompt, reply) = ask_and_answer(&env, "/include", "python, Django ,#remote, PYTHON").await;
    assert!(prompt.contains("Сейчас: не задано"), "{prompt}");
    assert!(reply.contains("python, Django, #remote"), "{reply}");
    assert_eq!(
        env.subscriber(ANN).await.unwrap().include,
        ["python", "Django", "#remote"]
    );

    // The prompt shows what is set; a bad list is explained and the question stays open.
    let (prompt, reply) = ask_and_answer(&env, "/exclude", "#без опыта").await;
    assert!(prompt.contains("Сейчас: не задано"), "{prompt}");
    assert!(reply.contains("«#без опыта» не подходит"), "{reply}");
    say_expecting(&env, "стажировка, бесплатно", 6, "стажировка, бесплатно").await;
    let sub = env.subscriber(ANN).await.unwrap();
    assert_eq!(sub.exclude, ["стажировка", "бесплатно"]);
    assert_eq!(sub.include, ["python", "Django", "#remote"]);

    // The dialogue is over: more text is not taken as keywords.
    say_expecting(&env, "rust", 7, "/start").await;
    assert_eq!(env.subscriber(ANN).await.unwrap().include.len(), 3);

    // /status shows the settings; "нет" clears a list.
    let (_, reply) = ask_and_answer(&env, "/include", "нет").await;
    assert!(reply.contains("убраны"), "{reply}");
    assert!(env.subscriber(ANN).await.unwrap().include.is_empty());
    let status = say(&env, "/status", 10).await;
    assert!(
        status.contains("Исключить: стажировка, бесплатно"),
        "{status}"
    );
    assert!(status.contains("Ключевые слова: нет"), "{status}");
    bots.stop().await;
}

#[tokio::test]
async fn too_many_keywords_are_refused_with_the_limit() {
    let (env, bots) = polling().await;
    let many: Vec<String> = (0..31).map(|i| format!("слово{i}")).collect();
    let (_, reply) = ask_and_answer(&env, "/include", &many.join(", ")).await;
    assert!(reply.contains("31") && reply.contains("30"), "{reply}");
    assert!(has_no_keywords(&env).await);
    bots.stop().await;
}

#[tokio::test]
async fn minimum_budget_is_parsed_stored_and_cleared() {
    let (env, bots) = polling().await;
    let (prompt, reply) = ask_and_answer(&env, "/budget", "50 $/час").await;
    assert!(prompt.contains("5000 руб"), "{prompt}");
    assert!(reply.contains("от 50 USD в час"), "{reply}");
    let floor = env
        .subscriber(ANN)
        .await
        .unwrap()
        .min_budget
        .expect("a stored minimum");
    assert_eq!(floor, MinBudget::new(50.0, "USD", BudgetBasis::Hourly));

    let (prompt, reply) = ask_and_answer(&env, "/budget", "5 000 руб").await;
    assert!(prompt.contains("Сейчас: от 50 USD в час"), "{prompt}");
    assert!(reply.contains("от 5\u{a0}000 RUB за проект"), "{reply}");

    let (_, reply) = ask_and_answer(&env, "/budget", "много денег").await;
    assert!(reply.contains("Не понял сумму"), "{reply}");
    // Still asking: the next answer is taken.
    say_expecting(&env, "0", 7, "убран").await;
    assert_eq!(env.subscriber(ANN).await.unwrap().min_budget, None);

    // A strict floor (jobs without a budget held back too) stays strict when changed here.
    let mut spec = env.subscriber(ANN).await.unwrap().to_spec();
    let strict = MinBudget {
        require_stated: true,
        ..MinBudget::new(1000.0, "RUB", BudgetBasis::Fixed)
    };
    spec.min_budget = Some(strict);
    env.store
        .upsert_subscriber(&spec, chrono::Utc::now())
        .await
        .unwrap();
    let (_, reply) = ask_and_answer(&env, "/budget", "2000").await;
    assert!(reply.contains("от 2\u{a0}000 RUB за проект"), "{reply}");
    let floor = env.subscriber(ANN).await.unwrap().min_budget.unwrap();
    assert_eq!(
        floor,
        MinBudget {
            require_stated: true,
            ..MinBudget::new(2000.0, "RUB", BudgetBasis::Fixed)
        }
    );
    bots.stop().await;
}

#[tokio::test]
async fn quiet_hours_errors_are_explained_and_keep_the_question() {
    let (env, bots) = polling().await;
    let (prompt, reply) = ask_and_answer(&env, "/quiet", "23:00-08:00 Mars/Olympus").await;
    assert!(prompt.contains("23:00-08:00 Europe/Moscow"), "{prompt}");
    assert!(
        reply.contains("Неизвестный часовой пояс «Mars/Olympus»"),
        "{reply}"
    );
    assert!(
        env.subscriber(ANN)
            .await
            .is_none_or(|s| s.quiet_hours.is_none())
    );

    say_expecting(
        &env,
        "25:00-08:00 Europe/Moscow",
        3,
        "«25:00» не существует",
    )
    .await;

    say_expecting(
        &env,
        "23:00 - 8:00 Europe/Moscow",
        4,
        "Тихие часы: 23:00–08:00 (Europe/Moscow)",
    )
    .await;
    assert_eq!(
        env.subscriber(ANN).await.unwrap().quiet_hours,
        Some(QuietHoursSpec {
            start: "23:00".into(),
            end: "08:00".into(),
            time_zone: "Europe/Moscow".into()
        })
    );

    // Without a zone the one set before is kept; "выкл" switches them off.
    let (_, reply) = ask_and_answer(&env, "/quiet", "22:30-07:00").await;
    assert!(reply.contains("22:30–07:00 (Europe/Moscow)"), "{reply}");
    let (_, reply) = ask_and_answer(&env, "/quiet", "выкл").await;
    assert!(reply.contains("выключены"), "{reply}");
    assert_eq!(env.subscriber(ANN).await.unwrap().quiet_hours, None);
    bots.stop().await;
}

#[tokio::test]
async fn cancel_and_other_commands_end_a_question() {
    let (env, bots) = polling().await;
    say(&env, "/include", 1).await;
    assert_eq!(say(&env, "/cancel", 2).await, "Отменено.");
    say_expecting(&env, "python", 3, "/start").await;
    assert_eq!(say(&env, "/cancel", 4).await, "Нечего отменять.");
    assert!(has_no_keywords(&env).await);
    bots.stop().await;
}

#[tokio::test]
async fn pause_and_resume_from_the_menu_and_by_command() {
    let (env, bots) = polling().await;
    let menu = open_menu(&env).await;
    env.inject(MAIN_ID, tap(ANN, MAIN_ID, menu.message_id, "pause:1"));
    eventually("paused", SOON, || async {
        env.subscriber(ANN).await?.paused.then_some(())
    })
    .await;
    let edited = edited_into(&env, "the menu offering Resume", &menu, |m| {
        button_data(m, "pause:").as_deref() == Some("pause:0")
    })
    .await;
    assert!(
        edited.visible_text.contains("Доставка: ⏸ на паузе"),
        "{}",
        edited.visible_text
    );
    say_expecting(&env, "/resume", 2, "возобновлена").await;
    assert!(!env.subscriber(ANN).await.unwrap().paused);
    bots.stop().await;
}

#[tokio::test]
async fn a_missed_vacancy_is_reported_with_its_link() {
    let (env, bots) = polling().await;
    say_expecting(&env, "/report", 1, "Перешлите").await;
    let vacancy = "Ищем Python-разработчика на парсер, бюджет 40 000 руб";
    env.inject(MAIN_ID, forwarded(ANN, vacancy, "freelance_jobs", 4242));
    let reply = env.wait_sent(MAIN_ID, ANN, 2).await[1].visible_text.clone();
    let reports = env.store.reports(None, 10).await.unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(r.kind, jobwire_store::ReportKind::Missed);
    assert_eq!(r.chat_id, ANN);
    assert_eq!(r.text, vacancy);
    assert_eq!(r.link.as_deref(), Some("https://t.me/freelance_jobs/4242"));
    assert!(reply.contains(&format!("№{}", r.id)), "{reply}");
    bots.stop().await;
}

#[tokio::test]
async fn a_restarted_poller_does_not_handle_updates_again() {
    let (env, bots) = polling().await;
    open_menu(&env).await;
    bots.stop().await;

    // A new process (its in-memory dedup is empty): the offset confirmed on the way out
    // keeps Telegram from serving /start again.
    let bots = env.start(UpdateMode::Polling).await;
    say_expecting(&env, "/status", 2, "Категории:").await;
    // A /start served again would have come before /status (same chat, in order). Stopping
    // waits for every update fetched to be handled: the count is final.
    bots.stop().await;
    assert_eq!(env.sent(MAIN_ID, ANN).len(), 2);
}

#[tokio::test]
async fn replies_wait_out_telegrams_per_chat_limit() {
    let env = Env::with_limits().await;
    let bots = env.start(UpdateMode::Polling).await;
    // Two answers into one chat within a second: the second is refused with 429 first.
    env.inject(MAIN_ID, text(ANN, "/start"));
    env.inject(MAIN_ID, text(ANN, "/help"));
    let sent = env.wait_sent(MAIN_ID, ANN, 2).await;
    assert!(
        sent[1].visible_text.contains("/report"),
        "{}",
        sent[1].visible_text
    );
    assert!(env.fake.stats().rejected_429 >= 1);
    bots.stop().await;
}

#[tokio::test]
async fn a_bot_that_does_not_answer_fails_the_start_without_showing_its_token() {
    let env = Env::new().await;
    let mut cfg = env.config(UpdateMode::Polling);
    // Nothing listens there: getMe fails with a network error naming the request URL.
    let closed = url::Url::parse("http://127.0.0.1:9/").unwrap();
    for c in &mut cfg.categories {
        c.bot.api_url = closed.clone();
    }
    let err = jobwire_bot::Bots::start(
        cfg,
        env.store.clone(),
        env.dialogues(),
        std::sync::Arc::new(jobwire_bot::MemoryDedup::default()),
        tokio_util::sync::CancellationToken::new(),
    )
    .await
    .expect_err("an unreachable bot fails the start");
    let text = err.to_string();
    assert!(
        text.contains("webbot") || text.contains("designbot"),
        "{text}"
    );
    // …the token is not.
    let secret = WEB_TOKEN.split(':').nth(1).unwrap();
    assert!(!text.contains(secret), "{text}");
    assert!(!format!("{err:?}").contains(secret));
}

/// With a payment provider configured, the plans screen offers a card payment: an invoice
/// in the provider's currency with the provider token, the e-mail asked and sent to the
/// provider, and a 54-FZ receipt in `provider_data`. The token never appears in what the
/// user sees.
#[tokio::test]
async fn a_card_payment_is_a_provider_invoice_with_a_receipt() {
    let env = Env::new().await;
    let section = jobwire_bot::BillingSection {
        enabled: true,
        provider_token_env: Some("PROVIDER".into()),
        ..jobwire_bot::BillingSection::default()
    };
    let plans = [jobwire_bot::PlanSection {
        id: "month".into(),
        title: "30 дней".into(),
        stars: 250,
        days: 30,
        categories: vec![],
        provider_price: Some(49_000),
    }];
    let billing = jobwire_bot::BillingConfig::from_sections(&section, &plans, &[], |_| {
        Some("381764678:TEST:provider-secret".into())
    })
    .unwrap();
    let bots = env
        .start_config(
            env.config_with(UpdateMode::Polling, billing),
            env.dialogues(),
            std::sync::Arc::new(jobwire_bot::MemoryDedup::default()),
        )
        .await;
    env.inject(MAIN_ID, text(ANN, "/plans"));
    let screen = env.wait_sent(MAIN_ID, ANN, 1).await.pop().unwrap();
    let buttons = screen.reply_markup.clone().unwrap().to_string();
    assert!(buttons.contains("buy:month:0"), "{buttons}");
    assert!(buttons.contains("buy:month:1"), "{buttons}");
    assert!(buttons.contains("490.00 RUB"), "{buttons}");
    env.inject(MAIN_ID, tap(ANN, MAIN_ID, screen.message_id, "buy:month:1"));
    let invoice = eventually("the provider invoice", SOON, || async {
        env.fake.invoices(MAIN_ID).pop()
    })
    .await;
    assert_eq!(invoice.method, "sendInvoice");
    assert_eq!(invoice.currency, "RUB");
    assert_eq!(invoice.total_amount, 49_000);
    assert_eq!(
        invoice.provider_token.as_deref(),
        Some("381764678:TEST:provider-secret")
    );
    assert_eq!(invoice.params["need_email"], true);
    assert_eq!(invoice.params["send_email_to_provider"], true);
    let receipt: serde_json::Value =
        serde_json::from_str(invoice.params["provider_data"].as_str().unwrap()).unwrap();
    assert_eq!(receipt["receipt"]["items"][0]["amount"]["value"], "490.00");
    assert_eq!(receipt["receipt"]["items"][0]["amount"]["currency"], "RUB");
    assert!(
        env.sent(MAIN_ID, ANN)
            .iter()
            .all(|m| !m.text.contains("provider-secret"))
    );
    bots.stop().await;
}
