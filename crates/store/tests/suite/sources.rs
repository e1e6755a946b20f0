//! Sources are data: seeding from the configuration, what the admin panel adds, edits and
//! removes, the version every parser polls, and the per-source figures the panel shows.

use super::*;

fn telegram(handle: &str) -> SourceSpec {
    SourceInput {
        address: handle.to_owned(),
        enabled: true,
        ..SourceInput::default()
    }
    .parse()
    .unwrap()
}

fn feed(name: &str, url: &str) -> SourceSpec {
    SourceInput {
        address: url.to_owned(),
        name: name.to_owned(),
        enabled: true,
        interval_secs: Some(120),
        jitter_secs: Some(5),
        backfill: true,
        ..SourceInput::default()
    }
    .parse()
    .unwrap()
}

/// Asserts that the sources' version moved to a value not seen before.
async fn bumped(store: &dyn Store, versions: &mut Vec<i64>) {
    let v = store.sources_version().await.unwrap();
    assert!(
        !versions.contains(&v),
        "version {v} seen before: {versions:?}"
    );
    versions.push(v);
}

fn handles(rows: &[ChannelRow]) -> Vec<&str> {
    rows.iter().map(|r| r.handle.as_str()).collect()
}

pub async fn check_sources_seed_only_what_the_database_lacks(store: &dyn Store) {
    let v0 = store.sources_version().await.unwrap();
    let rust = SourceSpec {
        title: Some("Rust Jobs".to_owned()),
        include: vec!["rust".to_owned()],
        ..telegram("@RustJobs")
    };
    assert!(store.seed_channel(&rust, t0()).await.unwrap(), "inserted");
    let v1 = store.sources_version().await.unwrap();
    assert_ne!(v1, v0, "a seed that writes moves the version");

    // The admin edits it; the configuration still says the old thing at the next start.
    let row = store.sources().await.unwrap().remove(0);
    assert_eq!(row.handle, "@rustjobs");
    assert_eq!(row.kind, SourceKind::Telegram);
    assert_eq!(row.created_at, t0());
    let edit = SourceEdit {
        title: Some("Rust (edited)".to_owned()),
        enabled: false,
        include: vec!["rust".to_owned(), "tokio".to_owned()],
        exclude: vec!["crypto".to_owned()],
    };
    let edited = store
        .update_source(row.id, &edit, t0() + secs(5))
        .await
        .unwrap()
        .unwrap();
    let v2 = store.sources_version().await.unwrap();
    assert!(!store.seed_channel(&rust, t0() + secs(9)).await.unwrap());
    assert_eq!(
        store.source(row.id).await.unwrap(),
        Some(edited.clone()),
        "the admin's edit survives a restart"
    );
    assert_eq!(
        store.sources_version().await.unwrap(),
        v2,
        "no write, no bump"
    );

    // A channel only an import named becomes the configured source …
    let imported = store.ensure_channel("feed:lara", t0()).await.unwrap();
    assert_eq!(imported.kind, SourceKind::External);
    assert!(
        !store
            .sources()
            .await
            .unwrap()
            .iter()
            .any(|r| r.id == imported.id)
    );
    let lara = feed("feed:lara", "https://larajobs.com/feed?token=SECRET");
    assert!(store.seed_channel(&lara, t0()).await.unwrap());
    let seeded = store.source(imported.id).await.unwrap().unwrap();
    assert_eq!(seeded.kind, SourceKind::Feed);
    assert_eq!(seeded.feed, lara.feed);
    assert!(!format!("{seeded:?}").contains("SECRET"), "{seeded:?}");

    // … and one the admin removed stays removed.
    assert!(store.remove_source(seeded.id, t0()).await.unwrap());
    assert!(!store.seed_channel(&lara, t0()).await.unwrap());
    assert!(
        store
            .source(seeded.id)
            .await
            .unwrap()
            .unwrap()
            .removed_at
            .is_some()
    );
    assert_eq!(handles(&store.sources().await.unwrap()), ["@rustjobs"]);
}

