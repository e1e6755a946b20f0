//! The web panel's data: sessions (only a token's hash; expiry; logout; all of an admin's),
//! the audit log (newest first, paged), the post search's filters, the dashboard's
//! buckets and totals (the LLM's spend, jobs per category, Telegram's 429s and flood
//! waits), rewinding work for the scheduler, dead letters, and an admin's extension and end
//! of a subscription.

use super::*;

async fn admin(store: &dyn Store) -> AdminId {
    store
        .create_admin(
            "ops",
            "$argon2id$v=19$m=19456,t=2,p=1$x$y",
            AdminRole::Admin,
            t0(),
        )
        .await
        .unwrap()
        .unwrap()
}

pub async fn check_panel_sessions_and_audit(store: &dyn Store) {
    let id = admin(store).await;
    let session = NewSession {
        token_hash: "h1",
        admin_id: id,
        csrf: "c1",
        client: "127.0.0.1",
        expires_at: t0() + secs(3600),
    };
    store.create_session(&session, t0()).await.unwrap();
    store
        .create_session(
            &NewSession {
                token_hash: "h2",
                ..session.clone()
            },
            t0(),
        )
        .await
        .unwrap();
    let s = store.session("h1", t0() + secs(10)).await.unwrap().unwrap();
    assert_eq!(
        (s.admin_id, s.username.as_str(), s.csrf.as_str()),
        (id, "ops", "c1")
    );
    assert!(
        !format!("{s:?}").contains("c1"),
        "Debug hides the CSRF token"
    );
    assert!(
        store
            .session("h1", t0() + secs(3600))
            .await
            .unwrap()
            .is_none(),
        "expired"
    );
    store
        .touch_session("h1", t0() + secs(60), t0() + secs(7200))
        .await
        .unwrap();
    assert!(
        store
            .session("h1", t0() + secs(3600))
            .await
            .unwrap()
            .is_some(),
        "moved on use"
    );
    store.delete_session("h1").await.unwrap();
    assert!(store.session("h1", t0()).await.unwrap().is_none());
    assert_eq!(store.delete_admin_sessions(id).await.unwrap(), 1);
    store.create_session(&session, t0()).await.unwrap();
    assert_eq!(
        store
            .delete_expired_sessions(t0() + secs(3601))
            .await
            .unwrap(),
        1
    );

    for i in 0..5 {
        store
            .record_audit(
                "ops",
                "source.add",
                &format!("source {i}"),
                "@x",
                t0() + secs(i),
            )
            .await
            .unwrap();
    }
    let page = store.audit_log(3, None).await.unwrap();
    let targets: Vec<&str> = page.iter().map(|e| e.target.as_str()).collect();
    assert_eq!(targets, ["source 4", "source 3", "source 2"]);
    assert_eq!(page[0].at, t0() + secs(4));
    let older = store.audit_log(3, Some(page[2].id)).await.unwrap();
    assert_eq!(older.len(), 2);
    assert_eq!(older[0].target, "source 1");
}

