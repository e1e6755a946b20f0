//! One design's bed (fake LLM, fake Telegram, database, pipeline) and its run: feeding the
//! posts on the plan, waiting for the pipeline to settle, and measuring each post.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, Utc};
use jobwire_intake::stage::IntakeOutcome;
use jobwire_store::{ClassificationRecord, PostId, Store};
use jobwire_testkit::llm::FakeLlm;
use jobwire_testkit::telegram::FakeTelegram;

use super::posts::BenchPost;
use super::{
    CHAT, Design, LlmBenchArgs, MODEL, Outcome, PRICE_CACHED_IN_PER_MTOK, PRICE_IN_PER_MTOK,
    PRICE_OUT_PER_MTOK, Plan,
};
use crate::testbed::{Bed, fake_llm_answering, fake_telegram, start_pipeline, temp_db};

/// When a post arrived relative to the burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    BeforeBurst,
    Burst,
    AfterBurst,
}

/// One post as fed: when it arrived, when intake was done with it, what intake made of it.
#[derive(Debug)]
struct Fed {
    index: usize,
    at: DateTime<Utc>,
    done: DateTime<Utc>,
    outcome: IntakeOutcome,
    arrival: Arrival,
}

/// One design's stand-ins and running pipeline.
pub(super) struct DesignBed {
    design: Design,
    llm: FakeLlm,
    telegram: FakeTelegram,
    _dir: tempfile::TempDir,
    running: crate::pipeline::Pipeline,
    store: Arc<dyn Store>,
}

/// Starts one design: its own fake LLM, fake Telegram, database and pipeline, and the
/// subscriber of every category.
pub(super) async fn start_design(
    design: Design,
    posts: &[BenchPost],
    args: &LlmBenchArgs,
) -> anyhow::Result<DesignBed> {
    let llm = fake_llm_answering(posts.iter().map(BenchPost::oracle_entry).collect()).await?;
    llm.state()
        .set_speed(Duration::from_millis(args.ttft_ms), args.tokens_per_sec);
    let telegram = fake_telegram(None).await?;
    let (dir, db) = temp_db()?;
    let mut section = crate::config::LlmSection::new(llm.url(), MODEL);
    section.price_in_per_mtok = PRICE_IN_PER_MTOK;
    section.price_cached_in_per_mtok = Some(PRICE_CACHED_IN_PER_MTOK);
    section.price_out_per_mtok = PRICE_OUT_PER_MTOK;
    section.stream = design.stream;
    if let Some(n) = design.batch_size {
        section.batch_size = n;
    }
    if let Some(ms) = design.batch_linger_ms {
        section.batch_linger_ms = ms;
    }
    let bed = Bed {
        llm: Some(section),
        classifier_kind: Some(design.kind),
        ..Bed::unlimited()
    };
    let settings = bed.settings(telegram.url(), &db)?;
    let (running, store) = start_pipeline(&settings).await?;
    crate::subscribers::store_all(
        store.as_ref(),
        &[crate::testbed::subscriber(
            CHAT,
            jobwire_core::category::standard(),
        )],
    )
    .await?;
    Ok(DesignBed {
        design,
        llm,
        telegram,
        _dir: dir,
        running,
        store,
    })
}

