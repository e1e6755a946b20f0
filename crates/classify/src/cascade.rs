//! The cascade: the local model answers first; only the posts it is unsure of go to the LLM.
//!
//! The local model reports a calibrated probability that its is-job decision is right
//! ([`jobwire_core::Verdict::confidence`]) and, for a job, how sure its categories are
//! ([`jobwire_core::Verdict::category_confidence`]). A post at or above
//! [`CascadeConfig::threshold`] (and, for a job, [`CascadeConfig::category_threshold`]) keeps
//! the local answer; the rest are sent to the LLM together, in batches of the LLM's
//! [`Classifier::max_batch`]. Both thresholds are chosen from data: `jobwire eval --classifier
//! cascade` prints the curve of is-job F1 and category micro-F1 against the share of posts
//! sent to the LLM, and the cheapest pair that reaches the LLM's quality is recommended.
//!
//! A daily spend limit ([`SpendGuard`]) can close the LLM path: past it, every post keeps its
//! local answer until the next UTC day, and the admin is told once.
//!
//! The local model can be replaced while the service runs ([`LiveLocal::replace`]): the
//! retrainer ([`crate::retrain`]) learns from the LLM's answers and people's labels, so the
//! share of unsure posts falls as the service runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, NaiveTime, Utc};
use jobwire_store::Store;

use crate::classifier::{Settled, classify_as_batch, collect_in_order};
use crate::local::{LocalModel, MODEL_FORMAT};
use crate::{Classified, Classifier, ClassifyError, ClassifyInput};
use futures::StreamExt;
use futures::stream::BoxStream;

/// The local model behind a lock, so a retrained model can replace it while posts are being
/// classified. Jobs get their fields from [`jobwire_core::extract::extract`].
#[derive(Debug)]
pub struct LiveLocal {
    /// The model and its id (hashing the weights is done once per model, not per post).
    model: RwLock<(Arc<LocalModel>, String)>,
}

impl LiveLocal {
    pub fn new(model: Arc<LocalModel>) -> Self {
        let id = model.id();
        Self {
            model: RwLock::new((model, id)),
        }
    }

    fn current(&self) -> (Arc<LocalModel>, String) {
        match self.model.read() {
            Ok(m) => m.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The model answering now.
    pub fn model(&self) -> Arc<LocalModel> {
        self.current().0
    }

    /// Puts a newly trained model in place; posts already being classified finish with the
    /// old one.
    pub fn replace(&self, model: Arc<LocalModel>) {
        let entry = (model.clone(), model.id());
        match self.model.write() {
            Ok(mut m) => *m = entry,
            Err(poisoned) => *poisoned.into_inner() = entry,
        }
    }

    /// Classifies without awaiting anything (the model is plain arithmetic). A résumé gets
    /// the categories of the work it offers ([`LocalModel::resume_categories`]).
    pub fn classify_now(&self, post: &ClassifyInput) -> Classified {
        let started = Instant::now();
        let (model, id) = self.current();
        let mut verdict = model.predict(&post.text);
        if verdict.kind == jobwire_core::PostKind::Resume {
            verdict.categories = model.resume_categories(&post.text);
        }
        let extraction = verdict
            .is_job
            .then(|| jobwire_core::extract::extract(&post.text));
        Classified {
            verdict,
            model: id,
            prompt_version: MODEL_FORMAT.to_owned(),
            tokens_in: 0,
            tokens_out: 0,
            latency_ms: u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX),
            extraction,
            cost_usd: 0.0,
        }
    }
}

#[async_trait]
impl Classifier for LiveLocal {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        Ok(self.classify_now(post))
    }

    fn name(&self) -> &str {
        "local"
    }

    fn was_trained_on(&self, text: &str) -> bool {
        self.model().was_trained_on(text)
    }
}

/// Whether a classification came from the local model (as opposed to an LLM).
pub fn is_local(c: &Classified) -> bool {
    c.prompt_version.starts_with("local")
}

/// Decides whether the LLM may still be paid for today.
#[async_trait]
pub trait SpendGuard: Send + Sync + std::fmt::Debug {
    /// `false` once today's spend reached the limit.
    async fn allows(&self) -> bool;
    /// Adds what a request just cost (before the store has it).
    fn spent(&self, usd: f64);
}

/// Who hears that the spend limit was reached.
pub type AlertFn = Arc<dyn Fn(String) + Send + Sync>;

/// A daily spend limit in US dollars, counted in the store over every process (the
/// classifications since 00:00 UTC), re-read at most every `refresh`, plus what this process
/// spent since it last read. When the limit is reached the admin is told once per day.
pub struct DailySpendLimit {
    store: Arc<dyn Store>,
    limit_usd: f64,
    refresh: Duration,
    alert: Option<AlertFn>,
    state: Mutex<SpendState>,
}

