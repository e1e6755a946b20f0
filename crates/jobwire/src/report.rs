//! The daily report: what the classifiers did and cost over a period, and what the
//! pipeline holds now, and the messages that failed for good (`jobwire report`).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use jobwire_store::{BillingCounts, ClassificationTotals, DeadLetterRow, Store};

/// Renders the report of classifications since `since` (plain text, one line per model).
pub async fn daily_report(
    store: &dyn Store,
    since: DateTime<Utc>,
    hours: u32,
) -> anyhow::Result<String> {
    let totals = store.classification_totals(since).await?;
    let counts = store.pipeline_counts().await?;
    let mut out = render(&totals, &counts, hours);
    let dead = store.dead_letter_count(since).await?;
    let latest = store.dead_letters(5).await?;
    out.push_str(&render_dead_letters(dead, &latest, hours));
    out.push_str(&render_billing(&store.billing_counts(since).await?, hours));
    Ok(out)
}

/// Users, trials and money over the period.
pub fn render_billing(b: &BillingCounts, hours: u32) -> String {
    let money = |list: &[(String, i64)]| {
        if list.is_empty() {
            return "0".to_owned();
        }
        list.iter()
            .map(|(currency, amount)| {
                if currency == jobwire_core::billing::STARS {
                    format!("{amount} Stars")
                } else {
                    // Provider currencies are kept in their smallest unit (kopecks, cents).
                    format!("{}.{:02} {currency}", amount / 100, amount % 100)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "billing, last {hours} h: new users {}, trials started {}, trials converted {}, payments {}, renewals {}, refunds {}; revenue {}; refunded {}\n",
        b.new_users,
        b.trials_started,
        b.trials_converted,
        b.payments,
        b.renewals,
        b.refunds,
        money(&b.revenue),
        money(&b.refunded),
    )
}

/// Messages that failed for good: how many in the period, and the latest few with their
/// reason (payloads are ids, so they name the post or delivery to look at).
pub fn render_dead_letters(count: u64, latest: &[DeadLetterRow], hours: u32) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "dead letters, last {hours} h: {count}");
    for d in latest {
        let _ = writeln!(
            out,
            "  #{} {} {} after {} attempts: {}  {}",
            d.id,
            d.created_at.format("%Y-%m-%d %H:%M:%S"),
            d.topic,
            d.attempts,
            d.reason,
            d.payload
        );
    }
    out
}

/// Whether a model name is the local model's (`local:<hash>`).
fn is_local(t: &ClassificationTotals) -> bool {
    t.prompt_version
        .as_deref()
        .is_some_and(|v| v.starts_with("local"))
}

pub fn render(
    totals: &[ClassificationTotals],
    counts: &jobwire_store::PipelineCounts,
    hours: u32,
) -> String {
    let mut out = String::new();
    let posts: u64 = totals.iter().map(|t| t.posts).sum();
    let jobs: u64 = totals.iter().map(|t| t.jobs).sum();
    let llm_posts: u64 = totals
        .iter()
        .filter(|t| !is_local(t))
        .map(|t| t.posts)
        .sum();
    // `+ 0.0`: an empty sum of f64 is -0.0, which would print as "$-0.0000".
    let cost: f64 = totals.iter().map(|t| t.cost_usd).sum::<f64>() + 0.0;
    let per = |total: f64, n: u64| if n == 0 { 0.0 } else { total / n as f64 };
    let _ = writeln!(
        out,
        "last {hours} h: {posts} posts classified, {jobs} jobs; {llm_posts} by the LLM ({:.1}%), ${cost:.4}: ${:.4} per 1000 posts, ${:.6} per LLM post",
        per(llm_posts as f64 * 100.0, posts),
        per(cost * 1000.0, posts),
        per(cost, llm_posts),
    );
    for t in totals {
        let _ = writeln!(
            out,
            "  {:<28} {:<12} {:>6} posts {:>6} jobs {:>9} tokens in {:>8} out  ${:.4} (${:.6}/post)  {:.0} ms avg",
            t.model,
            t.prompt_version.as_deref().unwrap_or("-"),
            t.posts,
            t.jobs,
            t.tokens_in,
            t.tokens_out,
            t.cost_usd,
            per(t.cost_usd, t.posts),
            if t.posts == 0 {
                0.0
            } else {
                t.latency_ms as f64 / t.posts as f64
            }
        );
    }
    let _ = writeln!(
        out,
        "now: {} waiting for the classifier, {} deliveries pending, {} held, {} sent, {} blocked, {} failed, {} withheld after reports",
        counts.waiting,
        counts.deliveries_pending,
        counts.deliveries_held,
        counts.deliveries_sent,
        counts.deliveries_blocked,
        counts.deliveries_failed,
        counts.deliveries_withheld
    );
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_billing_line_counts_people_and_money_per_currency() {
        let line = super::render_billing(
            &jobwire_store::BillingCounts {
                new_users: 12,
                trials_started: 10,
                trials_converted: 3,
                payments: 4,
                renewals: 2,
                refunds: 1,
                revenue: vec![("RUB".into(), 49_000), ("XTR".into(), 1_330)],
                refunded: vec![("XTR".into(), 80)],
            },
            24,
        );
        assert_eq!(
            line,
            "billing, last 24 h: new users 12, trials started 10, trials converted 3, payments 4, renewals 2, refunds 1; revenue 490.00 RUB, 1330 Stars; refunded 80 Stars\n"
        );
        let empty = super::render_billing(&jobwire_store::BillingCounts::default(), 24);
        assert!(empty.contains("revenue 0; refunded 0"), "{empty}");
    }

    use super::*;

    #[test]
    fn the_report_sums_models_and_shows_the_llm_share_and_cost() {
        let totals = vec![
            ClassificationTotals {
                model: "local:ab12".into(),
                prompt_version: Some("local.v2".into()),
                posts: 75,
                jobs: 40,
                tokens_in: 0,
                tokens_out: 0,
                cost_usd: 0.0,
                latency_ms: 75,
            },
            ClassificationTotals {
                model: "gpt-4o-mini".into(),
                prompt_version: Some("classify.v3".into()),
                posts: 25,
                jobs: 10,
                tokens_in: 20_000,
                tokens_out: 3_000,
                cost_usd: 0.0048,
                latency_ms: 25_000,
            },
        ];
        let quiet = render(&[], &jobwire_store::PipelineCounts::default(), 24);
        assert!(
            quiet.starts_with(
                "last 24 h: 0 posts classified, 0 jobs; 0 by the LLM (0.0%), $0.0000:"
            ),
            "{quiet}"
        );
        let text = render(&totals, &jobwire_store::PipelineCounts::default(), 24);
        assert!(
            text.starts_with(
                "last 24 h: 100 posts classified, 50 jobs; 25 by the LLM (25.0%), $0.0048: $0.0480 per 1000 posts, $0.000192 per LLM post"
            ),
            "{text}"
        );
        assert!(text.contains("gpt-4o-mini"), "{text}");
        assert!(text.contains("$0.0048 ($0.000192/post)"), "{text}");
        assert!(text.contains("1000 ms avg"), "{text}");
    }
}
