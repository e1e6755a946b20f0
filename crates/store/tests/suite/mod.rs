//! The store behaviour every backend must show. Each `check_*` gets a store on a fresh,
//! empty database; `tests/sqlite.rs` and `tests/postgres.rs` run every one of them.

#![allow(clippy::unwrap_used, dead_code)]

use std::collections::HashSet;
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use jobwire_core::extract::BudgetBasis;
use jobwire_core::subscriber::MinBudget;
use jobwire_core::{CategorySlug, PostKind};
use jobwire_store::*;

mod activity;
mod billing;
mod categories;
mod panel;
mod placements;
mod prompts;
mod recovery;
mod sources;
pub use activity::*;
pub use billing::*;
pub use categories::*;
pub use panel::*;
pub use placements::*;
pub use prompts::*;
pub use recovery::*;
pub use sources::*;

/// Every single-store check of the suite. Each backend's test file expands one test per
/// check with `suite::every_check!(its_macro)`, so a check added here runs on both backends.
/// A Stars payment's (or refund's) ledger entry for the plan `month`, from a bot update,
/// with no invoice nonce.
pub fn stars_entry(kind: LedgerKind, chat_id: i64, charge: &str, amount: i64) -> NewLedgerEntry {
    NewLedgerEntry {
        kind,
        charge_id: charge.to_owned(),
        provider_charge_id: None,
        chat_id,
        plan_id: Some("month".to_owned()),
        nonce: None,
        amount,
        currency: "XTR".to_owned(),
        is_recurring: false,
        is_first_recurring: false,
        subscription_expires_at: None,
        source: LedgerSource::Update,
        raw: "{}".to_owned(),
    }
}

/// Applies a `Blocked` update to the delivery `id` at `t0() + 1 s`; it must apply and mark
/// the subscriber list changed (the fan-out index reloads).
pub async fn block_delivery(store: &dyn Store, id: DeliveryId, error: &str, scope: BlockScope) {
    let version = store.subscribers_version().await.unwrap();
    let applied = store
        .apply_delivery_updates(
            &[DeliveryUpdate::Blocked {
                id,
                error: error.to_owned(),
                scope,
            }],
            t0() + secs(1),
        )
        .await
        .unwrap();
    assert_eq!(applied, [true]);
    assert!(store.subscribers_version().await.unwrap() > version);
}

macro_rules! every_check {
    ($each:ident) => {
        $each!(
            check_channel_ensure,
            check_sources_seed_only_what_the_database_lacks,
            check_sources_add_edit_remove_revive,
            check_source_stats,
            check_insert_post_dedup,
            check_record_classification,
            check_waiting_posts,
            check_fan_out,
            check_fan_out_large,
            check_claim_once,
            check_send_parts,
            check_batched_reads_and_last_parts,
            check_retry_holds_until_due,
            check_release_held_in_order,
            check_blocked_subscriber,
            check_failed,
            check_recover_interrupted,
            check_recover_respects_the_lease,
            check_source_state,
            check_edit_post,
            check_pipeline_counts,
            check_classification_accounting,
            check_subscriber_by_chat,
            check_examples,
            check_reports,
            check_take_stuck,
            check_dead_letters,
            check_status_pages,
            check_block_one_bot,
            check_bot_block_notices,
            check_invoices,
            check_apply_payment_once,
            check_payments_stack,
            check_concurrent_payment,
            check_trial_once,
            check_refunds,
            check_renewal_cancel,
            check_periods_ending_after,
            check_billing_notices,
            check_billing_counts,
            check_chat_language,
            check_sent_to_chat_since,
            check_recent_sends,
            check_card_reports,
            check_hidden_authors_and_sources,
            check_catch_up_candidates,
            check_digest_claims,
            check_broadcast_recipients,
            check_withheld_posts_stay_unsent,
            check_placement_lifecycle,
            check_placement_refusals_and_refunds,
            check_placement_leftovers_are_refunded,
            check_admin_accounts,
            check_panel_sessions_and_audit,
            check_panel_post_search_and_dashboard,
            check_panel_rewinds_work,
            check_panel_extends_and_ends_access,
            check_prompt_versions,
            check_categories,
            check_active_chats_since,
            check_reconciliation_runs,
        );
    };
}
pub(crate) use every_check;

/// A fixed "now" so every timestamp in the checks is exact.
pub fn t0() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_767_225_600_123).expect("valid timestamp")
}

fn secs(n: i64) -> Duration {
    Duration::seconds(n)
}

fn new_post(channel_id: ChannelId, external_id: &str, status: PostStatus) -> NewPost {
    NewPost {
        channel_id,
        external_id: external_id.to_owned(),
        text: format!("Rust developer wanted ({external_id})"),
        author: Some("@hr".to_owned()),
        url: Some(format!("https://t.me/jobs/{external_id}")),
        posted_at: t0() - secs(60),
        received_at: t0(),
        status,
        filter_reason: None,
        fingerprint: None,
        duplicate_of: None,
    }
}

fn verdict(is_job: bool) -> ClassificationRecord {
    ClassificationRecord {
        is_job,
        kind: if is_job { PostKind::Job } else { PostKind::Ad },
        categories: if is_job {
            vec![slug("rust"), slug("backend")]
        } else {
            Vec::new()
        },
        confidence: 0.875,
        model: "local-v1".to_owned(),
        prompt_version: Some("p3".to_owned()),
        tokens_in: 812,
        tokens_out: 41,
        latency_ms: 930,
        extraction: None,
        cost_usd: 0.0,
    }
}

fn subscriber(chat_id: i64) -> SubscriberSpec {
    SubscriberSpec {
        chat_id,
        name: Some(format!("user {chat_id}")),
        categories: vec![slug("rust")],
        include: Vec::new(),
        exclude: vec!["unpaid".to_owned()],
        paused: false,
        quiet_hours: None,
        min_budget: None,
    }
}

/// Stores a new post and returns its id.
async fn add_post(
    store: &dyn Store,
    channel: ChannelId,
    external_id: &str,
    status: PostStatus,
) -> PostId {
    inserted(
        store
            .insert_post(&new_post(channel, external_id, status))
            .await
            .unwrap(),
    )
}

fn inserted(outcome: InsertOutcome) -> PostId {
    match outcome {
        InsertOutcome::Inserted(id) => id,
        InsertOutcome::AlreadyKnown(id) => panic!("post {id} unexpectedly known already"),
    }
}

async fn channel(store: &dyn Store, handle: &str) -> ChannelId {
    store.ensure_channel(handle, t0()).await.unwrap().id
}

/// A post classified as a job, ready for fan-out.
async fn job(store: &dyn Store, external_id: &str) -> PostId {
    let channel_id = channel(store, "@jobs").await;
    let id = add_post(store, channel_id, external_id, PostStatus::Queued).await;
    let status = store
        .record_classification(id, &verdict(true), t0())
        .await
        .unwrap();
    assert_eq!(status, PostStatus::Job);
    id
}

/// Subscribers with chat ids `first..first + n`, as deliveries sent now by bot `rust_bot`.
async fn audience(store: &dyn Store, first: i64, n: i64) -> Vec<NewDelivery> {
    let mut out = Vec::new();
    for chat_id in first..first + n {
        let subscriber_id = store
            .upsert_subscriber(&subscriber(chat_id), t0())
            .await
            .unwrap();
        out.push(NewDelivery {
            subscriber_id,
            chat_id,
            bot: "rust_bot".to_owned(),
            not_before: None,
        });
    }
    out
}

/// `posts` jobs fanned out to `subscribers` subscribers each: every delivery pending.
async fn pending_grid(store: &dyn Store, posts: usize, subscribers: i64) -> Vec<DeliveryId> {
    let audience = audience(store, 1000, subscribers).await;
    let mut ids = Vec::new();
    for n in 0..posts {
        let post = job(store, &format!("grid-{n}")).await;
        ids.extend(
            store
                .fan_out(post, &["part".to_owned()], &audience, t0())
                .await
                .unwrap(),
        );
    }
    assert_eq!(ids.len(), posts * subscribers as usize);
    ids
}

async fn status_of(store: &dyn Store, id: DeliveryId) -> DeliveryStatus {
    store.delivery(id).await.unwrap().unwrap().status
}

async fn claim(store: &dyn Store, ids: &[DeliveryId]) -> Vec<bool> {
    let updates: Vec<_> = ids.iter().map(|&id| DeliveryUpdate::Claim { id }).collect();
    store.apply_delivery_updates(&updates, t0()).await.unwrap()
}

/// Claims `order` in batches of 25; returns the ids this caller won.
async fn claim_all(store: &dyn Store, order: Vec<DeliveryId>) -> Vec<DeliveryId> {
    let mut won = Vec::new();
    for batch in order.chunks(25) {
        let applied = claim(store, batch).await;
        won.extend(
            batch
                .iter()
                .zip(applied)
                .filter(|(_, ok)| *ok)
                .map(|(id, _)| *id),
        );
    }
    won
}

/// Sends `Retry` for all of `order` in one batch; returns the ids whose retry applied.
async fn retry_all(store: &dyn Store, order: Vec<DeliveryId>) -> Vec<DeliveryId> {
    let updates: Vec<_> = order
        .iter()
        .map(|&id| DeliveryUpdate::Retry {
            id,
            at: t0() + secs(60),
            error: "429".to_owned(),
            unknown_outcome: false,
        })
        .collect();
    let applied = store.apply_delivery_updates(&updates, t0()).await.unwrap();
    order
        .iter()
        .zip(applied)
        .filter(|(_, ok)| *ok)
        .map(|(id, _)| *id)
        .collect()
}

/// Releases due held deliveries 7 at a time until none is left; returns them.
async fn drain_held(store: &dyn Store, now: DateTime<Utc>) -> Vec<DeliveryId> {
    let mut got = Vec::new();
    loop {
        let batch = store.release_held_deliveries(now, 7).await.unwrap();
        if batch.is_empty() {
            return got;
        }
        got.extend(batch);
    }
}

