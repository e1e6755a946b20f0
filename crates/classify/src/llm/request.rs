//! The request/answer cycle: the HTTP client of each endpoint, one round (the primary
//! unless it is cooling down, then the fallback), retries with backoff, building the
//! chat-completions request, and counting the tokens and cost of every attempt.

use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use async_openai::types::chat::CompletionUsage;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, ChatCompletionStreamOptions, CreateChatCompletionRequest,
    CreateChatCompletionRequestArgs, ResponseFormat, ResponseFormatJsonSchema,
};
use backon::{BackoffBuilder, ExponentialBuilder};
use futures::StreamExt;
use serde_json::Value;

use super::accounting::{Spent, bump};
use super::answer::parse_items;
use super::config::LlmEndpoint;
use super::inner::Inner;
use super::scan::ItemScanner;
use super::transport::{AttemptError, Transport};
use crate::ClassifyError;

/// One endpoint and its HTTP client.
pub(crate) struct Endpoint {
    cfg: LlmEndpoint,
    transport: Transport,
    is_fallback: bool,
}

impl Endpoint {
    pub(crate) fn new(
        cfg: LlmEndpoint,
        timeout: Duration,
        is_fallback: bool,
    ) -> Result<Self, ClassifyError> {
        let transport = Transport::new(&cfg.base_url, cfg.api_key.clone(), timeout)?;
        Ok(Self {
            cfg,
            transport,
            is_fallback,
        })
    }
}

/// Where the items of a streamed answer go as soon as each is complete, with the post's
/// estimated share of the request (the provider's usage comes only at the end) and the
/// configured model of the endpoint that answers.
pub(crate) type Sink<'a> = &'a mut (dyn FnMut(Value, Spent, &str) + Send);

/// A usable answer: its items (those not already handed to the [`Sink`]) and the model that
/// gave it.
pub(crate) struct Reply {
    pub(crate) items: Vec<Value>,
    /// The configured name of the endpoint's model — never the name the response reports,
    /// which the provider chooses (it becomes a metrics label and a stored column).
    pub(crate) model: String,
}

