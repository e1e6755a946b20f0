//! Checks of the billing concern: invoices, the payment ledger (exactly once per charge),
//! access periods, trials, refunds, cancelled renewals, notices and the daily figures.

use jobwire_store::*;

use super::*;

fn days(n: i64) -> Duration {
    Duration::days(n)
}

fn grant(plan: &str, days: u32) -> Grant {
    Grant {
        plan_id: plan.to_owned(),
        categories: vec![slug("rust")],
        days,
        renews: false,
        ends_at: None,
    }
}

/// A renewing Stars subscription that Telegram says ends at `ends_at`.
fn subscription(plan: &str, ends_at: DateTime<Utc>) -> Grant {
    Grant {
        plan_id: plan.to_owned(),
        categories: Vec::new(),
        days: 30,
        renews: true,
        ends_at: Some(ends_at),
    }
}

fn entry(kind: LedgerKind, chat_id: i64, charge: &str, amount: i64) -> NewLedgerEntry {
    NewLedgerEntry {
        raw: format!("{{\"charge\":\"{charge}\"}}"),
        ..stars_entry(kind, chat_id, charge, amount)
    }
}

fn payment(chat_id: i64, charge: &str, amount: i64) -> NewLedgerEntry {
    entry(LedgerKind::Payment, chat_id, charge, amount)
}

/// A renewal payment (recurring, not the first).
fn renewal(chat_id: i64, charge: &str, amount: i64) -> NewLedgerEntry {
    NewLedgerEntry {
        is_recurring: true,
        ..payment(chat_id, charge, amount)
    }
}

async fn pay(
    store: &dyn Store,
    entry: &NewLedgerEntry,
    grant: &Grant,
    now: DateTime<Utc>,
) -> AccessPeriodRow {
    match store.apply_payment(entry, grant, now).await.unwrap() {
        PaymentOutcome::Applied(period) => period,
        PaymentOutcome::AlreadyApplied => panic!("{} was applied before", entry.charge_id),
    }
}

async fn version(store: &dyn Store) -> i64 {
    store.subscribers_version().await.unwrap()
}

pub async fn check_invoices(store: &dyn Store) {
    let invoice = NewInvoice {
        nonce: "00ff00ff00ff00ff".to_owned(),
        chat_id: 42,
        plan_id: "month".to_owned(),
        amount: 250,
        currency: "XTR".to_owned(),
    };
    store.add_invoice(&invoice, t0()).await.unwrap();
    let stored = store.invoice(&invoice.nonce).await.unwrap().unwrap();
    assert_eq!(
        stored,
        InvoiceRow {
            nonce: invoice.nonce.clone(),
            chat_id: 42,
            plan_id: "month".to_owned(),
            amount: 250,
            currency: "XTR".to_owned(),
            created_at: t0(),
            paid_by: None,
        }
    );
    assert_eq!(store.invoice("forged").await.unwrap(), None);

    let first = NewLedgerEntry {
        nonce: Some(invoice.nonce.clone()),
        ..payment(42, "charge-1", 250)
    };
    pay(store, &first, &grant("month", 30), t0() + secs(5)).await;
    let paid = store.invoice(&invoice.nonce).await.unwrap().unwrap();
    assert_eq!(paid.paid_by.as_deref(), Some("charge-1"));

    // A renewal carries the first payment's nonce: the invoice keeps its first charge.
    let again = NewLedgerEntry {
        nonce: Some(invoice.nonce.clone()),
        ..renewal(42, "charge-2", 250)
    };
    pay(store, &again, &grant("month", 30), t0() + days(29)).await;
    let paid = store.invoice(&invoice.nonce).await.unwrap().unwrap();
    assert_eq!(paid.paid_by.as_deref(), Some("charge-1"));

    // A nonce that names no invoice still records the payment.
    let stray = NewLedgerEntry {
        nonce: Some("unknown".to_owned()),
        ..payment(43, "charge-3", 250)
    };
    pay(store, &stray, &grant("month", 30), t0()).await;
    assert_eq!(store.invoice("unknown").await.unwrap(), None);
}