// ---------------------------------------------------------------------------------------

pub async fn check_channel_ensure(store: &dyn Store) {
    let source = store
        .add_source(
            &SourceSpec {
                title: Some("Rust Jobs".to_owned()),
                include: vec!["rust".to_owned()],
                ..SourceSpec::telegram(&jobwire_core::channel_ref::ChannelRef::Username(
                    "rustjobs".to_owned(),
                ))
            },
            t0(),
        )
        .await
        .unwrap();
    // ensure_channel returns a known channel untouched…
    let ensured = store.ensure_channel("@rustjobs", t0()).await.unwrap();
    assert_eq!(ensured, source);
    // …and creates an unknown one enabled and without rules, as an external channel that
    // nothing reads (an import named it).
    let fresh = store.ensure_channel("@gojobs", t0()).await.unwrap();
    assert_ne!(fresh.id, source.id);
    assert_eq!(fresh.title, None);
    assert_eq!(fresh.kind, SourceKind::External);
    assert!(fresh.enabled && !fresh.is_read());
    assert!(fresh.include.is_empty() && fresh.exclude.is_empty());
    assert_eq!(store.ensure_channel("@gojobs", t0()).await.unwrap(), fresh);

    assert_eq!(store.channels().await.unwrap(), vec![source.clone(), fresh]);
    assert_eq!(store.sources().await.unwrap(), vec![source]);
}

pub async fn check_insert_post_dedup(store: &dyn Store) {
    let jobs = store
        .add_source(
            &SourceSpec {
                title: Some("Jobs".to_owned()),
                ..SourceSpec::telegram(&jobwire_core::channel_ref::ChannelRef::Username(
                    "jobs".to_owned(),
                ))
            },
            t0(),
        )
        .await
        .unwrap();
    let other = channel(store, "@other").await;
    let post = new_post(jobs.id, "42", PostStatus::Queued);
    let id = inserted(store.insert_post(&post).await.unwrap());

    let row = store.post(id).await.unwrap().expect("stored post");
    assert_eq!(row.id, id);
    assert_eq!(row.channel_id, jobs.id);
    assert_eq!(row.channel_handle, "@jobs");
    assert_eq!(row.channel_title.as_deref(), Some("Jobs"));
    assert_eq!(row.external_id, "42");
    assert_eq!(row.text, post.text);
    assert_eq!(row.author, post.author);
    assert_eq!(row.url, post.url);
    assert_eq!(row.posted_at, post.posted_at);
    assert_eq!(row.received_at, post.received_at);
    assert_eq!(row.status, PostStatus::Queued);
    assert_eq!(row.attempts, 0);

    // The same (channel, external id) again, even edited, is the same post, unchanged.
    let again = NewPost {
        text: "edited".to_owned(),
        ..post.clone()
    };
    assert_eq!(
        store.insert_post(&again).await.unwrap(),
        InsertOutcome::AlreadyKnown(id)
    );
    assert_eq!(store.post(id).await.unwrap().unwrap().text, post.text);

    // The same external id in another channel is another post.
    let elsewhere = add_post(store, other, "42", PostStatus::Filtered).await;
    assert_ne!(elsewhere, id);
    assert_eq!(
        store.post(elsewhere).await.unwrap().unwrap().status,
        PostStatus::Filtered
    );
    assert_eq!(
        store.post(PostId(elsewhere.get() + 1000)).await.unwrap(),
        None
    );
    assert_eq!(
        store.posts_in_status(PostStatus::Queued, 10).await.unwrap(),
        [id]
    );
}

