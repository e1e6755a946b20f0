//! The request/answer cycle: the HTTP client of each endpoint, one round (the primary
//! unless it is cooling down, then the fallback), retries with backoff, building the
//! chat-completions request, and counting the tokens and cost of every attempt.

use std::sync::PoisonError;
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
    ResponseFormat, ResponseFormatJsonSchema,
};
use backon::{BackoffBuilder, ExponentialBuilder};
use jobwire_core::secret::Secret;
use serde_json::Value;

use super::accounting::{Spent, bump};
use super::answer::parse_items;
use super::transport::{AttemptError, PlainTransport, classify_openai_error};
use super::{Inner, LlmEndpoint};
use crate::ClassifyError;

/// One endpoint and its HTTP client.
pub(crate) struct Endpoint {
    cfg: LlmEndpoint,
    client: Client<OpenAIConfig>,
    is_fallback: bool,
}

impl Endpoint {
    pub(crate) fn new(
        cfg: LlmEndpoint,
        timeout: Duration,
        is_fallback: bool,
    ) -> Result<Self, ClassifyError> {
        let http = reqwest013::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build HTTP client: {e}")))?;
        let openai = OpenAIConfig::new()
            .with_api_base(cfg.base_url.trim_end_matches('/'))
            .with_api_key(cfg.api_key.as_ref().map_or("", Secret::expose));
        let client =
            Client::build(http.clone(), openai).with_http_service(PlainTransport { client: http });
        Ok(Self {
            cfg,
            client,
            is_fallback,
        })
    }
}

/// A usable answer: its items and the model that gave it.
pub(crate) struct Reply {
    pub(crate) items: Vec<Value>,
    /// The configured name of the endpoint's model — never the name the response reports,
    /// which the provider chooses (it becomes a metrics label and a stored column).
    pub(crate) model: String,
}

impl Inner {
    /// One round: the primary (unless cooling down), then the fallback.
    pub(crate) async fn ask(&self, user: &str, n: usize) -> (Result<Reply, ClassifyError>, Spent) {
        let mut spent = Spent::default();
        let cooling = {
            let mut guard = self.cooldown.lock().unwrap_or_else(PoisonError::into_inner);
            match guard.as_ref() {
                Some((until, why)) if *until > Instant::now() => {
                    Some((until.saturating_duration_since(Instant::now()), why.clone()))
                }
                Some(_) => {
                    *guard = None;
                    None
                }
                None => None,
            }
        };
        let primary_error = match cooling {
            Some((left, why)) => {
                tracing::debug!(model = %self.primary.cfg.model, ?left, "primary LLM cooling down; skipped");
                why.into_error(0, left)
            }
            None => match self.call(&self.primary, user, n, &mut spent).await {
                Ok(reply) => return (Ok(reply), spent),
                Err(AttemptError::Switch(why)) => {
                    let cooldown = self.config.quota_cooldown;
                    tracing::warn!(
                        model = %self.primary.cfg.model, status = why.status, ?cooldown,
                        "primary LLM cannot serve (quota, payment or model); skipped for the cool-down"
                    );
                    *self.cooldown.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some((Instant::now() + cooldown, why.clone()));
                    why.into_error(spent.requests, cooldown)
                }
                Err(e) => attempt_into_error(e, spent.requests),
            },
        };
        let Some(fallback) = &self.fallback else {
            return (Err(primary_error), spent);
        };
        tracing::warn!(error = %primary_error, fallback = %fallback.cfg.model, "asking the fallback LLM");
        let before = spent.requests;
        match self.call(fallback, user, n, &mut spent).await {
            Ok(reply) => (Ok(reply), spent),
            Err(e) => {
                let fallback_error = match e {
                    AttemptError::Switch(why) => {
                        why.into_error(spent.requests - before, self.config.quota_cooldown)
                    }
                    other => attempt_into_error(other, spent.requests - before),
                };
                let error = if fallback_error.is_retryable() || !primary_error.is_retryable() {
                    fallback_error
                } else {
                    primary_error
                };
                (Err(error), spent)
            }
        }
    }