pub async fn check_apply_payment_once(store: &dyn Store) {
    let before = version(store).await;
    let entry = NewLedgerEntry {
        provider_charge_id: Some("prov-1".to_owned()),
        subscription_expires_at: Some(t0() + days(30)),
        is_recurring: true,
        is_first_recurring: true,
        ..payment(7, "charge-1", 250)
    };
    let period = pay(store, &entry, &subscription("month", t0() + days(30)), t0()).await;
    assert_eq!(
        period,
        AccessPeriodRow {
            id: period.id,
            chat_id: 7,
            plan_id: "month".to_owned(),
            categories: Vec::new(),
            starts_at: t0(),
            ends_at: t0() + days(30),
            trial: false,
            renews: true,
            charge_id: Some("charge-1".to_owned()),
            canceled_at: None,
            revoked_at: None,
            created_at: t0(),
        }
    );
    let after = version(store).await;
    assert!(after > before, "fan-out must see the new access");
    assert!(access_of(std::slice::from_ref(&period)).active(t0() + days(1)));

    // The same charge again (a redelivered update, reconciliation): nothing changes.
    let replay = NewLedgerEntry {
        source: LedgerSource::Reconciliation,
        ..entry.clone()
    };
    let outcome = store
        .apply_payment(
            &replay,
            &subscription("month", t0() + days(60)),
            t0() + secs(9),
        )
        .await
        .unwrap();
    assert_eq!(outcome, PaymentOutcome::AlreadyApplied);
    assert_eq!(version(store).await, after);
    assert_eq!(store.access_periods(7).await.unwrap(), [period]);

    let ledger = store.ledger(Some(7), 10).await.unwrap();
    assert_eq!(ledger.len(), 1);
    let row = &ledger[0];
    assert_eq!(
        row,
        &LedgerRow {
            id: row.id,
            kind: LedgerKind::Payment,
            charge_id: "charge-1".to_owned(),
            provider_charge_id: Some("prov-1".to_owned()),
            chat_id: 7,
            plan_id: Some("month".to_owned()),
            nonce: None,
            amount: 250,
            currency: "XTR".to_owned(),
            is_recurring: true,
            is_first_recurring: true,
            subscription_expires_at: Some(t0() + days(30)),
            source: LedgerSource::Update,
            raw: "{\"charge\":\"charge-1\"}".to_owned(),
            created_at: t0(),
        }
    );
    assert_eq!(
        store
            .ledger_entry("charge-1", LedgerKind::Payment)
            .await
            .unwrap()
            .as_ref(),
        Some(row)
    );
    assert_eq!(
        store
            .ledger_entry("charge-1", LedgerKind::Refund)
            .await
            .unwrap(),
        None
    );
}

