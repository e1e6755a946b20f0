//! The request pool: every caller's posts gather here and go out in batches (a full batch
//! at once, a partial one after a linger, a post that looks like instructions alone and at
//! once), at most `max_in_flight` requests at once; an answer's items are checked (an
//! extracted contact must appear in its post) and the posts it lacked are re-asked.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use super::accounting::{Spent, bump};
use super::answer::{Checked, ItemCheck, check_item, contact_in_post, item_id};
use super::request::{Reply, copy_error};
use super::{Inner, MAX_REASKS, fewshot, prompt};
use crate::{Classified, ClassifyError};

/// Posts waiting for a request, oldest first (re-asked posts at the front).
#[derive(Default)]
pub(crate) struct Pool {
    queue: VecDeque<Waiting>,
    /// Whether a flusher task is running.
    flushing: bool,
    /// When posts last came in.
    last_arrival: Option<tokio::time::Instant>,
}

/// A post in the pool.
pub(crate) struct Waiting {
    /// The short id the model sees.
    pub(crate) id: String,
    /// The caller's id (for logs only).
    pub(crate) post: String,
    /// It looks like instructions to the model: it goes in a request of its own.
    pub(crate) alone: bool,
    pub(crate) text: String,
    /// Trigrams for picking few-shot examples (empty when none are used).
    pub(crate) grams: Vec<u64>,
    pub(crate) started: Instant,
    pub(crate) queued_at: tokio::time::Instant,
    /// How many times it was asked again.
    pub(crate) reasks: u32,
    /// A job without any configured category was answered once already.
    pub(crate) struck: bool,
    /// Why the last answer did not settle it.
    pub(crate) problem: String,
    /// This post's share of every request it took part in.
    pub(crate) share: Spent,
    /// Taken when the post is settled.
    pub(crate) tx: Option<oneshot::Sender<Result<Classified, ClassifyError>>>,
}

/// The longest a post may wait in the pool, whatever is configured.
const MAX_LINGER: Duration = Duration::from_secs(3600);

/// Resets the pool when a flusher ends abnormally.
struct FlushGuard {
    inner: Arc<Inner>,
    armed: bool,
}

impl FlushGuard {
    /// The flusher ended normally (it cleared `flushing` itself, under the lock).
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for FlushGuard {
    fn drop(&mut self) {
        if self.armed {
            let mut pool = self.inner.lock_pool();
            pool.flushing = false;
            // Dropping the senders tells every waiting caller (as `Unavailable`).
            pool.queue.clear();
        }
    }
}

/// `checked` without its extracted contact when that contact is not in the post's text (the
/// model invented it, or was steered into it).
fn drop_foreign_contact(mut checked: Checked, text: &str, post: &str) -> Checked {
    if let Some(ex) = checked.extraction.as_mut()
        && ex
            .contact
            .as_deref()
            .is_some_and(|c| !contact_in_post(c, text))
    {
        tracing::warn!(
            post,
            "LLM extracted a contact that is not in the post; dropped"
        );
        ex.contact = None;
        if *ex == jobwire_core::extract::Extraction::default() {
            checked.extraction = None;
        }
    }
    checked
}

/// A job's extraction completed with what the rules of [`jobwire_core::extract`] find as
/// well as a model: the contact (copied from the post) and the work mode (a keyword), which
/// `classify.v4` no longer asks for. A field the model did give is kept.
fn with_rule_fields(mut checked: Checked, text: &str) -> Checked {
    if !checked.verdict.is_job {
        return checked;
    }
    let mut ex = checked.extraction.take().unwrap_or_default();
    if ex.contact.is_none() {
        ex.contact = jobwire_core::extract::extract_contact(text);
    }
    if ex.work_mode.is_none() {
        ex.work_mode = jobwire_core::extract::extract_work_mode(text);
    }
    checked.extraction = (ex != jobwire_core::extract::Extraction::default()).then_some(ex);
    checked
}

/// How many of `waiting` posts the next request carries: the backlog spread over every
/// request that may be in flight, at most `size`. A streamed answer settles its posts one
/// after another, so the last post of a request waits for the whole answer: a burst split
/// over `max_in_flight` requests is answered several times sooner than in full batches,
/// at the same output tokens and a few prompts more; a backlog larger than
/// `max_in_flight × size` still goes in full batches (cost).
/// Below [`SPREAD_FLOOR`] posts a request is not split further: each extra request repeats
/// the whole prompt.
fn spread(waiting: usize, max_in_flight: usize, size: usize) -> usize {
    waiting
        .div_ceil(max_in_flight.max(1))
        .max(waiting.min(SPREAD_FLOOR))
        .clamp(1, size.max(1))
}

/// The fewest posts a request carries when that many wait (see [`spread`]): about 3 s of a
/// common hosted model's output at compact items, so a request of this size is still
/// answered within seconds.
const SPREAD_FLOOR: usize = 6;

/// The next request's posts: the first post that must go alone (`alone`), by itself; else
/// up to `size` posts, oldest first.
fn take_batch<T>(queue: &mut VecDeque<T>, size: usize, alone: impl Fn(&T) -> bool) -> Vec<T> {
    if let Some(i) = queue.iter().position(alone) {
        return queue.remove(i).into_iter().collect();
    }
    let n = queue.len().min(size);
    queue.drain(..n).collect()
}

impl Inner {
    /// Puts posts into the pool (re-asked ones at the front) and makes sure a flusher runs.
    pub(crate) fn enqueue(self: &Arc<Self>, items: Vec<Waiting>, front: bool) {
        if items.is_empty() {
            return;
        }
        let start = {
            let mut pool = self.lock_pool();
            if front {
                for item in items.into_iter().rev() {
                    pool.queue.push_front(item);
                }
            } else {
                pool.queue.extend(items);
            }
            pool.last_arrival = Some(tokio::time::Instant::now());
            !std::mem::replace(&mut pool.flushing, true)
        };
        self.wake.notify_one();
        if start {
            tokio::spawn(self.clone().flush());
        }
    }

