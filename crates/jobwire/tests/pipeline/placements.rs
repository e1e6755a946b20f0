//! Employers' direct placements in the running pipeline, against the fake Telegram and the
//! fake LLM: an employer writes a vacancy in the main bot (title, text, budget, contact,
//! categories), sees the card, pays a one-time Stars invoice priced per category, and the
//! vacancy reaches the subscribers of those categories marked as a direct placement; an
//! invoice of a deleted draft is refused at pre-checkout; a placement the classifier finds no
//! vacancy in, and one an admin refuses, are refunded and the employer is told why.

use std::collections::BTreeMap;
use std::time::Duration;

use jobwire::testbed::bot_id;
use jobwire_core::CategorySlug;
use jobwire_store::{PlacementStatus, Store};
use jobwire_testkit::llm::{FakeLlm, OracleEntry};
use jobwire_testkit::telegram::{
    FakeTelegram, PayOptions, PayUser, RecordedInvoice, RecordedMessage,
};
use jobwire_testkit::wait::eventually;
use serde_json::{Value, json};

use crate::support::*;

const SOON: Duration = Duration::from_secs(20);
/// The web bot (`dev`) delivers web; the main bot (`creative`) delivers design.
const WEB: usize = 0;
const MAIN: usize = 1;

const TITLE: &str = "Лендинг для кофейни на Tilda";
const BODY: &str = "Нужно собрать лендинг для сети кофеен: макет в Figma готов, \
                    нужна адаптивная вёрстка и форма заявки. Срок — неделя.";

/// The post a placement becomes (as the employer wrote it, Russian labels).
fn composed(title: &str, body: &str, budget: &str, contact: &str) -> String {
    jobwire_core::placement::compose(title, body, Some(budget), contact, false)
}

struct World {
    telegram: FakeTelegram,
    _llm: FakeLlm,
    store: std::sync::Arc<dyn Store>,
    running: jobwire::pipeline::Pipeline,
    _dir: tempfile::TempDir,
    taps: u32,
    sent: u32,
}

impl World {
    async fn new(approval: bool, oracle: Vec<OracleEntry>) -> World {
        let (telegram, llm, dir, mut settings) = web_and_main_world(oracle).await;
        let slug = |s: &str| CategorySlug::parse(s).unwrap();
        settings.placements = Some(jobwire_bot::PlacementsConfig {
            approval,
            prices: BTreeMap::from([(slug("web"), 100), (slug("design"), 80)]),
            every: Duration::from_millis(100),
            publish: None,
        });
        let (running, store) = jobwire::testbed::start_pipeline_at(
            &settings,
            std::sync::Arc::new(jobwire_core::clock::SystemClock),
        )
        .await
        .unwrap();
        World {
            telegram,
            _llm: llm,
            store,
            running,
            _dir: dir,
            taps: 0,
            sent: 0,
        }
    }

    fn main_sent(&self, user: i64) -> Vec<RecordedMessage> {
        self.telegram.chat_messages(bot_id(MAIN), user)
    }

    /// Waits for a main-bot message to `user`, after the first `after`, containing `needle`.
    async fn wait_for(&self, user: i64, after: usize, needle: &str) -> RecordedMessage {
        eventually(&format!("a message with {needle:?}"), SOON, || async {
            first_containing(self.main_sent(user), after, needle)
        })
        .await
    }

    fn count(&self, user: i64, needle: &str) -> usize {
        count_containing(&self.main_sent(user), needle)
    }

    /// The employer types `text` (a command or an answer); waits for a reply with `needle`.
    async fn say(&mut self, user: i64, text: &str, needle: &str) -> RecordedMessage {
        let before = self.main_sent(user).len();
        let update = if text.starts_with('/') {
            command(user, "ru", text)
        } else {
            self.sent += 1;
            json!({"message": {
                "message_id": 6000 + self.sent,
                "from": {"id": user, "is_bot": false, "first_name": "Олег", "language_code": "ru"},
                "chat": {"id": user, "type": "private", "first_name": "Олег"},
                "date": 1_767_000_000,
                "text": text,
            }})
        };
        self.telegram.inject_update(bot_id(MAIN), update).unwrap();
        self.wait_for(user, before, needle).await
    }

    /// Taps `data` under the main bot's message `message_id`; returns the toast.
    async fn tap(&mut self, user: i64, message_id: i64, data: &str) -> String {
        self.taps += 1;
        let id = format!("pq-{user}-{}", self.taps);
        tap_button(&self.telegram, MAIN, &id, user, message_id, data).await
    }

