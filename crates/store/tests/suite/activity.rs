//! Checks of what the panel reads about the subscribers' activity and the billing loop:
//! who did something in the bots lately (a broadcast's "active in the last N days"), and the
//! last reconciliation with Telegram.

use jobwire_store::*;

use super::*;

/// A subscriber saved at `at` (as the bot saves their settings).
async fn saved(store: &dyn Store, chat_id: i64, at: DateTime<Utc>) {
    store
        .upsert_subscriber(&subscriber(chat_id), at)
        .await
        .unwrap();
}

pub async fn check_active_chats_since(store: &dyn Store) {
    let old = t0() - Duration::days(40);
    let since = t0() - Duration::days(7);
    // 1 saved their settings lately; 2..=6 were saved long ago, and then 3 reported a
    // missed vacancy, 4 hid an author, 5 paid, 6 wrote from an English client, lately.
    saved(store, 1, t0() - Duration::days(1)).await;
    for chat in 2..=7 {
        saved(store, chat, old).await;
    }
    store
        .insert_report(
            &NewReport {
                chat_id: 3,
                post_id: None,
                kind: ReportKind::Missed,
                text: "Нужен монтажёр".to_owned(),
                link: None,
            },
            t0() - Duration::days(2),
        )
        .await
        .unwrap();
    let author = jobwire_core::card::Author {
        key: "@spam_hr".to_owned(),
        label: "@spam_hr".to_owned(),
    };
    assert!(
        store
            .hide_author(4, &author, t0() - Duration::days(3))
            .await
            .unwrap()
    );
    let paid = stars_entry(LedgerKind::Payment, 5, "act-1", 100);
    let grant = Grant {
        plan_id: "month".to_owned(),
        categories: Vec::new(),
        days: 30,
        renews: false,
        ends_at: None,
    };
    store
        .apply_payment(&paid, &grant, t0() - Duration::days(4))
        .await
        .unwrap();
    store
        .set_chat_language(6, "en", t0() - Duration::days(5))
        .await
        .unwrap();
    // 7 did nothing since it was saved; 8 reported long ago and is no subscriber at all.
    store
        .insert_report(
            &NewReport {
                chat_id: 8,
                post_id: None,
                kind: ReportKind::Missed,
                text: "old".to_owned(),
                link: None,
            },
            old,
        )
        .await
        .unwrap();

    let active = store.active_chats_since(since).await.unwrap();
    let mut active: Vec<i64> = active.into_iter().collect();
    active.sort_unstable();
    assert_eq!(active, [1, 3, 4, 5, 6]);
    // The bound is inclusive: a thing done exactly at `since` counts.
    let exactly = store
        .active_chats_since(t0() - Duration::days(1))
        .await
        .unwrap();
    assert_eq!(exactly, HashSet::from([1]));
    assert!(store.active_chats_since(t0()).await.unwrap().is_empty());
}

pub async fn check_reconciliation_runs(store: &dyn Store) {
    assert_eq!(store.last_reconciliation().await.unwrap(), None);
    let first = ReconciliationRun {
        finished_at: t0(),
        transactions: 12,
        payments: 2,
        refunds: 1,
    };
    store.record_reconciliation(&first).await.unwrap();
    assert_eq!(store.last_reconciliation().await.unwrap(), Some(first));
    assert_eq!(first.found(), 3);
    // Each run replaces the one before.
    let second = ReconciliationRun {
        finished_at: t0() + Duration::minutes(30),
        transactions: 13,
        payments: 0,
        refunds: 0,
    };
    store.record_reconciliation(&second).await.unwrap();
    assert_eq!(store.last_reconciliation().await.unwrap(), Some(second));
}