pub async fn check_record_classification(store: &dyn Store) {
    let ch = channel(store, "@jobs").await;
    let queued = add_post(store, ch, "1", PostStatus::Queued).await;
    let ad = add_post(store, ch, "2", PostStatus::Queued).await;
    let filtered = add_post(store, ch, "3", PostStatus::Filtered).await;

    assert_eq!(
        store
            .record_classification(queued, &verdict(true), t0())
            .await
            .unwrap(),
        PostStatus::Job
    );
    assert_eq!(
        store.post(queued).await.unwrap().unwrap().status,
        PostStatus::Job
    );
    assert_eq!(
        store.classification(queued).await.unwrap(),
        Some(verdict(true))
    );

    assert_eq!(
        store
            .record_classification(ad, &verdict(false), t0())
            .await
            .unwrap(),
        PostStatus::NotJob
    );
    assert_eq!(
        store.post(ad).await.unwrap().unwrap().status,
        PostStatus::NotJob
    );
    assert_eq!(
        store.classification(ad).await.unwrap(),
        Some(verdict(false))
    );

    // Only queued or waiting posts move: a filtered post stays filtered…
    store
        .record_classification(filtered, &verdict(true), t0())
        .await
        .unwrap();
    assert_eq!(
        store.post(filtered).await.unwrap().unwrap().status,
        PostStatus::Filtered
    );
    // …and a redelivered verdict does not pull a fanned-out job back to `job`.
    store
        .fan_out(queued, &["x".to_owned()], &[], t0())
        .await
        .unwrap();
    store
        .record_classification(queued, &verdict(true), t0())
        .await
        .unwrap();
    assert_eq!(
        store.post(queued).await.unwrap().unwrap().status,
        PostStatus::FannedOut
    );
    // …nor does a late "not a job" verdict turn a fanned-out job into `not_job`.
    store
        .record_classification(queued, &verdict(false), t0())
        .await
        .unwrap();
    assert_eq!(
        store.post(queued).await.unwrap().unwrap().status,
        PostStatus::FannedOut
    );

    // A waiting post is classified like a queued one.
    let waiting = add_post(store, ch, "4", PostStatus::Queued).await;
    store
        .mark_post_waiting(waiting, "llm down", t0() + secs(30), t0())
        .await
        .unwrap();
    store
        .record_classification(waiting, &verdict(true), t0())
        .await
        .unwrap();
    let row = store.post(waiting).await.unwrap().unwrap();
    assert_eq!(row.status, PostStatus::Job);
    // It does not come back from the waiting room later.
    assert!(
        store
            .release_waiting_posts(t0() + secs(60), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .classification(PostId(filtered.get() + 1000))
            .await
            .unwrap(),
        None
    );
}

pub async fn check_waiting_posts(store: &dyn Store) {
    let ch = channel(store, "@jobs").await;
    let late = add_post(store, ch, "late", PostStatus::Queued).await;
    let early = add_post(store, ch, "early", PostStatus::Queued).await;
    store
        .mark_post_waiting(late, "timeout", t0() + secs(60), t0())
        .await
        .unwrap();
    store
        .mark_post_waiting(early, "429", t0() + secs(10), t0())
        .await
        .unwrap();
    store
        .mark_post_waiting(early, "429 again", t0() + secs(20), t0() + secs(1))
        .await
        .unwrap();
    let row = store.post(early).await.unwrap().unwrap();
    assert_eq!(row.status, PostStatus::Waiting);
    assert_eq!(row.attempts, 2);
    assert_eq!(
        store
            .posts_in_status(PostStatus::Waiting, 10)
            .await
            .unwrap(),
        [late, early]
    );

    // A job already classified is not sent back to wait.
    let done = job(store, "done").await;
    store
        .mark_post_waiting(done, "late error", t0() + secs(5), t0())
        .await
        .unwrap();
    assert_eq!(
        store.post(done).await.unwrap().unwrap().status,
        PostStatus::Job
    );

    // Nothing is due before its retry time (the second mark moved `early` to +20 s).
    assert!(
        store
            .release_waiting_posts(t0() + secs(19), 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Due posts come back oldest retry first, `limit` at a time.
    assert_eq!(
        store
            .release_waiting_posts(t0() + secs(60), 1)
            .await
            .unwrap(),
        [early]
    );
    assert_eq!(
        store.post(early).await.unwrap().unwrap().status,
        PostStatus::Queued
    );
    assert_eq!(
        store
            .release_waiting_posts(t0() + secs(60), 10)
            .await
            .unwrap(),
        [late]
    );
    assert!(
        store
            .release_waiting_posts(t0() + secs(600), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.posts_in_status(PostStatus::Queued, 10).await.unwrap(),
        [late, early]
    );
}

/// An audience larger than one insert statement takes (two full SQLite statements and part
/// of a third): every subscriber gets exactly one delivery, the held ones are not among the
/// ready, and a redelivered job adds nothing.
pub async fn check_fan_out_large(store: &dyn Store) {
    let post = job(store, "fan-large").await;
    let n = 2 * jobwire_store::SQLITE_FAN_OUT_ROWS as i64 + 404;
    let mut subs = audience(store, 50_000, n).await;
    for (i, d) in subs.iter_mut().enumerate() {
        if i % 7 == 3 {
            d.not_before = Some(t0() + secs(600));
        }
    }
    let held = subs.iter().filter(|d| d.not_before.is_some()).count();
    let ready = store
        .fan_out(post, &["x".to_owned()], &subs, t0())
        .await
        .unwrap();
    assert_eq!(ready.len(), subs.len() - held);
    assert!(
        ready.windows(2).all(|w| w[0] < w[1]),
        "ids are sorted and distinct"
    );
    let all = store.deliveries_of_post(post).await.unwrap();
    assert_eq!(all.len(), subs.len());
    assert_eq!(
        all.iter()
            .filter(|d| d.status == DeliveryStatus::Held)
            .count(),
        held
    );
    let mut pending: Vec<DeliveryId> = all
        .iter()
        .filter(|d| d.status == DeliveryStatus::Pending)
        .map(|d| d.id)
        .collect();
    pending.sort_unstable();
    assert_eq!(ready, pending, "the ready ids are exactly the pending rows");
    let last = store
        .delivery(*ready.last().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(last.chat_id, 50_000 + n - 1);
    assert_eq!(last.bot, "rust_bot");
    assert!(
        store
            .fan_out(post, &["x".to_owned()], &subs, t0())
            .await
            .unwrap()
            .is_empty()
    );
    // A redelivery with subscribers added since, in the last statement: only they are new.
    subs.extend(audience(store, 60_000, 3).await);
    let added = store
        .fan_out(post, &["x".to_owned()], &subs, t0())
        .await
        .unwrap();
    assert_eq!(added.len(), 3);
    assert!(added.iter().all(|id| !ready.contains(id)));
}

pub async fn check_fan_out(store: &dyn Store) {
    let post = job(store, "fan").await;
    let mut subs = audience(store, 100, 4).await;
    subs[1].not_before = Some(t0() + secs(3600)); // quiet hours: held
    subs[2].not_before = Some(t0() - secs(1)); // quiet hours already over: pending
    subs[3].bot = "backend_bot".to_owned();
    let parts = vec![
        "<b>Rust</b> dev".to_owned(),
        "part two &amp; more".to_owned(),
    ];

    let ready = store.fan_out(post, &parts, &subs[..3], t0()).await.unwrap();
    assert_eq!(ready.len(), 2, "the held delivery is not ready");
    assert_eq!(
        store.post(post).await.unwrap().unwrap().status,
        PostStatus::FannedOut
    );
    assert_eq!(store.job_render(post).await.unwrap(), Some(parts.clone()));
    assert_eq!(
        store.job_render(PostId(post.get() + 1000)).await.unwrap(),
        None
    );

    let first = store.delivery(ready[0]).await.unwrap().unwrap();
    assert_eq!(
        first,
        DeliveryRow {
            id: ready[0],
            post_id: post,
            subscriber_id: subs[0].subscriber_id,
            chat_id: 100,
            bot: "rust_bot".to_owned(),
            status: DeliveryStatus::Pending,
            not_before: None,
            parts_sent: 0,
            message_ids: Vec::new(),
            attempts: 0,
            error: None,
            lang: None,
        }
    );
    // The reader's language comes with the delivery once a bot noted it.
    store
        .set_chat_language(100, "en", Utc::now())
        .await
        .unwrap();
    assert_eq!(
        store
            .delivery(ready[0])
            .await
            .unwrap()
            .unwrap()
            .lang
            .as_deref(),
        Some("en")
    );
    let all = store.deliveries_of_post(post).await.unwrap();
    assert_eq!(all.len(), 3, "the held one too");
    assert_eq!(
        all.iter()
            .filter(|d| d.status == DeliveryStatus::Held)
            .count(),
        1
    );
    let second = store.delivery(ready[1]).await.unwrap().unwrap();
    assert_eq!(second.subscriber_id, subs[2].subscriber_id);
    assert_eq!(second.status, DeliveryStatus::Pending);
    assert_eq!(second.not_before, Some(t0() - secs(1)));
    let held = store
        .deliveries_in_status(DeliveryStatus::Held, 10)
        .await
        .unwrap();
    assert_eq!(held.len(), 1);
    let held_row = store.delivery(held[0]).await.unwrap().unwrap();
    assert_eq!(held_row.subscriber_id, subs[1].subscriber_id);
    assert_eq!(held_row.not_before, Some(t0() + secs(3600)));

    // Fanning out again (a redelivered message) inserts nothing twice and returns no ids;
    // only the subscriber added since is new.
    assert!(
        store
            .fan_out(post, &parts, &subs[..3], t0())
            .await
            .unwrap()
            .is_empty()
    );
    let added = store.fan_out(post, &parts, &subs, t0()).await.unwrap();
    assert_eq!(added.len(), 1);
    let added_row = store.delivery(added[0]).await.unwrap().unwrap();
    assert_eq!(added_row.bot, "backend_bot");
    assert_eq!(added_row.chat_id, 103);

    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_pending, 3);
    assert_eq!(counts.deliveries_held, 1);
    assert_eq!(
        store
            .deliveries_in_status(DeliveryStatus::Pending, 10)
            .await
            .unwrap(),
        [ready[0], ready[1], added[0]]
    );
}

pub async fn check_claim_once(store: &dyn Store) {
    let ids = pending_grid(store, 1, 3).await;
    assert_eq!(claim(store, &ids[..1]).await, [true]);
    assert_eq!(
        claim(store, &ids[..1]).await,
        [false],
        "a claimed delivery is claimed once"
    );
    // Twice in one batch: only the first applies.
    assert_eq!(
        claim(store, &[ids[1], ids[1], ids[2]]).await,
        [true, false, true]
    );
    for &id in &ids {
        let row = store.delivery(id).await.unwrap().unwrap();
        assert_eq!(row.status, DeliveryStatus::Sending);
        assert_eq!(row.attempts, 1);
    }
    // An unknown delivery applies nothing.
    assert_eq!(
        claim(store, &[DeliveryId(ids[2].get() + 1000)]).await,
        [false]
    );
    assert!(
        store
            .apply_delivery_updates(&[], t0())
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn check_send_parts(store: &dyn Store) {
    let ids = pending_grid(store, 1, 2).await;
    let (a, b) = (ids[0], ids[1]);
    // Parts and `sent` only apply to a claimed delivery.
    let refused = store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::PartSent {
                    id: b,
                    message_id: 7,
                },
                DeliveryUpdate::Sent { id: b },
            ],
            t0(),
        )
        .await
        .unwrap();
    assert_eq!(refused, [false, false]);

    let applied = store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::Claim { id: a },
                DeliveryUpdate::PartSent {
                    id: a,
                    message_id: 501,
                },
                DeliveryUpdate::PartSent {
                    id: a,
                    message_id: 502,
                },
                DeliveryUpdate::Sent { id: a },
            ],
            t0() + secs(1),
        )
        .await
        .unwrap();
    assert_eq!(applied, [true, true, true, true]);
    let row = store.delivery(a).await.unwrap().unwrap();
    assert_eq!(row.status, DeliveryStatus::Sent);
    assert_eq!(row.parts_sent, 2);
    assert_eq!(row.message_ids, [501, 502]);
    assert_eq!(row.attempts, 1);
    assert_eq!(row.error, None);
    // A sent delivery stays sent.
    let late = store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::PartSent {
                    id: a,
                    message_id: 503,
                },
                DeliveryUpdate::Failed {
                    id: a,
                    error: "late".to_owned(),
                },
                DeliveryUpdate::Sent { id: a },
            ],
            t0() + secs(2),
        )
        .await
        .unwrap();
    assert_eq!(late, [false, false, false]);
    assert_eq!(
        store.delivery(a).await.unwrap().unwrap().message_ids,
        [501, 502]
    );

    let post_id = store.delivery(a).await.unwrap().unwrap().post_id;
    // A reply to either part leads back to the post; another bot's or chat's message does not.
    for part in [501, 502] {
        assert_eq!(
            store.post_of_message("rust_bot", 1000, part).await.unwrap(),
            Some(post_id)
        );
    }
    assert_eq!(
        store.post_of_message("rust_bot", 1000, 7).await.unwrap(),
        None
    );
    assert_eq!(
        store.post_of_message("other_bot", 1000, 501).await.unwrap(),
        None
    );
    assert_eq!(
        store.post_of_message("rust_bot", 1001, 501).await.unwrap(),
        None
    );
    assert_eq!(
        store.sent_deliveries().await.unwrap(),
        [SentDelivery {
            post_id,
            subscriber_id: row.subscriber_id,
            chat_id: 1000,
            bot: "rust_bot".to_owned(),
            message_ids: vec![501, 502],
        }]
    );
    assert_eq!(status_of(store, b).await, DeliveryStatus::Pending);
}

/// What the send stage does under load: the rows of many deliveries read in one call (with
/// the chat's language), claims and last parts of a batch written together, each applying
/// only where it should (a last part only to a claimed delivery, once).
pub async fn check_batched_reads_and_last_parts(store: &dyn Store) {
    let ids = pending_grid(store, 2, 3).await;
    assert!(store.set_chat_language(1000, "en", t0()).await.unwrap());
    let missing = DeliveryId(ids.iter().map(|id| id.get()).max().unwrap() + 100);
    let mut asked = ids.clone();
    asked.push(missing);
    let mut rows = store.deliveries(&asked).await.unwrap();
    rows.sort_by_key(|r| r.id);
    assert_eq!(rows.len(), ids.len(), "the missing id is left out");
    for (row, id) in rows.iter().zip(&ids) {
        assert_eq!(&store.delivery(*id).await.unwrap().unwrap(), row);
    }
    assert!(rows.iter().any(|r| r.lang.as_deref() == Some("en")));
    assert!(store.deliveries(&[]).await.unwrap().is_empty());

    let (claimed, unclaimed) = ids.split_at(4);
    let mut updates: Vec<DeliveryUpdate> = claimed
        .iter()
        .map(|&id| DeliveryUpdate::Claim { id })
        .collect();
    updates.extend(
        ids.iter()
            .enumerate()
            .map(|(i, &id)| DeliveryUpdate::LastPartSent {
                id,
                message_id: 900 + i as i64,
            }),
    );
    let applied = store.apply_delivery_updates(&updates, t0()).await.unwrap();
    let expected: Vec<bool> = claimed
        .iter()
        .map(|_| true)
        .chain(ids.iter().map(|id| claimed.contains(id)))
        .collect();
    assert_eq!(applied, expected);
    for (i, &id) in ids.iter().enumerate() {
        let row = store.delivery(id).await.unwrap().unwrap();
        if claimed.contains(&id) {
            assert_eq!(row.status, DeliveryStatus::Sent);
            assert_eq!(row.parts_sent, 1);
            assert_eq!(row.message_ids, [900 + i as i64]);
        } else {
            assert_eq!(row.status, DeliveryStatus::Pending);
            assert!(row.message_ids.is_empty());
        }
    }
    // Once sent, a repeated last part changes nothing.
    let again = [DeliveryUpdate::LastPartSent {
        id: claimed[0],
        message_id: 999,
    }];
    assert_eq!(
        store.apply_delivery_updates(&again, t0()).await.unwrap(),
        [false]
    );
    assert_eq!(
        store
            .delivery(claimed[0])
            .await
            .unwrap()
            .unwrap()
            .message_ids,
        [900]
    );
    assert_eq!(unclaimed.len(), 2);
}