pub async fn check_panel_post_search_and_dashboard(store: &dyn Store) {
    let jobs = store.ensure_channel("@jobs", t0()).await.unwrap();
    let chat = store.ensure_channel("@chat", t0()).await.unwrap();
    let mut ids = Vec::new();
    for (i, (ch, text, status)) in [
        (
            jobs.id,
            "Нужен Rust-разработчик, 100% удалённо",
            PostStatus::Queued,
        ),
        (jobs.id, "Курс по дизайну со скидкой", PostStatus::Filtered),
        (chat.id, "Ищем дизайнера_лендингов", PostStatus::Queued),
    ]
    .into_iter()
    .enumerate()
    {
        let mut p = new_post(ch, &format!("m{i}"), status);
        p.text = text.to_owned();
        p.received_at = Utc::now();
        p.posted_at = t0() + secs(i as i64 * 86_400);
        let InsertOutcome::Inserted(id) = store.insert_post(&p).await.unwrap() else {
            panic!("inserted")
        };
        ids.push(id);
    }
    store
        .record_classification(ids[0], &verdict(true), Utc::now())
        .await
        .unwrap();
    let search = |f: PostFilter| async move {
        store
            .search_posts(&PostFilter { limit: 50, ..f })
            .await
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        search(PostFilter::default()).await,
        [ids[2], ids[1], ids[0]]
    );
    assert_eq!(
        search(PostFilter {
            channel_id: Some(jobs.id),
            ..Default::default()
        })
        .await,
        [ids[1], ids[0]]
    );
    assert_eq!(
        search(PostFilter {
            category: Some("rust".into()),
            ..Default::default()
        })
        .await,
        [ids[0]]
    );
    assert_eq!(
        search(PostFilter {
            status: Some("filtered".into()),
            ..Default::default()
        })
        .await,
        [ids[1]]
    );
    assert_eq!(
        search(PostFilter {
            text: Some("RUST".into()),
            ..Default::default()
        })
        .await,
        [ids[0]]
    );
    assert_eq!(
        search(PostFilter {
            text: Some("100%".into()),
            ..Default::default()
        })
        .await,
        [ids[0]]
    );
    assert_eq!(
        search(PostFilter {
            text: Some("р_л".into()),
            ..Default::default()
        })
        .await,
        Vec::<PostId>::new(),
        "_ is no wildcard"
    );
    assert_eq!(
        search(PostFilter {
            since: Some(t0() + secs(86_400)),
            until: Some(t0() + secs(2 * 86_400)),
            ..Default::default()
        })
        .await,
        [ids[1]]
    );
    assert_eq!(
        search(PostFilter {
            before: Some(ids[2]),
            ..Default::default()
        })
        .await,
        [ids[1], ids[0]]
    );
    let listed = store
        .search_posts(&PostFilter {
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].channel_handle, "@chat");

    let recent = store.channel_recent_texts(jobs.id, 10).await.unwrap();
    assert_eq!(
        recent.iter().map(|r| r.0).collect::<Vec<_>>(),
        [ids[1], ids[0]]
    );

    let series = store
        .dashboard_series(Utc::now() - Duration::hours(1), Duration::minutes(30))
        .await
        .unwrap();
    assert!((2..=4).contains(&series.len()), "{}", series.len());
    assert_eq!(series.iter().map(|b| b.posts).sum::<u64>(), 3);
    assert_eq!(series.iter().map(|b| b.passed_rules).sum::<u64>(), 2);
    assert_eq!(series.iter().map(|b| b.jobs).sum::<u64>(), 1);
    assert_eq!(
        series.iter().map(|b| b.llm).sum::<u64>(),
        1,
        "prompt p3 is not the local model"
    );
    assert_eq!(series.iter().map(|b| b.tokens).sum::<u64>(), 853);
    let totals = store
        .dashboard_totals(Utc::now() - Duration::hours(1))
        .await
        .unwrap();
    assert_eq!(
        totals.per_source,
        [("@jobs".to_owned(), 2, 1), ("@chat".to_owned(), 1, 1)]
    );
    assert_eq!(
        totals.per_category,
        [("backend".to_owned(), 1), ("rust".to_owned(), 1)]
    );
    assert!(totals.waits.is_empty());

    dashboard_llm_spend_and_waits(store, jobs.id).await;
}

