//! The LLM classifier: any OpenAI-compatible chat-completions endpoint, strict JSON-schema
//! output, retries with exponential backoff, and validation of every answer.
//!
//! # Protocol
//!
//! * System message: the prompt `prompts/classify.v1.md` with the configured categories and
//!   their descriptions filled in.
//! * Last user message: `{"posts":[{"id":"<id>","text":"<post text>"}]}`, serialized with
//!   `serde_json`, so a post is escaped data and can never break out of its string.
//! * `response_format`: `json_schema`, strict, with
//!   `{"results":[{"id","is_job","kind":enum,"categories":[enum of configured slugs]}]}`
//!   (every property required, no additional properties).
//!
//! An answer is parsed and validated: every requested id must be answered; categories outside
//! the configured set are dropped (and logged), never fatal; non-jobs get no categories.
//! Content that is not JSON or does not match the schema counts as a transient failure.
//!
//! # Failures
//!
//! 429 (honouring `Retry-After`, capped by [`LlmConfig::max_backoff`]), 5xx, 408, timeouts,
//! connection errors and malformed or off-schema content are retried with exponential
//! backoff and jitter up to [`LlmConfig::max_retries`] times, then reported as
//! [`ClassifyError::Unavailable`] (keep the post waiting, retry later). Other 4xx answers are
//! [`ClassifyError::Rejected`] at once.
//!
//! The HTTP client has a per-request timeout and no retries of its own: async-openai's
//! built-in retry layer is replaced by a plain transport (below) so retries are counted and
//! bounded in one place, and so the `Retry-After` header reaches the retry policy.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
    ResponseFormat, ResponseFormatJsonSchema,
};
use async_trait::async_trait;
use backon::{ExponentialBuilder, Retryable};
use jobwire_core::{CategorySlug, PostKind, Verdict};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Classified, Classifier, ClassifyError, ClassifyInput};

/// The prompt template (`{{categories}}` is replaced by the category list).
pub const PROMPT_TEMPLATE: &str = include_str!("../../../prompts/classify.v1.md");

/// The prompt version recorded with every verdict.
pub const PROMPT_VERSION: &str = "classify.v1";

/// The largest number of posts one request should carry.
pub const MAX_BATCH: usize = 10;

/// Configuration of an [`LlmClassifier`].
#[derive(Clone)]
pub struct LlmConfig {
    /// Base URL of the OpenAI-compatible API, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:8080/v1` (requests go to `{base_url}/chat/completions`).
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// API key (a secret: never logged; `Debug` shows `***`). `None` sends no key.
    pub api_key: Option<String>,
    /// Timeout of one HTTP request (connect, send and read the whole answer).
    pub timeout: Duration,
    /// Retries after the first attempt for transient failures.
    pub max_retries: u32,
    /// Categories the model may answer, with descriptions shown to it.
    pub categories: Vec<(CategorySlug, String)>,
    /// First backoff delay (doubled per retry, with jitter).
    pub min_backoff: Duration,
    /// Largest backoff delay; also caps a server's `Retry-After`.
    pub max_backoff: Duration,
    /// Confidence reported with LLM verdicts (the API gives no probability).
    pub assumed_confidence: f32,
    /// Post texts are cut to this many characters before they are sent.
    pub max_post_chars: usize,
}

impl LlmConfig {
    /// A configuration with defaults: 30 s timeout, 4 retries, backoff 0.5–20 s,
    /// confidence 0.9, posts cut at 8000 characters.
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        categories: Vec<(CategorySlug, String)>,
    ) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(30),
            max_retries: 4,
            categories,
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            assumed_confidence: 0.9,
            max_post_chars: 8000,
        }
    }
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("categories", &self.categories)
            .field("min_backoff", &self.min_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("assumed_confidence", &self.assumed_confidence)
            .field("max_post_chars", &self.max_post_chars)
            .finish()
    }
}

