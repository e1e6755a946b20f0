//! The LLM classifier: any OpenAI-compatible chat-completions endpoint (plus an optional
//! fallback endpoint), several posts per request, strict JSON-schema output, retries with
//! backoff, and validation of every answered item.
//!
//! # Protocol (`classify.v5`)
//!
//! * System message: `prompts/classify.v5.md` with the configured categories and the curated
//!   examples that use only configured categories ([`system_prompt`]). It is built once and
//!   is byte-identical in every request, so providers' prompt caching applies to it — until
//!   another prompt version is set ([`LlmClassifier::set_prompt`]: a template written in the
//!   admin panel, with the same placeholders, checked by [`check_template`]); each verdict
//!   records the version its request was sent with.
//! * User message: first the [few-shot examples](FewShot) people labeled that are most
//!   similar to this request's posts (one JSON object a line), then the posts as one line of
//!   JSON `{"posts":[{"id":"p1","text":"..."}]}`. Ids are short ids (`p1`, `p2`, …, see
//!   [the pool](#the-pool)), never database ids. Texts are cut to [`LlmConfig::max_post_chars`] characters and are
//!   serialized by `serde_json`, so a post is escaped data and can never break out of its
//!   string; the prompt says that post texts are untrusted data. A post that looks like
//!   instructions to the model ([`looks_like_instructions`]: "ignore previous instructions",
//!   "system:", answer-shaped JSON, in English and Russian) goes in a request of its own, so
//!   it cannot steer the answers for other posts.
//! * `response_format`: `json_schema`, strict ([`response_schema`]), compact:
//!   `{"items":[{"id","kind","categories","confidence","extraction":{...}|null}]}` (a job
//!   is `kind: "job"`; earlier versions also asked for a redundant `is_job`; the extraction
//!   is the title and the skills — the budget, the deadline, the contact and the work mode
//!   are added from the post by the rules of `jobwire_core::extract`),
//!   with `"reason"` only when [`LlmConfig::reasons`] asks for it. Output tokens are what a
//!   subscriber waits for: the prompt asks for short fields and one item per post in order.
//! * `stream: true` ([`LlmConfig::stream`], with `stream_options.include_usage`): each item
//!   is handed on as soon as its closing brace arrives, so the first post of a request is
//!   stored and delivered while the model still writes the rest. A stream that breaks off
//!   keeps its complete items; the posts it did not reach are asked again (below).
//!
//! # Validation, one item at a time
//!
//! JSON in code fences or after prose, and a bare array of items, are accepted (models
//! without strict structured output answer so); an answer cut short (out of tokens) keeps
//! its complete items and the rest are asked again. Content with no usable JSON or no
//! `items` array is a failed attempt (retried with backoff). Otherwise every item is checked on its own: an unknown id is ignored, for a
//! duplicate id the first item wins, `kind` must be `job`/`resume`/`ad`/`chatter` (and agree
//! with `is_job` when a model still writes one), categories outside the configured set are dropped (never fatal), and the
//! extraction (jobs only) is cleaned field by field: the title is one line of at most
//! `MAX_TITLE_CHARS` characters; at most `MAX_SKILLS` distinct skills; a budget needs a
//! finite positive `min`, a currency of 3–4 letters (uppercased) and a basis
//! `fixed`/`hourly`/`monthly`, else it is dropped, and its `max` is kept only when finite and
//! not below `min`; a contact must look like `@handle`, a link or an email and appear in
//! the post (compared case-insensitively, ignoring `@`, spaces and `https://t.me/`-style
//! prefixes), else it is dropped. A bad extraction field never invalidates the
//! classification.
//! A **job none of whose categories is configured** is re-asked once; if it comes back the
//! same way (or there is no re-ask left), it is accepted as a job with no category — the
//! model did say it is a job, and dropping or guessing would both be worse.
//!
//! Posts whose item is missing or invalid are **re-asked**: they go back to the front of the
//! pool (same short ids) and ride along with the next request, at most [`MAX_REASKS`] times.
//! A post still unanswered after that gets [`ClassifyError::Unavailable`]: it stays waiting
//! and is classified later — never lost, never guessed.
//!
//! # The pool
//!
//! Every caller's posts (the classify stage runs several batches at once, the cascade sends
//! only its unsure posts) gather in one pool, and the batching adapts to the load. When no
//! request is in flight a post goes at once (after [`LlmConfig::idle_linger`], 0 by
//! default). While requests are in flight, posts gather: they go when none is in flight any
//! more, as soon as [`LlmConfig::quick_batch`] (2) or [`LlmConfig::batch_size`] posts wait,
//! and in any case when the oldest has waited [`LlmConfig::batch_linger`]. At most
//! [`LlmConfig::max_in_flight`] requests are in flight, and while they all are, posts keep
//! gathering. So a quiet service sends a lone post at once, and under load (a burst, a
//! backlog, an imported history) posts share requests. A post that looks like instructions is a request by itself and goes
//! at once. Short ids (`p1`, `p2`, …) are unique over the classifier's
//! life, never database ids.
//!
//! # Failures and fallback
//!
//! 429 (honouring `Retry-After`, capped by [`LlmConfig::max_backoff`]), 5xx, 408, timeouts,
//! connection errors and malformed content are retried with exponential backoff and jitter up
//! to [`LlmConfig::max_retries`] times. Other 4xx answers are not retried. When the primary
//! endpoint still fails, the [fallback](LlmConfig::fallback) (if any) is asked; it is asked at
//! once when the primary answers 429 `insufficient_quota`, 402, 403 or 404 (model not found),
//! and then the primary is skipped for [`LlmConfig::quota_cooldown`]. Without a fallback, an
//! out-of-quota primary gives [`ClassifyError::Unavailable`] with `retry_after` = the rest of
//! the cool-down, and 402/403/404 give [`ClassifyError::Rejected`].
//!
//! # Accounting
//!
//! Tokens come from the response's `usage`; a provider that sends none is estimated at one
//! token per 4 characters (prompt: system + user message; completion: the content). Every
//! attempt is counted, including ones whose content was unusable (they are billed too). A
//! request's tokens and cost are shared out evenly among the posts it carried (re-asks
//! included); cost uses the prices of the endpoint that was called. [`LlmClassifier::stats`]
//! has running totals.