#[derive(Debug, Default)]
struct SpendState {
    day: Option<chrono::NaiveDate>,
    stored_usd: f64,
    local_usd: f64,
    read_at: Option<Instant>,
    alerted: Option<chrono::NaiveDate>,
}

impl std::fmt::Debug for DailySpendLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DailySpendLimit")
            .field("limit_usd", &self.limit_usd)
            .finish()
    }
}

impl DailySpendLimit {
    pub fn new(store: Arc<dyn Store>, limit_usd: f64, alert: Option<AlertFn>) -> Self {
        Self {
            store,
            limit_usd,
            refresh: Duration::from_secs(10),
            alert,
            state: Mutex::new(SpendState::default()),
        }
    }

    /// How often the store's total is re-read (default 10 s).
    pub fn with_refresh(mut self, refresh: Duration) -> Self {
        self.refresh = refresh;
        self
    }

    /// Today's LLM spend as far as this process knows.
    pub async fn spent_today(&self, now: DateTime<Utc>) -> f64 {
        let today = now.date_naive();
        let stale = {
            let state = self.lock();
            state.day != Some(today) || state.read_at.is_none_or(|t| t.elapsed() >= self.refresh)
        };
        if stale {
            let midnight = today.and_time(NaiveTime::MIN).and_utc();
            match self.store.classification_totals(midnight).await {
                Ok(totals) => {
                    let stored: f64 = totals.iter().map(|t| t.cost_usd).sum();
                    let mut state = self.lock();
                    state.day = Some(today);
                    state.stored_usd = stored;
                    state.local_usd = 0.0;
                    state.read_at = Some(Instant::now());
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not read today's LLM spend; using the last known");
                }
            }
        }
        let state = self.lock();
        state.stored_usd + state.local_usd
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SpendState> {
        match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[async_trait]
impl SpendGuard for DailySpendLimit {
    async fn allows(&self) -> bool {
        let now = Utc::now();
        let spent = self.spent_today(now).await;
        if spent < self.limit_usd {
            return true;
        }
        let today = now.date_naive();
        let first = {
            let mut state = self.lock();
            let first = state.alerted != Some(today);
            state.alerted = Some(today);
            first
        };
        crate::events::Routed::SpendLimited.emit();
        if first {
            let message = format!(
                "LLM spend limit reached: ${spent:.2} of ${:.2} today (UTC). Until 00:00 UTC only \
                 the local classifier runs.",
                self.limit_usd
            );
            tracing::warn!(
                spent_usd = spent,
                limit_usd = self.limit_usd,
                "LLM spend limit reached"
            );
            if let Some(alert) = &self.alert {
                alert(message);
            }
        }
        false
    }

    fn spent(&self, usd: f64) {
        self.lock().local_usd += usd;
    }
}

/// How the cascade decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CascadeConfig {
    /// Posts whose local confidence (that is-job is right) is below this go to the LLM.
    pub threshold: f32,
    /// Jobs whose local category confidence ([`jobwire_core::Verdict::category_confidence`])
    /// is below this go to the LLM too: a vacancy in the wrong category bot is a miss for
    /// the subscriber who wanted it. 0 routes on is-job alone.
    pub category_threshold: f32,
}

/// The default thresholds, chosen on `jobwire eval --classifier cascade --group-by-channel
/// --extra-training data/train.jsonl` over `data/dev.jsonl` (5 folds grouped by channel, so
/// every scored post comes from a channel its model never saw, as in the service): against
/// the oracle, is_job F1 within 1 point of it and category micro-F1 at least 0.95 with an LLM
/// share under 30%. Lower is-job thresholds cost nothing there but let non-jobs through on
/// posts of another generator (`jobwire bench llm --write-posts`); see BENCHMARKS.md.
pub const DEFAULT_THRESHOLD: f32 = 0.85;
pub const DEFAULT_CATEGORY_THRESHOLD: f32 = 0.65;

impl Default for CascadeConfig {
    fn default() -> Self {
        Self {
            threshold: DEFAULT_THRESHOLD,
            category_threshold: DEFAULT_CATEGORY_THRESHOLD,
        }
    }
}

impl CascadeConfig {
    /// Whether the local verdict is too unsure to keep: the LLM is asked.
    pub fn unsure(&self, v: &jobwire_core::Verdict) -> bool {
        v.confidence < self.threshold
            || (v.is_job && v.category_confidence < self.category_threshold)
    }
}

/// What the cascade did so far.
#[derive(Debug, Default)]
pub struct CascadeStats {
    /// Posts answered by the local model (confident, or the LLM path closed).
    pub local: AtomicU64,
    /// Posts sent to the LLM.
    pub llm: AtomicU64,
    /// Posts kept local because the spend limit was reached.
    pub spend_limited: AtomicU64,
}

/// The local model first, the LLM for the unsure rest.
pub struct Cascade {
    local: Arc<LiveLocal>,
    llm: Arc<dyn Classifier>,
    config: CascadeConfig,
    spend: Option<Arc<dyn SpendGuard>>,
    stats: CascadeStats,
    name: String,
}

impl std::fmt::Debug for Cascade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cascade")
            .field("llm", &self.llm.name())
            .field("config", &self.config)
            .finish()
    }
}

