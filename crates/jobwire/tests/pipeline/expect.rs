//! What the end-to-end runs must produce, computed independently of the pipeline from the
//! labels of data/dev.jsonl: shared by the embedded and the distributed end-to-end tests.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jobwire::testbed::Bed;
use jobwire_core::normalize::normalize;
use jobwire_core::rules::{ChannelRules, CompiledRules, RuleDecision, Term};
use jobwire_core::subscriber::{Subscriber, SubscriberId};
use jobwire_store::{PostId, SubscriberSpec};

use crate::support::*;

pub fn subscribers() -> Vec<SubscriberSpec> {
    let mut clara = subscriber(3, &["web"]);
    clara.include = words(&["wordpress", "tilda", "react", "вордпресс", "тильд"]);
    let mut dmitry = subscriber(4, &["marketing", "assistant"]);
    dmitry.exclude = words(&["бесплатно", "unpaid", "бартер", "#удаленка"]);
    let mut paused = subscriber(5, &["web", "bots", "design", "texts"]);
    paused.paused = true;
    let mut hashtags = subscriber(7, &["ai", "mobile", "data", "bots"]);
    hashtags.include = words(&["#вакансия", "#hiring", "python", "flutter"]);
    vec![
        subscriber(1, &["design", "video"]),
        subscriber(2, &["bots", "data"]),
        clara,
        dmitry,
        paused,
        subscriber(6, &["texts", "translation", "audio"]),
        hashtags,
        subscriber(-100, &["web", "bots", "mobile", "ai", "design"]),
        subscriber(9, &["web", "design", "marketing"]),
    ]
}

pub const BLOCKED: i64 = 9;

pub fn channel_rules() -> Vec<jobwire::config::ChannelConfig> {
    vec![
        jobwire::config::ChannelConfig {
            handle: "@udalenka_vakansii".into(),
            title: Some("Удалёнка".into()),
            enabled: true,
            include: vec![],
            exclude: words(&["#резюме", "#ищуработу"]),
        },
        jobwire::config::ChannelConfig {
            handle: "@smm_vakansii".into(),
            title: None,
            enabled: true,
            include: words(&["#вакансия", "ищем", "нужен", "требуется"]),
            exclude: vec![],
        },
    ]
}

