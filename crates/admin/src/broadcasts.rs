//! Broadcasts from the operator: the message checked with Telegram's own HTML parser, the
//! audience chosen (all subscribers, or those of a category, plan or language, or those
//! active in the last N days), the recipients stored; the send stage sends them
//! (`jobwire_deliver::broadcast`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::Utc;
use jobwire_core::CategorySlug;
use jobwire_store::{BroadcastRow, Store};
use serde_json::{Value, json};

use jobwire_fanout::CategoryRoute;

/// What creating a broadcast needs to know of the configuration: the categories (with their
/// bots), the plans, and the main bot.
#[derive(Debug, Clone, Default)]
pub struct BroadcastSetup {
    pub routes: Vec<CategoryRoute>,
    pub plans: Vec<String>,
    pub main_bot: Option<String>,
}

/// Who a broadcast goes to; every field narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Audience {
    pub category: Option<CategorySlug>,
    /// Subscribers with a current period of this plan.
    pub plan: Option<String>,
    /// Subscribers whose Telegram reads this language (`ru`, `en`).
    pub language: Option<String>,
    /// Subscribers who did something in the bots in the last this many days: saved their
    /// settings, reported a post, hid an author, paid, or wrote from a client in another
    /// language (see `SubscriberStore::active_chats_since`).
    pub active_days: Option<u32>,
}

/// Longest "active in the last N days" window, in days (ten years).
pub const MAX_ACTIVE_DAYS: u32 = 3650;

impl Audience {
    pub fn to_json(&self) -> Value {
        json!({
            "category": self.category.as_ref().map(CategorySlug::as_str),
            "plan": self.plan,
            "language": self.language,
            "active_days": self.active_days,
        })
    }
}

/// Why a broadcast was refused.
#[derive(Debug, thiserror::Error)]
pub enum BroadcastError {
    #[error("the message is empty")]
    Empty,
    #[error("Telegram would refuse this HTML: {0}")]
    Html(String),
    #[error("the message is {0} characters long; Telegram takes at most 4096")]
    TooLong(usize),
    #[error("unknown category {0:?}")]
    UnknownCategory(String),
    #[error("unknown plan {0:?}")]
    UnknownPlan(String),
    #[error("unknown language {0:?}: use ru or en")]
    UnknownLanguage(String),
    #[error("active in the last {0} days: use 1 to {MAX_ACTIVE_DAYS} days")]
    BadActiveDays(u32),
    #[error("nobody matches this audience")]
    NoRecipients,
    #[error("no bot can send it: configure telegram.main_bot or a category bot")]
    NoBot,
    #[error(
        "the same message is being broadcast already (#{0}, started {1}); pause or cancel it first"
    )]
    Repeated(jobwire_store::BroadcastId, String),
    #[error(transparent)]
    Store(#[from] jobwire_store::StoreError),
}

/// Checks `text` as Telegram's HTML parse mode will (tags, entities, length after parsing).
pub fn check_html(text: &str) -> Result<(), BroadcastError> {
    if text.trim().is_empty() {
        return Err(BroadcastError::Empty);
    }
    let (visible, entities) =
        jobwire_core::tghtml::parse_html(text).map_err(BroadcastError::Html)?;
    let (visible, _) = jobwire_core::tghtml::trim(&visible, entities);
    let len = visible.chars().count();
    if len == 0 {
        return Err(BroadcastError::Empty);
    }
    if len > 4096 {
        return Err(BroadcastError::TooLong(len));
    }
    Ok(())
}

/// Checks the message and the audience, stores the broadcast with its recipients, and
/// returns it. Each recipient gets it from the main bot, or, when the main bot cannot write
/// to them, from the first bot of their categories that can.
pub async fn create(
    setup: &BroadcastSetup,
    store: &Arc<dyn Store>,
    text: &str,
    audience: &Audience,
) -> Result<BroadcastRow, BroadcastError> {
    check_html(text)?;
    // A retried request (a timeout after the commit) must not send everyone a second copy.
    let recent = Utc::now() - chrono::Duration::minutes(10);
    if let Some(b) = store
        .broadcasts(50, Utc::now())
        .await?
        .into_iter()
        .find(|b| {
            b.text == text
                && b.created_at > recent
                && matches!(
                    b.status,
                    jobwire_store::BroadcastStatus::Running
                        | jobwire_store::BroadcastStatus::Paused
                )
        })
    {
        return Err(BroadcastError::Repeated(b.id, b.created_at.to_rfc3339()));
    }
    let recipients = recipients(setup, store, audience).await?;
    let now = Utc::now();
    let id = store
        .create_broadcast(text, &audience.to_json(), &recipients, now)
        .await?;
    tracing::info!(
        broadcast = id.get(),
        recipients = recipients.len(),
        "broadcast created"
    );
    store.broadcast(id, now).await?.ok_or(BroadcastError::Store(
        jobwire_store::StoreError::Corrupt {
            column: "broadcasts.id",
            detail: format!("broadcast {id} just stored is not found"),
        },
    ))
}