impl Cascade {
    pub fn new(
        local: Arc<LiveLocal>,
        llm: Arc<dyn Classifier>,
        config: CascadeConfig,
        spend: Option<Arc<dyn SpendGuard>>,
    ) -> Self {
        let name = format!("cascade({})", llm.name());
        Self {
            local,
            llm,
            config,
            spend,
            stats: CascadeStats::default(),
            name,
        }
    }

    pub fn stats(&self) -> &CascadeStats {
        &self.stats
    }

    pub fn local(&self) -> &Arc<LiveLocal> {
        &self.local
    }

    fn route_resume(&self, post: &ClassifyInput, c: &mut Classified) {
        route_resume(&self.local, post, c);
    }
}

/// A résumé the LLM recognised gets the categories of the work it offers from the local
/// model (the LLM's answer names categories for jobs only).
fn route_resume(local: &LiveLocal, post: &ClassifyInput, c: &mut Classified) {
    if c.verdict.kind == jobwire_core::PostKind::Resume && c.verdict.categories.is_empty() {
        c.verdict.categories = local.model().resume_categories(&post.text);
    }
}

/// An LLM alone, with résumés routed: a résumé it recognised gets the categories of the work
/// it offers from the local model, as in the cascade (the LLM answer names categories for
/// jobs only), so résumé subscribers get résumés whichever classifier runs.
pub struct ResumeRouted {
    inner: Arc<dyn Classifier>,
    local: Arc<LiveLocal>,
}

impl std::fmt::Debug for ResumeRouted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResumeRouted")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

impl ResumeRouted {
    pub fn new(inner: Arc<dyn Classifier>, local: Arc<LiveLocal>) -> Self {
        Self { inner, local }
    }

    fn route(&self, post: &ClassifyInput, c: &mut Classified) {
        route_resume(&self.local, post, c);
    }
}

#[async_trait]
impl Classifier for ResumeRouted {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        let mut c = self.inner.classify(post).await?;
        self.route(post, &mut c);
        Ok(c)
    }

    async fn classify_many(
        &self,
        posts: &[ClassifyInput],
    ) -> Vec<Result<Classified, ClassifyError>> {
        collect_in_order(self.classify_stream(posts.to_vec()), posts.len()).await
    }

    fn classify_stream(&self, posts: Vec<ClassifyInput>) -> BoxStream<'_, Settled> {
        let posts = Arc::new(posts);
        Box::pin(
            self.inner
                .classify_stream(posts.as_ref().clone())
                .map(move |(i, mut result)| {
                    if let (Ok(c), Some(post)) = (&mut result, posts.get(i)) {
                        self.route(post, c);
                    }
                    (i, result)
                }),
        )
    }

    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn learn_min_confidence(&self) -> f32 {
        self.inner.learn_min_confidence()
    }

    fn was_trained_on(&self, text: &str) -> bool {
        self.inner.was_trained_on(text)
    }
}