pub async fn check_payments_stack(store: &dyn Store) {
    // A second payment of the plan starts where the first ends.
    let first = pay(store, &payment(1, "c1", 100), &grant("month", 30), t0()).await;
    assert_eq!((first.starts_at, first.ends_at), (t0(), t0() + days(30)));
    let second = pay(
        store,
        &payment(1, "c2", 100),
        &grant("month", 30),
        t0() + days(2),
    )
    .await;
    assert_eq!(
        (second.starts_at, second.ends_at),
        (t0() + days(30), t0() + days(60))
    );

    // Another plan runs on its own clock.
    let week = pay(
        store,
        &payment(1, "c3", 50),
        &grant("week", 7),
        t0() + days(2),
    )
    .await;
    assert_eq!(
        (week.starts_at, week.ends_at),
        (t0() + days(2), t0() + days(9))
    );

    // After the periods ended, a payment starts now.
    let late = pay(
        store,
        &payment(1, "c4", 50),
        &grant("week", 7),
        t0() + days(20),
    )
    .await;
    assert_eq!(
        (late.starts_at, late.ends_at),
        (t0() + days(20), t0() + days(27))
    );

    // A refunded period is not stacked on.
    let refund = entry(LedgerKind::Refund, 1, "c2", 100);
    assert!(
        store
            .apply_refund(&refund, t0() + days(3))
            .await
            .unwrap()
            .is_some()
    );
    let third = pay(
        store,
        &payment(1, "c5", 100),
        &grant("month", 30),
        t0() + days(3),
    )
    .await;
    assert_eq!(
        (third.starts_at, third.ends_at),
        (t0() + days(30), t0() + days(60))
    );

    // Telegram's end wins, even before the computed start: the start moves back to it.
    let chat = 2;
    let base = subscription("sub", t0() + days(30));
    pay(store, &payment(chat, "s1", 100), &base, t0()).await;
    let ahead = pay(
        store,
        &renewal(chat, "s3", 100),
        &subscription("sub", t0() + days(90)),
        t0() + days(29),
    )
    .await;
    assert_eq!(
        (ahead.starts_at, ahead.ends_at),
        (t0() + days(30), t0() + days(90))
    );
    let behind = pay(
        store,
        &renewal(chat, "s2", 100),
        &subscription("sub", t0() + days(60)),
        t0() + days(29),
    )
    .await;
    assert_eq!(
        behind.ends_at,
        t0() + days(60),
        "Telegram's date is the truth"
    );
    assert!(behind.starts_at <= behind.ends_at, "{behind:?}");

    let periods = store.access_periods(1).await.unwrap();
    let charges: Vec<_> = periods.iter().map(|p| p.charge_id.as_deref()).collect();
    assert_eq!(
        charges,
        [Some("c1"), Some("c2"), Some("c3"), Some("c4"), Some("c5")],
        "oldest first"
    );
    assert!(access_of(&periods).active(t0() + days(45)));
    assert!(!access_of(&periods).active(t0() + days(61)));
}

pub async fn check_concurrent_payment(store: &dyn Store) {
    let entry = payment(9, "twice", 250);
    let g = grant("month", 30);
    let (a, b) = tokio::join!(
        store.apply_payment(&entry, &g, t0()),
        store.apply_payment(&entry, &g, t0()),
    );
    let outcomes = [a.unwrap(), b.unwrap()];
    let applied = outcomes
        .iter()
        .filter(|o| matches!(o, PaymentOutcome::Applied(_)))
        .count();
    assert_eq!(applied, 1, "{outcomes:?}");
    assert!(outcomes.contains(&PaymentOutcome::AlreadyApplied));
    assert_eq!(store.ledger(Some(9), 10).await.unwrap().len(), 1);
    assert_eq!(store.access_periods(9).await.unwrap().len(), 1);

    // Two different payments of one chat at once stack instead of overlapping.
    let (one, two) = (payment(10, "one", 100), payment(10, "two", 100));
    let (a, b) = tokio::join!(
        store.apply_payment(&one, &g, t0()),
        store.apply_payment(&two, &g, t0()),
    );
    assert!(matches!(a.unwrap(), PaymentOutcome::Applied(_)));
    assert!(matches!(b.unwrap(), PaymentOutcome::Applied(_)));
    let mut spans: Vec<_> = store
        .access_periods(10)
        .await
        .unwrap()
        .iter()
        .map(|p| (p.starts_at, p.ends_at))
        .collect();
    spans.sort();
    assert_eq!(
        spans,
        [(t0(), t0() + days(30)), (t0() + days(30), t0() + days(60))]
    );
}