mod accounting;
mod answer;
mod config;
mod fewshot;
mod inner;
mod pool;
mod prompt;
mod request;
mod scan;
mod section;
mod steering;
mod transport;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use async_trait::async_trait;
use jobwire_core::{CategorySlug, PostKind};
use serde::Serialize;
use tokio::sync::{Notify, Semaphore};

use crate::classifier::{Settled, classify_as_batch};
use crate::{Classified, Classifier, ClassifyError, ClassifyInput};
use accounting::Counters;
pub use answer::verdict_of_answer;
pub use config::{DEFAULT_BATCH, LlmConfig, LlmEndpoint, MAX_BATCH, MAX_REASKS};
use fewshot::Example;
pub use fewshot::{FewShot, MAX_EXAMPLES, MIN_SIMILARITY};
use futures::stream::{BoxStream, FuturesUnordered};
pub(crate) use inner::ActivePrompt;
use inner::Inner;
use pool::Pool;
pub use prompt::{
    MAX_TEMPLATE_CHARS, PLACEHOLDERS, PROMPT_TEMPLATE, PROMPT_VERSION, TemplateError,
    check_template, render_system_prompt, response_schema, system_prompt,
};
use request::Endpoint;
pub use section::{LlmFallbackSection, LlmSection, SectionError};
pub use steering::looks_like_instructions;

/// Running totals of an [`LlmClassifier`] (since it was built).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LlmStats {
    /// HTTP requests sent (every attempt, both endpoints).
    pub requests: u64,
    /// Requests that failed (HTTP error, timeout, unusable content).
    pub failed_requests: u64,
    /// Answers that lacked posts (missing or invalid items) whose posts were asked again.
    pub reasks: u64,
    /// Prompt tokens billed.
    pub tokens_in: u64,
    /// Completion tokens billed.
    pub tokens_out: u64,
    /// Prompt tokens the provider served from its prompt cache (part of `tokens_in`).
    pub cached_tokens: u64,
    /// US dollars spent.
    pub cost_usd: f64,
    /// Requests sent to the fallback endpoint (included in `requests`).
    pub fallback_requests: u64,
}

/// Classifies posts with an LLM.
///
/// Posts from every caller gather in one pool; a request is sent at once when no request is
/// in flight (after [`LlmConfig::idle_linger`], 0 by default); while requests are in flight,
/// when none is any more, when [`LlmConfig::quick_batch`] posts wait, or when the oldest
/// waited [`LlmConfig::batch_linger`]; with at most [`LlmConfig::max_in_flight`] requests at
/// once. Posts an answer lacked go back to the front
/// of the pool and ride along with the next request (at most [`MAX_REASKS`] times), so a
/// re-ask rarely costs a request of its own.
pub struct LlmClassifier {
    inner: Arc<Inner>,
}