#[async_trait]
impl Classifier for Cascade {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        classify_as_batch(self, post, "empty cascade answer").await
    }

    async fn classify_many(
        &self,
        posts: &[ClassifyInput],
    ) -> Vec<Result<Classified, ClassifyError>> {
        collect_in_order(self.classify_stream(posts.to_vec()), posts.len()).await
    }

    /// The local model's sure verdicts at once; the unsure posts all go to the LLM together
    /// (its pool makes the requests), and each of its answers follows as soon as it is in.
    fn classify_stream(&self, posts: Vec<ClassifyInput>) -> BoxStream<'_, Settled> {
        let mut sure: Vec<Settled> = Vec::with_capacity(posts.len());
        let mut unsure: Vec<(usize, Classified)> = Vec::new();
        for (i, post) in posts.iter().enumerate() {
            let c = self.local.classify_now(post);
            if self.config.unsure(&c.verdict) {
                unsure.push((i, c));
            } else {
                sure.push((i, Ok(c)));
            }
        }
        let confident = sure.len() as u64;
        self.stats.local.fetch_add(confident, Ordering::Relaxed);
        crate::events::Routed::Local(confident).emit();
        let posts = Arc::new(posts);
        let rest = futures::stream::once(async move {
            if unsure.is_empty() {
                return futures::stream::empty().boxed();
            }
            if let Some(spend) = &self.spend
                && !spend.allows().await
            {
                // Over the day's spend: the local model's verdicts stand.
                self.stats
                    .spend_limited
                    .fetch_add(unsure.len() as u64, Ordering::Relaxed);
                return futures::stream::iter(unsure.into_iter().map(|(i, c)| (i, Ok(c)))).boxed();
            }
            self.stats
                .llm
                .fetch_add(unsure.len() as u64, Ordering::Relaxed);
            crate::events::Routed::Llm(unsure.len() as u64).emit();
            let at: Vec<usize> = unsure.iter().map(|(i, _)| *i).collect();
            let inputs: Vec<ClassifyInput> = at.iter().map(|&i| posts[i].clone()).collect();
            self.llm
                .classify_stream(inputs)
                .filter_map(move |(j, mut answer)| {
                    let found = at.get(j).map(|&i| {
                        if let (Some(spend), Ok(c)) = (&self.spend, &answer) {
                            spend.spent(c.cost_usd);
                        }
                        if let Ok(c) = &mut answer {
                            self.route_resume(&posts[i], c);
                        }
                        (i, answer)
                    });
                    futures::future::ready(found)
                })
                .boxed()
        })
        .flatten();
        Box::pin(futures::stream::iter(sure).chain(rest))
    }

    fn max_batch(&self) -> usize {
        // About one post in four goes on to the LLM: take enough to fill its batches.
        (self.llm.max_batch().max(1) * 4).min(64)
    }

    fn name(&self) -> &str {
        &self.name
    }

    /// The LLM's: only its answers are learned.
    fn learn_min_confidence(&self) -> f32 {
        self.llm.learn_min_confidence()
    }

    fn was_trained_on(&self, text: &str) -> bool {
        self.local.was_trained_on(text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::atomic::AtomicUsize;

    use jobwire_core::dataset::LabeledPost;
    use jobwire_core::{CategorySlug, PostKind, Verdict};
    use jobwire_store::{ClassificationRecord, NewPost, PostStatus, SqliteStore};

    use super::*;
    use crate::local::TrainOptions;

    /// An LLM stand-in that answers "job" at a fixed cost and counts its calls.
    #[derive(Debug, Default)]
    struct PaidLlm {
        calls: AtomicUsize,
    }

    #[async_trait]
    impl Classifier for PaidLlm {
        async fn classify(&self, _post: &ClassifyInput) -> Result<Classified, ClassifyError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            Ok(Classified {
                verdict: Verdict {
                    is_job: true,
                    kind: PostKind::Job,
                    categories: vec![CategorySlug::parse("web").unwrap()],
                    confidence: 0.99,
                    category_confidence: 1.0,
                },
                model: "paid-model".into(),
                prompt_version: "classify.v2".into(),
                tokens_in: 1000,
                tokens_out: 100,
                latency_ms: 5,
                extraction: None,
                cost_usd: 0.01,
            })
        }
        fn name(&self) -> &str {
            "llm:paid-model"
        }
    }

    fn local_model() -> Arc<LocalModel> {
        let doc = include_str!("../../../data/dev.jsonl");
        let data = LabeledPost::parse_all(doc).unwrap();
        let slugs: Vec<CategorySlug> = ["web", "design", "video", "texts", "bots"]
            .iter()
            .map(|s| CategorySlug::parse(s).unwrap())
            .collect();
        Arc::new(LocalModel::train(&data, &slugs, &TrainOptions::default()).unwrap())
    }

    /// An LLM stand-in that recognises every post as a résumé and names no category.
    #[derive(Debug)]
    struct ResumeLlm;

    #[async_trait]
    impl Classifier for ResumeLlm {
        async fn classify(&self, _post: &ClassifyInput) -> Result<Classified, ClassifyError> {
            Ok(Classified {
                verdict: Verdict {
                    is_job: false,
                    kind: PostKind::Resume,
                    categories: vec![],
                    confidence: 0.95,
                    category_confidence: 1.0,
                },
                model: "resume-model".into(),
                prompt_version: "classify.v2".into(),
                tokens_in: 10,
                tokens_out: 5,
                latency_ms: 1,
                extraction: None,
                cost_usd: 0.0,
            })
        }
        fn name(&self) -> &str {
            "llm:resume-model"
        }
    }

    #[tokio::test]
    async fn an_llm_alone_still_routes_resumes_to_the_work_they_offer() {
        let routed =
            ResumeRouted::new(Arc::new(ResumeLlm), Arc::new(LiveLocal::new(local_model())));
        let resume = ClassifyInput {
            id: "r".into(),
            text: "Веб-разработчик (Laravel/Vue), 6 лет опыта, свободен для проектов: сайты, \
                   лендинги, интернет-магазины. Портфолио по запросу."
                .into(),
            channel: "@c".into(),
        };
        let c = routed.classify(&resume).await.unwrap();
        assert_eq!(c.verdict.kind, PostKind::Resume);
        assert!(
            c.verdict
                .categories
                .contains(&CategorySlug::parse("web").unwrap()),
            "{:?}",
            c.verdict.categories
        );
        assert_eq!(c.model, "resume-model", "the LLM's answer otherwise");
        let many = routed.classify_many(&[resume.clone(), resume]).await;
        assert!(
            many.iter()
                .all(|c| !c.as_ref().unwrap().verdict.categories.is_empty())
        );
        assert_eq!(routed.name(), "llm:resume-model");
    }

    fn post(i: usize) -> ClassifyInput {
        ClassifyInput {
            id: i.to_string(),
            text: format!("Нужен сайт {i}"),
            channel: "@c".into(),
        }
    }

    #[tokio::test]
    async fn past_the_daily_limit_only_the_local_model_answers_and_the_admin_is_told_once() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(
            SqliteStore::open_path(&dir.path().join("db"))
                .await
                .unwrap(),
        );
        // $0.025 already spent today (two and a half LLM answers) in another process.
        let channel = store.ensure_channel("@c", Utc::now()).await.unwrap();
        for n in 0..3 {
            let id = match store
                .insert_post(&NewPost {
                    channel_id: channel.id,
                    external_id: n.to_string(),
                    text: "t".into(),
                    author: None,
                    url: None,
                    posted_at: Utc::now(),
                    received_at: Utc::now(),
                    status: PostStatus::Queued,
                    filter_reason: None,
                    fingerprint: None,
                    duplicate_of: None,
                })
                .await
                .unwrap()
            {
                jobwire_store::InsertOutcome::Inserted(id) => id,
                jobwire_store::InsertOutcome::AlreadyKnown(id) => id,
            };
            let record = ClassificationRecord {
                is_job: true,
                kind: PostKind::Job,
                categories: vec![CategorySlug::parse("web").unwrap()],
                confidence: 0.9,
                model: "paid-model".into(),
                prompt_version: Some("classify.v2".into()),
                tokens_in: 0,
                tokens_out: 0,
                latency_ms: 0,
                extraction: None,
                cost_usd: if n == 2 { 0.005 } else { 0.01 },
            };
            store
                .record_classification(id, &record, Utc::now())
                .await
                .unwrap();
        }
        let alerts = Arc::new(Mutex::new(Vec::<String>::new()));
        let heard = alerts.clone();
        let limit = DailySpendLimit::new(
            store.clone(),
            0.03,
            Some(Arc::new(move |m: String| heard.lock().unwrap().push(m))),
        )
        .with_refresh(Duration::from_secs(3600));
        let llm = Arc::new(PaidLlm::default());
        // Threshold 1.01: every post is "unsure", so every post wants the LLM.
        let cascade = Cascade::new(
            Arc::new(LiveLocal::new(local_model())),
            llm.clone(),
            CascadeConfig {
                threshold: 1.01,
                category_threshold: 0.0,
            },
            Some(Arc::new(limit)),
        );
        // The first post still fits ($0.025 < $0.03), and costs $0.01.
        let first = cascade.classify(&post(1)).await.unwrap();
        assert_eq!(first.model, "paid-model");
        // Now $0.035 is spent: the next posts get the local answer, with no LLM call.
        for i in 2..5 {
            let c = cascade.classify(&post(i)).await.unwrap();
            assert!(is_local(&c), "post {i} went to the LLM past the limit");
        }
        assert_eq!(llm.calls.load(Ordering::Relaxed), 1);
        assert_eq!(cascade.stats().spend_limited.load(Ordering::Relaxed), 3);
        let alerts = alerts.lock().unwrap();
        assert_eq!(alerts.len(), 1, "the admin is told once: {alerts:?}");
        assert!(alerts[0].contains("spend limit"), "{}", alerts[0]);
    }
}