/// Feeds one design on the plan from `started`, waits for its pipeline to settle, and
/// measures.
pub(super) async fn feed_and_measure(
    bed: DesignBed,
    posts: Arc<Vec<BenchPost>>,
    plan: Arc<Plan>,
    started: Instant,
    bar: indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let DesignBed {
        design,
        llm,
        telegram,
        _dir,
        mut running,
        store,
    } = bed;
    // Feed: each post in a task of its own, so a slow intake call never delays the schedule.
    let intake = running.intake.clone();
    let ingest = |index: usize, at: DateTime<Utc>, arrival: Arrival| {
        let intake = intake.clone();
        let post = &posts[index];
        let incoming = jobwire_core::IncomingPost {
            channel: post.channel.to_owned(),
            external_id: external_id(index),
            text: post.text.clone(),
            author: None,
            url: Some(post_url(post, index)),
            posted_at: at,
        };
        let bar = bar.clone();
        tokio::spawn(async move {
            let outcome = intake.ingest(incoming).await;
            bar.inc(1);
            outcome.map(|outcome| Fed {
                index,
                at,
                done: Utc::now(),
                outcome,
                arrival,
            })
        })
    };
    let burst_position = plan.burst_position(&design);
    let mut burst_second = 0.0;
    let mut feeding = Vec::with_capacity(posts.len());
    for step in 0..=plan.steady.len() {
        let due = started + Duration::from_secs_f64(step as f64 / plan.rate);
        tokio::time::sleep_until(due.into()).await;
        if step == burst_position {
            burst_second = started.elapsed().as_secs_f64();
            let at = Utc::now();
            for &index in &plan.burst {
                feeding.push(ingest(index, at, Arrival::Burst));
            }
        }
        if let Some(&index) = plan.steady.get(step) {
            let arrival = if step < burst_position {
                Arrival::BeforeBurst
            } else {
                Arrival::AfterBurst
            };
            feeding.push(ingest(index, Utc::now(), arrival));
        }
    }
    let mut fed = Vec::with_capacity(feeding.len());
    for task in feeding {
        fed.push(task.await.context("an intake task")??);
    }
    let settle_error = running
        .wait_settled(Duration::from_secs(1800))
        .await
        .err()
        .map(|e| format!("{e:#}"));
    let seconds = started.elapsed().as_secs_f64();
    let counts = store.pipeline_counts().await.ok();
    let stats = llm.stats();
    let messages = telegram.messages();
    running.shutdown().await?;

    // The first receipt of each post's message, by the post's link on the card.
    let by_url: HashMap<String, usize> = posts
        .iter()
        .enumerate()
        .map(|(i, p)| (post_url(p, i), i))
        .collect();
    let mut received: HashMap<usize, DateTime<Utc>> = HashMap::new();
    let mut chat_messages = 0;
    for m in messages.iter().filter(|m| m.chat_id == CHAT) {
        chat_messages += 1;
        for index in hrefs(&m.text).filter_map(|u| by_url.get(u)) {
            received
                .entry(*index)
                .and_modify(|t| *t = (*t).min(m.received_at))
                .or_insert(m.received_at);
        }
    }

    let mut o = Outcome {
        design,
        fed: fed.len(),
        queued: 0,
        near_duplicates: 0,
        filtered: 0,
        unclassified: 0,
        llm_posts: 0,
        local_posts: 0,
        jobs_queued: 0,
        jobs_delivered: 0,
        others_delivered: 0,
        messages: chat_messages,
        is_job_right: 0,
        categories_right: 0,
        both_jobs: 0,
        llm_steady: Vec::new(),
        llm_before_burst: Vec::new(),
        llm_burst: Vec::new(),
        local_steady: Vec::new(),
        local_burst: Vec::new(),
        stats,
        stored_usd: 0.0,
        counts,
        settle_error,
        burst_second,
        burst_intake_ms: fed
            .iter()
            .filter(|f| f.arrival == Arrival::Burst)
            .map(|f| (f.done - f.at).num_microseconds().unwrap_or(0) as f64 / 1000.0)
            .fold(0.0, f64::max),
        seconds,
    };
    for f in &fed {
        let post = &posts[f.index];
        let id: PostId = match f.outcome {
            IntakeOutcome::Queued { post_id } => post_id,
            IntakeOutcome::NearDuplicate { .. } | IntakeOutcome::Duplicate { .. } => {
                o.near_duplicates += 1;
                continue;
            }
            IntakeOutcome::Filtered { .. } => {
                o.filtered += 1;
                continue;
            }
        };
        o.queued += 1;
        o.jobs_queued += usize::from(post.is_job());
        let delivered = received.get(&f.index);
        match (post.is_job(), delivered.is_some()) {
            (true, true) => o.jobs_delivered += 1,
            (false, true) => o.others_delivered += 1,
            _ => {}
        }
        let Some(record) = store.classification(id).await? else {
            o.unclassified += 1;
            continue;
        };
        score(&mut o, post, &record);
        let local = is_local(&record);
        if local {
            o.local_posts += 1;
        } else {
            o.llm_posts += 1;
        }
        if let Some(at) = delivered {
            let ms = (*at - f.at).num_microseconds().unwrap_or(i64::MAX) as f64 / 1000.0;
            let burst = f.arrival == Arrival::Burst;
            match (local, burst) {
                (false, false) => o.llm_steady.push(ms),
                (false, true) => o.llm_burst.push(ms),
                (true, false) => o.local_steady.push(ms),
                (true, true) => o.local_burst.push(ms),
            }
            if !local && f.arrival == Arrival::BeforeBurst {
                o.llm_before_burst.push(ms);
            }
        }
    }
    llm.shutdown().await;
    Ok(o)
}

/// Whether the local model classified the post (as `jobwire_classify::cascade::is_local`
/// tells a fresh classification).
fn is_local(record: &ClassificationRecord) -> bool {
    record
        .prompt_version
        .as_deref()
        .is_some_and(|v| v.starts_with("local"))
}

/// Counts agreement of a stored classification with the post's labels.
fn score(o: &mut Outcome, post: &BenchPost, record: &ClassificationRecord) {
    o.stored_usd += record.cost_usd;
    let said_job = record.kind == jobwire_core::PostKind::Job && record.is_job;
    o.is_job_right += usize::from(said_job == post.is_job());
    if said_job && post.is_job() {
        o.both_jobs += 1;
        let mut stored: Vec<&str> = record.categories.iter().map(|c| c.as_str()).collect();
        let mut labeled = post.categories.clone();
        stored.sort_unstable();
        labeled.sort_unstable();
        o.categories_right += usize::from(stored == labeled);
    }
}

fn external_id(index: usize) -> String {
    (10_000 + index).to_string()
}

/// The post's link, shown on its card ("Open original"): how a message is tied to its post.
fn post_url(post: &BenchPost, index: usize) -> String {
    format!(
        "https://t.me/{}/{}",
        post.channel.trim_start_matches('@'),
        external_id(index)
    )
}

/// The `href` values of an HTML text.
fn hrefs(html: &str) -> impl Iterator<Item = &str> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_is_tied_to_its_post_by_its_link() {
        let html = "<b>Web</b> · <a href=\"https://t.me/chan\">@chan</a>\n\ntext\n\n🔗 <a href=\"https://t.me/chan/10007\">Open original</a>";
        let links: Vec<&str> = hrefs(html).collect();
        assert_eq!(links, ["https://t.me/chan", "https://t.me/chan/10007"]);
    }
}