/// The LLM's share, latency, tokens and spend; jobs per category; Telegram's 429s and
/// flood waits per bucket and per bot or account, and how long they are kept. Runs after
/// the search's posts: one job verdict of the LLM (prompt `p3`, 853 tokens, 930 ms, free).
async fn dashboard_llm_spend_and_waits(store: &dyn Store, channel: ChannelId) {
    let add = |n: &'static str| async move {
        let mut p = new_post(channel, n, PostStatus::Queued);
        p.received_at = Utc::now();
        let InsertOutcome::Inserted(id) = store.insert_post(&p).await.unwrap() else {
            panic!("inserted")
        };
        id
    };
    let (paid, local) = (add("llm-paid").await, add("local").await);
    let llm = ClassificationRecord {
        categories: vec![slug("rust")],
        model: "gpt-x".to_owned(),
        prompt_version: Some("classify.v4".to_owned()),
        tokens_in: 1000,
        tokens_out: 200,
        latency_ms: 1500,
        cost_usd: 0.5,
        ..verdict(true)
    };
    store
        .record_classification(paid, &llm, Utc::now())
        .await
        .unwrap();
    let by_model = ClassificationRecord {
        model: "local-v2".to_owned(),
        prompt_version: Some("local.v2".to_owned()),
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 4,
        ..verdict(false)
    };
    store
        .record_classification(local, &by_model, Utc::now())
        .await
        .unwrap();

    let now = Utc::now();
    let wait = |kind, who: &str, seconds, at| TelegramWait {
        kind,
        who: who.to_owned(),
        seconds,
        at,
    };
    store
        .record_telegram_waits(&[
            wait(WaitKind::Bot429, "dev", 3, now),
            wait(WaitKind::FloodWait, "acc1", 120, now),
            wait(WaitKind::Bot429, "dev", 2, now),
            wait(WaitKind::Bot429, "design", 9, now - Duration::hours(2)),
        ])
        .await
        .unwrap();
    store.record_telegram_waits(&[]).await.unwrap();

    let hour_ago = Utc::now() - Duration::hours(1);
    let series = store
        .dashboard_series(hour_ago, Duration::minutes(30))
        .await
        .unwrap();
    let sum = |f: fn(&DashboardBucket) -> u64| series.iter().map(f).sum::<u64>();
    assert_eq!(sum(|b| b.classified), 3);
    assert_eq!(sum(|b| b.jobs), 2);
    assert_eq!(sum(|b| b.llm), 2, "local.v2 is the local model");
    assert_eq!(sum(|b| b.tokens), 853 + 1200);
    let spend: f64 = series.iter().map(|b| b.cost_usd).sum();
    assert!((spend - 0.5).abs() < 1e-9, "{spend}");
    let latency: f64 = series
        .iter()
        .map(|b| b.latency_ms_avg * b.llm as f64)
        .sum::<f64>()
        / 2.0;
    assert!(
        (latency - 1215.0).abs() < 1e-6,
        "the LLM's verdicts only: {latency}"
    );
    assert_eq!(sum(|b| b.bot_429), 2, "the one two hours ago is older");
    assert_eq!(sum(|b| b.flood_waits), 1);
    let last = series.iter().rposition(|b| b.bot_429 > 0).unwrap();
    assert!(
        series.len() - last <= 2,
        "in the bucket of now: {last} of {}",
        series.len()
    );

    let totals = store.dashboard_totals(hour_ago).await.unwrap();
    assert_eq!(
        totals.per_category,
        [("rust".to_owned(), 2), ("backend".to_owned(), 1)]
    );
    let total = |kind, who: &str, count, seconds| WaitTotal {
        kind,
        who: who.to_owned(),
        count,
        seconds,
    };
    assert_eq!(
        totals.waits,
        [
            total(WaitKind::Bot429, "dev", 2, 5),
            total(WaitKind::FloodWait, "acc1", 1, 120),
        ]
    );
    let day = store
        .dashboard_totals(Utc::now() - Duration::days(1))
        .await
        .unwrap();
    assert_eq!(day.waits.len(), 3, "{:?}", day.waits);

    // Kept 30 days: older rows go as new ones are written.
    let long_ago = Utc::now() - TELEGRAM_WAITS_KEPT - Duration::days(5);
    store
        .record_telegram_waits(&[wait(WaitKind::FloodWait, "old", 60, long_ago)])
        .await
        .unwrap();
    let whom = |t: DashboardTotals| -> Vec<String> { t.waits.into_iter().map(|w| w.who).collect() };
    let ever = long_ago - Duration::days(1);
    assert!(
        whom(store.dashboard_totals(ever).await.unwrap()).contains(&"old".to_owned()),
        "the newest of its batch"
    );
    store
        .record_telegram_waits(&[wait(WaitKind::Bot429, "dev", 1, Utc::now())])
        .await
        .unwrap();
    let left = whom(store.dashboard_totals(ever).await.unwrap());
    assert!(!left.contains(&"old".to_owned()), "{left:?}");
    assert_eq!(left.len(), 3, "{left:?}");
}

