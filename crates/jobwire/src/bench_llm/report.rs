//! What a run prints and returns: quantiles, the billed cost, each design's figures and
//! summary, and the linger sweep's table.

use jobwire_testkit::llm::FakeLlmStats;
use serde_json::{Value, json};

use super::{Outcome, PRICE_CACHED_IN_PER_MTOK, PRICE_IN_PER_MTOK, PRICE_OUT_PER_MTOK};

/// The `q` quantile of `values` (nearest rank), `None` without values.
fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// What the fake's token counts cost at the benchmark's prices.
fn billed_usd(s: &FakeLlmStats) -> f64 {
    let cached = s.cached_tokens.min(s.prompt_tokens);
    ((s.prompt_tokens - cached) as f64 * PRICE_IN_PER_MTOK
        + cached as f64 * PRICE_CACHED_IN_PER_MTOK
        + s.completion_tokens as f64 * PRICE_OUT_PER_MTOK)
        / 1e6
}

fn ratio(a: f64, b: usize) -> Option<f64> {
    (b > 0).then(|| a / b as f64)
}

/// The design's figures under their JSON names (without the design's prefix).
pub(super) fn figures(o: &Outcome) -> Vec<(&'static str, Value)> {
    let s = &o.stats;
    let all_llm: Vec<f64> = o.llm_steady.iter().chain(&o.llm_burst).copied().collect();
    vec![
        ("llm_p50_ms", json!(quantile(&o.llm_steady, 0.50))),
        ("llm_p95_ms", json!(quantile(&o.llm_steady, 0.95))),
        ("llm_p99_ms", json!(quantile(&o.llm_steady, 0.99))),
        ("llm_max_ms", json!(quantile(&o.llm_steady, 1.0))),
        (
            "before_burst_llm_p95_ms",
            json!(quantile(&o.llm_before_burst, 0.95)),
        ),
        ("burst_llm_p50_ms", json!(quantile(&o.llm_burst, 0.50))),
        ("burst_llm_p95_ms", json!(quantile(&o.llm_burst, 0.95))),
        ("burst_llm_max_ms", json!(quantile(&o.llm_burst, 1.0))),
        ("burst_intake_ms", json!(o.burst_intake_ms)),
        ("all_llm_p95_ms", json!(quantile(&all_llm, 0.95))),
        ("local_p50_ms", json!(quantile(&o.local_steady, 0.50))),
        ("local_p95_ms", json!(quantile(&o.local_steady, 0.95))),
        ("burst_local_p95_ms", json!(quantile(&o.local_burst, 0.95))),
        (
            "requests_per_100_llm_posts",
            json!(ratio(s.requests as f64 * 100.0, o.llm_posts)),
        ),
        (
            "output_tokens_per_llm_post",
            json!(ratio(s.completion_tokens as f64, o.llm_posts)),
        ),
        (
            "posts_per_request",
            json!(ratio(s.posts as f64, s.answered_requests as usize)),
        ),
        (
            "usd_per_1000_posts",
            json!(ratio(billed_usd(s) * 1000.0, o.fed)),
        ),
        (
            "stored_usd_per_1000_posts",
            json!(ratio(o.stored_usd * 1000.0, o.fed)),
        ),
        (
            "cached_prompt_share",
            json!(ratio(s.cached_tokens as f64, s.prompt_tokens as usize)),
        ),
        (
            "llm_share",
            json!(ratio(o.llm_posts as f64, o.llm_posts + o.local_posts)),
        ),
        ("llm_posts", json!(o.llm_posts)),
        ("local_posts", json!(o.local_posts)),
        ("llm_requests", json!(s.requests)),
        ("llm_failed_requests", json!(s.requests - s.ok)),
        ("oracle_misses", json!(s.oracle_misses)),
        ("posts_queued", json!(o.queued)),
        ("near_duplicates", json!(o.near_duplicates)),
        ("jobs_queued", json!(o.jobs_queued)),
        ("jobs_delivered", json!(o.jobs_delivered)),
        ("non_jobs_delivered", json!(o.others_delivered)),
        (
            "is_job_accuracy",
            json!(ratio(o.is_job_right as f64, o.llm_posts + o.local_posts)),
        ),
        (
            "categories_exact",
            json!(ratio(o.categories_right as f64, o.both_jobs)),
        ),
        ("settled", json!(o.settle_error.is_none())),
        ("seconds", json!(o.seconds)),
    ]
}

/// The curve of `--linger-sweep`: each linger's steady and burst p95 and cost.
pub(super) fn print_sweep(outcomes: &[Outcome]) {
    println!(
        "\n== linger sweep (cascade, streamed; llm.idle_linger_ms at its default) ==\n| llm.batch_linger_ms | steady LLM p50 / p95 | burst LLM p95 | $ / 1,000 incoming posts | requests per 100 LLM posts | posts per request |\n| --- | --- | --- | --- | --- | --- |"
    );
    for o in outcomes {
        let s = &o.stats;
        println!(
            "| {} | {} / {} | {} | ${:.4} | {:.1} | {:.2} |",
            o.design.batch_linger_ms.unwrap_or_default(),
            ms(quantile(&o.llm_steady, 0.5)),
            ms(quantile(&o.llm_steady, 0.95)),
            ms(quantile(&o.llm_burst, 0.95)),
            ratio(billed_usd(s) * 1000.0, o.fed).unwrap_or(0.0),
            ratio(s.requests as f64 * 100.0, o.llm_posts).unwrap_or(0.0),
            ratio(s.posts as f64, s.answered_requests as usize).unwrap_or(0.0),
        );
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0} ms"))
}