pub async fn check_retry_holds_until_due(store: &dyn Store) {
    let ids = pending_grid(store, 1, 2).await;
    let (a, b) = (ids[0], ids[1]);
    let applied = store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::Claim { id: a },
                DeliveryUpdate::Retry {
                    id: a,
                    at: t0() + secs(30),
                    error: "429 retry_after=30".to_owned(),
                    unknown_outcome: false,
                },
                DeliveryUpdate::Retry {
                    id: b,
                    at: t0() + secs(10),
                    error: "network".to_owned(),
                    unknown_outcome: true,
                },
            ],
            t0(),
        )
        .await
        .unwrap();
    assert_eq!(applied, [true, true, true]);
    // Only the network error may have reached Telegram: its next attempt may be a duplicate.
    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_resent_after_crash, 1, "{counts:?}");
    let row = store.delivery(a).await.unwrap().unwrap();
    assert_eq!(row.status, DeliveryStatus::Held);
    assert_eq!(row.not_before, Some(t0() + secs(30)));
    assert_eq!(row.error.as_deref(), Some("429 retry_after=30"));
    assert_eq!(row.attempts, 1);
    // A held delivery cannot be claimed.
    assert_eq!(claim(store, &[a]).await, [false]);

    assert!(
        store
            .release_held_deliveries(t0() + secs(9), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .release_held_deliveries(t0() + secs(10), 10)
            .await
            .unwrap(),
        [b]
    );
    assert_eq!(
        store
            .release_held_deliveries(t0() + secs(60), 10)
            .await
            .unwrap(),
        [a]
    );
    assert!(
        store
            .release_held_deliveries(t0() + secs(60), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(status_of(store, a).await, DeliveryStatus::Pending);
    assert_eq!(claim(store, &[a]).await, [true]);
    assert_eq!(store.delivery(a).await.unwrap().unwrap().attempts, 2);
}

pub async fn check_release_held_in_order(store: &dyn Store) {
    let post = job(store, "quiet").await;
    let mut subs = audience(store, 200, 5).await;
    for (n, d) in subs.iter_mut().enumerate() {
        // Due at +50 s, +40 s, … +10 s.
        d.not_before = Some(t0() + secs(50 - 10 * n as i64));
    }
    assert!(
        store
            .fan_out(post, &["x".to_owned()], &subs, t0())
            .await
            .unwrap()
            .is_empty()
    );
    let held = store
        .deliveries_in_status(DeliveryStatus::Held, 10)
        .await
        .unwrap();
    assert_eq!(held.len(), 5);

    // At +35 s three are due; with limit 2 the two due first come out.
    let mut first = store
        .release_held_deliveries(t0() + secs(35), 2)
        .await
        .unwrap();
    first.sort_unstable();
    assert_eq!(first, [held[3], held[4]]);
    let second = store
        .release_held_deliveries(t0() + secs(35), 2)
        .await
        .unwrap();
    assert_eq!(second, [held[2]]);
    assert_eq!(store.pipeline_counts().await.unwrap().deliveries_held, 2);
    assert_eq!(store.pipeline_counts().await.unwrap().deliveries_pending, 3);
}

pub async fn check_blocked_subscriber(store: &dyn Store) {
    // Subscriber 1000 has one delivery of each of three jobs; 1001 too.
    let ids = pending_grid(store, 3, 2).await;
    let mine: Vec<_> = ids.iter().step_by(2).copied().collect();
    let theirs: Vec<_> = ids.iter().skip(1).step_by(2).copied().collect();
    let blocked_sub = store
        .delivery(mine[0])
        .await
        .unwrap()
        .unwrap()
        .subscriber_id;
    let sent_one = theirs[0];
    store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::Claim { id: mine[0] },
                DeliveryUpdate::Retry {
                    id: mine[2],
                    at: t0() + secs(99),
                    error: "429".to_owned(),
                    unknown_outcome: false,
                },
                DeliveryUpdate::Claim { id: sent_one },
                DeliveryUpdate::PartSent {
                    id: sent_one,
                    message_id: 9,
                },
                DeliveryUpdate::Sent { id: sent_one },
            ],
            t0(),
        )
        .await
        .unwrap();

    // The subscriber is blocked and the fan-out stage is told to rebuild its index…
    block_delivery(
        store,
        mine[0],
        "403: bot was blocked",
        BlockScope::Everywhere,
    )
    .await;
    let subs = store.subscribers().await.unwrap();
    for s in &subs {
        assert_eq!(s.blocked, s.id == blocked_sub, "subscriber {}", s.chat_id);
    }
    // …and their sending, pending and held deliveries are all blocked.
    for &id in &mine {
        let row = store.delivery(id).await.unwrap().unwrap();
        assert_eq!(row.status, DeliveryStatus::Blocked, "delivery {id}");
        assert_eq!(row.error.as_deref(), Some("403: bot was blocked"));
    }
    // Nobody else's.
    assert_eq!(status_of(store, theirs[0]).await, DeliveryStatus::Sent);
    assert_eq!(status_of(store, theirs[1]).await, DeliveryStatus::Pending);
    assert_eq!(status_of(store, theirs[2]).await, DeliveryStatus::Pending);
    assert_eq!(claim(store, &[mine[1]]).await, [false]);

    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_blocked, 3);
    assert_eq!(counts.deliveries_sent, 1);
    assert_eq!(counts.deliveries_pending, 2);
    assert_eq!(counts.deliveries_held, 0);

    // A subscriber change (the user unblocks and re-subscribes) bumps the version again.
    let v = store.subscribers_version().await.unwrap();
    store
        .upsert_subscriber(&subscriber(77), t0())
        .await
        .unwrap();
    assert!(store.subscribers_version().await.unwrap() > v);
}

pub async fn check_failed(store: &dyn Store) {
    let ids = pending_grid(store, 1, 3).await;
    store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::Claim { id: ids[0] },
                DeliveryUpdate::Retry {
                    id: ids[2],
                    at: t0() + secs(5),
                    error: "net".to_owned(),
                    unknown_outcome: false,
                },
            ],
            t0(),
        )
        .await
        .unwrap();
    let applied = store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::Failed {
                    id: ids[0],
                    error: "400: can't parse entities".to_owned(),
                },
                DeliveryUpdate::Failed {
                    id: ids[1],
                    error: "retries exhausted".to_owned(),
                },
                DeliveryUpdate::Failed {
                    id: ids[2],
                    error: "retries exhausted".to_owned(),
                },
                DeliveryUpdate::Failed {
                    id: ids[0],
                    error: "again".to_owned(),
                },
            ],
            t0(),
        )
        .await
        .unwrap();
    assert_eq!(applied, [true, true, true, false], "failed is final");
    let row = store.delivery(ids[0]).await.unwrap().unwrap();
    assert_eq!(row.status, DeliveryStatus::Failed);
    assert_eq!(row.error.as_deref(), Some("400: can't parse entities"));
    // Failed is final: nothing claims, sends or releases it.
    assert_eq!(claim(store, &ids).await, [false, false, false]);
    assert!(
        store
            .release_held_deliveries(t0() + secs(60), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.pipeline_counts().await.unwrap().deliveries_failed, 3);
}

/// With several senders, only sends older than the lease are taken over: a live sender's
/// claim (made at `t0`) is left alone until `stale_before` passes it.
pub async fn check_recover_respects_the_lease(store: &dyn Store) {
    let ids = pending_grid(store, 1, 2).await;
    assert_eq!(claim(store, &ids).await, [true, true]);
    let too_early = store
        .recover_interrupted_deliveries(t0(), t0() + secs(30))
        .await
        .unwrap();
    assert!(
        too_early.is_empty(),
        "claims made at t0 are not stale before t0"
    );
    assert_eq!(status_of(store, ids[0]).await, DeliveryStatus::Sending);
    let mut late = store
        .recover_interrupted_deliveries(t0() + secs(1), t0() + secs(61))
        .await
        .unwrap();
    late.sort_unstable();
    assert_eq!(late, ids);
}

pub async fn check_recover_interrupted(store: &dyn Store) {
    let ids = pending_grid(store, 1, 3).await;
    assert_eq!(claim(store, &ids[..2]).await, [true, true]);
    // Crash here: two calls were in flight.
    let mut recovered = store
        .recover_interrupted_deliveries(t0() + secs(5), t0() + secs(5))
        .await
        .unwrap();
    recovered.sort_unstable();
    assert_eq!(recovered, ids[..2]);
    for &id in &ids {
        assert_eq!(status_of(store, id).await, DeliveryStatus::Pending);
    }
    assert!(
        store
            .recover_interrupted_deliveries(t0() + secs(6), t0() + secs(6))
            .await
            .unwrap()
            .is_empty()
    );
    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_pending, 3);
    assert_eq!(counts.deliveries_sending, 0);
    assert_eq!(counts.deliveries_resent_after_crash, 2);
    // They are claimed and sent again like any pending delivery.
    assert_eq!(claim(store, &ids).await, [true, true, true]);
    assert_eq!(store.delivery(ids[0]).await.unwrap().unwrap().attempts, 2);
    // Once sent, they still count as resent after a crash.
    let sent: Vec<_> = ids.iter().map(|&id| DeliveryUpdate::Sent { id }).collect();
    assert_eq!(
        store.apply_delivery_updates(&sent, t0()).await.unwrap(),
        [true, true, true]
    );
    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(counts.deliveries_sent, 3);
    assert_eq!(counts.deliveries_resent_after_crash, 2);
}