pub async fn check_sources_add_edit_remove_revive(store: &dyn Store) {
    let mut versions = vec![store.sources_version().await.unwrap()];

    let invite = store
        .add_source(
            &SourceSpec {
                title: Some("Private chat".to_owned()),
                exclude: vec!["#ad".to_owned()],
                ..telegram("https://t.me/joinchat/AbCdEf123")
            },
            t0(),
        )
        .await
        .unwrap();
    bumped(store, &mut versions).await;
    assert_eq!(invite.handle, "https://t.me/+AbCdEf123");
    assert_eq!(invite.title.as_deref(), Some("Private chat"));
    assert_eq!(invite.exclude, ["#ad"]);
    assert!(invite.enabled && invite.removed_at.is_none() && invite.is_read());

    let lara = store
        .add_source(&feed("feed:lara", "https://larajobs.com/feed"), t0())
        .await
        .unwrap();
    bumped(store, &mut versions).await;
    let settings = lara.feed.clone().unwrap();
    assert_eq!(settings.url, "https://larajobs.com/feed");
    assert_eq!((settings.interval_secs, settings.jitter_secs), (120, 5));
    assert!(settings.backfill);
    assert_eq!(
        store.source_by_handle("feed:lara").await.unwrap(),
        Some(lara.clone())
    );

    // A disabled source is still listed (the panel shows it), but not read.
    let disabled = store
        .update_source(
            invite.id,
            &SourceEdit {
                enabled: false,
                ..SourceEdit::default()
            },
            t0() + secs(1),
        )
        .await
        .unwrap()
        .unwrap();
    bumped(store, &mut versions).await;
    assert!(!disabled.enabled && !disabled.is_read());
    assert_eq!(disabled.title, None);
    assert!(disabled.exclude.is_empty());
    assert_eq!(disabled.updated_at, t0() + secs(1));
    assert_eq!(
        handles(&store.sources().await.unwrap()),
        ["https://t.me/+AbCdEf123", "feed:lara"]
    );

    // Removed: posts keep their channel, the source is neither listed nor editable.
    let post = add_post(store, lara.id, "1", PostStatus::Queued).await;
    assert!(store.remove_source(lara.id, t0() + secs(2)).await.unwrap());
    bumped(store, &mut versions).await;
    assert!(!store.remove_source(lara.id, t0() + secs(3)).await.unwrap());
    assert_eq!(
        handles(&store.sources().await.unwrap()),
        ["https://t.me/+AbCdEf123"]
    );
    assert_eq!(
        store.post(post).await.unwrap().unwrap().channel_handle,
        "feed:lara"
    );
    assert_eq!(
        store
            .update_source(lara.id, &SourceEdit::default(), t0())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .update_source(ChannelId(999_999), &SourceEdit::default(), t0())
            .await
            .unwrap(),
        None
    );
    let versions_now = store.sources_version().await.unwrap();
    assert_eq!(
        versions_now,
        *versions.last().unwrap(),
        "refused changes do not bump"
    );

    // Adding the handle again revives the same row with the new settings.
    store
        .note_source("feed:lara", &SourceNote::Error("HTTP 503".to_owned()), t0())
        .await
        .unwrap();
    let revived = store
        .add_source(
            &SourceSpec {
                include: vec!["laravel".to_owned()],
                ..feed("feed:lara", "https://larajobs.com/feed.xml")
            },
            t0() + secs(4),
        )
        .await
        .unwrap();
    bumped(store, &mut versions).await;
    assert_eq!(revived.id, lara.id);
    assert_eq!(revived.removed_at, None);
    assert_eq!(revived.include, ["laravel"]);
    assert_eq!(revived.feed.unwrap().url, "https://larajobs.com/feed.xml");
    assert_eq!(revived.created_at, t0());
    let stats = store.source_stats(t0() - secs(60), t0()).await.unwrap();
    assert_eq!(
        stats
            .iter()
            .find(|s| s.channel_id == lara.id)
            .unwrap()
            .last_error,
        None,
        "a revived source starts without its old error"
    );
    assert_eq!(store.sources().await.unwrap().len(), 2);
}

