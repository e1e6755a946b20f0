//! Checks of employers' direct placements: the draft (one open per chat), its invoice, the
//! payment applied once per charge, approval, publishing as a post of the source `direct`
//! (once), the paid categories replacing the classifier's, settling, and refunds claimed once
//! and retried after a wait.

use jobwire_store::*;

use super::*;

fn draft(title: &str, categories: &[&str]) -> PlacementDraft {
    PlacementDraft {
        lang: "ru".to_owned(),
        title: Some(title.to_owned()),
        body: Some("Нужен лендинг на Tilda для кофейни, макет готов, срок неделя.".to_owned()),
        budget: Some("30 000 ₽".to_owned()),
        contact: Some("@coffee_hr".to_owned()),
        categories: categories.iter().map(|c| slug(c)).collect(),
    }
}

fn placement_payment(chat_id: i64, charge: &str, nonce: &str, amount: i64) -> NewLedgerEntry {
    NewLedgerEntry {
        plan_id: Some("placement".to_owned()),
        nonce: Some(nonce.to_owned()),
        ..stars_entry(LedgerKind::Payment, chat_id, charge, amount)
    }
}

/// Applies the placement payment `(chat, charge, nonce, amount)`; it must be new.
async fn pay(
    store: &dyn Store,
    (chat, charge, nonce, amount): (i64, &str, &str, i64),
    placement: Option<PlacementId>,
    approval: Option<bool>,
    at: DateTime<Utc>,
) -> PlacementRow {
    let paid = store
        .apply_placement_payment(
            &placement_payment(chat, charge, nonce, amount),
            placement,
            approval,
            at,
        )
        .await
        .unwrap();
    match paid {
        PlacementPaid::Applied(row) => *row,
        PlacementPaid::AlreadyApplied => panic!("payment {charge} was applied before"),
    }
}

/// A placement of `chat`, paid (`charge`) and published as a post with `text`: (its id, the
/// post).
async fn published(
    store: &dyn Store,
    chat: i64,
    charge: &str,
    text: &str,
) -> (PlacementId, PostId) {
    let nonce = format!("nonce{chat}");
    let id = invoiced(store, chat, &nonce, 100).await;
    pay(
        store,
        (chat, charge, &nonce, 100),
        Some(id),
        Some(false),
        t0(),
    )
    .await;
    let post = store
        .publish_placement(id, text, None, t0())
        .await
        .unwrap()
        .unwrap();
    (id, post)
}

/// A draft of `chat` invoiced at `stars` under `nonce`; returns its id.
async fn invoiced(store: &dyn Store, chat: i64, nonce: &str, stars: i64) -> PlacementId {
    let p = store
        .save_placement_draft(chat, &draft("Лендинг", &["web", "design"]), t0())
        .await
        .unwrap();
    store
        .invoice_placement(p.id, chat, stars, nonce, t0())
        .await
        .unwrap()
        .unwrap()
        .id
}