pub async fn check_pipeline_counts(store: &dyn Store) {
    assert_eq!(
        store.pipeline_counts().await.unwrap(),
        PipelineCounts::default()
    );
    assert!(store.pipeline_counts().await.unwrap().is_settled());

    let ch = channel(store, "@mix").await;
    store
        .insert_post(&new_post(ch, "f", PostStatus::Filtered))
        .await
        .unwrap();
    store
        .insert_post(&new_post(ch, "q", PostStatus::Queued))
        .await
        .unwrap();
    let w = add_post(store, ch, "w", PostStatus::Queued).await;
    store
        .mark_post_waiting(w, "down", t0() + secs(9), t0())
        .await
        .unwrap();
    let n = add_post(store, ch, "n", PostStatus::Queued).await;
    store
        .record_classification(n, &verdict(false), t0())
        .await
        .unwrap();
    let _awaiting = job(store, "j1").await;
    let fanned = job(store, "j2").await;
    let subs = audience(store, 300, 5).await;
    let ids = store
        .fan_out(fanned, &["x".to_owned()], &subs, t0())
        .await
        .unwrap();
    store
        .apply_delivery_updates(
            &[
                DeliveryUpdate::Claim { id: ids[0] },
                DeliveryUpdate::Sent { id: ids[0] },
                DeliveryUpdate::Claim { id: ids[1] },
                DeliveryUpdate::Retry {
                    id: ids[2],
                    at: t0() + secs(9),
                    error: "429".to_owned(),
                    unknown_outcome: false,
                },
                DeliveryUpdate::Failed {
                    id: ids[3],
                    error: "400".to_owned(),
                },
            ],
            t0(),
        )
        .await
        .unwrap();

    let counts = store.pipeline_counts().await.unwrap();
    assert_eq!(
        counts,
        PipelineCounts {
            posts: 6,
            filtered: 1,
            queued: 1,
            waiting: 1,
            not_job: 1,
            duplicates: 0,
            jobs: 2,
            resumes: 0,
            awaiting_fanout: 1,
            deliveries_pending: 1,
            deliveries_held: 1,
            deliveries_sending: 1,
            deliveries_sent: 1,
            deliveries_blocked: 0,
            deliveries_failed: 1,
            deliveries_withheld: 0,
            deliveries_resent_after_crash: 0,
        }
    );
    assert!(!counts.is_settled());
}

/// Two senders (`a` and `b`, possibly two processes) claim the same 200 deliveries at
/// once, in opposite orders and batches: each delivery is claimed exactly once.
pub async fn check_concurrent_claims(a: &dyn Store, b: &dyn Store) {
    let ids = pending_grid(a, 4, 50).await;
    let reversed: Vec<_> = ids.iter().rev().copied().collect();
    let (won_a, won_b) = tokio::join!(claim_all(a, ids.clone()), claim_all(b, reversed));
    let mut all: Vec<_> = won_a.iter().chain(&won_b).copied().collect();
    all.sort_unstable();
    let mut expected = ids.clone();
    expected.sort_unstable();
    assert_eq!(
        all,
        expected,
        "every delivery claimed exactly once (a won {}, b won {})",
        won_a.len(),
        won_b.len()
    );
    assert_eq!(a.pipeline_counts().await.unwrap().deliveries_sending, 200);
    for &id in ids.iter().step_by(37) {
        assert_eq!(a.delivery(id).await.unwrap().unwrap().attempts, 1);
    }
}

/// Two senders give up on the same 200 deliveries at once, one update per row, in opposite
/// orders (the pattern that deadlocks when rows are locked in the order given): no call
/// fails and each delivery is held exactly once.
pub async fn check_concurrent_row_updates(a: &dyn Store, b: &dyn Store) {
    let ids = pending_grid(a, 4, 50).await;
    let reversed: Vec<_> = ids.iter().rev().copied().collect();
    let (won_a, won_b) = tokio::join!(retry_all(a, ids.clone()), retry_all(b, reversed));
    let mut all: Vec<_> = won_a.iter().chain(&won_b).copied().collect();
    all.sort_unstable();
    assert_eq!(all, ids, "every delivery held exactly once");
    assert_eq!(a.pipeline_counts().await.unwrap().deliveries_held, 200);
}

/// Two dispatchers release the same 300 due held deliveries at once, a few at a time:
/// no id is returned twice and none is lost.
pub async fn check_concurrent_release_held(a: &dyn Store, b: &dyn Store) {
    let mut subs = audience(a, 5000, 100).await;
    for d in &mut subs {
        d.not_before = Some(t0() + secs(1));
    }
    for n in 0..3 {
        let post = job(a, &format!("held-{n}")).await;
        a.fan_out(post, &["x".to_owned()], &subs, t0())
            .await
            .unwrap();
    }
    let held = a
        .deliveries_in_status(DeliveryStatus::Held, 1000)
        .await
        .unwrap();
    assert_eq!(held.len(), 300);
    let (got_a, got_b) = tokio::join!(drain_held(a, t0() + secs(2)), drain_held(b, t0() + secs(2)));
    let mut all: Vec<_> = got_a.iter().chain(&got_b).copied().collect();
    let unique: HashSet<_> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "an id was released twice");
    all.sort_unstable();
    assert_eq!(all, held);
    assert_eq!(a.pipeline_counts().await.unwrap().deliveries_pending, 300);
}

/// Claims `batches` batches of 256 deliveries one batch per call and prints the rate.
pub async fn measure_claim_batches(store: &dyn Store, backend: &str) {
    const BATCH: usize = 256;
    let batches = 40;
    let ids = pending_grid(store, batches, BATCH as i64).await;
    let started = Instant::now();
    for batch in ids.chunks(BATCH) {
        let applied = claim(store, batch).await;
        assert!(applied.iter().all(|ok| *ok));
    }
    let elapsed = started.elapsed();
    let rate = ids.len() as f64 / elapsed.as_secs_f64();
    println!(
        "{backend}: apply_delivery_updates, {} batches of {BATCH} claims: {:.1} ms per batch, {rate:.0} rows/s",
        batches,
        elapsed.as_secs_f64() * 1000.0 / batches as f64,
    );
    assert_eq!(
        store.pipeline_counts().await.unwrap().deliveries_sending,
        ids.len() as u64
    );
}

/// Source state: put, overwrite, get, list by namespace.
/// Admin accounts: one per username; the hash is replaced in place; `Debug` hides it.
pub async fn check_admin_accounts(store: &dyn Store) {
    assert_eq!(store.admin_by_username("alice").await.unwrap(), None);
    let id = store
        .create_admin(
            "alice",
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
            AdminRole::Admin,
            t0(),
        )
        .await
        .unwrap()
        .expect("a new account");
    assert_eq!(
        store
            .create_admin(
                "alice",
                "$argon2id$other",
                AdminRole::Moderator,
                t0() + secs(1)
            )
            .await
            .unwrap(),
        None,
        "a taken username is refused"
    );
    let a = store.admin_by_username("alice").await.unwrap().unwrap();
    assert_eq!(
        (
            a.id,
            a.username.as_str(),
            a.role,
            a.created_at,
            a.updated_at
        ),
        (id, "alice", AdminRole::Admin, t0(), t0()),
        "a taken username keeps its role too"
    );
    assert_eq!(
        a.password_hash,
        "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"
    );
    assert!(!format!("{a:?}").contains("argon2id"), "{a:?}");
    assert_eq!(store.admin_by_username("Alice").await.unwrap(), None);
    assert!(
        store
            .set_admin_password("alice", "$argon2id$new", t0() + secs(5))
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_admin_password("bob", "$argon2id$new", t0())
            .await
            .unwrap()
    );
    let a = store.admin_by_username("alice").await.unwrap().unwrap();
    assert_eq!(
        (a.password_hash.as_str(), a.created_at, a.updated_at),
        ("$argon2id$new", t0(), t0() + secs(5))
    );
    assert_eq!(a.disabled_at, None);

    // A new password ends the account's sessions, and only its own.
    let bob = store
        .create_admin("bob", "$argon2id$bob", AdminRole::Moderator, t0())
        .await
        .unwrap()
        .unwrap();
    let session = |hash: &'static str, admin_id: AdminId| NewSession {
        token_hash: hash,
        admin_id,
        csrf: "c",
        client: "192.0.2.1",
        expires_at: t0() + secs(3600),
    };
    for (hash, admin) in [("a1", id), ("a2", id), ("b1", bob)] {
        store
            .create_session(&session(hash, admin), t0())
            .await
            .unwrap();
    }
    let listed: Vec<_> = store
        .admins(t0())
        .await
        .unwrap()
        .into_iter()
        .map(|a| (a.username, a.role, a.sessions, a.disabled_at))
        .collect();
    assert_eq!(
        listed,
        [
            ("alice".to_owned(), AdminRole::Admin, 2, None),
            ("bob".to_owned(), AdminRole::Moderator, 1, None)
        ]
    );
    // A session carries its account's role.
    assert_eq!(
        store.session("b1", t0()).await.unwrap().map(|s| s.role),
        Some(AdminRole::Moderator)
    );
    assert_eq!(
        store.session("a1", t0()).await.unwrap().map(|s| s.role),
        Some(AdminRole::Admin)
    );
    assert!(
        store
            .set_admin_password("alice", "$argon2id$newer", t0() + secs(6))
            .await
            .unwrap()
    );
    assert!(store.session("a1", t0()).await.unwrap().is_none());
    assert!(store.session("a2", t0()).await.unwrap().is_none());
    assert!(store.session("b1", t0()).await.unwrap().is_some());

    // Disabling ends the sessions too, and a disabled account's session is never live.
    store
        .create_session(&session("a3", id), t0())
        .await
        .unwrap();
    assert!(store.disable_admin("bob", t0() + secs(7)).await.unwrap());
    assert!(store.disable_admin("bob", t0() + secs(8)).await.unwrap());
    assert!(!store.disable_admin("carol", t0()).await.unwrap());
    assert!(store.session("b1", t0()).await.unwrap().is_none());
    assert!(store.session("a3", t0()).await.unwrap().is_some());
    store
        .create_session(&session("b2", bob), t0() + secs(9))
        .await
        .unwrap();
    assert!(
        store.session("b2", t0() + secs(9)).await.unwrap().is_none(),
        "a disabled admin has no live session"
    );
    let b = store.admin_by_username("bob").await.unwrap().unwrap();
    assert_eq!(
        b.disabled_at,
        Some(t0() + secs(7)),
        "the first time is kept"
    );
    let listed: Vec<_> = store
        .admins(t0() + secs(9))
        .await
        .unwrap()
        .into_iter()
        .map(|a| (a.username, a.disabled_at.is_some()))
        .collect();
    assert_eq!(
        listed,
        [("alice".to_owned(), false), ("bob".to_owned(), true)]
    );
}