/// Checks that every subscriber got exactly the labeled jobs that match them (computed with
/// the plain per-subscriber check), once, and that Telegram accepted every message.
pub async fn verify(
    store: &dyn jobwire_store::Store,
    telegram: &jobwire_testkit::telegram::FakeTelegram,
    bed: &Bed,
    channels: &[jobwire::config::ChannelConfig],
    jobs_seen: u64,
) {
    let data = dataset();
    let settings_channels = channels;
    // What should have happened, computed from the labels with the plain per-subscriber check.
    let rules: HashMap<&str, CompiledRules> = settings_channels
        .iter()
        .map(|c| {
            let r = ChannelRules::parse(c.include.iter(), c.exclude.iter()).unwrap();
            (c.handle.as_str(), CompiledRules::new(&r))
        })
        .collect();
    let domain: Vec<Subscriber> = subscribers()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut d = Subscriber::new(SubscriberId(i as i64), s.chat_id);
            d.categories = s.categories.clone();
            d.include = s.include.iter().map(|t| Term::parse(t).unwrap()).collect();
            d.exclude = s.exclude.iter().map(|t| Term::parse(t).unwrap()).collect();
            d.paused = s.paused;
            d.blocked = s.chat_id == BLOCKED;
            d
        })
        .collect();
    // Near-duplicates (re-posts of an earlier vacancy) are delivered once, as the earlier
    // post: each one the pipeline found must really repeat its original (same dup_group).
    let group: HashMap<&str, Option<&str>> = data
        .iter()
        .map(|p| (p.id.as_str(), p.dup_group.as_deref()))
        .collect();
    let counts = store.pipeline_counts().await.unwrap();
    let mut near_duplicates = BTreeSet::new();
    for id in (1..=counts.posts as i64).map(PostId) {
        let Some(post) = store.post(id).await.unwrap() else {
            continue;
        };
        if post.status != jobwire_store::PostStatus::Duplicate {
            continue;
        }
        let of = store
            .duplicate_of(id)
            .await
            .unwrap()
            .expect("a duplicate names its original");
        let original = store.post(of).await.unwrap().unwrap();
        let g = group[post.external_id.as_str()];
        assert!(
            g.is_some() && g == group[original.external_id.as_str()],
            "{} is not a re-post of {}",
            post.external_id,
            original.external_id
        );
        near_duplicates.insert(post.external_id);
    }
    assert!(
        near_duplicates.len() >= 15,
        "re-posts are recognised: {near_duplicates:?}"
    );
    let mut expected: BTreeSet<(i64, String)> = BTreeSet::new();
    let mut jobs = 0;
    for post in &data {
        let label = post.label.as_ref().unwrap();
        let normalized = normalize(&post.text);
        let passes = rules
            .get(post.channel.as_str())
            .is_none_or(|r| r.check(&normalized) == RuleDecision::Pass);
        if !label.is_job || !passes || near_duplicates.contains(&post.id) {
            continue;
        }
        jobs += 1;
        for s in &domain {
            if s.wants(&label.categories, &normalized) {
                expected.insert((s.chat_id, post.id.clone()));
            }
        }
    }
    assert_eq!(
        jobs_seen, jobs,
        "every labeled job that passed its channel rules is a job"
    );

    // What did happen, from the database...
    let by_post_id: HashMap<PostId, String> = {
        let mut m = HashMap::new();
        for d in store.sent_deliveries().await.unwrap() {
            let post = store.post(d.post_id).await.unwrap().unwrap();
            m.insert(d.post_id, post.external_id);
        }
        m
    };
    let sent = store.sent_deliveries().await.unwrap();
    let delivered: BTreeSet<(i64, String)> = sent
        .iter()
        .map(|d| (d.chat_id, by_post_id[&d.post_id].clone()))
        .collect();
    assert_eq!(
        delivered.len(),
        sent.len(),
        "one delivery per (job, subscriber)"
    );
    let missing: Vec<_> = expected.difference(&delivered).collect();
    let extra: Vec<_> = delivered.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}\nextra {extra:?}"
    );
    assert!(
        expected.len() > 100,
        "a meaningful number of deliveries: {}",
        expected.len()
    );

    // ... and from what the fake Telegram accepted.
    let messages = telegram.messages();
    let stats = telegram.stats();
    assert_eq!(stats.rejected_400, 0, "no message was refused as malformed");
    assert_eq!(stats.rejected_429, 0, "the limits were never exceeded");
    assert!(stats.rejected_403 >= 1, "the blocked chat answered 403");
    let mut seen: BTreeMap<(u64, i64, i64), usize> = BTreeMap::new();
    for m in &messages {
        *seen.entry((m.bot_id, m.chat_id, m.message_id)).or_default() += 1;
        assert!(m.visible_text.chars().count() <= 4096);
        assert_ne!(m.chat_id, BLOCKED);
    }
    let texts: HashMap<&str, &str> = data
        .iter()
        .map(|p| (p.id.as_str(), p.text.as_str()))
        .collect();
    let mut per_job_chat: BTreeMap<(i64, String), usize> = BTreeMap::new();
    for d in &sent {
        let ext = &by_post_id[&d.post_id];
        assert!(!d.message_ids.is_empty());
        let bot = bed.bot_id(&d.bot).unwrap();
        let first = messages
            .iter()
            .find(|m| m.bot_id == bot && m.chat_id == d.chat_id && m.message_id == d.message_ids[0])
            .expect("every recorded message id was accepted by Telegram");
        let want = gist(texts[ext.as_str()], 40);
        assert!(
            collapse(&first.visible_text).contains(&want),
            "message for {ext} shows the post: {:?} vs {want:?}",
            first.visible_text
        );
        for id in &d.message_ids {
            *per_job_chat.entry((d.chat_id, ext.clone())).or_default() +=
                seen[&(bot, d.chat_id, *id)];
        }
    }
    assert!(
        seen.values().all(|n| *n == 1),
        "no (bot, chat, message id) twice"
    );
    assert!(
        per_job_chat.iter().all(|(_, n)| *n >= 1),
        "every delivery's messages reached Telegram"
    );
    let total_parts: usize = sent.iter().map(|d| d.message_ids.len()).sum();
    assert_eq!(
        messages.len(),
        total_parts,
        "Telegram got exactly the recorded messages, none twice"
    );
}