pub async fn check_source_stats(store: &dyn Store) {
    let rust = store
        .add_source(&telegram("@rustjobs"), t0())
        .await
        .unwrap();
    let quiet = store
        .add_source(&telegram("@quietjobs"), t0())
        .await
        .unwrap();
    let lara = store
        .add_source(&feed("feed:lara", "https://larajobs.com/feed"), t0())
        .await
        .unwrap();
    // Four posts read in the last two days: two vacancies, an ad, one filtered; one older.
    for (n, kind) in [
        (1, Some(true)),
        (2, Some(true)),
        (3, Some(false)),
        (4, None),
    ] {
        let mut post = new_post(rust.id, &n.to_string(), PostStatus::Queued);
        post.posted_at = t0() - Duration::hours(10 - n);
        post.received_at = t0() - Duration::hours(10 - n);
        let id = inserted(store.insert_post(&post).await.unwrap());
        if let Some(is_job) = kind {
            store
                .record_classification(id, &verdict(is_job), t0())
                .await
                .unwrap();
        }
    }
    let mut old = new_post(rust.id, "0", PostStatus::Queued);
    old.posted_at = t0() - Duration::days(5);
    old.received_at = t0() - Duration::days(5);
    inserted(store.insert_post(&old).await.unwrap());

    store
        .note_source(
            "@rustjobs",
            &SourceNote::Error("CHANNEL_PRIVATE".to_owned()),
            t0(),
        )
        .await
        .unwrap();
    store
        .note_source("@rustjobs", &SourceNote::Joined, t0() + secs(1))
        .await
        .unwrap();
    store
        .note_source("@rustjobs", &SourceNote::Joined, t0() + secs(9))
        .await
        .unwrap();
    store
        .note_source("feed:lara", &SourceNote::Error("HTTP 503".to_owned()), t0())
        .await
        .unwrap();
    let version = store.sources_version().await.unwrap();

    let stats = store
        .source_stats(t0() - Duration::days(2), t0())
        .await
        .unwrap();
    assert_eq!(
        stats.iter().map(|s| s.channel_id).collect::<Vec<_>>(),
        [rust.id, quiet.id, lara.id]
    );
    let r = &stats[0];
    assert_eq!(
        r.joined_at,
        Some(t0() + secs(1)),
        "joined when first joined"
    );
    assert_eq!(r.last_error, None, "joining clears the earlier error");
    assert_eq!(r.last_post_at, Some(t0() - Duration::hours(6)));
    assert_eq!((r.posts, r.jobs), (4, 2));
    assert!((r.posts_per_day - 2.0).abs() < 1e-9, "{}", r.posts_per_day);
    assert_eq!(r.job_share, Some(0.5));
    let q = &stats[1];
    assert_eq!((q.posts, q.jobs, q.job_share), (0, 0, None));
    assert_eq!((q.joined_at, q.last_post_at), (None, None));
    let l = &stats[2];
    assert_eq!(l.last_error.as_deref(), Some("HTTP 503"));
    assert_eq!(l.last_error_at, Some(t0()));

    store
        .note_source("feed:lara", &SourceNote::Ok, t0() + secs(5))
        .await
        .unwrap();
    let stats = store
        .source_stats(t0() - Duration::days(2), t0())
        .await
        .unwrap();
    assert_eq!(stats[2].last_error, None);
    assert_eq!(stats[2].last_error_at, None);
    assert_eq!(
        store.sources_version().await.unwrap(),
        version,
        "what readers note is not a change of the sources"
    );
    // Removed sources are not counted.
    store.remove_source(quiet.id, t0()).await.unwrap();
    assert_eq!(store.source_stats(t0(), t0()).await.unwrap().len(), 2);
}