pub async fn check_source_state(store: &dyn Store) {
    assert_eq!(store.state_get("tg.cursor", "@a").await.unwrap(), None);
    store
        .state_put("tg.cursor", "@a", "10", t0())
        .await
        .unwrap();
    store.state_put("tg.cursor", "@b", "7", t0()).await.unwrap();
    store
        .state_put("tg.cursor", "@a", "12", t0() + secs(1))
        .await
        .unwrap();
    store.state_put("feed", "@a", "{}", t0()).await.unwrap();
    assert_eq!(
        store.state_get("tg.cursor", "@a").await.unwrap().as_deref(),
        Some("12")
    );
    assert_eq!(
        store.state_list("tg.cursor").await.unwrap(),
        vec![
            ("@a".to_owned(), "12".to_owned()),
            ("@b".to_owned(), "7".to_owned())
        ]
    );
}

/// Edits change a post only until it is fanned out.
pub async fn check_edit_post(store: &dyn Store) {
    let ch = channel(store, "@edits").await;
    let id = add_post(store, ch, "1", PostStatus::Queued).await;
    let (edited_id, status, applied) = store
        .edit_post(ch, "1", "edited text", Some("ff"), t0())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((edited_id, status, applied), (id, PostStatus::Queued, true));
    assert_eq!(store.post(id).await.unwrap().unwrap().text, "edited text");
    let done = add_post(store, ch, "2", PostStatus::FannedOut).await;
    let (_, status, applied) = store
        .edit_post(ch, "2", "too late", None, t0())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((status, applied), (PostStatus::FannedOut, false));
    assert_ne!(store.post(done).await.unwrap().unwrap().text, "too late");
    assert!(
        store
            .edit_post(ch, "3", "x", None, t0())
            .await
            .unwrap()
            .is_none()
    );
}

/// The extraction and cost of a classification are stored with it and counted in totals.
pub async fn check_classification_accounting(store: &dyn Store) {
    use jobwire_core::extract::{Budget, BudgetBasis, Extraction, WorkMode};
    let channel_id = channel(store, "@jobs").await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let id = add_post(store, channel_id, &format!("a{n}"), PostStatus::Queued).await;
        ids.push(id);
    }
    let extraction = Extraction {
        title: Some("Logo for a <coffee> shop".to_owned()),
        budget: Some(Budget {
            min: 15_000.0,
            max: Some(20_000.0),
            currency: "RUB".to_owned(),
            basis: BudgetBasis::Fixed,
        }),
        deadline: Some("до пятницы".to_owned()),
        work_mode: Some(WorkMode::Remote),
        skills: vec!["Figma".to_owned()],
        contact: Some("@client".to_owned()),
    };
    let llm = ClassificationRecord {
        model: "gpt-4o-mini".to_owned(),
        prompt_version: Some("classify.v2".to_owned()),
        tokens_in: 1000,
        tokens_out: 200,
        extraction: Some(extraction.clone()),
        cost_usd: 0.00027,
        ..verdict(true)
    };
    store
        .record_classification(ids[0], &llm, t0())
        .await
        .unwrap();
    let second = ClassificationRecord {
        is_job: false,
        kind: PostKind::Ad,
        categories: Vec::new(),
        extraction: None,
        cost_usd: 0.00013,
        ..llm.clone()
    };
    store
        .record_classification(ids[1], &second, t0() + secs(1))
        .await
        .unwrap();
    let local = ClassificationRecord {
        model: "local:abc".to_owned(),
        prompt_version: Some("local.v2".to_owned()),
        tokens_in: 0,
        tokens_out: 0,
        cost_usd: 0.0,
        ..verdict(true)
    };
    store
        .record_classification(ids[2], &local, t0() + secs(2))
        .await
        .unwrap();

    let back = store.classification(ids[0]).await.unwrap().unwrap();
    assert_eq!(back.extraction, Some(extraction));
    assert!((back.cost_usd - 0.00027).abs() < 1e-12);

    let totals = store.classification_totals(t0()).await.unwrap();
    let gpt = totals.iter().find(|t| t.model == "gpt-4o-mini").unwrap();
    assert_eq!((gpt.posts, gpt.jobs), (2, 1));
    assert_eq!((gpt.tokens_in, gpt.tokens_out), (2000, 400));
    assert!((gpt.cost_usd - 0.0004).abs() < 1e-9, "{}", gpt.cost_usd);
    assert_eq!(totals.len(), 2);
    // Only classifications since the given time count.
    let later = store
        .classification_totals(t0() + secs(1) + Duration::milliseconds(1))
        .await
        .unwrap();
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].model, "local:abc");
}

/// Subscribers by chat, a minimum budget kept as given, and blocking both ways.
pub async fn check_subscriber_by_chat(store: &dyn Store) {
    assert_eq!(store.subscriber_by_chat(42).await.unwrap(), None);
    assert!(!store.set_subscriber_blocked(42, true, t0()).await.unwrap());
    let mut floor = MinBudget::new(5000.0, "RUB", BudgetBasis::Fixed);
    floor.require_stated = true;
    let spec = SubscriberSpec {
        min_budget: Some(floor),
        ..subscriber(42)
    };
    store.upsert_subscriber(&spec, t0()).await.unwrap();
    let row = store.subscriber_by_chat(42).await.unwrap().unwrap();
    // The same floor comes back, every field of it, and the spec round-trips.
    assert_eq!(row.min_budget, spec.min_budget);
    assert_eq!(row.to_spec(), spec);

    let v0 = store.subscribers_version().await.unwrap();
    assert!(store.set_subscriber_blocked(42, true, t0()).await.unwrap());
    assert!(store.subscriber_by_chat(42).await.unwrap().unwrap().blocked);
    let v1 = store.subscribers_version().await.unwrap();
    assert!(v1 > v0, "blocking changes the subscribers version");
    // Blocking again changes nothing.
    assert!(store.set_subscriber_blocked(42, true, t0()).await.unwrap());
    assert_eq!(store.subscribers_version().await.unwrap(), v1);
    assert!(store.set_subscriber_blocked(42, false, t0()).await.unwrap());
    assert!(!store.subscriber_by_chat(42).await.unwrap().unwrap().blocked);
    // Clearing the minimum budget.
    store
        .upsert_subscriber(&subscriber(42), t0())
        .await
        .unwrap();
    assert_eq!(
        store
            .subscriber_by_chat(42)
            .await
            .unwrap()
            .unwrap()
            .min_budget,
        None
    );
}

/// Labeled examples: one per (post, source), replaced by a later label; paging by id.
pub async fn check_examples(store: &dyn Store) {
    let post = job(store, "e1").await;
    let label = |source, kind: &str| NewExample {
        post_id: Some(post),
        text: "Нужен логотип".to_owned(),
        is_job: kind == "job",
        kind: PostKind::parse(kind).unwrap(),
        categories: if kind == "job" {
            vec![slug("design")]
        } else {
            Vec::new()
        },
        source,
    };
    let a = store
        .add_example(&label(ExampleSource::Llm, "ad"), t0())
        .await
        .unwrap();
    let b = store
        .add_example(&label(ExampleSource::Relabel, "job"), t0())
        .await
        .unwrap();
    assert_ne!(a, b);
    // The LLM answers again for the same post: replaced, not added.
    let a2 = store
        .add_example(&label(ExampleSource::Llm, "job"), t0() + secs(5))
        .await
        .unwrap();
    assert_eq!(a, a2);
    let free = NewExample {
        post_id: None,
        ..label(ExampleSource::Report, "job")
    };
    let c1 = store.add_example(&free, t0()).await.unwrap();
    let c2 = store.add_example(&free, t0()).await.unwrap();
    assert_ne!(c1, c2, "examples without a post are all kept");

    let all = store.examples(ExampleId(0), 100).await.unwrap();
    assert_eq!(all.len(), 4);
    let llm = all.iter().find(|e| e.source == ExampleSource::Llm).unwrap();
    assert_eq!(llm.kind, PostKind::Job);
    assert_eq!(llm.categories, ["design"]);
    assert_eq!(llm.created_at, t0() + secs(5));
    let page = store.examples(all[1].id, 2).await.unwrap();
    assert_eq!(
        page.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![all[2].id, all[3].id]
    );
}

