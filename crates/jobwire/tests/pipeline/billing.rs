//! Subscriptions in the running pipeline, with a clock the test moves: a new user's trial,
//! vacancies of the chosen categories only, the trial's end (vacancies stop, one expiry
//! message), a 30-day Stars subscription bought from `/buy month`, its renewal to Telegram's
//! date, a cancellation, a refund that ends access, a lost payment update restored by
//! reconciliation, and the reminders of a one-time plan, each sent once.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SubsecRound, Utc};
use jobwire::config::{Settings, UpdatesMode};
use jobwire::testbed::{Bed, bot_id, seed_job, temp_db};
use jobwire_bot::BillingConfig;
use jobwire_core::CategorySlug;
use jobwire_core::billing::{Plan, PlanId};
use jobwire_core::clock::{Clock, ManualClock};
use jobwire_queue::wire::JobReady;
use jobwire_store::{LedgerKind, LedgerSource, Store};
use jobwire_testkit::telegram::{FakeTelegram, PayOptions, PayOutcome, PayUser, RecordedMessage};
use jobwire_testkit::wait::eventually;
use serde_json::{Value, json};

use crate::support::*;

const SOON: Duration = Duration::from_secs(20);
/// The main bot (`creative`, which also delivers design) and the web bot (`dev`).
const MAIN: usize = 1;
const WEB: usize = 0;

fn plan(id: &str, stars: u32, days: u32, categories: &[&str]) -> Plan {
    Plan {
        id: PlanId::parse(id).unwrap(),
        title: format!("{days} days"),
        stars,
        days,
        categories: categories
            .iter()
            .map(|c| CategorySlug::parse(c).unwrap())
            .collect(),
        provider_price: None,
    }
}

fn billing() -> BillingConfig {
    BillingConfig {
        enabled: true,
        trial_days: 3,
        plans: vec![
            plan("month", 250, 30, &[]),
            plan("week", 80, 7, &["design"]),
        ],
        remind_every: Duration::from_millis(100),
        reconcile_every: Duration::from_millis(300),
        ..BillingConfig::default()
    }
}

struct World {
    /// What the admins were told.
    alerts: Arc<std::sync::Mutex<Vec<String>>>,
    telegram: FakeTelegram,
    store: Arc<dyn Store>,
    running: jobwire::pipeline::Pipeline,
    clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
    next_job: u32,
}

fn tap(user: i64, data: &str) -> Value {
    json!({"callback_query": {
        "id": format!("cq-{user}-{data}"),
        "from": {"id": user, "is_bot": false, "first_name": "Анна", "language_code": "ru"},
        "chat_instance": "ci",
        "data": data,
    }})
}

impl World {
    async fn new() -> World {
        init();
        let telegram = fake_telegram(None).await;
        let (dir, db) = temp_db().unwrap();
        let bed = Bed {
            bots: vec!["dev".into(), "creative".into()],
            routes: vec![
                ("web".into(), "dev".into()),
                ("design".into(), "creative".into()),
                ("copywriting".into(), "creative".into()),
            ],
            main_bot: Some("creative".into()),
            updates: UpdatesMode::Polling,
            ..Bed::default()
        };
        let mut settings: Settings = bed.settings(telegram.url(), &db).unwrap();
        settings.billing = billing();
        let alerts = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = alerts.clone();
        settings.billing.alert = Some(Arc::new(move |m: String| {
            sink.lock().unwrap().push(m);
        }));
        // Whole milliseconds, as the store keeps them.
        let clock = Arc::new(ManualClock::new(Utc::now().trunc_subsecs(3)));
        let (running, store) = jobwire::testbed::start_pipeline_at(&settings, clock.clone())
            .await
            .unwrap();
        World {
            alerts,
            telegram,
            store,
            running,
            clock,
            _dir: dir,
            next_job: 0,
        }
    }

    fn main_sent(&self, user: i64) -> Vec<RecordedMessage> {
        self.telegram.chat_messages(bot_id(MAIN), user)
    }

    async fn say(&self, user: i64, text: &str) -> RecordedMessage {
        self.say_in(user, "ru", text).await
    }

    /// Sends a command to the main bot and waits for its answer.
    async fn say_in(&self, user: i64, lang: &str, text: &str) -> RecordedMessage {
        let before = self.main_sent(user).len();
        self.telegram
            .inject_update(bot_id(MAIN), command(user, lang, text))
            .unwrap();
        eventually(&format!("an answer to {text}"), SOON, || async {
            self.main_sent(user).get(before).cloned()
        })
        .await
    }

