//! Plans (`GET /plans`, admins only): the plans and their prices as the main bot sells them
//! (`[[billing.plans]]`), and the subscriptions active now on each (trials too).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::State;
use axum::response::IntoResponse;
use chrono::Utc;

use super::{Chrome, Ctx, PageResult, Panel};

struct PlanLine {
    id: String,
    title: String,
    stars: u32,
    /// The provider's price in its smallest unit, when sold through one.
    provider_price: String,
    days: u32,
    categories: String,
    active: usize,
}

#[derive(Template, WebTemplate)]
#[template(path = "plans.html")]
struct PlansPage {
    b: Chrome,
    plans: Vec<PlanLine>,
    trial_days: u32,
    trials_active: usize,
    /// Active subscriptions on plans no longer configured: `(plan, count)`.
    others: Vec<(String, usize)>,
}

/// `GET /plans`.
pub async fn page(State(panel): State<Arc<Panel>>, ctx: Ctx) -> PageResult {
    let now = Utc::now();
    let mut active: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for p in panel.store().access_periods_ending_after(now).await? {
        if p.revoked_at.is_none() && p.starts_at <= now {
            let plan = if p.trial {
                jobwire_core::billing::TRIAL_PLAN.to_owned()
            } else {
                p.plan_id
            };
            active.entry(plan).or_default().insert(p.chat_id);
        }
    }
    let count = |id: &str| active.get(id).map_or(0, BTreeSet::len);
    let plans: Vec<PlanLine> = panel
        .state
        .plans()
        .iter()
        .map(|p| PlanLine {
            id: p.id.as_str().to_owned(),
            title: p.title.clone(),
            stars: p.stars,
            provider_price: p.provider_price.map(|x| x.to_string()).unwrap_or_default(),
            days: p.days,
            categories: p
                .categories
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            active: count(p.id.as_str()),
        })
        .collect();
    let trial = jobwire_core::billing::TRIAL_PLAN;
    let others = active
        .iter()
        .filter(|(id, _)| id.as_str() != trial && !plans.iter().any(|p| &p.id == *id))
        .map(|(id, chats)| (id.clone(), chats.len()))
        .collect();
    Ok(PlansPage {
        b: ctx.chrome("/plans"),
        trials_active: count(trial),
        trial_days: panel.state.trial_days(),
        plans,
        others,
    }
    .into_response())
}