/// Reports: filed pending, decided once; accepting stores the label as an example.
pub async fn check_reports(store: &dyn Store) {
    let post = job(store, "r1").await;
    let missed = store
        .insert_report(
            &NewReport {
                chat_id: 7,
                post_id: None,
                kind: ReportKind::Missed,
                text: "Нужен монтажёр для reels, 3000 ₽".to_owned(),
                link: Some("https://t.me/other/5".to_owned()),
            },
            t0(),
        )
        .await
        .unwrap();
    let wrong = store
        .insert_report(
            &NewReport {
                chat_id: 8,
                post_id: Some(post),
                kind: ReportKind::Wrong,
                text: "это реклама".to_owned(),
                link: None,
            },
            t0() + secs(1),
        )
        .await
        .unwrap();
    let pending = store
        .reports(Some(ReportStatus::Pending), 10)
        .await
        .unwrap();
    assert_eq!(
        pending.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![wrong, missed],
        "newest first"
    );
    let label = NewExample {
        post_id: None,
        text: "Нужен монтажёр для reels, 3000 ₽".to_owned(),
        is_job: true,
        kind: PostKind::Job,
        categories: vec![slug("video")],
        source: ExampleSource::Report,
    };
    assert!(
        store
            .decide_report(missed, Some(&label), t0() + secs(9))
            .await
            .unwrap()
    );
    assert!(
        !store.decide_report(missed, None, t0()).await.unwrap(),
        "a decided report stays decided"
    );
    assert!(
        store
            .decide_report(wrong, None, t0() + secs(9))
            .await
            .unwrap()
    );
    assert!(
        !store
            .decide_report(ReportId(999_999), None, t0())
            .await
            .unwrap()
    );

    let accepted = store.report(missed).await.unwrap().unwrap();
    assert_eq!(accepted.status, ReportStatus::Accepted);
    assert_eq!(accepted.decided_at, Some(t0() + secs(9)));
    let example = accepted
        .example_id
        .expect("an accepted report becomes an example");
    let examples = store.examples(ExampleId(0), 10).await.unwrap();
    let stored = examples.iter().find(|e| e.id == example).unwrap();
    assert_eq!(stored.categories, ["video"]);
    assert_eq!(stored.source, ExampleSource::Report);
    let rejected = store.report(wrong).await.unwrap().unwrap();
    assert_eq!(
        (rejected.status, rejected.example_id),
        (ReportStatus::Rejected, None)
    );
    assert_eq!(rejected.post_id, Some(post));
    assert!(
        store
            .reports(Some(ReportStatus::Pending), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.reports(None, 10).await.unwrap().len(), 2);
}

fn slug(raw: &str) -> CategorySlug {
    CategorySlug::parse(raw).expect("a valid slug")
}

pub async fn check_chat_language(store: &dyn Store) {
    assert_eq!(store.chat_language(42).await.unwrap(), None);
    assert!(store.set_chat_language(42, "en", t0()).await.unwrap());
    assert!(
        !store.set_chat_language(42, "en", t0()).await.unwrap(),
        "unchanged: not written"
    );
    assert_eq!(
        store.chat_language(42).await.unwrap().as_deref(),
        Some("en")
    );
    assert!(store.set_chat_language(42, "ru", t0()).await.unwrap());
    assert_eq!(
        store.chat_language(42).await.unwrap().as_deref(),
        Some("ru")
    );
    assert_eq!(store.chat_language(43).await.unwrap(), None);
}

pub async fn check_sent_to_chat_since(store: &dyn Store) {
    let ids = pending_grid(store, 3, 1).await;
    let chat = store.delivery(ids[0]).await.unwrap().unwrap().chat_id;
    let mut updates = Vec::new();
    for &id in &ids[..2] {
        updates.push(DeliveryUpdate::Claim { id });
        updates.push(DeliveryUpdate::Sent { id });
    }
    store.apply_delivery_updates(&updates, t0()).await.unwrap();
    let counts = store
        .sent_to_chat_since(chat, &[t0(), t0() + secs(1), t0() - secs(60)])
        .await
        .unwrap();
    assert_eq!(counts, [2, 0, 2], "only sent ones, since each moment");
    assert_eq!(
        store.sent_to_chat_since(chat + 1, &[t0()]).await.unwrap(),
        [0]
    );
}

/// The chats written to lately, for a restarted sender: sent and sending deliveries since the
/// moment asked, the latest change per (bot, chat), flagged when one is still in flight.
pub async fn check_recent_sends(store: &dyn Store) {
    let ids = pending_grid(store, 3, 1).await;
    let row = store.delivery(ids[0]).await.unwrap().unwrap();
    let sent = [
        DeliveryUpdate::Claim { id: ids[0] },
        DeliveryUpdate::Sent { id: ids[0] },
    ];
    store.apply_delivery_updates(&sent, t0()).await.unwrap();
    assert_eq!(
        store.recent_sends(t0() - secs(60)).await.unwrap(),
        [RecentSend {
            bot: row.bot.clone(),
            chat_id: row.chat_id,
            at: t0(),
            in_flight: false,
        }]
    );
    let claim = [DeliveryUpdate::Claim { id: ids[1] }];
    store
        .apply_delivery_updates(&claim, t0() + secs(2))
        .await
        .unwrap();
    assert_eq!(
        store.recent_sends(t0() - secs(60)).await.unwrap(),
        [RecentSend {
            bot: row.bot,
            chat_id: row.chat_id,
            at: t0() + secs(2),
            in_flight: true,
        }]
    );
    assert!(store.recent_sends(t0() + secs(3)).await.unwrap().is_empty());
}

/// Card reports: once per user, post and kind; the threshold's distinct reporter withholds
/// the post's unsent deliveries in the same transaction; rejecting every complaint releases
/// them (to their own time), an accepted one keeps the post withheld.
pub async fn check_card_reports(store: &dyn Store) {
    let post = job(store, "reported").await;
    let mut subs = audience(store, 300, 4).await;
    subs[3].not_before = Some(t0() + secs(3600)); // quiet hours: held
    store
        .fan_out(post, &["card".to_owned()], &subs, t0())
        .await
        .unwrap();
    let report = |chat: i64, kind: ReportKind| NewReport {
        chat_id: chat,
        post_id: Some(post),
        kind,
        text: "Rust developer wanted".into(),
        link: None,
    };
    let first = store
        .file_card_report(&report(300, ReportKind::NotJob), 2, t0())
        .await
        .unwrap();
    assert!(first.report.is_some());
    assert_eq!((first.reporters, first.withheld), (1, false));
    let again = store
        .file_card_report(&report(300, ReportKind::NotJob), 2, t0())
        .await
        .unwrap();
    assert_eq!(again.report, None, "a second tap files nothing");
    let other_kind = store
        .file_card_report(&report(300, ReportKind::WrongCategory), 2, t0())
        .await
        .unwrap();
    assert!(other_kind.report.is_some());
    assert_eq!((other_kind.reporters, other_kind.withheld), (1, false));
    let mut kinds = store.card_reports_of(300, post).await.unwrap();
    kinds.sort_by_key(|k| k.as_str());
    assert_eq!(kinds, vec![ReportKind::NotJob, ReportKind::WrongCategory]);
    assert!(!store.post_withheld(post).await.unwrap());

    let second = store
        .file_card_report(&report(301, ReportKind::NotJob), 2, t0() + secs(5))
        .await
        .unwrap();
    assert_eq!((second.reporters, second.withheld), (2, true));
    assert!(store.post_withheld(post).await.unwrap());
    let statuses = |list: Vec<DeliveryRow>| {
        list.into_iter()
            .map(|d| (d.chat_id, d.status))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        statuses(store.deliveries_of_post(post).await.unwrap()),
        vec![
            (300, DeliveryStatus::Withheld),
            (301, DeliveryStatus::Withheld),
            (302, DeliveryStatus::Withheld),
            (303, DeliveryStatus::Withheld),
        ]
    );
    assert_eq!(
        store.pipeline_counts().await.unwrap().deliveries_withheld,
        4
    );

    // Accepting one complaint and rejecting the rest keeps it withheld...
    let pending = store
        .reports(Some(ReportStatus::Pending), 10)
        .await
        .unwrap();
    assert_eq!(pending.len(), 3);
    let label = NewExample {
        post_id: Some(post),
        text: "Rust developer wanted".into(),
        is_job: false,
        kind: PostKind::Ad,
        categories: Vec::new(),
        source: ExampleSource::Report,
    };
    assert!(
        store
            .decide_report(pending[0].id, Some(&label), t0())
            .await
            .unwrap()
    );
    for r in &pending[1..] {
        assert!(store.decide_report(r.id, None, t0()).await.unwrap());
    }
    assert!(store.post_withheld(post).await.unwrap());

    // ...while rejecting every complaint of another post releases it: each delivery back
    // to its own time (now, or the end of quiet hours).
    let other = job(store, "released").await;
    store
        .fan_out(other, &["card".to_owned()], &subs, t0())
        .await
        .unwrap();
    let r = |chat| NewReport {
        post_id: Some(other),
        ..report(chat, ReportKind::NotJob)
    };
    store.file_card_report(&r(300), 1, t0()).await.unwrap();
    assert!(store.post_withheld(other).await.unwrap());
    let id = store.reports(Some(ReportStatus::Pending), 1).await.unwrap()[0].id;
    assert!(
        store
            .decide_report(id, None, t0() + secs(60))
            .await
            .unwrap()
    );
    assert!(!store.post_withheld(other).await.unwrap());
    let rows = store.deliveries_of_post(other).await.unwrap();
    assert!(rows.iter().all(|d| d.status == DeliveryStatus::Held));
    assert_eq!(rows[0].not_before, Some(t0() + secs(60)));
    assert_eq!(rows[3].not_before, Some(t0() + secs(3600)));
    let released = store
        .release_held_deliveries(t0() + secs(61), 100)
        .await
        .unwrap();
    assert_eq!(released.len(), 3);
    // A threshold of 0 never withholds.
    let third = job(store, "never").await;
    let never = store
        .file_card_report(
            &NewReport {
                post_id: Some(third),
                ..report(300, ReportKind::NotJob)
            },
            0,
            t0(),
        )
        .await
        .unwrap();
    assert!(!never.withheld);
}

/// Hidden authors change the subscribers' version (fan-out rebuilds); a job's sources are
/// its own post first, then its near-duplicates as posted.
pub async fn check_hidden_authors_and_sources(store: &dyn Store) {
    let v0 = store.subscribers_version().await.unwrap();
    let author = jobwire_core::card::Author {
        key: "@client".into(),
        label: "@Client".into(),
    };
    assert!(store.hide_author(7, &author, t0()).await.unwrap());
    assert!(!store.hide_author(7, &author, t0()).await.unwrap());
    let v1 = store.subscribers_version().await.unwrap();
    assert_eq!(v1, v0 + 1, "one change, one bump");
    let list = store.hidden_authors(7).await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        (list[0].author.as_str(), list[0].label.as_str()),
        ("@client", "@Client")
    );
    assert!(store.hidden_authors(8).await.unwrap().is_empty());
    assert_eq!(store.all_hidden_authors().await.unwrap().len(), 1);
    assert_eq!(
        store.show_author(8, list[0].id).await.unwrap(),
        None,
        "not theirs"
    );
    assert_eq!(
        store.show_author(7, list[0].id).await.unwrap().as_deref(),
        Some("@Client")
    );
    assert!(store.subscribers_version().await.unwrap() > v1);
    assert!(store.hidden_authors(7).await.unwrap().is_empty());

    let a = store.ensure_channel("@a", t0()).await.unwrap();
    let b = store.ensure_channel("@b", t0()).await.unwrap();
    let c = store.ensure_channel("Chat", t0()).await.unwrap();
    let original = match store
        .insert_post(&new_post(a.id, "1", PostStatus::Queued))
        .await
        .unwrap()
    {
        InsertOutcome::Inserted(id) => id,
        other => panic!("{other:?}"),
    };
    for (ch, ext, at) in [(c.id, "3", 30), (b.id, "2", 10)] {
        store
            .insert_post(&NewPost {
                status: PostStatus::Duplicate,
                duplicate_of: Some(original),
                posted_at: t0() + secs(at),
                ..new_post(ch, ext, PostStatus::Duplicate)
            })
            .await
            .unwrap();
    }
    let sources = store.job_sources(original).await.unwrap();
    let handles: Vec<&str> = sources.iter().map(|s| s.handle.as_str()).collect();
    assert_eq!(handles, vec!["@a", "@b", "Chat"]);
    assert_eq!(sources[0].url.as_deref(), Some("https://t.me/jobs/1"));
}

