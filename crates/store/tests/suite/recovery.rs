//! Checks of the recovery concern: stuck work and dead letters.

use jobwire_store::*;

use super::*;

pub async fn check_take_stuck(store: &dyn Store) {
    let ch = channel(store, "@jobs").await;
    let queued = add_post(store, ch, "q", PostStatus::Queued).await;
    let _filtered = add_post(store, ch, "f", PostStatus::Filtered).await;
    let job = job(store, "j").await;
    let deliveries = pending_grid(store, 1, 2).await;
    assert_eq!(claim(store, &deliveries[..1]).await, [true]);
    let held = pending_grid_held(store).await;

    let fresh = store.take_stuck(t0(), t0() + secs(60), 100).await.unwrap();
    assert!(fresh.is_empty(), "nothing is older than t0: {fresh:?}");

    let stuck = store
        .take_stuck(t0() + secs(10), t0() + secs(60), 100)
        .await
        .unwrap();
    assert_eq!(
        stuck.queued,
        [queued],
        "the queued post, not the filtered one"
    );
    assert_eq!(stuck.jobs, [job]);
    assert_eq!(
        stuck.deliveries,
        deliveries[1..],
        "the pending delivery; not the one being sent, nor {held:?} held for later"
    );

    let again = store
        .take_stuck(t0() + secs(10), t0() + secs(61), 100)
        .await
        .unwrap();
    assert!(
        again.is_empty(),
        "taken rows wait another deadline: {again:?}"
    );
    let later = store
        .take_stuck(t0() + secs(70), t0() + secs(130), 100)
        .await
        .unwrap();
    assert_eq!(later.len(), 3, "{later:?}");
    assert_eq!(
        status_of(store, deliveries[1]).await,
        DeliveryStatus::Pending,
        "taking a row does not change its status"
    );

    let limited = store
        .take_stuck(t0() + secs(200), t0() + secs(260), 1)
        .await
        .unwrap();
    assert_eq!(
        (
            limited.queued.len(),
            limited.jobs.len(),
            limited.deliveries.len()
        ),
        (1, 1, 1)
    );
}

/// One delivery held until an hour after t0.
async fn pending_grid_held(store: &dyn Store) -> PostId {
    let post = job(store, "held").await;
    let mut audience = audience(store, 5000, 1).await;
    audience[0].not_before = Some(t0() + Duration::hours(1));
    let ready = store
        .fan_out(post, &["part".to_owned()], &audience, t0())
        .await
        .unwrap();
    assert!(ready.is_empty());
    post
}

pub async fn check_dead_letters(store: &dyn Store) {
    assert_eq!(store.dead_letter_count(t0()).await.unwrap(), 0);
    for (n, reason) in ["the post vanished", "gave up after 8 attempts: timeout"]
        .into_iter()
        .enumerate()
    {
        let letter = NewDeadLetter {
            topic: "jobwire.send".to_owned(),
            payload: format!("{{\"v\":1,\"delivery\":{n}}}"),
            attempts: 8,
            reason: reason.to_owned(),
        };
        store
            .add_dead_letter(&letter, t0() + secs(n as i64))
            .await
            .unwrap();
    }
    let latest = store.dead_letters(10).await.unwrap();
    assert_eq!(latest.len(), 2);
    assert_eq!(
        latest[0].reason, "gave up after 8 attempts: timeout",
        "newest first"
    );
    assert_eq!(latest[0].payload, "{\"v\":1,\"delivery\":1}");
    assert_eq!(
        (latest[0].attempts, latest[0].topic.as_str()),
        (8, "jobwire.send")
    );
    assert_eq!(latest[0].created_at, t0() + secs(1));
    assert_eq!(store.dead_letters(1).await.unwrap().len(), 1);
    assert_eq!(store.dead_letter_count(t0() + secs(1)).await.unwrap(), 1);
}