pub async fn check_trial_once(store: &dyn Store) {
    let before = version(store).await;
    let trial = store
        .start_trial(5, &grant("trial", 3), t0())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (trial.chat_id, trial.plan_id.as_str(), trial.trial),
        (5, "trial", true)
    );
    assert_eq!((trial.starts_at, trial.ends_at), (t0(), t0() + days(3)));
    assert_eq!(trial.charge_id, None);
    assert_eq!(trial.categories, [slug("rust")]);
    assert!(version(store).await > before);

    // Ever: not after it ended, nor after a payment.
    assert_eq!(
        store
            .start_trial(5, &grant("trial", 3), t0() + days(10))
            .await
            .unwrap(),
        None
    );
    pay(
        store,
        &payment(5, "p", 100),
        &grant("month", 30),
        t0() + days(11),
    )
    .await;
    assert_eq!(
        store
            .start_trial(5, &grant("trial", 3), t0() + days(12))
            .await
            .unwrap(),
        None
    );
    let periods = store.access_periods(5).await.unwrap();
    assert_eq!(periods.iter().filter(|p| p.trial).count(), 1);
    assert_eq!(periods[0], trial);

    // Two at once: one trial.
    let g = grant("trial", 3);
    let (a, b) = tokio::join!(
        store.start_trial(6, &g, t0()),
        store.start_trial(6, &g, t0())
    );
    let started = [a.unwrap(), b.unwrap()];
    assert_eq!(
        started.iter().filter(|s| s.is_some()).count(),
        1,
        "{started:?}"
    );
    assert_eq!(store.access_periods(6).await.unwrap().len(), 1);

    // A paying chat that never had a trial may still start one.
    pay(store, &payment(8, "q", 100), &grant("month", 30), t0()).await;
    assert!(
        store
            .start_trial(8, &grant("trial", 3), t0())
            .await
            .unwrap()
            .is_some()
    );
}

pub async fn check_refunds(store: &dyn Store) {
    let kept = pay(store, &payment(3, "keep", 100), &grant("month", 30), t0()).await;
    let paid = pay(store, &payment(3, "back", 100), &grant("month", 30), t0()).await;
    assert!(access_of(std::slice::from_ref(&paid)).active(t0() + days(40)));

    let before = version(store).await;
    let refund = NewLedgerEntry {
        source: LedgerSource::Admin,
        ..entry(LedgerKind::Refund, 3, "back", 100)
    };
    let id = store
        .apply_refund(&refund, t0() + days(1))
        .await
        .unwrap()
        .expect("recorded");
    let after = version(store).await;
    assert!(after > before);
    assert_eq!(
        store.apply_refund(&refund, t0() + days(2)).await.unwrap(),
        None,
        "once per charge and kind"
    );
    assert_eq!(version(store).await, after);

    // Telegram reporting the same refund is not a second one: one refund per charge,
    // whichever way it arrives.
    let reported = entry(LedgerKind::Refunded, 3, "back", 100);
    assert_eq!(
        store.apply_refund(&reported, t0() + days(3)).await.unwrap(),
        None,
        "one refund per charge, whatever its kind"
    );
    assert_eq!(version(store).await, after);
    // And the other way round: a refund Telegram reported first is not made again.
    pay(store, &payment(3, "other", 100), &grant("month", 30), t0()).await;
    assert!(
        store
            .apply_refund(
                &entry(LedgerKind::Refunded, 3, "other", 100),
                t0() + days(4)
            )
            .await
            .unwrap()
            .is_some()
    );
    let admin = NewLedgerEntry {
        source: LedgerSource::Admin,
        ..entry(LedgerKind::Refund, 3, "other", 100)
    };
    assert_eq!(
        store.apply_refund(&admin, t0() + days(5)).await.unwrap(),
        None
    );
    assert_eq!(
        store
            .ledger_entry("other", LedgerKind::Refund)
            .await
            .unwrap(),
        None
    );

    let periods = store.access_periods(3).await.unwrap();
    assert_eq!(periods[0], kept);
    assert_eq!(periods[1].revoked_at, Some(t0() + days(1)));
    assert!(!access_of(&periods[1..]).active(t0() + days(40)));
    assert!(access_of(&periods).active(t0() + days(10)));

    let ledger = store.ledger(Some(3), 10).await.unwrap();
    let kinds: Vec<_> = ledger
        .iter()
        .map(|r| (r.kind, r.charge_id.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (LedgerKind::Refunded, "other"),
            (LedgerKind::Payment, "other"),
            (LedgerKind::Refund, "back"),
            (LedgerKind::Payment, "back"),
            (LedgerKind::Payment, "keep"),
        ],
        "newest first"
    );
    let row = store
        .ledger_entry("back", LedgerKind::Refund)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.id, row.source, row.created_at),
        (id, LedgerSource::Admin, t0() + days(1))
    );

    // A refund of a charge that bought nothing here is still recorded.
    let stray = entry(LedgerKind::Refunded, 4, "elsewhere", 10);
    assert!(store.apply_refund(&stray, t0()).await.unwrap().is_some());
    assert!(store.access_periods(4).await.unwrap().is_empty());
}