    /// One endpoint, with retries for transient failures.
    async fn call(
        &self,
        ep: &Endpoint,
        user: &str,
        n: usize,
        spent: &mut Spent,
    ) -> Result<Reply, AttemptError> {
        let request = self
            .request(&ep.cfg.model, user, n)
            .map_err(AttemptError::Permanent)?;
        let mut delays = ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_max_times(self.config.max_retries as usize)
            .with_jitter()
            .build();
        let cap = self.config.max_backoff;
        loop {
            spent.requests += 1;
            bump(&self.counters.requests, 1);
            if ep.is_fallback {
                bump(&self.counters.fallback_requests, 1);
            }
            let error = match self.attempt(ep, &request, user, spent).await {
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            bump(&self.counters.failed_requests, 1);
            let AttemptError::Transient { retry_after, .. } = &error else {
                return Err(error);
            };
            let Some(delay) = delays.next() else {
                return Err(error);
            };
            let delay = retry_after.map_or(delay, |wait| wait.min(cap));
            tracing::warn!(error = %error, ?delay, model = %ep.cfg.model, "LLM call failed, retrying");
            tokio::time::sleep(delay).await;
        }
    }

    fn request(
        &self,
        model: &str,
        user: &str,
        n: usize,
    ) -> Result<CreateChatCompletionRequest, ClassifyError> {
        let messages: Vec<ChatCompletionRequestMessage> = vec![
            ChatCompletionRequestSystemMessage::from(self.system_prompt.as_str()).into(),
            ChatCompletionRequestUserMessage::from(user).into(),
        ];
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        CreateChatCompletionRequestArgs::default()
            .model(model)
            .messages(messages)
            .response_format(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: Some("Classification of each post".to_owned()),
                    name: "post_classification".to_owned(),
                    schema: self.schema.clone(),
                    strict: Some(true),
                },
            })
            .max_completion_tokens(
                300u32
                    .saturating_add(n.saturating_mul(200))
                    .min(self.config.max_output_tokens.max(1)),
            )
            .build()
            .map_err(|e| ClassifyError::Invalid(format!("cannot build the request: {e}")))
    }

    /// One HTTP request. Its usage is counted whatever the content turns out to be.
    async fn attempt(
        &self,
        ep: &Endpoint,
        request: &CreateChatCompletionRequest,
        user: &str,
        spent: &mut Spent,
    ) -> Result<Reply, AttemptError> {
        let response = ep
            .client
            .chat()
            .create(request.clone())
            .await
            .map_err(classify_openai_error)?;
        let choice = response.choices.first();
        let content = choice.and_then(|c| c.message.content.as_deref());
        let refusal = choice.and_then(|c| c.message.refusal.as_deref());
        let (tokens_in, cached, tokens_out) = match &response.usage {
            Some(u) => (
                u64::from(u.prompt_tokens),
                u.prompt_tokens_details
                    .as_ref()
                    .and_then(|d| d.cached_tokens)
                    .map_or(0, u64::from),
                u64::from(u.completion_tokens),
            ),
            None => {
                let chars = |s: &str| s.chars().count() as u64;
                (
                    (chars(&self.system_prompt) + chars(user)).div_ceil(4),
                    0,
                    chars(content.or(refusal).unwrap_or("")).div_ceil(4),
                )
            }
        };
        let cost = ep.cfg.cost(tokens_in, cached, tokens_out);
        bump(&self.counters.cached_tokens, cached);
        spent.tokens_in += tokens_in;
        spent.tokens_out += tokens_out;
        spent.cost_usd += cost;
        bump(&self.counters.tokens_in, tokens_in);
        bump(&self.counters.tokens_out, tokens_out);
        self.counters.add_cost(cost);

        let content = match (choice, content, refusal) {
            (None, ..) => return Err(AttemptError::transient("answer has no choices")),
            (_, Some(c), _) => c,
            (_, None, Some(r)) => {
                return Err(AttemptError::transient(format!("model refused: {r}")));
            }
            (_, None, None) => return Err(AttemptError::transient("answer has no content")),
        };
        let items = parse_items(content).map_err(AttemptError::transient)?;
        if response.model != ep.cfg.model {
            // Providers name a dated snapshot here, and a hostile one anything at all.
            let reported: String = response.model.chars().take(64).collect();
            tracing::debug!(model = %ep.cfg.model, reported = ?reported, "the LLM reported another model name");
        }
        Ok(Reply {
            items,
            model: ep.cfg.model.clone(),
        })
    }
}

fn attempt_into_error(e: AttemptError, attempts: u32) -> ClassifyError {
    match e {
        AttemptError::Transient {
            message,
            retry_after,
        } => ClassifyError::Unavailable {
            attempts,
            last_error: message,
            retry_after,
        },
        AttemptError::Permanent(e) => e,
        AttemptError::Switch(why) => why.into_error(attempts, Duration::ZERO),
    }
}

/// The same error for another post of the batch.
pub(crate) fn copy_error(e: &ClassifyError) -> ClassifyError {
    match e {
        ClassifyError::Unavailable {
            attempts,
            last_error,
            retry_after,
        } => ClassifyError::Unavailable {
            attempts: *attempts,
            last_error: last_error.clone(),
            retry_after: *retry_after,
        },
        ClassifyError::Rejected { status, message } => ClassifyError::Rejected {
            status: *status,
            message: message.clone(),
        },
        other => ClassifyError::Invalid(other.to_string()),
    }
}