impl fmt::Debug for LlmClassifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClassifier")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl LlmClassifier {
    /// Builds the HTTP clients. Installs rustls' `ring` crypto provider when the process has
    /// none yet (reqwest would panic without one).
    pub fn new(config: LlmConfig) -> Result<Self, ClassifyError> {
        if config.categories.is_empty() {
            return Err(ClassifyError::Invalid("no categories configured".into()));
        }
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err means another thread installed one meanwhile: fine either way.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let primary = Endpoint::new(config.primary(), config.timeout, false)?;
        let fallback = config
            .fallback
            .clone()
            .map(|f| Endpoint::new(f, config.timeout, true))
            .transpose()?;
        let slugs: Vec<CategorySlug> = config.categories.iter().map(|(s, _)| s.clone()).collect();
        Ok(Self {
            inner: Arc::new(Inner {
                prompt: RwLock::new(Arc::new(ActivePrompt {
                    version: PROMPT_VERSION.to_owned(),
                    system: system_prompt(&config.categories, config.reasons),
                    template: None,
                })),
                described: RwLock::new(Arc::new(config.categories.clone())),
                schema: response_schema(&slugs, config.reasons),
                name: format!("llm:{}", config.model),
                slugs,
                primary,
                fallback,
                examples: RwLock::new(Arc::new(Vec::new())),
                cooldown: Mutex::new(None),
                counters: Counters::default(),
                pool: Mutex::new(Pool::default()),
                wake: Notify::new(),
                slots: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
                next_id: AtomicU64::new(0),
                config,
            }),
        })
    }

    /// The system prompt sent with every request (identical in all of them until another
    /// prompt version is set).
    pub fn system_prompt(&self) -> String {
        self.inner.current_prompt().system.clone()
    }

    /// The name of the prompt version in use, recorded with every verdict
    /// ([`PROMPT_VERSION`] for the built-in prompt).
    pub fn prompt_version(&self) -> String {
        self.inner.current_prompt().version.clone()
    }

    /// Uses another prompt template from the next request on, its verdicts recorded as made
    /// with prompt version `version`. A template that fails [`check_template`] is refused and
    /// the prompt in use stays. Requests already sent keep the prompt they were sent with.
    pub fn set_prompt(&self, version: &str, template: &str) -> Result<(), TemplateError> {
        check_template(template)?;
        let described = self.inner.described();
        self.swap_prompt(ActivePrompt {
            version: version.to_owned(),
            system: render_system_prompt(template, &described, self.inner.config.reasons),
            template: Some(template.to_owned()),
        });
        Ok(())
    }

    /// Lists the categories with these descriptions in the prompt from the next request on
    /// (an admin edited them). Only configured categories are taken; one left out keeps its
    /// description. Returns whether the prompt changed.
    pub fn set_category_descriptions(&self, descriptions: &[(CategorySlug, String)]) -> bool {
        let current = self.inner.described();
        let next: Vec<(CategorySlug, String)> = current
            .iter()
            .map(|(slug, old)| {
                let new = descriptions.iter().find(|(s, _)| s == slug);
                (
                    slug.clone(),
                    new.map_or_else(|| old.clone(), |(_, d)| d.clone()),
                )
            })
            .collect();
        if next == *current {
            return false;
        }
        *self
            .inner
            .described
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(next.clone());
        let active = self.inner.current_prompt();
        let template = active.template.as_deref().unwrap_or(PROMPT_TEMPLATE);
        self.swap_prompt(ActivePrompt {
            version: active.version.clone(),
            system: render_system_prompt(template, &next, self.inner.config.reasons),
            template: active.template.clone(),
        });
        tracing::info!(version = %active.version, "the prompt lists the categories' new descriptions");
        true
    }

    /// Goes back to the built-in prompt ([`PROMPT_TEMPLATE`], [`PROMPT_VERSION`]).
    pub fn use_built_in_prompt(&self) {
        let described = self.inner.described();
        self.swap_prompt(ActivePrompt {
            version: PROMPT_VERSION.to_owned(),
            system: system_prompt(&described, self.inner.config.reasons),
            template: None,
        });
    }

    fn swap_prompt(&self, prompt: ActivePrompt) {
        let mut guard = self
            .inner
            .prompt
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if guard.version != prompt.version || guard.system != prompt.system {
            tracing::info!(version = %prompt.version, previous = %guard.version, "LLM prompt version changed");
        }
        *guard = Arc::new(prompt);
    }

    /// Asks the primary endpoint once about one text with a template that is not in use
    /// (trying a prompt version before it becomes current): the model's answer as it came,
    /// for [`verdict_of_answer`]. No few-shot examples and no retries; the tokens count in
    /// [`Self::stats`]. A template that fails [`check_template`] is
    /// [`ClassifyError::Invalid`].
    pub async fn try_prompt(&self, template: &str, text: &str) -> Result<String, ClassifyError> {
        check_template(template).map_err(|e| ClassifyError::Invalid(e.to_string()))?;
        let c = &self.inner.config;
        let system = render_system_prompt(template, &self.inner.described(), c.reasons);
        let user = prompt::user_message(&[], &[("p1", text)], c.max_post_chars);
        self.inner.probe(&system, &user).await
    }

    /// Replaces the examples people labeled (at most [`MAX_EXAMPLES`], the first ones).
    /// Categories that are not configured are dropped, `is_job` and `kind` made consistent
    /// (`is_job` wins), empty texts skipped. Takes effect for the next request.
    pub fn set_examples(&self, examples: Vec<FewShot>) {
        let slugs = &self.inner.slugs;
        let kept: Vec<Example> = examples
            .into_iter()
            .filter(|e| !e.text.trim().is_empty())
            .take(MAX_EXAMPLES)
            .map(|mut e| {
                if e.is_job {
                    e.kind = PostKind::Job;
                    let mut cats: Vec<CategorySlug> = Vec::new();
                    for c in e.categories.drain(..) {
                        if slugs.contains(&c) && !cats.contains(&c) {
                            cats.push(c);
                        }
                    }
                    e.categories = cats;
                } else {
                    if e.kind == PostKind::Job {
                        e.kind = PostKind::Chatter;
                    }
                    e.categories.clear();
                }
                Example::new(e)
            })
            .collect();
        *self
            .inner
            .examples
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(kept);
    }

    /// The few-shot examples a request with these post texts would carry, best first.
    pub fn pick_examples(&self, texts: &[&str]) -> Vec<FewShot> {
        let examples = self.inner.current_examples();
        let grams: Vec<Vec<u64>> = texts.iter().map(|t| fewshot::trigrams(t)).collect();
        fewshot::pick(&examples, &grams, self.inner.config.few_shot)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Running totals since the classifier was built.
    pub fn stats(&self) -> LlmStats {
        let c = &self.inner.counters;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LlmStats {
            requests: g(&c.requests),
            failed_requests: g(&c.failed_requests),
            reasks: g(&c.reasks),
            tokens_in: g(&c.tokens_in),
            tokens_out: g(&c.tokens_out),
            cached_tokens: g(&c.cached_tokens),
            cost_usd: f64::from_bits(g(&c.cost_usd)),
            fallback_requests: g(&c.fallback_requests),
        }
    }
}

