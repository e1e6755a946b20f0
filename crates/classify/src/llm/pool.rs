//! The request pool: every caller's posts gather here and go out in batches, adaptively: a
//! post goes at once when no request is in flight; while requests are in flight, posts
//! gather and go when a request ends, when `quick_batch` (or a full batch) wait, or when the
//! oldest waited `batch_linger`; a post that looks like instructions goes alone and at once;
//! at most `max_in_flight` requests at once. An answer's items are checked (an extracted
//! contact must appear in its post) and the posts it lacked are re-asked.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use super::accounting::{Spent, bump};
use super::answer::{Checked, ItemCheck, check_item, contact_in_post, item_id};
use super::config::MAX_REASKS;
use super::inner::Inner;
use super::request::{Reply, copy_error};
use super::{fewshot, prompt};
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
/// well as a model: the budget, the deadline, the contact (copied from the post) and the work
/// mode, which `classify.v5` no longer asks for. A field the model did give is kept (an
/// admin's own prompt may still ask for them).
fn with_rule_fields(mut checked: Checked, text: &str) -> Checked {
    if !checked.verdict.is_job {
        return checked;
    }
    let mut ex = checked.extraction.take().unwrap_or_default();
    if ex.budget.is_none() {
        ex.budget = jobwire_core::extract::extract_budget(text);
    }
    if ex.deadline.is_none() {
        ex.deadline = jobwire_core::extract::extract_deadline(text);
    }
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

/// When the waiting posts go: the pool's batching policy, from the configuration.
#[derive(Debug, Clone, Copy)]
struct Policy {
    /// Posts per request at most.
    size: usize,
    /// A request goes as soon as this many posts wait (`quick_batch`).
    quick: usize,
    /// The longest the oldest post waits for company (`batch_linger`).
    linger: Duration,
    /// With no request in flight, a partial request goes once no post came for this long
    /// (`idle_linger`; 0: at once).
    idle_linger: Duration,
}

impl Policy {
    /// When the waiting posts go, `in_flight` requests being in flight: `None` now, else at
    /// the instant returned (unless the pool changes before). `oldest` is the oldest waiting
    /// post's arrival.
    ///
    /// Adaptive: with no request in flight a post has nobody to wait for and goes at once
    /// (after `idle_linger`, 0 by default); while requests are in flight, the posts that come
    /// gather and go when none is in flight any more, when `quick` posts wait, or when the
    /// oldest waited `linger`. A quiet service answers a lone post at once; a busy one still
    /// shares the long system prompt among several posts.
    fn due(
        &self,
        pool: &Pool,
        oldest: tokio::time::Instant,
        in_flight: usize,
    ) -> Option<tokio::time::Instant> {
        // A post that goes alone is a full request by itself.
        if pool.queue.iter().any(|w| w.alone) || pool.queue.len() >= self.size.min(self.quick) {
            return None;
        }
        let lingered = oldest + self.linger;
        let at = if in_flight == 0 {
            lingered.min(pool.last_arrival.unwrap_or(oldest) + self.idle_linger)
        } else {
            lingered
        };
        (tokio::time::Instant::now() < at).then_some(at)
    }
}

impl Inner {
    /// Puts posts into the pool (re-asked ones at the front) and makes sure a flusher runs.
    pub(crate) fn enqueue(self: &Arc<Self>, items: Vec<Waiting>, front: bool) {
        self.enqueue_with(items, front, Self::send_owned);
    }

    /// [`Self::enqueue`] with `send` making each request (the pool's tests pass a stand-in
    /// for the HTTP request).
    fn enqueue_with<S, F>(self: &Arc<Self>, items: Vec<Waiting>, front: bool, send: S)
    where
        S: Fn(Arc<Self>, Vec<Waiting>) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
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
            tokio::spawn(self.clone().flush(send));
        }
    }

    /// Sends requests while posts wait, when [`Policy::due`] says (a slot being free): at
    /// once when no request is in flight; while requests are in flight, the posts gather
    /// (requests carry the long system prompt, so two posts in one cost far less than two
    /// alone) and go when the last of them ends, when `quick_batch` or a full batch wait,
    /// or when the oldest waited `batch_linger`. Each request takes its share of the waiting posts
    /// ([`spread`]). Ends when the pool is empty.
    async fn flush<S, F>(self: Arc<Self>, send: S)
    where
        S: Fn(Arc<Self>, Vec<Waiting>) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        // Should this task end any other way than through its returns below (a panic, a
        // runtime shutting down), the guard lets the next caller start a new flusher and
        // fails the waiting posts (they stay queued in the store and are retried).
        let guard = FlushGuard {
            inner: self.clone(),
            armed: true,
        };
        // Capped so that adding it to an instant cannot overflow.
        let linger = self.config.batch_linger.min(MAX_LINGER);
        let policy = Policy {
            size: self.batch_size(),
            quick: self.config.quick_batch.max(1),
            linger,
            idle_linger: self.config.idle_linger.min(linger),
        };
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
                    pool.queue
                        .retain(|w| w.tx.as_ref().is_some_and(|tx| !tx.is_closed()));
                    let Some(oldest) = pool.queue.iter().map(|w| w.queued_at).min() else {
                        pool.flushing = false;
                        drop(pool);
                        guard.disarm();
                        return;
                    };
                    // This flusher holds one permit; the others are requests in flight.
                    let in_flight = max_in_flight
                        .saturating_sub(self.slots.available_permits())
                        .saturating_sub(1);
                    match policy.due(&pool, oldest, in_flight) {
                        None => {
                            let n = spread(pool.queue.len(), max_in_flight, policy.size);
                            break take_batch(&mut pool.queue, n, |w| w.alone);
                        }
                        Some(until) => until,
                    }
                };
                tokio::select! {
                    () = self.wake.notified() => {}
                    () = tokio::time::sleep_until(until) => {}
                }
            };
            let this = self.clone();
            let request = send(self.clone(), batch);
            tokio::spawn(async move {
                request.await;
                drop(permit);
                // One request fewer in flight: the posts that gathered meanwhile may go now.
                this.wake.notify_one();
            });
        }
    }

    /// [`Self::send`] for an owned handle (what [`Self::enqueue`] gives the flusher).
    async fn send_owned(self: Arc<Self>, batch: Vec<Waiting>) {
        self.send(batch).await;
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
        let priced = with_rule_fields(
            checked(PostKind::Job, None),
            "Нужен лендинг на Tilda, бюджет 20-25к, срок до пятницы. Пишите @shop_owner",
        );
        let ex = priced.extraction.expect("an extraction");
        let budget = ex.budget.expect("the post's budget");
        assert_eq!((budget.min, budget.max), (20_000.0, Some(25_000.0)));
        assert_eq!(budget.currency, "RUB");
        assert!(
            ex.deadline.as_deref().is_some_and(|d| d.contains("пятниц")),
            "{:?}",
            ex.deadline
        );

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

    /// The pool's timing, with paused time and a stand-in for the LLM.
    mod batching {
        use std::sync::Mutex;

        use futures::future::BoxFuture;
        use jobwire_core::PostKind;

        use super::super::super::inner::Answer;
        use super::super::super::{LlmClassifier, LlmConfig};
        use super::*;
        use crate::ClassifyInput;

        /// One request: when it went (milliseconds after the test's start) and its posts.
        type Sent = (u64, Vec<String>);

        /// A stand-in for the LLM: every request takes `latency`, then answers all its posts.
        #[derive(Clone)]
        struct Fake {
            start: tokio::time::Instant,
            latency: Duration,
            log: Arc<Mutex<Vec<Sent>>>,
        }

        impl Fake {
            fn new(latency: Duration) -> Self {
                Fake {
                    start: tokio::time::Instant::now(),
                    latency,
                    log: Arc::default(),
                }
            }

            fn ms(&self) -> u64 {
                self.start.elapsed().as_millis() as u64
            }

            fn sent(&self) -> Vec<Sent> {
                self.log.lock().expect("log").clone()
            }

            fn request(
                &self,
            ) -> impl Fn(Arc<Inner>, Vec<Waiting>) -> BoxFuture<'static, ()> + Send + 'static
            {
                let fake = self.clone();
                move |_, batch| {
                    let fake = fake.clone();
                    Box::pin(async move {
                        let posts = batch.iter().map(|w| w.post.clone()).collect();
                        fake.log.lock().expect("log").push((fake.ms(), posts));
                        tokio::time::sleep(fake.latency).await;
                        for w in batch {
                            if let Some(tx) = w.tx {
                                let _ = tx.send(Ok(answer()));
                            }
                        }
                    })
                }
            }
        }

        fn answer() -> Classified {
            Classified {
                verdict: jobwire_core::Verdict {
                    is_job: false,
                    kind: PostKind::Chatter,
                    categories: Vec::new(),
                    confidence: 0.9,
                    category_confidence: 1.0,
                },
                model: "m".into(),
                prompt_version: "v".into(),
                tokens_in: 0,
                tokens_out: 0,
                latency_ms: 0,
                extraction: None,
                cost_usd: 0.0,
            }
        }

        /// A classifier's pool with the defaults, changed by `set`.
        fn pool(set: impl FnOnce(&mut LlmConfig)) -> Arc<Inner> {
            let categories = jobwire_core::category::standard()
                .into_iter()
                .map(|slug| (slug, "work".to_owned()))
                .collect();
            let mut config = LlmConfig::new("http://127.0.0.1:9/v1", "m", categories);
            set(&mut config);
            LlmClassifier::new(config).expect("a classifier").inner
        }

        /// Posts named `names` come into the pool now.
        fn arrive(inner: &Arc<Inner>, fake: &Fake, names: &[&str]) -> Vec<Answer> {
            let posts: Vec<ClassifyInput> = names
                .iter()
                .map(|name| ClassifyInput {
                    id: (*name).to_owned(),
                    text: format!("Ищу дизайнера логотипа, пост {name}"),
                    channel: "@jobs".to_owned(),
                })
                .collect();
            let (items, answers) = inner.waiting(&posts);
            inner.enqueue_with(items, false, fake.request());
            answers
        }

        async fn at(fake: &Fake, ms: u64) {
            tokio::time::sleep_until(fake.start + Duration::from_millis(ms)).await;
        }

        async fn answered(answers: Vec<Answer>) {
            for a in answers {
                a.await.expect("an answer").expect("a verdict");
            }
        }

        fn sent(list: &[(u64, &[&str])]) -> Vec<Sent> {
            list.iter()
                .map(|(ms, posts)| (*ms, posts.iter().map(|p| (*p).to_owned()).collect()))
                .collect()
        }

        #[tokio::test(start_paused = true)]
        async fn a_lone_post_goes_at_once_when_no_request_is_in_flight() {
            let inner = pool(|_| {});
            let fake = Fake::new(Duration::from_millis(1250));
            answered(arrive(&inner, &fake, &["a"])).await;
            // Answered after the request's own time, no wait for company before it.
            assert_eq!(fake.ms(), 1250);
            // After a quiet spell, the next lone post goes at once too.
            at(&fake, 5000).await;
            answered(arrive(&inner, &fake, &["b"])).await;
            assert_eq!(fake.sent(), sent(&[(0, &["a"]), (5000, &["b"])]));
        }

        #[tokio::test(start_paused = true)]
        async fn posts_that_come_while_a_request_is_in_flight_go_together_when_it_ends() {
            let inner = pool(|c| {
                c.quick_batch = 10;
                c.batch_linger = Duration::from_secs(5);
            });
            let fake = Fake::new(Duration::from_secs(1));
            let mut answers = arrive(&inner, &fake, &["a"]);
            for (ms, name) in [(200, "b"), (400, "c"), (600, "d")] {
                at(&fake, ms).await;
                answers.extend(arrive(&inner, &fake, &[name]));
            }
            answered(answers).await;
            assert_eq!(
                fake.sent(),
                sent(&[(0, &["a"]), (1000, &["b", "c", "d"])]),
                "b, c and d waited for a's request, not for the linger, and went in one request"
            );
        }

        #[tokio::test(start_paused = true)]
        async fn with_the_defaults_a_second_waiting_post_takes_the_first_along() {
            let inner = pool(|_| {});
            let fake = Fake::new(Duration::from_millis(1250));
            let mut answers = arrive(&inner, &fake, &["a"]);
            at(&fake, 300).await;
            answers.extend(arrive(&inner, &fake, &["b"]));
            at(&fake, 500).await;
            answers.extend(arrive(&inner, &fake, &["c"]));
            answered(answers).await;
            assert_eq!(fake.sent(), sent(&[(0, &["a"]), (500, &["b", "c"])]));
        }

        #[tokio::test(start_paused = true)]
        async fn a_post_waits_for_company_no_longer_than_the_linger() {
            let inner = pool(|c| {
                c.quick_batch = 10;
                c.batch_linger = Duration::from_millis(500);
            });
            let fake = Fake::new(Duration::from_secs(10));
            let mut answers = arrive(&inner, &fake, &["a"]);
            at(&fake, 100).await;
            answers.extend(arrive(&inner, &fake, &["b"]));
            answered(answers).await;
            assert_eq!(fake.sent(), sent(&[(0, &["a"]), (600, &["b"])]));
        }

        #[tokio::test(start_paused = true)]
        async fn under_load_posts_still_share_requests() {
            let inner = pool(|c| c.batch_linger = Duration::from_secs(1));
            // A post every 300 ms, each request a post's 1.25 s: a request is always in
            // flight after the first.
            let fake = Fake::new(Duration::from_millis(1250));
            let names: Vec<String> = (0..60).map(|i| format!("s{i}")).collect();
            let mut answers: Vec<Answer> = Vec::new();
            for (i, name) in names.iter().enumerate() {
                at(&fake, 300 * i as u64).await;
                answers.extend(arrive(&inner, &fake, &[name.as_str()]));
            }
            answered(answers).await;
            // Then a burst of 40 at once.
            let burst: Vec<String> = (0..40).map(|i| format!("b{i}")).collect();
            let refs: Vec<&str> = burst.iter().map(String::as_str).collect();
            answered(arrive(&inner, &fake, &refs)).await;
            let log = fake.sent();
            let steady: Vec<usize> = log
                .iter()
                .filter(|(_, p)| p[0].starts_with('s'))
                .map(|(_, p)| p.len())
                .collect();
            assert_eq!(steady.iter().sum::<usize>(), 60);
            assert_eq!(steady[0], 1, "the first went alone, at once");
            // The last may go alone too: nothing came after it, it waited out its linger.
            assert!(
                steady[1..steady.len() - 1].iter().all(|&n| n >= 2),
                "while a request is in flight, posts go at least in pairs: {steady:?}"
            );
            assert_eq!(steady.len(), 31, "{steady:?}");
            let bursts: Vec<usize> = log
                .iter()
                .filter(|(_, p)| p[0].starts_with('b'))
                .map(|(_, p)| p.len())
                .collect();
            assert_eq!(bursts.iter().sum::<usize>(), 40);
            assert!(
                bursts.len() <= 8 && bursts.iter().all(|&n| n >= 4),
                "a burst is spread over the requests in flight in batches: {bursts:?}"
            );
        }
    }
}