    /// A job in `category` goes through fan-out and delivery; returns the messages each
    /// bot then sent to `user` (web bot, main bot).
    async fn job(&mut self, category: &str) -> PostOutcome {
        self.next_job += 1;
        let text = format!(
            "Ищем исполнителя #{}: {category}, бюджет 40000 ₽, писать @client{}",
            self.next_job, self.next_job
        );
        let id = seed_job(
            self.store.as_ref(),
            "@jobs",
            &format!("job-{}", self.next_job),
            &text,
            &[category],
        )
        .await
        .unwrap();
        jobwire_queue::publish(self.running.queue.as_ref(), &JobReady::new(id))
            .await
            .unwrap();
        self.running.wait_settled(SOON).await.unwrap();
        PostOutcome { text }
    }

    fn cards(&self, user: i64, outcome: &PostOutcome) -> usize {
        let gist = gist(&outcome.text, 30);
        [WEB, MAIN]
            .iter()
            .flat_map(|b| self.telegram.chat_messages(bot_id(*b), user))
            .filter(|m| collapse(&m.text).contains(&gist))
            .count()
    }

    fn advance_to(&self, at: DateTime<Utc>) {
        self.clock.set(at);
    }

    async fn access_end(&self, user: i64) -> Option<DateTime<Utc>> {
        let rows = self.store.access_periods(user).await.unwrap();
        jobwire_store::access_of(&rows).active_until(self.clock.now())
    }

    /// Every message the bots sent was valid for the fake Telegram; then stops.
    async fn finish(self) {
        let stats = self.telegram.stats();
        assert_eq!(stats.rejected_400, 0, "{stats:?}");
        self.running.shutdown().await.unwrap();
    }

    /// `/start <payload>` of a new user: waits for the menu and the trial message.
    async fn start_new(&self, user: i64, lang: &str, payload: &str) {
        let before = self.main_sent(user).len();
        self.telegram
            .inject_update(
                bot_id(MAIN),
                command(user, lang, &format!("/start {payload}")),
            )
            .unwrap();
        eventually("the menu and the trial message", SOON, || async {
            (self.main_sent(user).len() >= before + 2).then_some(())
        })
        .await;
    }

    /// `/buy <plan>`: waits for the invoice (or subscription link) to be issued.
    async fn buy(
        &self,
        user: i64,
        lang: &str,
        plan: &str,
    ) -> jobwire_testkit::telegram::RecordedInvoice {
        let before = self.telegram.invoices(bot_id(MAIN)).len();
        self.telegram
            .inject_update(bot_id(MAIN), command(user, lang, &format!("/buy {plan}")))
            .unwrap();
        eventually("an invoice", SOON, || async {
            self.telegram.invoices(bot_id(MAIN)).get(before).cloned()
        })
        .await
    }

    /// Waits for the main bot to send `user` a message containing `needle`; returns it.
    async fn wait_for(&self, user: i64, needle: &str) -> RecordedMessage {
        eventually(&format!("a message with {needle:?}"), SOON, || async {
            first_containing(self.main_sent(user), 0, needle)
        })
        .await
    }

    fn count(&self, user: i64, needle: &str) -> usize {
        count_containing(&self.main_sent(user), needle)
    }

    /// `payer` pays the main bot's last invoice, with `options`.
    async fn pay_last_invoice(&self, payer: &PayUser, options: PayOptions) -> PayOutcome {
        self.telegram
            .pay(bot_id(MAIN), payer, &self.last_invoice(), options)
            .await
            .unwrap()
    }

    /// An admin refunds `charge_id` through `bot` (the main bot), as the panel does.
    async fn refund(
        &self,
        bot: &teloxide::Bot,
        charge_id: &str,
    ) -> Result<i64, jobwire_bot::BotError> {
        jobwire_bot::billing::refund_star_payment(
            &self.store,
            bot,
            &jobwire::testbed::bot_token(MAIN),
            charge_id,
            self.clock.now(),
        )
        .await
    }

    /// The invoice or subscription link the main bot last issued to `user`.
    fn last_invoice(&self) -> String {
        let invoices = self.telegram.invoices(bot_id(MAIN));
        let last = invoices.last().expect("an invoice was issued");
        last.link.clone().unwrap_or_else(|| {
            format!("msg:{}:{}", last.chat_id.unwrap(), last.message_id.unwrap())
        })
    }
}

struct PostOutcome {
    text: String,
}