    /// Sends requests while posts wait: at once when a full batch or `quick_batch` posts
    /// wait (a slot being free); else when no other
    /// request is in flight and no post came in for `idle_linger`, or when the oldest post
    /// waited `batch_linger` (the window in which a post waits for company: requests carry
    /// the long system prompt, so two posts in one cost far less than two alone). Each
    /// request takes its share of the waiting posts ([`spread`]). Ends when the pool is
    /// empty.
    async fn flush(self: Arc<Self>) {
        // Should this task end any other way than through its returns below (a panic, a
        // runtime shutting down), the guard lets the next caller start a new flusher and
        // fails the waiting posts (they stay queued in the store and are retried).
        let guard = FlushGuard {
            inner: self.clone(),
            armed: true,
        };
        let size = self.batch_size();
        // Capped so that adding it to an instant cannot overflow.
        let linger = self.config.batch_linger.min(MAX_LINGER);
        let idle_linger = self.config.idle_linger.min(linger);
        let max_in_flight = self.config.max_in_flight.max(1);
        let quick = self.config.quick_batch.max(1);
        loop {
            let Ok(permit) = self.slots.clone().acquire_owned().await else {
                self.lock_pool().flushing = false;
                guard.disarm();
                return;
            };
            let batch = loop {
                let until = {
                    let mut pool = self.lock_pool();
                    // Posts whose caller gave up are not worth a request.
                    pool.queue
                        .retain(|w| w.tx.as_ref().is_some_and(|tx| !tx.is_closed()));
                    let Some(oldest) = pool.queue.iter().map(|w| w.queued_at).min() else {
                        pool.flushing = false;
                        drop(pool);
                        guard.disarm();
                        return;
                    };
                    // This flusher holds one permit; the others are requests in flight.
                    let busy = max_in_flight - self.slots.available_permits() > 1;
                    let quiet_at = pool.last_arrival.unwrap_or(oldest) + idle_linger;
                    let until = if busy {
                        oldest + linger
                    } else {
                        (oldest + linger).min(quiet_at)
                    };
                    // A post that goes alone is a full request by itself.
                    if pool.queue.iter().any(|w| w.alone)
                        || pool.queue.len() >= size.min(quick)
                        || tokio::time::Instant::now() >= until
                    {
                        let n = spread(pool.queue.len(), max_in_flight, size);
                        break take_batch(&mut pool.queue, n, |w| w.alone);
                    }
                    until
                };
                tokio::select! {
                    () = self.wake.notified() => {}
                    () = tokio::time::sleep_until(until) => {}
                }
            };
            let this = self.clone();
            tokio::spawn(async move {
                this.send(batch).await;
                drop(permit);
                // One request fewer in flight: a waiting partial batch may go now.
                this.wake.notify_one();
            });
        }
    }