pub(super) fn print_summary(o: &Outcome) {
    let s = &o.stats;
    let d = &o.design;
    let classified = o.llm_posts + o.local_posts;
    let pct = |a: usize, b: usize| ratio(a as f64 * 100.0, b).unwrap_or(0.0);
    println!("\n== {} ({}) ==", d.name, d.what);
    println!(
        "  {} posts fed, {} queued, {} near-duplicates dropped, {} filtered; {} classified: {} by the LLM ({:.1}%), {} by the local model, {} unclassified; whole run {:.0} s (burst at {:.0} s)",
        o.fed,
        o.queued,
        o.near_duplicates,
        o.filtered,
        classified,
        o.llm_posts,
        pct(o.llm_posts, classified),
        o.local_posts,
        o.unclassified,
        o.seconds,
        o.burst_second,
    );
    println!(
        "  delivered {} of {} jobs ({:.1}%) and {} posts that are not jobs, in {} messages; is_job right {:.1}%, categories exactly right on {:.1}% of jobs",
        o.jobs_delivered,
        o.jobs_queued,
        pct(o.jobs_delivered, o.jobs_queued),
        o.others_delivered,
        o.messages,
        pct(o.is_job_right, classified),
        pct(o.categories_right, o.both_jobs),
    );
    println!(
        "  intake → receipt, LLM posts arriving steadily: p50 {}, p95 {}, p99 {}, max {} ({} posts; before the burst p95 {} over {}); in the burst: p50 {}, p95 {}, max {} ({} posts; intake took {:.0} ms for the whole burst)",
        ms(quantile(&o.llm_steady, 0.5)),
        ms(quantile(&o.llm_steady, 0.95)),
        ms(quantile(&o.llm_steady, 0.99)),
        ms(quantile(&o.llm_steady, 1.0)),
        o.llm_steady.len(),
        ms(quantile(&o.llm_before_burst, 0.95)),
        o.llm_before_burst.len(),
        ms(quantile(&o.llm_burst, 0.5)),
        ms(quantile(&o.llm_burst, 0.95)),
        ms(quantile(&o.llm_burst, 1.0)),
        o.llm_burst.len(),
        o.burst_intake_ms,
    );
    println!(
        "  intake → receipt, local-model posts: p50 {}, p95 {} ({} posts); in the burst: p95 {} ({} posts)",
        ms(quantile(&o.local_steady, 0.5)),
        ms(quantile(&o.local_steady, 0.95)),
        o.local_steady.len(),
        ms(quantile(&o.local_burst, 0.95)),
        o.local_burst.len(),
    );
    println!(
        "  fake LLM: {} requests ({} answered, {} streamed, {} failed; {:.1} per 100 LLM posts, {:.1} posts per answered request, at most {}), {:.1} output tokens per LLM post, {} prompt tokens ({:.0}% cached), {} oracle misses",
        s.requests,
        s.answered_requests,
        s.streamed_requests,
        s.requests - s.ok,
        ratio(s.requests as f64 * 100.0, o.llm_posts).unwrap_or(0.0),
        ratio(s.posts as f64, s.answered_requests as usize).unwrap_or(0.0),
        s.max_posts_per_request,
        ratio(s.completion_tokens as f64, o.llm_posts).unwrap_or(0.0),
        s.prompt_tokens,
        ratio(s.cached_tokens as f64 * 100.0, s.prompt_tokens as usize).unwrap_or(0.0),
        s.oracle_misses,
    );
    println!(
        "  cost: ${:.4} per 1,000 incoming posts from the fake's tokens × prices (${:.4} in all); the classifier stored ${:.4} per 1,000 (${:.4} in all)",
        ratio(billed_usd(s) * 1000.0, o.fed).unwrap_or(0.0),
        billed_usd(s),
        ratio(o.stored_usd * 1000.0, o.fed).unwrap_or(0.0),
        o.stored_usd,
    );
    if let Some(e) = &o.settle_error {
        println!("  NOT SETTLED: {e}");
    }
    if let Some(c) = &o.counts
        && (c.waiting > 0 || c.queued > 0 || c.deliveries_failed > 0 || c.deliveries_pending > 0)
    {
        println!(
            "  left over: {} queued, {} waiting posts, {} pending and {} failed deliveries",
            c.queued, c.waiting, c.deliveries_pending, c.deliveries_failed
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), Some(50.0));
        assert_eq!(quantile(&v, 0.95), Some(95.0));
        assert_eq!(quantile(&v, 1.0), Some(100.0));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[7.0], 0.99), Some(7.0));
    }

    #[test]
    fn billing_counts_cached_tokens_at_their_price() {
        let s = FakeLlmStats {
            prompt_tokens: 2_000_000,
            cached_tokens: 1_000_000,
            completion_tokens: 1_000_000,
            ..FakeLlmStats::default()
        };
        let usd = billed_usd(&s);
        assert!((usd - (0.15 + 0.075 + 0.60)).abs() < 1e-9, "{usd}");
    }
}