fn paying_user(user: i64, lang: &str) -> PayUser {
    PayUser {
        language_code: Some(lang.into()),
        ..PayUser::new(user as u64, "Анна")
    }
}

/// Gives ticks of the billing task (every 100 ms) time to run.
async fn a_few_ticks() {
    tokio::time::sleep(Duration::from_millis(600)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trial_then_a_stars_subscription_renewed_cancelled_and_refunded() {
    let mut w = World::new().await;
    let user = 880_001;
    let start = w.clock.now();

    // A new user gets the trial and picks two categories.
    w.start_new(user, "ru", "web").await;
    w.wait_for(user, "Пробный период").await;
    w.telegram
        .inject_update(bot_id(MAIN), command(user, "ru", "/start design"))
        .unwrap();
    eventually("both categories chosen", SOON, || async {
        let s = w.store.subscriber_by_chat(user).await.unwrap()?;
        (s.categories == ["web", "design"]).then_some(())
    })
    .await;
    assert_eq!(w.count(user, "Пробный период: 3 дн."), 1, "one trial");
    let trial_end = w.access_end(user).await.expect("the trial gives access");
    assert_eq!(trial_end, start + chrono::Duration::days(3));

    // Only the vacancies of the chosen categories arrive.
    let web = w.job("web").await;
    let design = w.job("design").await;
    let copy = w.job("copywriting").await;
    assert_eq!(w.cards(user, &web), 1);
    assert_eq!(w.cards(user, &design), 1);
    assert_eq!(w.cards(user, &copy), 0, "not a chosen category");
    let status = w.say(user, "/status").await;
    assert!(
        status.visible_text.contains("Пробный период до")
            && status
                .visible_text
                .contains("Доставлено сегодня: 2, за 7 дней: 2"),
        "{}",
        status.visible_text
    );

    // A day before the end: the 1-day reminder, once (a 3-day trial has no 3-day one).
    w.advance_to(trial_end - chrono::Duration::hours(12));
    w.wait_for(user, "заканчивается через 1 дн.").await;
    a_few_ticks().await;
    assert_eq!(w.count(user, "заканчивается через"), 1);

    // The trial ends: one expiry message with the renew button, and vacancies stop.
    w.advance_to(trial_end + chrono::Duration::minutes(1));
    let expired = w.wait_for(user, "Пробный период закончился").await;
    let buttons = expired.reply_markup.clone().unwrap_or_default().to_string();
    assert!(
        buttons.contains("menu:plans"),
        "the expiry message has the renew button: {buttons}"
    );
    let late = w.job("web").await;
    assert_eq!(w.cards(user, &late), 0, "no vacancy after the trial");
    a_few_ticks().await;
    assert_eq!(w.count(user, "закончился"), 1, "one expiry message");
    assert_eq!(w.count(user, "Пробный период: "), 1, "no second trial");
    w.say(user, "/start").await;
    assert_eq!(
        w.count(user, "Пробный период: "),
        1,
        "no second trial after /start"
    );

    // /buy month: a Stars subscription link (createInvoiceLink, 30 days, XTR).
    let invoice = w.buy(user, "ru", "month").await;
    assert_eq!(invoice.method, "createInvoiceLink");
    assert_eq!(invoice.currency, "XTR");
    assert_eq!(invoice.subscription_period, Some(2_592_000));
    assert_eq!(invoice.total_amount, 250);
    let payer = paying_user(user, "ru");
    let paid = w.pay_last_invoice(&payer, PayOptions::default()).await;
    assert!(paid.accepted, "{paid:?}");
    let charge = paid.charge_id.clone().unwrap();
    w.wait_for(user, "Оплата получена").await;
    // Telegram's dates are whole seconds.
    let telegram_end = paid.subscription_expiration_date.unwrap().trunc_subsecs(0);
    assert_eq!(w.access_end(user).await, Some(telegram_end));
    let paid_job = w.job("web").await;
    assert_eq!(
        w.cards(user, &paid_job),
        1,
        "a paid subscriber gets vacancies"
    );

    // The same invoice cannot be paid twice (its nonce is used).
    let again = w.pay_last_invoice(&payer, PayOptions::default()).await;
    assert!(!again.accepted);
    assert!(again.error_message.unwrap().contains("уже оплачен"));

    // Telegram renews it: access runs to Telegram's new date.
    let renewed_to = telegram_end + chrono::Duration::days(30);
    let renewal = w
        .telegram
        .renew_subscription(bot_id(MAIN), user as u64, &charge, renewed_to)
        .unwrap();
    w.wait_for(user, "Подписка продлена").await;
    assert_eq!(w.access_end(user).await, Some(renewed_to));
    let ledger = w.store.ledger(Some(user), 10).await.unwrap();
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert!(
        ledger
            .iter()
            .any(|l| l.charge_id == renewal.charge_id && l.is_recurring && !l.is_first_recurring)
    );

    // The user cancels the renewal from /status: Telegram is told, access stays.
    let status = w.say(user, "/status").await;
    assert!(
        status.visible_text.contains("следующее продление"),
        "{}",
        status.visible_text
    );
    let buttons = status.reply_markup.clone().unwrap_or_default().to_string();
    assert!(buttons.contains("renew:0"), "{buttons}");
    w.telegram
        .inject_update(bot_id(MAIN), tap(user, "renew:0"))
        .unwrap();
    w.wait_for(user, "Продление отменено").await;
    assert_eq!(
        w.telegram
            .subscription_canceled(bot_id(MAIN), user as u64, &charge),
        Some(true)
    );
    assert_eq!(w.access_end(user).await, Some(renewed_to));

    // An admin refunds the renewal: Telegram refunds it and the access it bought ends.
    let main_bot =
        teloxide::Bot::new(jobwire::testbed::bot_token(MAIN)).set_api_url(w.telegram.url());
    w.refund(&main_bot, &renewal.charge_id).await.unwrap();
    assert_eq!(w.telegram.refunds(bot_id(MAIN)).len(), 1);
    assert_eq!(w.access_end(user).await, Some(telegram_end));
    assert!(
        w.store
            .ledger_entry(&renewal.charge_id, LedgerKind::Refund)
            .await
            .unwrap()
            .is_some()
    );
    // A second refund of the same charge is refused, and nothing changes.
    assert!(w.refund(&main_bot, &renewal.charge_id).await.is_err());

    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_pre_checkouts_duplicate_updates_reconciliation_and_reminders() {
    let mut w = World::new().await;
    let user = 880_002;
    let payer = paying_user(user, "en");
    // An English-speaking user: every answer in English.
    w.start_new(user, "en", "design").await;
    w.wait_for(user, "Free trial").await;

    // A changed price is refused at pre-checkout.
    let invoice = w.buy(user, "en", "week").await;
    assert_eq!(invoice.method, "sendInvoice");
    assert_eq!(invoice.prices.len(), 1);
    let changed = w
        .pay_last_invoice(
            &payer,
            PayOptions {
                total_amount: Some(60),
                ..PayOptions::default()
            },
        )
        .await;
    assert!(!changed.accepted, "{changed:?}");
    assert!(
        changed
            .error_message
            .as_deref()
            .is_some_and(|m| m.contains("price")),
        "{changed:?}"
    );

    // Paid, with the successful_payment update delivered twice: extended once.
    let trial_end = w.access_end(user).await.unwrap();
    let paid = w
        .pay_last_invoice(
            &payer,
            PayOptions {
                duplicate_update: true,
                ..PayOptions::default()
            },
        )
        .await;
    assert!(paid.accepted, "{paid:?}");
    w.wait_for(user, "Payment received").await;
    a_few_ticks().await;
    assert_eq!(w.count(user, "Payment received"), 1);
    let week_end = w.clock.now() + chrono::Duration::days(7);
    let periods = w.store.access_periods(user).await.unwrap();
    assert_eq!(periods.len(), 2, "the trial and one week: {periods:?}");
    assert_eq!(periods[1].ends_at, week_end);
    assert!(trial_end < week_end);

    // A payment Telegram took whose update was lost: reconciliation applies it once.
    w.buy(user, "en", "week").await;
    let lost = w
        .pay_last_invoice(
            &payer,
            PayOptions {
                deliver_update: false,
                ..PayOptions::default()
            },
        )
        .await;
    assert!(lost.accepted);
    let lost_charge = lost.charge_id.unwrap();
    let row = eventually("reconciliation to apply the lost payment", SOON, || async {
        w.store
            .ledger_entry(&lost_charge, LedgerKind::Payment)
            .await
            .unwrap()
    })
    .await;
    assert_eq!(row.source, LedgerSource::Reconciliation);
    // The alert follows the ledger's commit.
    eventually("the admins' alert about the lost payment", SOON, || async {
        w.alerts
            .lock()
            .unwrap()
            .iter()
            .any(|a| a.contains(&lost_charge))
    })
    .await;
    let alerts = w.alerts.lock().unwrap().clone();
    assert_eq!(
        alerts.iter().filter(|a| a.contains(&lost_charge)).count(),
        1,
        "the admins are told once: {alerts:?}"
    );
    let end = w.access_end(user).await.unwrap();
    assert_eq!(
        end,
        week_end + chrono::Duration::days(7),
        "extended by a week"
    );
    a_few_ticks().await;
    assert_eq!(w.store.ledger(Some(user), 10).await.unwrap().len(), 2);

    // Reminders of the one-time plan: 3 days and 1 day before its end, then its end; once
    // each.
    w.advance_to(end - chrono::Duration::days(4));
    a_few_ticks().await;
    assert_eq!(w.count(user, "ends in"), 0, "nothing 4 days before");
    w.advance_to(end - chrono::Duration::days(3) + chrono::Duration::minutes(1));
    w.wait_for(user, "ends in 3 day").await;
    w.advance_to(end - chrono::Duration::hours(23));
    w.wait_for(user, "ends in 1 day").await;
    let design = w.job("design").await;
    assert_eq!(w.cards(user, &design), 1, "still covered");
    w.advance_to(end + chrono::Duration::seconds(1));
    w.wait_for(user, "subscription has ended").await;
    a_few_ticks().await;
    assert_eq!(w.count(user, "ends in 3 day"), 1);
    assert_eq!(w.count(user, "ends in 1 day"), 1);
    assert_eq!(w.count(user, "has ended"), 1);
    let after = w.job("design").await;
    assert_eq!(w.cards(user, &after), 0, "expired: no vacancy");

    // /status, /paysupport and /terms answer in English.
    let status = w.say_in(user, "en", "/status").await;
    assert!(
        status.visible_text.contains("No subscription"),
        "{}",
        status.visible_text
    );
    assert!(
        status.visible_text.contains("Delivered today:"),
        "{}",
        status.visible_text
    );
    assert!(
        w.say_in(user, "en", "/paysupport")
            .await
            .visible_text
            .contains("Payment questions")
    );
    assert!(
        w.say_in(user, "en", "/terms")
            .await
            .visible_text
            .contains("subscription")
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_renewal_keeps_a_grace_day_and_a_telegram_refund_ends_access() {
    let mut w = World::new().await;
    let user = 880_003;
    let payer = paying_user(user, "ru");
    w.start_new(user, "ru", "web").await;
    w.wait_for(user, "Пробный период").await;
    w.buy(user, "ru", "month").await;
    let paid = w.pay_last_invoice(&payer, PayOptions::default()).await;
    assert!(paid.accepted, "{paid:?}");
    w.wait_for(user, "Оплата получена").await;
    let end = paid.subscription_expiration_date.unwrap().trunc_subsecs(0);

    // No reminder for a subscription that renews itself.
    w.advance_to(end - chrono::Duration::hours(20));
    a_few_ticks().await;
    assert_eq!(w.count(user, "заканчивается"), 0);

    // The renewal does not come: a grace day with access, then the expiry message.
    w.advance_to(end + chrono::Duration::hours(12));
    let in_grace = w.job("web").await;
    assert_eq!(w.cards(user, &in_grace), 1, "the grace day still delivers");
    a_few_ticks().await;
    assert_eq!(w.count(user, "закончилась"), 0);
    w.advance_to(end + chrono::Duration::hours(25));
    w.wait_for(user, "Подписка закончилась").await;
    let after = w.job("web").await;
    assert_eq!(w.cards(user, &after), 0);
    a_few_ticks().await;
    assert_eq!(w.count(user, "закончилась"), 1);

    // A week bought and refunded by Telegram: the refund is recorded and access ends.
    let other = 880_004;
    let other_payer = paying_user(other, "ru");
    w.start_new(other, "ru", "design").await;
    w.wait_for(other, "Пробный период").await;
    let trial_end = w.access_end(other).await.unwrap();
    w.buy(other, "ru", "week").await;
    let week = w
        .pay_last_invoice(&other_payer, PayOptions::default())
        .await;
    assert!(week.accepted);
    w.wait_for(other, "Оплата получена").await;
    assert!(w.access_end(other).await.unwrap() > trial_end);
    let charge = week.charge_id.unwrap();
    w.telegram
        .user_refund(bot_id(MAIN), other as u64, &charge)
        .unwrap();
    w.wait_for(other, "Возврат 80 ⭐").await;
    assert_eq!(w.access_end(other).await, Some(trial_end));
    let refund = w
        .store
        .ledger_entry(&charge, LedgerKind::Refunded)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(refund.amount, 80);
    w.finish().await;
}