    /// One request for `batch`; settled posts are answered (as soon as their item arrives
    /// when the answer streams), the ones the answer lacked go back to the pool (or fail once
    /// they were re-asked [`MAX_REASKS`] times).
    async fn send(self: &Arc<Self>, batch: Vec<Waiting>) {
        let examples = self.current_examples();
        let shots = if self.config.few_shot > 0 && !examples.is_empty() {
            let g: Vec<Vec<u64>> = batch.iter().map(|w| w.grams.clone()).collect();
            fewshot::pick(&examples, &g, self.config.few_shot)
        } else {
            Vec::new()
        };
        let asked: Vec<(&str, &str)> = batch
            .iter()
            .map(|w| (w.id.as_str(), w.text.as_str()))
            .collect();
        let user = prompt::user_message(&shots, &asked, self.config.max_post_chars);
        let n = batch.len();
        let prompt = self.current_prompt();
        let mut round = Round {
            inner: self,
            batch,
            seen: HashSet::new(),
            prompt_version: prompt.version.clone(),
            model: self.config.model.clone(),
            sent: tokio::time::Instant::now(),
        };
        let (outcome, spent) = {
            let mut sink = |item: Value, estimate: Spent, model: &str| {
                if round.model != model {
                    model.clone_into(&mut round.model);
                }
                round.take(&item, Some(estimate));
            };
            self.ask(&prompt.system, &user, n, &mut sink).await
        };
        round.finish(outcome, &spent);
    }
}

/// The posts of one request while its answer comes in.
struct Round<'a> {
    inner: &'a Arc<Inner>,
    batch: Vec<Waiting>,
    /// Positions in `batch` an item answered (valid or not).
    seen: HashSet<usize>,
    /// The prompt version the request was sent with (recorded with its verdicts).
    prompt_version: String,
    /// The configured model of the endpoint that answers (updated from the reply).
    model: String,
    /// When the request went out.
    sent: tokio::time::Instant,
}