/// The JSON schema of an answer for the given categories.
pub fn response_schema(categories: &[CategorySlug]) -> Value {
    let slugs: Vec<&str> = categories.iter().map(CategorySlug::as_str).collect();
    json!({
        "type": "object",
        "properties": {
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "is_job": {"type": "boolean"},
                        "kind": {"type": "string", "enum": ["job", "resume", "ad", "chatter"]},
                        "categories": {
                            "type": "array",
                            "items": {"type": "string", "enum": slugs}
                        }
                    },
                    "required": ["id", "is_job", "kind", "categories"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["results"],
        "additionalProperties": false
    })
}

/// The system prompt for the given categories.
pub fn system_prompt(categories: &[(CategorySlug, String)]) -> String {
    let list: Vec<String> = categories
        .iter()
        .map(|(slug, desc)| format!("- `{slug}`: {}", desc.replace('\n', " ")))
        .collect();
    PROMPT_TEMPLATE.replace("{{categories}}", &list.join("\n"))
}

/// Classifies posts with an LLM.
pub struct LlmClassifier {
    config: LlmConfig,
    client: Client<OpenAIConfig>,
    system_prompt: String,
    schema: Value,
    slugs: Vec<CategorySlug>,
    name: String,
}

impl fmt::Debug for LlmClassifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClassifier")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LlmClassifier {
    /// Builds the HTTP client. Installs rustls' `ring` crypto provider when the process has
    /// none yet (reqwest would panic without one).
    pub fn new(config: LlmConfig) -> Result<Self, ClassifyError> {
        if config.categories.is_empty() {
            return Err(ClassifyError::Invalid("no categories configured".into()));
        }
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err means another thread installed one meanwhile: fine either way.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let http = reqwest013::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build HTTP client: {e}")))?;
        let openai = OpenAIConfig::new()
            .with_api_base(config.base_url.trim_end_matches('/'))
            .with_api_key(config.api_key.clone().unwrap_or_default());
        let client =
            Client::build(http.clone(), openai).with_http_service(PlainTransport { client: http });
        let slugs: Vec<CategorySlug> = config.categories.iter().map(|(s, _)| s.clone()).collect();
        Ok(Self {
            system_prompt: system_prompt(&config.categories),
            schema: response_schema(&slugs),
            name: format!("llm:{}", config.model),
            slugs,
            client,
            config,
        })
    }

    /// The system prompt sent with every request.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// Classifies several posts (at most [`MAX_BATCH`] is sensible) in one request, with
    /// retries. Returns one result per post, in order. Token usage is shared out evenly; the
    /// latency is the whole call's.
    pub async fn classify_batch(
        &self,
        posts: &[ClassifyInput],
    ) -> Result<Vec<Classified>, ClassifyError> {
        if posts.is_empty() {
            return Ok(Vec::new());
        }
        let started = Instant::now();
        let request = self.request(posts)?;
        let attempts = AtomicU32::new(0);
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_max_times(self.config.max_retries as usize)
            .with_jitter();
        let cap = self.config.max_backoff;
        let outcome = (|| async {
            attempts.fetch_add(1, Ordering::Relaxed);
            self.attempt(&request, posts).await
        })
        .retry(backoff)
        .sleep(tokio::time::sleep)
        .when(|e: &AttemptError| matches!(e, AttemptError::Transient { .. }))
        .adjust(move |e, delay| match (e, delay) {
            (
                AttemptError::Transient {
                    retry_after: Some(wait),
                    ..
                },
                Some(_),
            ) => Some((*wait).min(cap)),
            (_, delay) => delay,
        })
        .notify(|e, delay| {
            tracing::warn!(error = %e, ?delay, model = %self.config.model, "LLM call failed, retrying");
        })
        .await;
        let attempts = attempts.load(Ordering::Relaxed);
        let answer = match outcome {
            Ok(answer) => answer,
            Err(AttemptError::Permanent(e)) => return Err(e),
            Err(AttemptError::Transient {
                message,
                retry_after,
            }) => {
                return Err(ClassifyError::Unavailable {
                    attempts,
                    last_error: message,
                    retry_after,
                });
            }
        };
        let latency_ms = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let n = posts.len() as u32;
        let share = |total: u32, i: u32| total / n + u32::from(i < total % n);
        Ok(answer
            .verdicts
            .into_iter()
            .enumerate()
            .map(|(i, verdict)| Classified {
                verdict,
                model: answer.model.clone(),
                prompt_version: PROMPT_VERSION.to_owned(),
                tokens_in: share(answer.tokens_in, i as u32),
                tokens_out: share(answer.tokens_out, i as u32),
                latency_ms,
            })
            .collect())
    }

    fn request(
        &self,
        posts: &[ClassifyInput],
    ) -> Result<CreateChatCompletionRequest, ClassifyError> {
        let max = self.config.max_post_chars;
        let items: Vec<Value> = posts
            .iter()
            .map(|p| {
                let end = p
                    .text
                    .char_indices()
                    .nth(max)
                    .map_or(p.text.len(), |(i, _)| i);
                json!({"id": p.id, "text": &p.text[..end]})
            })
            .collect();
        let user = json!({ "posts": items }).to_string();
        let messages: Vec<ChatCompletionRequestMessage> = vec![
            ChatCompletionRequestSystemMessage::from(self.system_prompt.as_str()).into(),
            ChatCompletionRequestUserMessage::from(user).into(),
        ];
        CreateChatCompletionRequestArgs::default()
            .model(self.config.model.as_str())
            .messages(messages)
            .response_format(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: Some("Classification of each post".to_owned()),
                    name: "post_classification".to_owned(),
                    schema: self.schema.clone(),
                    strict: Some(true),
                },
            })
            .max_completion_tokens(200 + 120 * posts.len() as u32)
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build the request: {e}")))
    }

    async fn attempt(
        &self,
        request: &CreateChatCompletionRequest,
        posts: &[ClassifyInput],
    ) -> Result<Answer, AttemptError> {
        let response = self
            .client
            .chat()
            .create(request.clone())
            .await
            .map_err(classify_openai_error)?;
        let choice = response
            .choices
            .first()
            .ok_or_else(|| AttemptError::transient("answer has no choices"))?;
        let content = match (&choice.message.content, &choice.message.refusal) {
            (Some(c), _) => c,
            (None, Some(refusal)) => {
                return Err(AttemptError::transient(format!("model refused: {refusal}")));
            }
            (None, None) => return Err(AttemptError::transient("answer has no content")),
        };
        let verdicts = self.validate(content, posts)?;
        let usage = response.usage.as_ref();
        Ok(Answer {
            verdicts,
            model: if response.model.is_empty() {
                self.config.model.clone()
            } else {
                response.model.clone()
            },
            tokens_in: usage.map_or(0, |u| u.prompt_tokens),
            tokens_out: usage.map_or(0, |u| u.completion_tokens),
        })
    }

    /// Parses and checks an answer's content against the requested posts.
    fn validate(
        &self,
        content: &str,
        posts: &[ClassifyInput],
    ) -> Result<Vec<Verdict>, AttemptError> {
        let parsed: WireAnswer = serde_json::from_str(content)
            .map_err(|e| AttemptError::transient(format!("answer is not the agreed JSON: {e}")))?;
        let mut by_id: HashMap<&str, &WireResult> = HashMap::new();
        for r in &parsed.results {
            if !posts.iter().any(|p| p.id == r.id) {
                tracing::warn!(id = %r.id, "LLM answered an id that was not asked; ignored");
                continue;
            }
            by_id.entry(r.id.as_str()).or_insert(r);
        }
        posts
            .iter()
            .map(|post| {
                let r = by_id.get(post.id.as_str()).ok_or_else(|| {
                    AttemptError::transient(format!("answer lacks post id {:?}", post.id))
                })?;
                let kind = PostKind::parse(&r.kind).ok_or_else(|| {
                    AttemptError::transient(format!("unknown kind {:?} in answer", r.kind))
                })?;
                let kind = match (r.is_job, kind) {
                    (true, _) => PostKind::Job,
                    (false, PostKind::Job) => PostKind::Chatter,
                    (false, k) => k,
                };
                let mut categories: Vec<CategorySlug> = Vec::new();
                if r.is_job {
                    for c in &r.categories {
                        match self.slugs.iter().find(|s| s.as_str() == c) {
                            Some(s) if !categories.contains(s) => categories.push(s.clone()),
                            Some(_) => {}
                            None => tracing::warn!(
                                id = %post.id,
                                category = %c.chars().take(40).collect::<String>(),
                                "LLM answered an unknown category; dropped"
                            ),
                        }
                    }
                }
                Ok(Verdict {
                    is_job: r.is_job,
                    kind,
                    categories,
                    confidence: self.config.assumed_confidence.clamp(0.0, 1.0),
                })
            })
            .collect()
    }
}