pub async fn check_renewal_cancel(store: &dyn Store) {
    let old = pay(
        store,
        &payment(11, "old", 100),
        &subscription("sub", t0() + days(1)),
        t0(),
    )
    .await;
    let current = pay(
        store,
        &renewal(11, "cur", 100),
        &subscription("sub", t0() + days(31)),
        t0(),
    )
    .await;
    let once = pay(store, &payment(11, "once", 100), &grant("month", 30), t0()).await;
    let other = pay(
        store,
        &payment(12, "other", 100),
        &subscription("sub", t0() + days(30)),
        t0(),
    )
    .await;
    let now = t0() + days(2);

    let before = version(store).await;
    assert_eq!(store.set_renewal_canceled(11, true, now).await.unwrap(), 1);
    let cancelled = version(store).await;
    assert!(cancelled > before);
    let periods = store.access_periods(11).await.unwrap();
    assert_eq!(periods[0], old, "an ended period keeps its renewal");
    assert_eq!(periods[1].canceled_at, Some(now));
    assert!(
        !periods[1].to_period().renews,
        "no grace day once cancelled"
    );
    assert_eq!(periods[2], once, "a one-time period does not renew anyway");
    assert_eq!(store.access_periods(12).await.unwrap(), [other]);

    assert_eq!(
        store
            .set_renewal_canceled(11, true, now + secs(1))
            .await
            .unwrap(),
        0
    );
    assert_eq!(version(store).await, cancelled, "nothing changed");

    assert_eq!(
        store
            .set_renewal_canceled(11, false, now + secs(2))
            .await
            .unwrap(),
        1
    );
    assert!(version(store).await > cancelled);
    assert_eq!(store.access_periods(11).await.unwrap()[1], current);
    assert_eq!(
        store
            .set_renewal_canceled(11, false, now + secs(3))
            .await
            .unwrap(),
        0
    );
}

pub async fn check_periods_ending_after(store: &dyn Store) {
    let a = pay(store, &payment(21, "a", 100), &grant("week", 7), t0()).await;
    let b = store
        .start_trial(22, &grant("trial", 3), t0())
        .await
        .unwrap()
        .unwrap();
    let c = pay(store, &payment(21, "c", 100), &grant("month", 30), t0()).await;
    let d = pay(store, &payment(23, "d", 100), &grant("week", 7), t0()).await;

    let ids = |rows: Vec<AccessPeriodRow>| rows.into_iter().map(|p| p.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.access_periods_ending_after(t0()).await.unwrap()),
        [a.id, b.id, c.id, d.id]
    );
    assert_eq!(
        ids(store
            .access_periods_ending_after(t0() + days(3))
            .await
            .unwrap()),
        [a.id, c.id, d.id],
        "the trial ends at day 3: not after it"
    );
    assert_eq!(
        store
            .access_periods_ending_after(t0() + days(7))
            .await
            .unwrap(),
        [c]
    );
    assert!(
        store
            .access_periods_ending_after(t0() + days(30))
            .await
            .unwrap()
            .is_empty()
    );

    // Everyone's ledger, newest first, limited.
    let everyone: Vec<_> = store
        .ledger(None, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.charge_id)
        .collect();
    assert_eq!(everyone, ["d", "c", "a"]);
    let latest: Vec<_> = store
        .ledger(None, 2)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.charge_id)
        .collect();
    assert_eq!(latest, ["d", "c"]);
    let one: Vec<_> = store
        .ledger(Some(21), 1)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.charge_id)
        .collect();
    assert_eq!(one, ["c"]);
    assert!(store.ledger(Some(22), 10).await.unwrap().is_empty());
}