impl Round<'_> {
    /// One item of the answer: a valid one settles its post at once, with `share` as the
    /// post's part of the request's cost (`None`: its even share, added when the round ends).
    fn take(&mut self, item: &Value, share: Option<Spent>) {
        let inner = self.inner;
        let Some(id) = item_id(item) else {
            tracing::warn!("LLM answered an item without an id; ignored");
            return;
        };
        let Some(i) = self.batch.iter().position(|w| w.id == id) else {
            tracing::warn!(id = %id.chars().take(20).collect::<String>(), "LLM answered an id that was not asked; ignored");
            return;
        };
        if !self.seen.insert(i) {
            tracing::warn!(id, "LLM answered a post twice; the first answer is kept");
            return;
        }
        let of = self.batch.len();
        let w = &mut self.batch[i];
        let checked = match check_item(item, &inner.slugs, inner.config.assumed_confidence) {
            ItemCheck::Valid(c) => c,
            ItemCheck::JobWithoutCategory(c) if w.struck || w.reasks >= MAX_REASKS => c,
            ItemCheck::JobWithoutCategory(_) => {
                w.struck = true;
                w.problem = "a job without any configured category".into();
                return;
            }
            ItemCheck::Invalid(why) => {
                tracing::warn!(id, problem = %why, "LLM answered an invalid item");
                w.problem = why;
                return;
            }
        };
        let checked = with_rule_fields(drop_foreign_contact(checked, &w.text, &w.post), &w.text);
        tracing::debug!(
            post = %w.post,
            reason = %checked.reason,
            is_job = checked.verdict.is_job,
            position = i,
            of,
            pooled_ms = self.sent.saturating_duration_since(w.queued_at).as_millis() as u64,
            answered_ms = self.sent.elapsed().as_millis() as u64,
            "LLM verdict"
        );
        let Some(tx) = w.tx.take() else { return };
        let mut s = w.share;
        if let Some(share) = share {
            s.tokens_in += share.tokens_in;
            s.tokens_out += share.tokens_out;
            s.cost_usd += share.cost_usd;
        }
        let _ = tx.send(Ok(Classified {
            verdict: checked.verdict,
            model: self.model.clone(),
            prompt_version: self.prompt_version.clone(),
            tokens_in: u32::try_from(s.tokens_in).unwrap_or(u32::MAX),
            tokens_out: u32::try_from(s.tokens_out).unwrap_or(u32::MAX),
            latency_ms: u32::try_from(w.started.elapsed().as_millis()).unwrap_or(u32::MAX),
            extraction: checked.extraction,
            cost_usd: s.cost_usd,
        }));
    }

    /// The request ended: the rest of the answer's items, then the posts still unsettled are
    /// asked again or fail.
    fn finish(mut self, outcome: Result<Reply, ClassifyError>, spent: &Spent) {
        // The posts still waiting carry the round's cost on to their next request.
        let k = self.batch.len() as u64;
        for (j, w) in self.batch.iter_mut().enumerate() {
            if w.tx.is_some() {
                w.share.add_share(spent, j as u64, k);
            }
        }
        let reply = match outcome {
            Ok(reply) => reply,
            Err(e) => {
                for w in self.batch {
                    if let Some(tx) = w.tx {
                        let _ = tx.send(Err(copy_error(&e)));
                    }
                }
                return;
            }
        };
        self.model = reply.model;
        for item in &reply.items {
            self.take(item, None);
        }
        let mut again = Vec::new();
        for (i, mut w) in self.batch.into_iter().enumerate() {
            if w.tx.is_none() {
                continue;
            }
            if !self.seen.contains(&i) {
                w.problem = "missing from the answer".into();
            }
            if w.reasks < MAX_REASKS {
                w.reasks += 1;
                w.queued_at = tokio::time::Instant::now();
                again.push(w);
            } else if let Some(tx) = w.tx.take() {
                let error = ClassifyError::Unavailable {
                    attempts: w.share.requests,
                    last_error: format!(
                        "no valid answer for this post after {MAX_REASKS} re-asks (last: {})",
                        w.problem
                    ),
                    retry_after: None,
                };
                let _ = tx.send(Err(error));
            }
        }
        if !again.is_empty() {
            bump(&self.inner.counters.reasks, 1);
            let ids: Vec<&str> = again.iter().map(|w| w.id.as_str()).collect();
            tracing::info!(ids = ?ids, "re-asking the LLM for posts its answer lacked");
            self.inner.enqueue(again, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use jobwire_core::extract::{Extraction, WorkMode};
    use jobwire_core::{PostKind, Verdict};

    use super::*;

    fn checked(kind: PostKind, extraction: Option<Extraction>) -> Checked {
        Checked {
            verdict: Verdict {
                is_job: kind == PostKind::Job,
                kind,
                categories: Vec::new(),
                confidence: 0.9,
                category_confidence: 1.0,
            },
            extraction,
            reason: String::new(),
        }
    }

    #[test]
    fn a_jobs_contact_and_work_mode_come_from_the_post() {
        let text = "Нужен лендинг на Tilda, работа удалённо. Пишите @shop_owner";
        let model = Extraction {
            title: Some("Лендинг на Tilda".into()),
            ..Extraction::default()
        };
        let job = with_rule_fields(checked(PostKind::Job, Some(model)), text);
        let ex = job.extraction.expect("an extraction");
        assert_eq!(ex.title.as_deref(), Some("Лендинг на Tilda"));
        assert_eq!(ex.contact.as_deref(), Some("@shop_owner"));
        assert_eq!(ex.work_mode, Some(WorkMode::Remote));

        // A job the model gave nothing for still gets what the post states.
        let bare = with_rule_fields(checked(PostKind::Job, None), text);
        assert_eq!(
            bare.extraction.and_then(|e| e.contact).as_deref(),
            Some("@shop_owner")
        );
        // What the model did give is kept; a post without either gets neither.
        let given = Extraction {
            contact: Some("https://t.me/shop_owner".into()),
            work_mode: Some(WorkMode::Hybrid),
            ..Extraction::default()
        };
        let kept = with_rule_fields(checked(PostKind::Job, Some(given.clone())), text);
        assert_eq!(kept.extraction, Some(given));
        let plain = with_rule_fields(checked(PostKind::Job, None), "Нужен лендинг на Tilda");
        assert_eq!(plain.extraction, None);
        // A non-job gets no extraction at all.
        let resume = with_rule_fields(checked(PostKind::Resume, None), text);
        assert_eq!(resume.extraction, None);
    }
}