#[async_trait]
impl Classifier for LlmClassifier {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        let mut out = self.classify_batch(std::slice::from_ref(post)).await?;
        out.pop()
            .ok_or_else(|| ClassifyError::Invalid("empty batch answer".into()))
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// A validated answer.
struct Answer {
    verdicts: Vec<Verdict>,
    model: String,
    tokens_in: u32,
    tokens_out: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireAnswer {
    results: Vec<WireResult>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireResult {
    id: String,
    is_job: bool,
    kind: String,
    categories: Vec<String>,
}

/// The outcome of one failed attempt.
#[derive(Debug)]
enum AttemptError {
    /// Worth retrying.
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    /// Retrying will not help.
    Permanent(ClassifyError),
}

impl AttemptError {
    fn transient(message: impl Into<String>) -> Self {
        Self::Transient {
            message: message.into(),
            retry_after: None,
        }
    }
}

impl fmt::Display for AttemptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transient { message, .. } => f.write_str(message),
            Self::Permanent(e) => write!(f, "{e}"),
        }
    }
}

fn classify_openai_error(e: OpenAIError) -> AttemptError {
    match e {
        OpenAIError::Boxed(inner) => match inner.downcast::<HttpStatus>() {
            Ok(status) => status.into_attempt_error(),
            Err(other) => AttemptError::transient(format!("transport: {other}")),
        },
        OpenAIError::Reqwest(e) if e.is_builder() => {
            AttemptError::Permanent(ClassifyError::Invalid(format!("bad request: {e}")))
        }
        OpenAIError::Reqwest(e) => {
            let what = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "connection failed"
            } else {
                "transport error"
            };
            // Without the URL: it may carry credentials in unusual setups.
            AttemptError::transient(format!("{what}: {}", e.without_url()))
        }
        OpenAIError::JSONDeserialize(e, _) => {
            AttemptError::transient(format!("malformed response body: {e}"))
        }
        OpenAIError::ApiError(api) => HttpStatus {
            status: api.status_code.as_u16(),
            retry_after: None,
            body: api.api_error.message,
        }
        .into_attempt_error(),
        OpenAIError::InvalidArgument(m) => {
            AttemptError::Permanent(ClassifyError::Invalid(format!("invalid request: {m}")))
        }
        other => AttemptError::transient(other.to_string()),
    }
}