#[async_trait]
impl Classifier for LlmClassifier {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        classify_as_batch(self, post, "empty batch answer").await
    }

    /// Puts the posts into the pool shared by every caller and waits for their answers:
    /// requests carry up to [`LlmConfig::batch_size`] posts, from this call and others.
    async fn classify_many(
        &self,
        posts: &[ClassifyInput],
    ) -> Vec<Result<Classified, ClassifyError>> {
        crate::classifier::collect_in_order(self.classify_stream(posts.to_vec()), posts.len()).await
    }

    /// Puts the posts into the pool shared by every caller and yields each answer as soon
    /// as its item is complete (in a streamed answer, while the model writes the rest).
    fn classify_stream(&self, posts: Vec<ClassifyInput>) -> BoxStream<'_, Settled> {
        let waits = self.inner.submit(&posts);
        Box::pin(
            waits
                .into_iter()
                .enumerate()
                .map(|(i, rx)| async move {
                    let result = rx.await.unwrap_or_else(|_| {
                        Err(ClassifyError::Unavailable {
                            attempts: 0,
                            last_error: "the LLM request was abandoned (shutting down)".into(),
                            retry_after: None,
                        })
                    });
                    (i, result)
                })
                .collect::<FuturesUnordered<_>>(),
        )
    }

    fn max_batch(&self) -> usize {
        self.inner.batch_size()
    }

    fn name(&self) -> &str {
        &self.inner.name
    }

    fn learn_min_confidence(&self) -> f32 {
        self.inner.config.learn_min_confidence
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::answer::{ItemCheck, check_item};
    use super::*;
    use serde_json::json;
    use std::collections::HashSet;

    fn config() -> LlmConfig {
        let cats = ["web", "bots"]
            .iter()
            .map(|s| (CategorySlug::parse(s).unwrap(), format!("{s} work")))
            .collect();
        let mut c = LlmConfig::new("http://127.0.0.1:9/v1", "m", cats);
        c.api_key = Some("sk-secret-value".into());
        let mut fb = LlmEndpoint::new("http://127.0.0.1:9/v1", "f");
        fb.api_key = Some("sk-fallback-secret".into());
        c.fallback = Some(fb);
        c
    }

    #[test]
    fn debug_never_shows_the_keys() {
        let c = config();
        let shown = format!("{c:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("***"));
        let classifier = LlmClassifier::new(c).unwrap();
        assert!(!format!("{classifier:?}").contains("secret"));
    }

    #[test]
    fn edited_descriptions_reach_the_prompt_of_the_version_in_use() {
        let c = LlmClassifier::new(config()).unwrap();
        let web = CategorySlug::parse("web").unwrap();
        let edited = [(web.clone(), "sites and landing pages".to_owned())];
        assert!(c.set_category_descriptions(&edited));
        assert!(
            c.system_prompt()
                .contains("- `web`: sites and landing pages")
        );
        assert!(
            c.system_prompt().contains("- `bots`: bots work"),
            "the other one stays"
        );
        assert!(
            !c.set_category_descriptions(&edited),
            "nothing changed the second time"
        );

        // A version made current later lists the edited descriptions too, and keeps them when
        // they change again; its name stays the version recorded with verdicts.
        let template = PROMPT_TEMPLATE.replace("You", "Thou");
        c.set_prompt("v9", &template).unwrap();
        assert!(c.system_prompt().contains("sites and landing pages"));
        c.set_category_descriptions(&[(web, "shops".to_owned())]);
        assert!(c.system_prompt().contains("- `web`: shops"));
        assert!(c.system_prompt().contains("Thou"));
        assert_eq!(c.prompt_version(), "v9");
        c.use_built_in_prompt();
        assert!(c.system_prompt().contains("- `web`: shops"));
    }

    #[test]
    fn prompt_lists_categories_and_schema_enumerates_them() {
        let c = LlmClassifier::new(config()).unwrap();
        assert!(c.system_prompt().contains("- `web`: web work"));
        assert!(!c.system_prompt().contains("{{categories}}"));
        let item = &c.inner.schema["properties"]["items"]["items"];
        assert_eq!(
            item["properties"]["categories"]["items"]["enum"],
            json!(["web", "bots"])
        );
        // Strict mode: every property is required.
        let props = item["properties"].as_object().unwrap();
        let required = item["required"].as_array().unwrap();
        assert_eq!(props.len(), required.len());
        let ex = &item["properties"]["extraction"];
        assert_eq!(
            ex["properties"].as_object().unwrap().len(),
            ex["required"].as_array().unwrap().len()
        );
    }

    #[test]
    fn the_prompts_examples_are_valid_answers() {
        let all: Vec<(CategorySlug, String)> = ["web", "design", "video", "texts", "bots"]
            .iter()
            .map(|s| (CategorySlug::parse(s).unwrap(), String::new()))
            .collect();
        let slugs: Vec<CategorySlug> = all.iter().map(|(s, _)| s.clone()).collect();
        let prompt = system_prompt(&all, false);
        let answers: Vec<&str> = prompt
            .lines()
            .filter_map(|l| l.strip_prefix("Answer: "))
            .collect();
        assert_eq!(answers.len(), 6);
        let mut kinds = HashSet::new();
        for a in answers {
            let v: serde_json::Value = serde_json::from_str(a).unwrap();
            match check_item(&v, &slugs, 0.5) {
                ItemCheck::Valid(c) => {
                    kinds.insert(c.verdict.kind);
                }
                other => panic!("{a}: {other:?}"),
            }
        }
        assert_eq!(kinds.len(), 4, "every kind is shown");
    }

    #[test]
    fn examples_are_cleaned_when_set() {
        let c = LlmClassifier::new(config()).unwrap();
        c.set_examples(vec![
            FewShot {
                text: "Нужен бот для телеграм канала, оплата 5000".into(),
                is_job: true,
                kind: PostKind::Chatter,
                categories: vec![
                    CategorySlug::parse("bots").unwrap(),
                    CategorySlug::parse("crypto").unwrap(),
                ],
            },
            FewShot {
                text: "   ".into(),
                is_job: false,
                kind: PostKind::Ad,
                categories: Vec::new(),
            },
        ]);
        let picked = c.pick_examples(&["Нужен бот для телеграм чата"]);
        assert_eq!(picked.len(), 1);
        assert_eq!(picked[0].kind, PostKind::Job);
        assert_eq!(picked[0].categories, [CategorySlug::parse("bots").unwrap()]);
    }
}