pub async fn check_status_pages(store: &dyn Store) {
    let ch = channel(store, "@jobs").await;
    let mut queued = Vec::new();
    for n in 0..7 {
        queued.push(add_post(store, ch, &format!("p{n}"), PostStatus::Queued).await);
        add_post(store, ch, &format!("f{n}"), PostStatus::Filtered).await;
    }
    let mut walked = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .posts_in_status_after(PostStatus::Queued, after, 3)
            .await
            .unwrap();
        assert!(page.len() <= 3);
        let Some(&last) = page.last() else { break };
        walked.extend(page);
        after = Some(last);
    }
    assert_eq!(walked, queued, "every queued post once, in order");

    let deliveries = pending_grid(store, 2, 3).await;
    let first = store
        .deliveries_in_status_after(DeliveryStatus::Pending, None, 4)
        .await
        .unwrap();
    let rest = store
        .deliveries_in_status_after(DeliveryStatus::Pending, first.last().copied(), 4)
        .await
        .unwrap();
    assert_eq!([first, rest].concat(), deliveries);
}

pub async fn check_block_one_bot(store: &dyn Store) {
    let post = job(store, "two-bots").await;
    let sub = store
        .upsert_subscriber(&subscriber(77), t0())
        .await
        .unwrap();
    let other = job(store, "two-bots-2").await;
    let via = |bot: &str| NewDelivery {
        subscriber_id: sub,
        chat_id: 77,
        bot: bot.to_owned(),
        not_before: None,
    };
    let first = store
        .fan_out(post, &["p".to_owned()], &[via("dev")], t0())
        .await
        .unwrap();
    let second = store
        .fan_out(other, &["p".to_owned()], &[via("creative")], t0())
        .await
        .unwrap();
    let blocked = "Forbidden: bot was blocked by the user";
    block_delivery(store, first[0], blocked, BlockScope::Bot).await;
    assert_eq!(status_of(store, first[0]).await, DeliveryStatus::Blocked);
    assert_eq!(
        status_of(store, second[0]).await,
        DeliveryStatus::Pending,
        "the other bot's delivery goes on"
    );
    let row = store.subscriber_by_chat(77).await.unwrap().unwrap();
    assert!(!row.blocked, "the subscriber stays reachable");
    let blocks = store.bot_blocks(None).await.unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(
        (blocks[0].chat_id, blocks[0].bot.as_str(), blocks[0].scope),
        (77, "dev", BlockScope::Bot)
    );

    // The user starts the bot again: it may reach them.
    let v = store.subscribers_version().await.unwrap();
    assert!(
        store
            .set_bot_block(77, "dev", None, t0() + secs(2))
            .await
            .unwrap()
    );
    assert!(store.bot_blocks(None).await.unwrap().is_empty());
    assert!(store.subscribers_version().await.unwrap() > v);
    assert!(
        !store
            .set_bot_block(77, "dev", None, t0() + secs(3))
            .await
            .unwrap()
    );
    assert!(
        store
            .set_bot_block(77, "creative", Some(BlockScope::NotStarted), t0())
            .await
            .unwrap()
    );
    assert_eq!(
        store.bot_blocks(None).await.unwrap()[0].scope,
        BlockScope::NotStarted
    );
}

pub async fn check_bot_block_notices(store: &dyn Store) {
    for chat in [81, 82] {
        store
            .upsert_subscriber(&subscriber(chat), t0())
            .await
            .unwrap();
    }
    let not_started = Some(BlockScope::NotStarted);
    store
        .set_bot_block(81, "dev", not_started, t0())
        .await
        .unwrap();
    store
        .set_bot_block(82, "dev", Some(BlockScope::Bot), t0())
        .await
        .unwrap();
    store
        .set_bot_block(82, "creative", not_started, t0() + secs(1))
        .await
        .unwrap();
    let first = store.take_unnotified_bot_blocks(t0(), 1).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(
        (first[0].chat_id, first[0].bot.as_str()),
        (81, "dev"),
        "oldest first"
    );
    let rest = store.take_unnotified_bot_blocks(t0(), 10).await.unwrap();
    assert_eq!(rest.len(), 1, "a blocked bot is not a notice: {rest:?}");
    assert_eq!((rest[0].chat_id, rest[0].bot.as_str()), (82, "creative"));
    assert!(
        store
            .take_unnotified_bot_blocks(t0(), 10)
            .await
            .unwrap()
            .is_empty(),
        "each notice once"
    );
    // Started, then not started again: a new notice.
    store.set_bot_block(81, "dev", None, t0()).await.unwrap();
    store
        .set_bot_block(81, "dev", not_started, t0())
        .await
        .unwrap();
    assert_eq!(
        store
            .take_unnotified_bot_blocks(t0(), 10)
            .await
            .unwrap()
            .len(),
        1
    );
}