pub async fn check_billing_notices(store: &dyn Store) {
    let a = pay(store, &payment(31, "a", 100), &grant("week", 7), t0()).await;
    let b = pay(store, &payment(32, "b", 100), &grant("week", 7), t0()).await;
    assert!(
        store
            .claim_billing_notice(a.id, "remind_1d", t0())
            .await
            .unwrap()
    );
    assert!(
        !store
            .claim_billing_notice(a.id, "remind_1d", t0() + secs(1))
            .await
            .unwrap(),
        "sent once"
    );
    assert!(
        store
            .claim_billing_notice(a.id, "ended", t0())
            .await
            .unwrap()
    );
    assert!(
        store
            .claim_billing_notice(b.id, "remind_1d", t0())
            .await
            .unwrap()
    );

    // Two schedulers at once: one sends.
    let (x, y) = tokio::join!(
        store.claim_billing_notice(b.id, "ended", t0()),
        store.claim_billing_notice(b.id, "ended", t0()),
    );
    assert_eq!([x.unwrap(), y.unwrap()].iter().filter(|c| **c).count(), 1);
}

pub async fn check_billing_counts(store: &dyn Store) {
    let since = t0() + days(1);
    // Before `since`: counted by nothing.
    store
        .upsert_subscriber(&subscriber(100), t0())
        .await
        .unwrap();
    store
        .start_trial(100, &grant("trial", 3), t0())
        .await
        .unwrap();
    pay(
        store,
        &payment(100, "early", 999),
        &grant("month", 30),
        t0(),
    )
    .await;

    let now = since + secs(60);
    for chat in [101, 102, 103] {
        store
            .upsert_subscriber(&subscriber(chat), now)
            .await
            .unwrap();
        store
            .start_trial(chat, &grant("trial", 3), now)
            .await
            .unwrap();
    }
    // 101 converts with a first payment of a subscription, 102 with a one-time payment.
    let first = NewLedgerEntry {
        is_recurring: true,
        is_first_recurring: true,
        ..payment(101, "p1", 250)
    };
    pay(store, &first, &subscription("sub", now + days(30)), now).await;
    let once = NewLedgerEntry {
        currency: "USD".to_owned(),
        ..payment(102, "p2", 500)
    };
    pay(store, &once, &grant("month", 30), now).await;
    // 100 renews (its trial was before `since`: not a conversion), and is refunded.
    pay(
        store,
        &renewal(100, "r1", 250),
        &subscription("sub", now + days(30)),
        now,
    )
    .await;
    store
        .apply_refund(&entry(LedgerKind::Refund, 100, "r1", 250), now)
        .await
        .unwrap();
    let reported = NewLedgerEntry {
        currency: "USD".to_owned(),
        ..entry(LedgerKind::Refunded, 102, "p2", 200)
    };
    store.apply_refund(&reported, now).await.unwrap();

    assert_eq!(
        store.billing_counts(since).await.unwrap(),
        BillingCounts {
            new_users: 3,
            trials_started: 3,
            trials_converted: 2,
            payments: 2,
            renewals: 1,
            refunds: 2,
            revenue: vec![("USD".to_owned(), 500), ("XTR".to_owned(), 500)],
            refunded: vec![("USD".to_owned(), 200), ("XTR".to_owned(), 250)],
        }
    );
    let all = store.billing_counts(t0()).await.unwrap();
    assert_eq!(
        (
            all.new_users,
            all.trials_started,
            all.trials_converted,
            all.payments
        ),
        (4, 4, 3, 3)
    );
    assert_eq!(
        all.revenue,
        [("USD".to_owned(), 500), ("XTR".to_owned(), 1499)]
    );
    assert_eq!(
        store.billing_counts(now + secs(1)).await.unwrap(),
        BillingCounts::default()
    );
}