/// Who a broadcast to `audience` would reach, and through which bot: each recipient gets it
/// from the main bot, or, when the main bot cannot write to them, from the first bot of
/// their categories that can. Nobody is refused ([`BroadcastError::NoRecipients`]).
pub async fn recipients(
    setup: &BroadcastSetup,
    store: &Arc<dyn Store>,
    audience: &Audience,
) -> Result<Vec<(i64, String)>, BroadcastError> {
    if let Some(c) = &audience.category
        && !setup.routes.iter().any(|k| &k.slug == c)
    {
        return Err(BroadcastError::UnknownCategory(c.to_string()));
    }
    if let Some(p) = &audience.plan
        && !setup.plans.iter().any(|k| k == p)
    {
        return Err(BroadcastError::UnknownPlan(p.clone()));
    }
    if let Some(l) = &audience.language
        && l != "ru"
        && l != "en"
    {
        return Err(BroadcastError::UnknownLanguage(l.clone()));
    }
    if let Some(d) = audience.active_days
        && !(1..=MAX_ACTIVE_DAYS).contains(&d)
    {
        return Err(BroadcastError::BadActiveDays(d));
    }
    let now = Utc::now();
    let routes = &setup.routes;
    let main = setup.main_bot.clone();
    if main.is_none() && routes.is_empty() {
        return Err(BroadcastError::NoBot);
    }
    // A handful of reads for the whole audience, not a few per subscriber: a broadcast to
    // 100,000 subscribers is created well within an HTTP request's time.
    let languages = match &audience.language {
        Some(_) => store.chat_languages().await?,
        None => HashMap::new(),
    };
    let on_plan: HashSet<i64> = match &audience.plan {
        Some(p) => store
            .access_periods_ending_after(now)
            .await?
            .into_iter()
            .filter(|r| &r.plan_id == p && r.revoked_at.is_none() && r.starts_at <= now)
            .map(|r| r.chat_id)
            .collect(),
        None => HashSet::new(),
    };
    let active: Option<HashSet<i64>> = match audience.active_days {
        Some(d) => Some(
            store
                .active_chats_since(now - chrono::Duration::days(i64::from(d)))
                .await?,
        ),
        None => None,
    };
    let mut blocked: HashMap<i64, Vec<String>> = HashMap::new();
    for b in store.bot_blocks(None).await? {
        blocked.entry(b.chat_id).or_default().push(b.bot);
    }
    let mut recipients = Vec::new();
    for sub in store.subscribers().await? {
        if sub.blocked {
            continue;
        }
        if let Some(c) = &audience.category
            && !sub.categories.contains(c)
        {
            continue;
        }
        if let Some(l) = &audience.language
            && languages.get(&sub.chat_id).map_or("ru", String::as_str) != l
        {
            continue;
        }
        if audience.plan.is_some() && !on_plan.contains(&sub.chat_id) {
            continue;
        }
        if active.as_ref().is_some_and(|a| !a.contains(&sub.chat_id)) {
            continue;
        }
        let cannot = blocked.get(&sub.chat_id);
        let bot = main
            .iter()
            .cloned()
            .chain(
                sub.categories
                    .iter()
                    .filter_map(|c| routes.iter().find(|r| &r.slug == c))
                    .map(|r| r.bot.clone()),
            )
            .find(|b| cannot.is_none_or(|list| !list.contains(b)));
        if let Some(bot) = bot {
            recipients.push((sub.chat_id, bot));
        }
    }
    if recipients.is_empty() {
        return Err(BroadcastError::NoRecipients);
    }
    Ok(recipients)
}

/// One line of progress: `#3 running: 1200 sent, 3 failed, 10 blocked, 0 unknown, 3787 remaining · 29.8/s · ETA 2m07s`.
pub fn progress_line(b: &BroadcastRow) -> String {
    let p = &b.progress;
    let eta = match (b.status, p.eta_secs()) {
        (jobwire_store::BroadcastStatus::Running, Some(s)) => {
            format!(" · ETA {}m{:02}s", s / 60, s % 60)
        }
        _ => String::new(),
    };
    format!(
        "#{} {}: {} sent, {} failed, {} blocked, {} unknown, {} remaining of {} · {:.1}/s{eta}",
        b.id,
        b.status.as_str(),
        p.sent,
        p.failed,
        p.blocked,
        p.unknown,
        p.remaining(),
        p.total(),
        p.rate()
    )
}

/// A broadcast as the admin API shows it.
pub fn to_json(b: &BroadcastRow) -> Value {
    let p = &b.progress;
    json!({
        "id": b.id,
        "status": b.status.as_str(),
        "text": b.text,
        "audience": b.audience,
        "created_at": b.created_at.to_rfc3339(),
        "finished_at": b.finished_at.map(|t| t.to_rfc3339()),
        "sent": p.sent,
        "failed": p.failed,
        "blocked": p.blocked,
        "unknown": p.unknown,
        "remaining": p.remaining(),
        "total": p.total(),
        "rate_per_sec": p.rate(),
        "eta_secs": p.eta_secs(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_checked_like_telegram_does() {
        assert!(check_html("<b>New:</b> résumés &amp; digests").is_ok());
        for bad in [
            "<b>unclosed",
            "<script>x</script>",
            "a &bogus b <",
            "   ",
            "<b></b>",
        ] {
            assert!(check_html(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            check_html(&"x".repeat(4097)),
            Err(BroadcastError::TooLong(4097))
        ));
    }
}