pub async fn check_panel_rewinds_work(store: &dyn Store) {
    let ch = store.ensure_channel("@jobs", t0()).await.unwrap();
    let InsertOutcome::Inserted(post) = store
        .insert_post(&new_post(ch.id, "1", PostStatus::Queued))
        .await
        .unwrap()
    else {
        panic!("inserted")
    };
    store
        .record_classification(post, &verdict(true), t0())
        .await
        .unwrap();
    let sub = store
        .upsert_subscriber(&subscriber(42), t0())
        .await
        .unwrap();
    let ids = store
        .fan_out(
            post,
            &["x".to_owned()],
            &[NewDelivery {
                subscriber_id: sub,
                chat_id: 42,
                bot: "b".into(),
                not_before: None,
            }],
            t0(),
        )
        .await
        .unwrap();
    let now = t0() + secs(1);
    assert!(store.requeue_post(post).await.unwrap());
    let stuck = store.take_stuck(now, now, 10).await.unwrap();
    assert_eq!(stuck.queued, [post]);
    assert!(stuck.deliveries.is_empty() || stuck.deliveries == ids);
    assert_eq!(
        store.retry_failed_deliveries(post).await.unwrap(),
        0,
        "nothing failed"
    );
    assert!(
        store.rewind_delivery(ids[0]).await.unwrap(),
        "pending is due again"
    );
    assert!(
        !store.rewind_fanout(post).await.unwrap(),
        "queued is not a job"
    );

    let dl = store
        .add_dead_letter(
            &NewDeadLetter {
                topic: "t".into(),
                payload: "{}".into(),
                attempts: 3,
                reason: "r".into(),
            },
            t0(),
        )
        .await
        .unwrap();
    assert_eq!(store.dead_letter(dl.0).await.unwrap().unwrap().attempts, 3);
    assert!(store.delete_dead_letter(dl.0).await.unwrap());
    assert!(!store.delete_dead_letter(dl.0).await.unwrap());
    assert!(store.dead_letter(dl.0).await.unwrap().is_none());
}

pub async fn check_panel_extends_and_ends_access(store: &dyn Store) {
    store.upsert_subscriber(&subscriber(7), t0()).await.unwrap();
    let before = store.subscribers_version().await.unwrap();
    let p = store.extend_access(7, 10, t0()).await.unwrap();
    assert_eq!(
        (p.plan_id.as_str(), p.starts_at, p.ends_at),
        ("admin", t0(), t0() + Duration::days(10))
    );
    assert!(!p.trial && !p.renews && p.charge_id.is_none());
    assert_ne!(store.subscribers_version().await.unwrap(), before);
    let p2 = store.extend_access(7, 5, t0() + secs(60)).await.unwrap();
    assert_eq!((p2.id, p2.ends_at), (p.id, t0() + Duration::days(15)));
    assert_eq!(store.end_access(7, t0() + secs(120)).await.unwrap(), 1);
    let periods = store.access_periods(7).await.unwrap();
    assert_eq!(periods[0].revoked_at, Some(t0() + secs(120)));
    assert_eq!(store.end_access(7, t0() + secs(180)).await.unwrap(), 0);
    let fresh = store.extend_access(7, 1, t0() + secs(240)).await.unwrap();
    assert_ne!(fresh.id, p.id, "a revoked period is not extended");
}