/// What a resuming subscriber may catch up on: fanned-out jobs since a moment, not withheld,
/// none they have a delivery of; added deliveries wait (held) for the sweep, once each.
pub async fn check_catch_up_candidates(store: &dyn Store) {
    let seen = job(store, "seen").await;
    let missed = job(store, "missed").await;
    let subs = audience(store, 500, 2).await;
    store
        .fan_out(seen, &["a".to_owned()], &subs, t0())
        .await
        .unwrap();
    store
        .fan_out(missed, &["b".to_owned()], &subs[1..], t0())
        .await
        .unwrap();
    let me = subs[0].subscriber_id;
    let jobs = store
        .recent_jobs(t0() - secs(60), Some(me), 10)
        .await
        .unwrap();
    let ids: Vec<PostId> = jobs.iter().map(|j| j.post.id).collect();
    assert_eq!(ids, vec![missed]);
    assert_eq!((jobs[0].matched, jobs[0].complaints), (1, 0));
    assert_eq!(
        store
            .recent_jobs(t0() + secs(1), Some(me), 10)
            .await
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        store
            .recent_jobs(t0() - secs(60), None, 10)
            .await
            .unwrap()
            .len(),
        2
    );

    let added = store
        .add_held_deliveries(missed, &subs[..1], t0() + secs(5))
        .await
        .unwrap();
    assert_eq!(added, 1);
    assert_eq!(
        store
            .add_held_deliveries(missed, &subs[..1], t0() + secs(5))
            .await
            .unwrap(),
        0,
        "once"
    );
    let mine = store
        .deliveries_of_post(missed)
        .await
        .unwrap()
        .into_iter()
        .find(|d| d.subscriber_id == me)
        .unwrap();
    assert_eq!(
        (mine.status, mine.not_before),
        (DeliveryStatus::Held, Some(t0() + secs(5)))
    );
    assert!(
        store
            .recent_jobs(t0() - secs(60), Some(me), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A day's digest is claimed once; an unsent claim older than the stale mark is taken
/// again; a sent one never.
pub async fn check_digest_claims(store: &dyn Store) {
    let day = "2026-12-03";
    assert!(
        store
            .claim_digest(day, t0(), t0() - secs(600))
            .await
            .unwrap()
    );
    assert!(
        !store
            .claim_digest(day, t0() + secs(1), t0() - secs(600))
            .await
            .unwrap()
    );
    // The poster died: ten minutes later the claim is stale and taken again.
    assert!(
        store
            .claim_digest(day, t0() + secs(700), t0() + secs(100))
            .await
            .unwrap()
    );
    store
        .digest_sent(day, 42, 5, t0() + secs(701))
        .await
        .unwrap();
    assert!(
        !store
            .claim_digest(day, t0() + secs(9999), t0() + secs(9000))
            .await
            .unwrap(),
        "posted: never again"
    );
    assert!(store.claim_digest("2026-12-04", t0(), t0()).await.unwrap());
}

/// Broadcast recipients: claimed once, only while the broadcast runs; a claim left mid-call
/// becomes `unknown` (never sent again); done once nobody is pending.
pub async fn check_broadcast_recipients(store: &dyn Store) {
    let recipients: Vec<(i64, String)> = (1..=5).map(|c| (c, "main".to_owned())).collect();
    let audience = serde_json::json!({"category": null});
    let id = store
        .create_broadcast("<b>hi</b>", &audience, &recipients, t0())
        .await
        .unwrap();
    assert_eq!(store.running_broadcasts().await.unwrap(), vec![id]);
    let first = store.claim_broadcast_recipients(id, 2, t0()).await.unwrap();
    assert_eq!(first, vec![(1, "main".to_owned()), (2, "main".to_owned())]);
    store
        .finish_broadcast_recipient(id, 1, &RecipientOutcome::Sent { message_id: 9 }, t0())
        .await
        .unwrap();
    store
        .finish_broadcast_recipient(id, 2, &RecipientOutcome::Later, t0())
        .await
        .unwrap();
    // Paused: nothing is claimed.
    assert!(
        store
            .set_broadcast_status(id, BroadcastStatus::Paused, t0())
            .await
            .unwrap()
    );
    assert!(
        store
            .claim_broadcast_recipients(id, 10, t0())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .set_broadcast_status(id, BroadcastStatus::Running, t0())
            .await
            .unwrap()
    );
    let rest = store
        .claim_broadcast_recipients(id, 10, t0())
        .await
        .unwrap();
    assert_eq!(
        rest.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![2, 3, 4, 5]
    );
    assert!(
        !store.complete_broadcast(id, t0()).await.unwrap(),
        "still sending"
    );
    for chat in [2, 3] {
        store
            .finish_broadcast_recipient(
                id,
                chat,
                &RecipientOutcome::Sent { message_id: chat },
                t0(),
            )
            .await
            .unwrap();
    }
    store
        .finish_broadcast_recipient(
            id,
            4,
            &RecipientOutcome::Blocked {
                error: "403".into(),
            },
            t0(),
        )
        .await
        .unwrap();
    // Chat 5's sender died mid-call: after the lease it is unknown, not sent again.
    assert_eq!(
        store
            .abandon_broadcast_sends(t0() + secs(1), t0() + secs(200))
            .await
            .unwrap(),
        1
    );
    assert!(
        store
            .claim_broadcast_recipients(id, 10, t0())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .complete_broadcast(id, t0() + secs(201))
            .await
            .unwrap()
    );
    let b = store.broadcast(id, t0() + secs(30)).await.unwrap().unwrap();
    assert_eq!(b.status, BroadcastStatus::Done);
    assert_eq!(
        (
            b.progress.sent,
            b.progress.blocked,
            b.progress.unknown,
            b.progress.remaining()
        ),
        (3, 1, 1, 0)
    );
    assert_eq!(b.progress.sent_last_minute, 3);
    assert!(
        !store
            .set_broadcast_status(id, BroadcastStatus::Paused, t0())
            .await
            .unwrap()
    );
}

/// A send in flight when a post is withheld, failing and waiting for its retry, is not
/// released by the sweep while the post stays withheld; catching up adds nothing to it.
pub async fn check_withheld_posts_stay_unsent(store: &dyn Store) {
    let post = job(store, "inflight").await;
    let subs = audience(store, 700, 2).await;
    let ready = store
        .fan_out(post, &["card".to_owned()], &subs, t0())
        .await
        .unwrap();
    let claimed = store
        .apply_delivery_updates(&[DeliveryUpdate::Claim { id: ready[0] }], t0())
        .await
        .unwrap();
    assert_eq!(claimed, vec![true]);
    let report = NewReport {
        chat_id: 701,
        post_id: Some(post),
        kind: ReportKind::NotJob,
        text: "not a job".into(),
        link: None,
    };
    assert!(
        store
            .file_card_report(&report, 1, t0())
            .await
            .unwrap()
            .withheld
    );
    store
        .apply_delivery_updates(
            &[DeliveryUpdate::Retry {
                id: ready[0],
                at: t0(),
                error: "502".to_owned(),
                unknown_outcome: false,
            }],
            t0(),
        )
        .await
        .unwrap();
    assert!(
        store
            .release_held_deliveries(t0() + secs(10), 100)
            .await
            .unwrap()
            .is_empty(),
        "a withheld post's retry is not sent"
    );
    let late = audience(store, 800, 1).await;
    assert_eq!(
        store.add_held_deliveries(post, &late, t0()).await.unwrap(),
        0
    );
}