    fn buttons(message: &RecordedMessage) -> Vec<String> {
        let markup: &Value = message.reply_markup.as_ref().expect("buttons");
        markup["inline_keyboard"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|row| row.as_array().unwrap().iter())
            .map(|b| b["callback_data"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    /// Writes a placement from `/post` to its preview; returns the card and the price message.
    async fn write(
        &mut self,
        user: i64,
        text: (&str, &str, &str, &str),
        categories: &[&str],
    ) -> (RecordedMessage, RecordedMessage) {
        let (title, body, budget, contact) = text;
        self.say(user, "/post", "шаг 1 из 5").await;
        self.say(user, title, "Шаг 2 из 5").await;
        self.say(user, body, "Шаг 3 из 5").await;
        self.say(user, budget, "Шаг 4 из 5").await;
        let picker = self.say(user, contact, "Шаг 5 из 5").await;
        let offered = Self::buttons(&picker);
        assert_eq!(
            offered,
            ["pcat:web:1", "pcat:design:1", "place:done"],
            "the priced categories, then Done"
        );
        assert!(
            picker.visible_text.contains("Web — 100 ⭐"),
            "{}",
            picker.visible_text
        );
        let toast = self.tap(user, picker.message_id, "place:done").await;
        assert!(toast.contains("хотя бы одну"), "{toast}");
        for c in categories {
            self.tap(user, picker.message_id, &format!("pcat:{c}:1"))
                .await;
        }
        let before = self.main_sent(user).len();
        self.tap(user, picker.message_id, "place:done").await;
        let price = self.wait_for(user, before, "Цена:").await;
        let card = self
            .main_sent(user)
            .into_iter()
            .skip(before)
            .find(|m| m.visible_text.contains("Direct placement"))
            .expect("the preview card comes before the price");
        (card, price)
    }

    /// Taps Pay under the preview; returns the invoice.
    async fn invoice(&mut self, user: i64, price: &RecordedMessage) -> RecordedInvoice {
        let before = self.telegram.invoices(bot_id(MAIN)).len();
        self.tap(user, price.message_id, "place:pay").await;
        eventually("an invoice", SOON, || async {
            self.telegram.invoices(bot_id(MAIN)).get(before).cloned()
        })
        .await
    }

    async fn pay(
        &self,
        user: i64,
        invoice: &RecordedInvoice,
    ) -> jobwire_testkit::telegram::PayOutcome {
        let payer = PayUser {
            language_code: Some("ru".into()),
            ..PayUser::new(user as u64, "Олег")
        };
        let link = format!(
            "msg:{}:{}",
            invoice.chat_id.unwrap(),
            invoice.message_id.unwrap()
        );
        self.telegram
            .pay(bot_id(MAIN), &payer, &link, PayOptions::default())
            .await
            .unwrap()
    }

    async fn status_of(&self, chat: i64) -> Vec<PlacementStatus> {
        let all = self.store.placements(None, 100).await.unwrap();
        all.iter()
            .filter(|p| p.chat_id == chat)
            .map(|p| p.status)
            .collect()
    }

    async fn stop(self) {
        let stats = self.telegram.stats();
        assert_eq!(stats.rejected_400, 0, "{stats:?}");
        self.running.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_employers_paid_placement_reaches_subscribers_marked_and_a_non_vacancy_is_refunded() {
    let vacancy = composed(TITLE, BODY, "30 000 ₽", "@coffee_hr");
    let ad_title = "Курс по вёрстке со скидкой";
    let ad_body = "Запишитесь на наш онлайн-курс по вёрстке: двадцать уроков, \
                   домашние задания и сертификат. Скидка до пятницы.";
    let ad = composed(ad_title, ad_body, "5 000 ₽", "@course_sale");
    let oracle = vec![
        web_job(&vacancy),
        OracleEntry {
            text: ad.clone(),
            is_job: false,
            kind: "ad".into(),
            categories: vec![],
        },
    ];
    let mut w = World::new(false, oracle).await;
    let (web_fan, design_fan) = (920_001, 920_002);
    jobwire::subscribers::store_all(
        w.store.as_ref(),
        &[
            subscriber(web_fan, &["web"]),
            subscriber(design_fan, &["design"]),
        ],
    )
    .await
    .unwrap();

    // A bad answer is explained and the question stays open.
    let employer = 910_001;
    w.say(employer, "/post", "шаг 1 из 5").await;
    w.say(employer, TITLE, "Шаг 2 из 5").await;
    w.say(employer, "Сделать сайт", "Слишком коротко").await;
    w.say(employer, BODY, "Шаг 3 из 5").await;
    w.say(employer, "30 000 ₽", "Шаг 4 из 5").await;
    w.say(employer, "напишите мне", "не похоже на контакт")
        .await;
    w.say(employer, "/cancel", "Отменено").await;
    // /post continues the draft where it stopped.
    w.say(employer, "/post", "Шаг 4 из 5").await;
    w.say(employer, "/post", "Шаг 4 из 5").await;
    let picker = w.say(employer, "@coffee_hr", "Шаг 5 из 5").await;
    w.tap(employer, picker.message_id, "pcat:web:1").await;
    let before = w.main_sent(employer).len();
    w.tap(employer, picker.message_id, "place:done").await;
    let price = w.wait_for(employer, before, "Цена:").await;
    let preview = w
        .main_sent(employer)
        .into_iter()
        .skip(before)
        .find(|m| m.visible_text.contains("Direct placement"))
        .expect("the preview card");
    assert!(
        preview.visible_text.contains("\n📌 Direct placement · Web"),
        "{}",
        preview.visible_text
    );
    assert!(
        preview.visible_text.contains(TITLE),
        "{}",
        preview.visible_text
    );
    assert!(preview.visible_text.contains("@coffee_hr"));
    assert!(
        price.visible_text.contains("100 ⭐"),
        "{}",
        price.visible_text
    );
    assert_eq!(
        World::buttons(&price),
        ["place:pay", "place:edit", "place:cancel"]
    );

    // The invoice: one-time, Stars, the web price.
    let invoice = w.invoice(employer, &price).await;
    assert_eq!(invoice.method, "sendInvoice");
    assert_eq!(invoice.currency, "XTR");
    assert_eq!(invoice.total_amount, 100);
    assert_eq!(invoice.subscription_period, None);
    assert!(invoice.payload.starts_with("jwp1:"), "{}", invoice.payload);
    let paid = w.pay(employer, &invoice).await;
    assert!(paid.accepted, "{paid:?}");
    w.wait_for(employer, 0, "Оплата 100 ⭐ получена").await;

    // Delivered to the web subscriber, marked; not to the design one.
    let card = eventually("the placement's card", SOON, || async {
        w.telegram
            .chat_messages(bot_id(WEB), web_fan)
            .into_iter()
            .find(|m| m.visible_text.contains(TITLE))
    })
    .await;
    assert!(
        card.visible_text.contains("\n📌 Direct placement · Web"),
        "{}",
        card.visible_text
    );
    assert!(card.reply_markup.is_some(), "a card has its buttons");
    w.wait_for(employer, 0, "разослана: 1 подписчикам").await;
    assert_eq!(w.status_of(employer).await, [PlacementStatus::Delivered]);
    assert!(
        w.telegram
            .chat_messages(bot_id(MAIN), design_fan)
            .iter()
            .all(|m| !m.visible_text.contains(TITLE)),
        "not a category paid for"
    );
    let ledger = w.store.ledger(Some(employer), 10).await.unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].plan_id.as_deref(), Some("placement"));
    assert!(
        w.store.access_periods(employer).await.unwrap().is_empty(),
        "no subscription bought"
    );
    // The same invoice cannot be paid twice.
    let again = w.pay(employer, &invoice).await;
    assert!(!again.accepted, "{again:?}");

    // An invoice of a deleted draft is refused at pre-checkout.
    let second = 910_002;
    let (_, price) = w
        .write(
            second,
            (TITLE, BODY, "-", "hr@coffee.example"),
            &["web", "design"],
        )
        .await;
    assert!(
        price.visible_text.contains("180 ⭐"),
        "{}",
        price.visible_text
    );
    let stale = w.invoice(second, &price).await;
    assert_eq!(stale.total_amount, 180);
    w.tap(second, price.message_id, "place:cancel").await;
    w.wait_for(second, 0, "Черновик вакансии удалён").await;
    let refused = w.pay(second, &stale).await;
    assert!(!refused.accepted);
    assert!(
        refused
            .error_message
            .unwrap_or_default()
            .contains("устарел")
    );

    // An ad paid for as a placement: the classifier finds no vacancy, the Stars come back.
    let advertiser = 910_003;
    let (_, price) = w
        .write(
            advertiser,
            (ad_title, ad_body, "5 000 ₽", "@course_sale"),
            &["web"],
        )
        .await;
    let invoice = w.invoice(advertiser, &price).await;
    let paid = w.pay(advertiser, &invoice).await;
    assert!(paid.accepted, "{paid:?}");
    let charge = paid.charge_id.clone().unwrap();
    let told = w.wait_for(advertiser, 0, "не опубликована").await;
    assert!(
        told.visible_text.contains("не признала текст вакансией"),
        "{}",
        told.visible_text
    );
    assert!(
        told.visible_text.contains("100 ⭐ возвращены"),
        "{}",
        told.visible_text
    );
    let refunds = w.telegram.refunds(bot_id(MAIN));
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].charge_id, charge);
    assert_eq!(w.status_of(advertiser).await, [PlacementStatus::Refunded]);
    assert!(
        w.telegram
            .chat_messages(bot_id(WEB), web_fan)
            .iter()
            .all(|m| !m.visible_text.contains(ad_title)),
        "the ad reached nobody"
    );
    // Told once, refunded once.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(w.count(advertiser, "не опубликована"), 1);
    assert_eq!(w.telegram.refunds(bot_id(MAIN)).len(), 1);
    assert_eq!(w.count(employer, "разослана"), 1);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_approval_a_refused_placement_is_refunded_and_an_approved_one_delivered() {
    let first = composed(TITLE, BODY, "30 000 ₽", "@coffee_hr");
    let other_title = "Бот для записи в барбершоп";
    let other_body = "Нужен Telegram-бот для записи клиентов в барбершоп: \
                      расписание мастеров, напоминания и оплата. Срок две недели.";
    let second = composed(other_title, other_body, "60 000 ₽", "@barber_boss");
    let mut w = World::new(true, vec![web_job(&first), web_job(&second)]).await;
    let (fan, designer_fan) = (930_001, 930_002);
    jobwire::subscribers::store_all(
        w.store.as_ref(),
        &[
            subscriber(fan, &["web"]),
            subscriber(designer_fan, &["design"]),
        ],
    )
    .await
    .unwrap();

    // Paid, then held for the moderator: nothing goes out.
    let employer = 940_001;
    let (_, price) = w
        .write(employer, (TITLE, BODY, "30 000 ₽", "@coffee_hr"), &["web"])
        .await;
    let invoice = w.invoice(employer, &price).await;
    let paid = w.pay(employer, &invoice).await;
    assert!(paid.accepted);
    w.wait_for(employer, 0, "проверит модератор").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        w.status_of(employer).await,
        [PlacementStatus::AwaitingApproval]
    );
    assert!(w.telegram.chat_messages(bot_id(WEB), fan).is_empty());

    // The admin refuses it: refunded, with the moderator's words.
    let id = w.store.placements(None, 10).await.unwrap()[0].id;
    w.store
        .decide_placement(
            id,
            false,
            Some("укажите <b>сроки</b>"),
            "admin",
            chrono::Utc::now(),
        )
        .await
        .unwrap()
        .unwrap();
    let told = w.wait_for(employer, 0, "не опубликована").await;
    assert!(
        told.visible_text
            .contains("модератор: укажите <b>сроки</b>"),
        "the reason is shown as text: {}",
        told.visible_text
    );
    assert_eq!(w.telegram.refunds(bot_id(MAIN)).len(), 1);
    assert_eq!(w.status_of(employer).await, [PlacementStatus::Refunded]);
    assert!(w.telegram.chat_messages(bot_id(WEB), fan).is_empty());

    // Another one approved: delivered to the category paid for (design), although the
    // classifier files it under web.
    let boss = 940_002;
    let (_, price) = w
        .write(
            boss,
            (other_title, other_body, "60 000 ₽", "@barber_boss"),
            &["design"],
        )
        .await;
    let invoice = w.invoice(boss, &price).await;
    assert!(w.pay(boss, &invoice).await.accepted);
    w.wait_for(boss, 0, "проверит модератор").await;
    let id = w
        .store
        .placements(Some(PlacementStatus::AwaitingApproval), 10)
        .await
        .unwrap()[0]
        .id;
    w.store
        .decide_placement(id, true, None, "admin", chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    let card = eventually("the approved placement's card", SOON, || async {
        w.telegram
            .chat_messages(bot_id(MAIN), designer_fan)
            .into_iter()
            .find(|m| m.visible_text.contains(other_title))
    })
    .await;
    assert!(
        card.visible_text.contains("\n📌 Direct placement · Design"),
        "{}",
        card.visible_text
    );
    w.wait_for(boss, 0, "разослана: 1 подписчикам").await;
    assert!(
        w.telegram.chat_messages(bot_id(WEB), fan).is_empty(),
        "not the classifier's category: only the one paid for"
    );
    assert_eq!(
        w.telegram.refunds(bot_id(MAIN)).len(),
        1,
        "no refund of the approved one"
    );
    w.stop().await;
}