/// A non-success HTTP answer, as the transport reports it.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {status}: {body}")]
struct HttpStatus {
    status: u16,
    retry_after: Option<Duration>,
    body: String,
}

impl HttpStatus {
    fn into_attempt_error(self) -> AttemptError {
        let retryable = self.status == 429 || self.status == 408 || self.status >= 500;
        if retryable {
            AttemptError::Transient {
                message: self.to_string(),
                retry_after: self.retry_after,
            }
        } else {
            AttemptError::Permanent(ClassifyError::Rejected {
                status: self.status,
                message: self.body,
            })
        }
    }
}

/// The HTTP transport under async-openai: sends the request once (no hidden retries) and
/// turns a non-success answer into an [`HttpStatus`] error that keeps `Retry-After`.
#[derive(Clone)]
struct PlainTransport {
    client: reqwest013::Client,
}

type TransportFuture =
    Pin<Box<dyn Future<Output = Result<reqwest013::Response, OpenAIError>> + Send + 'static>>;

impl tower::Service<HttpRequestFactory> for PlainTransport {
    type Response = reqwest013::Response;
    type Error = OpenAIError;
    type Future = TransportFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let client = self.client.clone();
        Box::pin(async move {
            let request = factory.build().await?;
            let response = client
                .execute(request)
                .await
                .map_err(OpenAIError::Reqwest)?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let retry_after = response
                .headers()
                .get(reqwest013::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(3600.0)));
            let body = response.text().await.unwrap_or_default();
            let body: String = body.chars().take(300).collect();
            Err(OpenAIError::Boxed(Box::new(HttpStatus {
                status: status.as_u16(),
                retry_after,
                body,
            })))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config() -> LlmConfig {
        let cats = ["web", "bots"]
            .iter()
            .map(|s| (CategorySlug::parse(s).unwrap(), format!("{s} work")))
            .collect();
        let mut c = LlmConfig::new("http://127.0.0.1:9/v1", "m", cats);
        c.api_key = Some("sk-secret-value".into());
        c
    }

    #[test]
    fn debug_never_shows_the_key() {
        let c = config();
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("***"));
        let classifier = LlmClassifier::new(c).unwrap();
        assert!(!format!("{classifier:?}").contains("sk-secret"));
    }

    #[test]
    fn prompt_lists_categories_and_schema_enumerates_them() {
        let c = LlmClassifier::new(config()).unwrap();
        assert!(c.system_prompt().contains("- `web`: web work"));
        assert!(!c.system_prompt().contains("{{categories}}"));
        let schema = response_schema(&c.slugs);
        assert_eq!(
            schema["properties"]["results"]["items"]["properties"]["categories"]["items"]["enum"],
            json!(["web", "bots"])
        );
    }

    #[test]
    fn validation_drops_unknown_categories_and_checks_ids() {
        let c = LlmClassifier::new(config()).unwrap();
        let posts = [ClassifyInput {
            id: "p1".into(),
            text: "x".into(),
            channel: "@c".into(),
        }];
        let ok = r#"{"results":[{"id":"p1","is_job":true,"kind":"job","categories":["web","hacked","web"]}]}"#;
        let v = c.validate(ok, &posts).unwrap();
        assert_eq!(v[0].categories, [CategorySlug::parse("web").unwrap()]);
        let non_job =
            r#"{"results":[{"id":"p1","is_job":false,"kind":"resume","categories":["web"]}]}"#;
        let v = c.validate(non_job, &posts).unwrap();
        assert!(v[0].categories.is_empty());
        assert_eq!(v[0].kind, PostKind::Resume);
        for bad in [
            r#"{"results":[{"id":"other","is_job":true,"kind":"job","categories":[]}]}"#,
            r#"{"results":[{"id":"p1","is_job":"yes","kind":"job","categories":[]}]}"#,
            r#"{"answer":"job"}"#,
            r#"{"results":[{"id":"p1","is_job":true,"kind":"vacancy","categories":[]}]}"#,
            "not json",
        ] {
            assert!(
                matches!(c.validate(bad, &posts), Err(AttemptError::Transient { .. })),
                "{bad}"
            );
        }
    }
}