pub async fn check_placement_lifecycle(store: &dyn Store) {
    let chat = 7001;
    // One open draft per chat: saving again updates it.
    let first = store
        .save_placement_draft(chat, &draft("Лендинг", &["web"]), t0())
        .await
        .unwrap();
    assert_eq!(first.status, PlacementStatus::Draft);
    let again = store
        .save_placement_draft(
            chat,
            &draft("Лендинг 2", &["web", "design"]),
            t0() + secs(1),
        )
        .await
        .unwrap();
    assert_eq!(again.id, first.id);
    assert_eq!(again.draft.title.as_deref(), Some("Лендинг 2"));
    assert_eq!(again.draft.categories, vec![slug("web"), slug("design")]);
    assert_eq!(
        store.open_placement(chat).await.unwrap().map(|p| p.id),
        Some(first.id)
    );
    assert_eq!(store.open_placement(chat + 1).await.unwrap(), None);

    // The invoice: the placement and the invoice row, under one nonce.
    let p = store
        .invoice_placement(first.id, chat, 250, "nonce0001", t0() + secs(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.status, PlacementStatus::Invoiced);
    assert_eq!(
        (p.stars, p.nonce.as_deref()),
        (Some(250), Some("nonce0001"))
    );
    let invoice = store.invoice("nonce0001").await.unwrap().unwrap();
    assert_eq!(
        (invoice.chat_id, invoice.plan_id.as_str(), invoice.amount),
        (chat, "placement", 250)
    );
    assert!(
        store
            .invoice_placement(first.id, chat + 1, 250, "nonce0002", t0())
            .await
            .unwrap()
            .is_none(),
        "another chat cannot invoice it"
    );

    // Paid: recorded once, approved (no approval asked), the invoice used.
    let row = pay(
        store,
        (chat, "ch-1", "nonce0001", 250),
        Some(first.id),
        Some(false),
        t0() + secs(3),
    )
    .await;
    assert_eq!(row.status, PlacementStatus::Approved);
    assert_eq!(row.charge_id.as_deref(), Some("ch-1"));
    assert_eq!(row.paid_at, Some(t0() + secs(3)));
    assert_eq!(
        store
            .apply_placement_payment(
                &placement_payment(chat, "ch-1", "nonce0001", 250),
                Some(first.id),
                Some(false),
                t0() + secs(4),
            )
            .await
            .unwrap(),
        PlacementPaid::AlreadyApplied
    );
    assert_eq!(
        store
            .invoice("nonce0001")
            .await
            .unwrap()
            .unwrap()
            .paid_by
            .as_deref(),
        Some("ch-1")
    );
    assert_eq!(
        store.open_placement(chat).await.unwrap(),
        None,
        "no longer open"
    );
    assert_eq!(
        store.ledger(Some(chat), 10).await.unwrap().len(),
        1,
        "one ledger row"
    );
    // No access is granted by a placement.
    assert!(store.access_periods(chat).await.unwrap().is_empty());

    // Published once, as a queued post of the source `direct`.
    let text = "Лендинг\n\nтекст\n\nКонтакт: @coffee_hr";
    let post_id = store
        .publish_placement(first.id, text, None, t0() + secs(5))
        .await
        .unwrap()
        .expect("published");
    assert_eq!(
        store
            .publish_placement(first.id, text, None, t0() + secs(6))
            .await
            .unwrap(),
        None,
        "published once"
    );
    let post = store.post(post_id).await.unwrap().unwrap();
    assert_eq!(post.status, PostStatus::Queued);
    assert_eq!(post.text, text);
    assert_eq!(post.author.as_deref(), Some("@coffee_hr"));
    let direct = store.ensure_channel("direct", t0()).await.unwrap();
    assert_eq!(post.channel_id, direct.id);
    let row = store.placement(first.id).await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.post_id),
        (PlacementStatus::Published, Some(post_id))
    );
    assert!(
        store
            .settle_placements(Duration::hours(2), t0(), 10)
            .await
            .unwrap()
            .is_empty()
    );

    // The classifier says job in other categories: the paid ones stand.
    let status = store
        .record_classification(post_id, &verdict(true), t0() + secs(7))
        .await
        .unwrap();
    assert_eq!(status, PostStatus::Job);
    let stored = store.classification(post_id).await.unwrap().unwrap();
    assert_eq!(stored.categories, vec![slug("web"), slug("design")]);
    assert!(
        store
            .settle_placements(Duration::hours(2), t0(), 10)
            .await
            .unwrap()
            .is_empty(),
        "not delivered before fan-out"
    );
    store
        .fan_out(post_id, &["card".to_owned()], &[], t0())
        .await
        .unwrap();
    let settled = store
        .settle_placements(Duration::hours(2), t0() + secs(8), 10)
        .await
        .unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].status, PlacementStatus::Delivered);
    assert!(
        store
            .settle_placements(Duration::hours(2), t0(), 10)
            .await
            .unwrap()
            .is_empty(),
        "once"
    );
    assert!(
        store
            .placements_to_refund(Duration::minutes(10), t0(), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn check_placement_refusals_and_refunds(store: &dyn Store) {
    let stale = Duration::minutes(10);
    // With approval: paid → awaiting an admin, who refuses it with a reason.
    let chat = 7101;
    let id = invoiced(store, chat, "nonce1001", 180).await;
    let row = pay(
        store,
        (chat, "ch-a", "nonce1001", 180),
        Some(id),
        Some(true),
        t0(),
    )
    .await;
    assert_eq!(row.status, PlacementStatus::AwaitingApproval);
    assert_eq!(
        store.publish_placement(id, "x", None, t0()).await.unwrap(),
        None,
        "not published before approval"
    );
    let refused = store
        .decide_placement(id, false, Some("нет контактов"), "admin", t0() + secs(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(refused.status, PlacementStatus::Refused);
    assert_eq!(refused.reason.as_deref(), Some("нет контактов"));
    assert_eq!(
        store
            .decide_placement(id, true, None, "admin", t0())
            .await
            .unwrap(),
        None,
        "decided once"
    );

    // The refund: claimed once; a failure waits before the next try.
    let now = t0() + secs(2);
    assert_eq!(
        store.placements_to_refund(stale, now, 10).await.unwrap(),
        vec![id]
    );
    let claimed = store.claim_placement_refund(id, stale, now).await.unwrap();
    assert_eq!(claimed.map(|p| p.status), Some(PlacementStatus::Refunding));
    assert!(
        store
            .claim_placement_refund(id, stale, now)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .placements_to_refund(stale, now, 10)
            .await
            .unwrap()
            .is_empty()
    );
    store.finish_placement_refund(id, false, now).await.unwrap();
    let row = store.placement(id).await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.refund_tries),
        (PlacementStatus::Refused, 1)
    );
    assert!(
        store
            .placements_to_refund(stale, now + secs(5), 10)
            .await
            .unwrap()
            .is_empty(),
        "a failed refund waits"
    );
    let later = now + secs(31);
    assert_eq!(
        store.placements_to_refund(stale, later, 10).await.unwrap(),
        vec![id]
    );
    // A claim abandoned by a dead process is taken again after `stale`.
    store
        .claim_placement_refund(id, stale, later)
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .claim_placement_refund(id, stale, later + secs(60))
            .await
            .unwrap()
            .is_none()
    );
    let retaken = later + stale + secs(1);
    assert_eq!(
        store
            .placements_to_refund(stale, retaken, 10)
            .await
            .unwrap(),
        vec![id]
    );
    store
        .claim_placement_refund(id, stale, retaken)
        .await
        .unwrap()
        .unwrap();
    store
        .finish_placement_refund(id, true, retaken)
        .await
        .unwrap();
    let row = store.placement(id).await.unwrap().unwrap();
    assert_eq!(row.status, PlacementStatus::Refunded);
    assert_eq!(row.refunded_at, Some(retaken));

    // Not a vacancy: published, classified not a job → refused, to be refunded.
    let (id2, post) = published(store, 7102, "ch-b", "реклама курса").await;
    let status = store
        .record_classification(post, &verdict(false), t0())
        .await
        .unwrap();
    assert_eq!(status, PostStatus::NotJob);
    let settled = store
        .settle_placements(Duration::hours(2), t0(), 10)
        .await
        .unwrap();
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].status, PlacementStatus::Refused);
    assert_eq!(settled[0].reason.as_deref(), Some(REASON_NOT_A_VACANCY));
    assert_eq!(
        store.placements_to_refund(stale, t0(), 10).await.unwrap(),
        vec![id2]
    );

    // A payment for a draft edited after its invoice: kept apart, refused, the draft intact.
    let chat3 = 7103;
    let id3 = invoiced(store, chat3, "nonce1003", 180).await;
    store
        .save_placement_draft(chat3, &draft("Другой текст", &["web"]), t0())
        .await
        .unwrap();
    let orphan = pay(
        store,
        (chat3, "ch-c", "nonce1003", 180),
        Some(id3),
        Some(false),
        t0(),
    )
    .await;
    assert_ne!(orphan.id, id3);
    assert_eq!(orphan.status, PlacementStatus::Refused);
    assert_eq!(orphan.reason.as_deref(), Some(REASON_CHANGED));
    assert_eq!(orphan.charge_id.as_deref(), Some("ch-c"));
    let open = store.open_placement(chat3).await.unwrap().unwrap();
    assert_eq!((open.id, open.status), (id3, PlacementStatus::Draft));
    assert_eq!(open.draft.title.as_deref(), Some("Другой текст"));

    // Cancelled drafts are gone for good.
    assert!(store.cancel_placement(chat3, t0()).await.unwrap());
    assert!(!store.cancel_placement(chat3, t0()).await.unwrap());
    assert_eq!(store.open_placement(chat3).await.unwrap(), None);
    let all = store.placements(None, 100).await.unwrap();
    assert_eq!(all.len(), 4);
    let refused = store
        .placements(Some(PlacementStatus::Refused), 100)
        .await
        .unwrap();
    assert_eq!(
        refused.iter().map(|p| p.id).collect::<Vec<_>>(),
        vec![orphan.id, id2]
    );
}