impl Inner {
    /// One round: the primary (unless cooling down), then the fallback. `system` is the
    /// system prompt of the version in use when the round began.
    pub(crate) async fn ask(
        &self,
        system: &str,
        user: &str,
        n: usize,
        sink: Sink<'_>,
    ) -> (Result<Reply, ClassifyError>, Spent) {
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
            None => match self
                .call(&self.primary, system, user, n, &mut spent, sink)
                .await
            {
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
        match self.call(fallback, system, user, n, &mut spent, sink).await {
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
        system: &str,
        user: &str,
        n: usize,
        spent: &mut Spent,
        sink: Sink<'_>,
    ) -> Result<Reply, AttemptError> {
        let request = self
            .request(system, &ep.cfg.model, user, n, self.config.stream)
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
            let outcome = if self.config.stream {
                self.attempt_streamed(
                    ep,
                    &request,
                    chars(system) + chars(user),
                    n,
                    spent,
                    &mut *sink,
                )
                .await
            } else {
                self.attempt(ep, &request, system, user, spent).await
            };
            let error = match outcome {
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
        system: &str,
        model: &str,
        user: &str,
        n: usize,
        stream: bool,
    ) -> Result<CreateChatCompletionRequest, ClassifyError> {
        let messages: Vec<ChatCompletionRequestMessage> = vec![
            ChatCompletionRequestSystemMessage::from(system).into(),
            ChatCompletionRequestUserMessage::from(user).into(),
        ];
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let mut args = CreateChatCompletionRequestArgs::default();
        if stream {
            args.stream(true)
                .stream_options(ChatCompletionStreamOptions {
                    include_usage: Some(true),
                    include_obfuscation: None,
                });
        }
        args.model(model)
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
        system: &str,
        user: &str,
        spent: &mut Spent,
    ) -> Result<Reply, AttemptError> {
        let response = ep.transport.complete(request).await?;
        let choice = response.choices.first();
        let content = choice.and_then(|c| c.message.content.as_deref());
        let refusal = choice.and_then(|c| c.message.refusal.as_deref());
        let (tokens_in, cached, tokens_out) = match &response.usage {
            Some(u) => usage_tokens(u),
            None => {
                let chars = |s: &str| s.chars().count() as u64;
                (
                    (chars(system) + chars(user)).div_ceil(4),
                    0,
                    chars(content.or(refusal).unwrap_or("")).div_ceil(4),
                )
            }
        };
        self.count_usage(ep, tokens_in, cached, tokens_out, spent);

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

impl Inner {
    /// One request to the primary endpoint, not streamed and not retried, whatever the
    /// configuration says: the answer's content as it came (trying a prompt).
    pub(crate) async fn probe(&self, system: &str, user: &str) -> Result<String, ClassifyError> {
        let ep = &self.primary;
        let request = self.request(system, &ep.cfg.model, user, 1, false)?;
        bump(&self.counters.requests, 1);
        let response = match ep.transport.complete(&request).await {
            Ok(r) => r,
            Err(e) => {
                bump(&self.counters.failed_requests, 1);
                return Err(attempt_into_error(e, 1));
            }
        };
        let choice = response.choices.first();
        let content = choice.and_then(|c| c.message.content.clone());
        let refusal = choice.and_then(|c| c.message.refusal.clone());
        if let Some(u) = &response.usage {
            let (tokens_in, cached, tokens_out) = usage_tokens(u);
            self.count_usage(ep, tokens_in, cached, tokens_out, &mut Spent::default());
        }
        match (content, refusal) {
            (Some(c), _) => Ok(c),
            (None, Some(r)) => Err(ClassifyError::Invalid(format!("the model refused: {r}"))),
            (None, None) => Err(ClassifyError::Invalid("the answer has no content".into())),
        }
    }

    /// Counts one answered attempt's usage: in the running totals and in this round's
    /// `spent`; remembers the share of the prompt the provider had cached, for estimates.
    fn count_usage(
        &self,
        ep: &Endpoint,
        tokens_in: u64,
        cached: u64,
        tokens_out: u64,
        spent: &mut Spent,
    ) {
        let cost = ep.cfg.cost(tokens_in, cached, tokens_out);
        bump(&self.counters.cached_tokens, cached);
        spent.tokens_in += tokens_in;
        spent.tokens_out += tokens_out;
        spent.cost_usd += cost;
        bump(&self.counters.tokens_in, tokens_in);
        bump(&self.counters.tokens_out, tokens_out);
        self.counters.add_cost(cost);
        if let Some(ppm) = (cached.min(tokens_in) * 1_000_000).checked_div(tokens_in) {
            self.counters.cached_ppm.store(ppm, Ordering::Relaxed);
        }
    }

    /// One streamed request (`prompt_chars`: the system and user messages' length): every item is handed to `sink` as soon as it is complete. A
    /// stream that breaks off (the connection drops, no finish reason) after some items keeps
    /// them, and the posts it did not reach are asked again like those a truncated answer
    /// lacked; one that breaks off before any item is a failed attempt, retried.
    async fn attempt_streamed(
        &self,
        ep: &Endpoint,
        request: &CreateChatCompletionRequest,
        prompt_chars: u64,
        n: usize,
        spent: &mut Spent,
        sink: Sink<'_>,
    ) -> Result<Reply, AttemptError> {
        let mut stream = ep.transport.stream(request).await?;
        // A post's share of the prompt, estimated at one token per 4 characters with the
        // provider's last reported cache share; its output is its own item.
        let share_in = prompt_chars.div_ceil(4) / n.max(1) as u64;
        let share_cached = share_in * self.counters.cached_ppm.load(Ordering::Relaxed) / 1_000_000;
        let mut scanner = ItemScanner::default();
        let mut refusal = String::new();
        let mut usage = None;
        let mut finish = None;
        let mut broke = None;
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    broke = Some(e);
                    break;
                }
            };
            if chunk.usage.is_some() {
                usage = chunk.usage;
            }
            for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
                if let Some(r) = choice.delta.refusal {
                    refusal.push_str(&r);
                }
                if let Some(piece) = choice.delta.content {
                    for item in scanner.feed(&piece) {
                        let out = chars(&item.to_string()).div_ceil(4);
                        let estimate = Spent {
                            tokens_in: share_in,
                            tokens_out: out,
                            cost_usd: ep.cfg.cost(share_in, share_cached, out),
                            requests: 0,
                        };
                        sink(item, estimate, &ep.cfg.model);
                    }
                }
                if choice.finish_reason.is_some() {
                    finish = choice.finish_reason;
                }
            }
        }
        let (tokens_in, cached, tokens_out) = match &usage {
            Some(u) => usage_tokens(u),
            None => (
                prompt_chars.div_ceil(4),
                0,
                (chars(scanner.text()) + chars(&refusal)).div_ceil(4),
            ),
        };
        self.count_usage(ep, tokens_in, cached, tokens_out, spent);
        let handed = scanner.found();
        let model = ep.cfg.model.clone();
        if broke.is_some() || finish.is_none() {
            let why = broke.unwrap_or_else(|| "the stream ended without a finish reason".into());
            if handed == 0 {
                return Err(AttemptError::transient(format!("answer stream cut: {why}")));
            }
            tracing::warn!(model = %ep.cfg.model, items = handed, error = %why, "LLM answer stream cut; the posts it did not reach are asked again");
            return Ok(Reply {
                items: Vec::new(),
                model,
            });
        }
        if scanner.text().trim().is_empty() {
            return Err(AttemptError::transient(if refusal.is_empty() {
                "answer has no content".to_owned()
            } else {
                format!("model refused: {refusal}")
            }));
        }
        match parse_items(scanner.text()) {
            // The first `handed` items are the ones the sink already has.
            Ok(items) => Ok(Reply {
                items: items.into_iter().skip(handed).collect(),
                model,
            }),
            Err(_) if handed > 0 => Ok(Reply {
                items: Vec::new(),
                model,
            }),
            Err(e) => Err(AttemptError::transient(e)),
        }
    }
}

/// Prompt tokens, the cached part of them, and completion tokens, as the provider billed.
fn usage_tokens(u: &CompletionUsage) -> (u64, u64, u64) {
    (
        u64::from(u.prompt_tokens),
        u.prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .map_or(0, u64::from),
        u64::from(u.completion_tokens),
    )
}

fn chars(s: &str) -> u64 {
    s.chars().count() as u64
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
