//! The request pool: every caller's posts gather here and go out in batches (a full batch
//! at once, a partial one after a linger, a post that looks like instructions alone and at
//! once), at most `max_in_flight` requests at once; an answer's items are checked (an
//! extracted contact must appear in its post) and the posts it lacked are re-asked.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::accounting::{Spent, bump};
use super::answer::{Checked, ItemCheck, check_item, contact_in_post, item_id};
use super::request::copy_error;
use super::{Inner, MAX_REASKS, PROMPT_VERSION, fewshot, prompt};
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
    pub(crate) tx: oneshot::Sender<Result<Classified, ClassifyError>>,
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

    /// Sends requests while posts wait: a full batch at once; a partial one when no other
    /// request is in flight and no post came in for `idle_linger` (a quiet service answers
    /// at once, a burst is gathered), or when its oldest post waited `batch_linger` (under
    /// load, posts gather while the LLM is busy anyway). Ends when the pool is empty.
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
                    pool.queue.retain(|w| !w.tx.is_closed());
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
                        || pool.queue.len() >= size
                        || tokio::time::Instant::now() >= until
                    {
                        break take_batch(&mut pool.queue, size, |w| w.alone);
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

    /// One request for `batch`; settled posts are answered, the ones the answer lacked go
    /// back to the pool (or fail once they were re-asked [`MAX_REASKS`] times).
    async fn send(self: &Arc<Self>, mut batch: Vec<Waiting>) {
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
        let (outcome, spent) = self.ask(&user, batch.len()).await;

        let k = batch.len() as u64;
        for (j, w) in batch.iter_mut().enumerate() {
            w.share.add_share(&spent, j as u64, k);
        }

        let reply = match outcome {
            Ok(reply) => reply,
            Err(e) => {
                for w in batch {
                    let _ = w.tx.send(Err(copy_error(&e)));
                }
                return;
            }
        };
        let mut answers: Vec<Option<Classified>> = batch.iter().map(|_| None).collect();
        let mut seen: HashSet<usize> = HashSet::new();
        for item in &reply.items {
            let Some(id) = item_id(item) else {
                tracing::warn!("LLM answered an item without an id; ignored");
                continue;
            };
            let Some(i) = batch.iter().position(|w| w.id == id) else {
                tracing::warn!(id = %id.chars().take(20).collect::<String>(), "LLM answered an id that was not asked; ignored");
                continue;
            };
            if !seen.insert(i) {
                tracing::warn!(id, "LLM answered a post twice; the first answer is kept");
                continue;
            }
            let w = &mut batch[i];
            let checked = match check_item(item, &self.slugs, self.config.assumed_confidence) {
                ItemCheck::Valid(c) => c,
                ItemCheck::JobWithoutCategory(c) if w.struck || w.reasks >= MAX_REASKS => c,
                ItemCheck::JobWithoutCategory(_) => {
                    w.struck = true;
                    w.problem = "a job without any configured category".into();
                    continue;
                }
                ItemCheck::Invalid(why) => {
                    tracing::warn!(id, problem = %why, "LLM answered an invalid item");
                    w.problem = why;
                    continue;
                }
            };
            let checked = drop_foreign_contact(checked, &w.text, &w.post);
            tracing::debug!(post = %w.post, reason = %checked.reason, "LLM verdict");
            let s = w.share;
            answers[i] = Some(Classified {
                verdict: checked.verdict,
                model: reply.model.clone(),
                prompt_version: PROMPT_VERSION.to_owned(),
                tokens_in: u32::try_from(s.tokens_in).unwrap_or(u32::MAX),
                tokens_out: u32::try_from(s.tokens_out).unwrap_or(u32::MAX),
                latency_ms: u32::try_from(w.started.elapsed().as_millis()).unwrap_or(u32::MAX),
                extraction: checked.extraction,
                cost_usd: s.cost_usd,
            });
        }

        let mut again = Vec::new();
        for (i, (mut w, answer)) in batch.into_iter().zip(answers).enumerate() {
            if let Some(c) = answer {
                let _ = w.tx.send(Ok(c));
                continue;
            }
            if !seen.contains(&i) {
                w.problem = "missing from the answer".into();
            }
            if w.reasks < MAX_REASKS {
                w.reasks += 1;
                w.queued_at = tokio::time::Instant::now();
                again.push(w);
            } else {
                let error = ClassifyError::Unavailable {
                    attempts: w.share.requests,
                    last_error: format!(
                        "no valid answer for this post after {MAX_REASKS} re-asks (last: {})",
                        w.problem
                    ),
                    retry_after: None,
                };
                let _ = w.tx.send(Err(error));
            }
        }
        if !again.is_empty() {
            bump(&self.counters.reasks, 1);
            let ids: Vec<&str> = again.iter().map(|w| w.id.as_str()).collect();
            tracing::info!(ids = ?ids, "re-asking the LLM for posts its answer lacked");
            self.enqueue(again, true);
        }
    }
}