pub async fn check_placement_leftovers_are_refunded(store: &dyn Store) {
    let stale = Duration::minutes(10);
    // Paid while placements are off: kept as refused, to be refunded, never published.
    let chat = 7201;
    let id = invoiced(store, chat, "nonce2001", 100).await;
    let row = pay(
        store,
        (chat, "ch-off", "nonce2001", 100),
        Some(id),
        None,
        t0(),
    )
    .await;
    assert_eq!((row.id, row.status), (id, PlacementStatus::Refused));
    assert_eq!(row.reason.as_deref(), Some(REASON_OFF));

    // Refunded elsewhere (an admin, the user's dispute) before it went out: never published.
    let chat2 = 7202;
    let id2 = invoiced(store, chat2, "nonce2002", 100).await;
    pay(
        store,
        (chat2, "ch-x", "nonce2002", 100),
        Some(id2),
        Some(true),
        t0(),
    )
    .await;
    let refund = NewLedgerEntry {
        kind: LedgerKind::Refunded,
        ..placement_payment(chat2, "ch-x", "nonce2002", 100)
    };
    store
        .apply_refund(&refund, t0() + secs(1))
        .await
        .unwrap()
        .unwrap();
    let row = store.placement(id2).await.unwrap().unwrap();
    assert_eq!(row.status, PlacementStatus::Refunded);
    assert!(
        store
            .decide_placement(id2, true, None, "admin", t0())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        !store
            .placements_to_refund(stale, t0() + secs(2), 10)
            .await
            .unwrap()
            .contains(&id2)
    );

    // Failing refunds wait in the query, so they never crowd out one that is due.
    let now = t0() + secs(5);
    let due = store.placements_to_refund(stale, now, 1).await.unwrap();
    assert_eq!(due, vec![id]);
    store
        .claim_placement_refund(id, stale, now)
        .await
        .unwrap()
        .unwrap();
    store.finish_placement_refund(id, false, now).await.unwrap();
    let chat3 = 7203;
    let id3 = invoiced(store, chat3, "nonce2003", 100).await;
    pay(
        store,
        (chat3, "ch-late", "nonce2003", 100),
        Some(id3),
        None,
        now,
    )
    .await;
    assert_eq!(
        store
            .placements_to_refund(stale, now + secs(1), 1)
            .await
            .unwrap(),
        vec![id3],
        "the failed one waits, the new one is due"
    );

    // Published but never classified: refused after the deadline, its post taken out.
    let (id4, post) = published(store, 7204, "ch-slow", "текст").await;
    let deadline = Duration::hours(2);
    assert!(
        store
            .settle_placements(deadline, t0() + Duration::minutes(119), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let late = store
        .settle_placements(deadline, t0() + Duration::minutes(121), 10)
        .await
        .unwrap();
    assert_eq!(late.len(), 1);
    assert_eq!(
        (late[0].id, late[0].status),
        (id4, PlacementStatus::Refused)
    );
    assert_eq!(late[0].reason.as_deref(), Some(REASON_NOT_CHECKED));
    assert_eq!(
        store.post(post).await.unwrap().unwrap().status,
        PostStatus::Filtered
    );
    // A verdict arriving afterwards changes nothing: it cannot go out after its refund.
    let status = store
        .record_classification(post, &verdict(true), t0() + Duration::minutes(122))
        .await
        .unwrap();
    assert_eq!(status, PostStatus::Filtered);
}
