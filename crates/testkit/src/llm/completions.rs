//! The OpenAI-compatible endpoints: `POST /v1/chat/completions` (validation, faults, the
//! oracle's answer shaped by the schema) and `GET /v1/models`.

use std::{
    hash::{Hash, Hasher},
    sync::atomic::Ordering,
    time::Duration,
};

use axum::{
    Json,
    body::Bytes,
    extract::State,
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::{
    answers::{content_text, oracle_item, parse_posts, tokens, truncate_json},
    errors::{
        bad_request, insufficient_quota, invalid_api_key, model_not_found, server_error,
        too_many_requests,
    },
    faults::{Fault, ItemFate, spoil},
    schema,
    state::{LlmState, add, lock},
    types::{RECORDED_USER_CHARS, RequestRecord},
};

/// Whether the fault plan refuses every key.
fn key_refused(st: &LlmState) -> bool {
    lock(&st.inner.faults).plan.refuse_key
}

pub(super) async fn models(State(st): State<LlmState>) -> Response {
    if key_refused(&st) {
        return invalid_api_key();
    }
    Json(json!({
        "object": "list",
        "data": [{"id": "fake-llm", "object": "model", "created": 1_700_000_000, "owned_by": "jobwire-testkit"}],
    }))
    .into_response()
}

pub(super) async fn chat_completions(State(st): State<LlmState>, body: Bytes) -> Response {
    let stats = &st.inner.stats;
    add(&stats.requests, 1);
    if key_refused(&st) {
        return invalid_api_key();
    }
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request(
            &st,
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
            None,
            None,
        );
    };
    let model = match req.get("model") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => return bad_request(&st, "you must provide a model parameter", None, None),
    };
    let messages = match req.get("messages") {
        None | Some(Value::Null) => {
            return bad_request(
                &st,
                "Missing required parameter: 'messages'.",
                Some("messages"),
                Some("missing_required_parameter"),
            );
        }
        Some(Value::Array(m)) if m.is_empty() => {
            return bad_request(
                &st,
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                Some("messages"),
                Some("empty_array"),
            );
        }
        Some(Value::Array(m)) => m.clone(),
        Some(_) => {
            return bad_request(
                &st,
                "Invalid type for 'messages': expected an array of objects, but got a value instead.",
                Some("messages"),
                Some("invalid_type"),
            );
        }
    };
    for (i, m) in messages.iter().enumerate() {
        let role_ok = m.get("role").and_then(Value::as_str).is_some_and(|r| {
            matches!(
                r,
                "system" | "developer" | "user" | "assistant" | "tool" | "function"
            )
        });
        if !role_ok {
            let param = format!("messages[{i}].role");
            return bad_request(
                &st,
                &format!(
                    "Invalid value for '{param}': expected one of 'system', 'developer', 'user', 'assistant', 'tool' or 'function'."
                ),
                Some(&param),
                Some("invalid_value"),
            );
        }
    }
    let stream = req.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = req
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    if !stream && req.get("stream_options").is_some_and(|o| !o.is_null()) {
        return bad_request(
            &st,
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            Some("stream_options"),
            Some("invalid_value"),
        );
    }

    let latency = st.inner.latency_us.load(Ordering::Relaxed);
    if latency > 0 {
        tokio::time::sleep(Duration::from_micros(latency)).await;
    }

    let prompt_chars: usize = messages
        .iter()
        .map(|m| content_text(m.get("content")).chars().count())
        .sum();
    let system: String = messages
        .iter()
        .filter(|m| {
            matches!(
                m.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            )
        })
        .map(|m| content_text(m.get("content")))
        .collect::<Vec<_>>()
        .join("\n");
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| content_text(m.get("content")))
        .unwrap_or_default();
    let posts: Option<Vec<(String, String)>> = parse_posts(&last_user).map(|posts| {
        posts
            .iter()
            .map(|post| {
                let id = match post.get("id").cloned().unwrap_or(Value::Null) {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                let text = post.get("text").and_then(Value::as_str).unwrap_or("");
                (id, text.to_owned())
            })
            .collect()
    });
    if let Some(posts) = &posts {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        system.hash(&mut hasher);
        st.record(RequestRecord {
            model: model.clone(),
            ids: posts.iter().map(|(id, _)| id.clone()).collect(),
            post_chars: posts.iter().map(|(_, t)| t.chars().count()).collect(),
            system_hash: hasher.finish(),
            system: system.chars().take(RECORDED_USER_CHARS).collect(),
            user: last_user.chars().take(RECORDED_USER_CHARS).collect(),
        });
    }

    let (quota, unknown) = {
        let f = lock(&st.inner.faults);
        (
            f.plan.quota_models.contains(&model),
            f.plan.unknown_models.contains(&model),
        )
    };
    if unknown {
        add(&stats.model_not_found, 1);
        return model_not_found(&model);
    }
    if quota {
        add(&stats.insufficient_quota, 1);
        return insufficient_quota();
    }

    let (fault, retry_after, hold) = st.next_fault();
    match fault {
        Fault::Status429 => {
            add(&stats.status_429, 1);
            return too_many_requests(retry_after);
        }
        Fault::Quota => {
            add(&stats.insufficient_quota, 1);
            return insufficient_quota();
        }
        Fault::Status500 => {
            add(&stats.status_500, 1);
            return server_error();
        }
        Fault::Timeout => {
            add(&stats.timeouts, 1);
            tokio::select! {
                () = tokio::time::sleep(hold) => {}
                () = st.inner.cancel.cancelled() => {}
            }
            return server_error();
        }
        _ => {}
    }

    let schema = req
        .get("response_format")
        .filter(|rf| rf.get("type").and_then(Value::as_str) == Some("json_schema"))
        .and_then(|rf| rf.get("json_schema"))
        .and_then(|js| js.get("schema"));
    // The old protocol (`classify.v1`) called the list `results`.
    let key = if schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get("results"))
        .is_some()
    {
        "results"
    } else {
        "items"
    };

    let mut items = Vec::new();
    match posts {
        Some(posts) => {
            add(&stats.answered_requests, 1);
            stats
                .max_posts_per_request
                .fetch_max(posts.len() as u64, Ordering::Relaxed);
            for (id, text) in &posts {
                add(&stats.posts, 1);
                items.push(oracle_item(&st, id, text));
            }
        }
        None => add(&stats.unparsed, 1),
    }
    let mut answer = json!({ key: items });
    if let Some(schema) = schema {
        answer = schema::conform(Some(&answer), schema, schema, 0);
    }

    let seq = st.inner.seq.fetch_add(1, Ordering::Relaxed);
    if matches!(
        fault,
        Fault::Ok | Fault::Partial | Fault::BadItems | Fault::UnknownCategoryItems
    ) && let Some(list) = answer.get_mut(key).and_then(Value::as_array_mut)
    {
        let fates = st.item_fates(fault, list.len());
        let old = std::mem::take(list);
        for (item, fate) in old.into_iter().zip(&fates.fates) {
            match fate {
                ItemFate::Keep => list.push(item),
                ItemFate::Drop => add(&stats.dropped_items, 1),
                ItemFate::Bad => {
                    let nth = stats.bad_items.fetch_add(1, Ordering::Relaxed);
                    list.push(spoil(item, nth));
                }
                ItemFate::UnknownCategory => {
                    add(&stats.bad_items, 1);
                    list.push(spoil(item, 1));
                }
            }
        }
        if let Some(order) = fates.order {
            let mut slots: Vec<Option<Value>> =
                std::mem::take(list).into_iter().map(Some).collect();
            for i in order {
                if let Some(v) = slots.get_mut(i).and_then(Option::take) {
                    list.push(v);
                }
            }
        }
    }
    match fault {
        Fault::OffSchema => {
            // Alternate the two kinds of off-schema answers, starting with a missing list.
            let nth = stats.off_schema.fetch_add(1, Ordering::Relaxed);
            answer = if nth % 2 == 0 {
                json!({"answers": answer.get(key).cloned().unwrap_or_else(|| json!([]))})
            } else {
                let mut a = answer.clone();
                if let Some(rs) = a.get_mut(key).and_then(Value::as_array_mut) {
                    if rs.is_empty() {
                        rs.push(json!({"id": "0", "is_job": "false", "kind": "chatter", "categories": []}));
                    }
                    for r in rs {
                        if let Some(obj) = r.as_object_mut() {
                            let b = obj.get("is_job").and_then(Value::as_bool).unwrap_or(false);
                            obj.insert("is_job".into(), json!(if b { "yes" } else { "no" }));
                        }
                    }
                }
                a
            };
        }
        Fault::UnknownCategory => {
            add(&stats.unknown_category, 1);
            if let Some(first) = answer
                .get_mut(key)
                .and_then(Value::as_array_mut)
                .and_then(|rs| rs.first_mut())
            {
                if let Some(obj) = first.as_object_mut() {
                    obj.insert("is_job".into(), json!(true));
                    obj.insert("kind".into(), json!("job"));
                }
                match first.get_mut("categories").and_then(Value::as_array_mut) {
                    Some(cats) => cats.push(json!("hacked")),
                    None => {
                        if let Some(obj) = first.as_object_mut() {
                            obj.insert("categories".into(), json!(["hacked"]));
                        }
                    }
                }
            }
        }
        _ => {}
    }

    let full = answer.to_string();
    let (content, refusal, finish_reason) = match fault {
        Fault::Malformed => {
            add(&stats.malformed, 1);
            (Some(truncate_json(&full)), None, "stop")
        }
        Fault::Truncated => {
            add(&stats.truncated, 1);
            (Some(truncate_json(&full)), None, "length")
        }
        Fault::StreamCut if !stream => {
            add(&stats.truncated, 1);
            (Some(truncate_json(&full)), None, "length")
        }
        Fault::Refusal => {
            add(&stats.refusals, 1);
            (
                None,
                Some("I'm very sorry, but I can't assist with that.".to_owned()),
                "stop",
            )
        }
        _ => {
            if matches!(fault, Fault::Ok) {
                add(&stats.ok, 1);
            }
            (Some(full), None, "stop")
        }
    };
    let prompt_tokens = tokens(prompt_chars);
    // The provider's prompt cache: the prompt as the model reads it, messages in order.
    let prompt_text: String = messages
        .iter()
        .map(|m| {
            format!(
                "<{}>{}",
                m.get("role").and_then(Value::as_str).unwrap_or(""),
                content_text(m.get("content"))
            )
        })
        .collect();
    let cached_tokens = st.cached_tokens(&prompt_text, prompt_tokens);
    add(&stats.cached_tokens, cached_tokens);
    let completion_tokens = tokens(
        content
            .as_deref()
            .or(refusal.as_deref())
            .map_or(0, |c| c.chars().count()),
    );
    add(&stats.prompt_tokens, prompt_tokens);
    add(&stats.completion_tokens, completion_tokens);
    let created = chrono::Utc::now().timestamp();
    let id = format!("chatcmpl-jobwirefake{seq:012}");
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    });
    if stream {
        add(&stats.streamed_requests, 1);
        let cut = matches!(fault, Fault::StreamCut);
        if cut {
            add(&stats.cut_streams, 1);
        }
        let answer = Streamed {
            id,
            created,
            model,
            content,
            refusal,
            finish_reason,
            usage: include_usage.then_some(usage),
            cut,
        };
        return answer.into_sse(&st);
    }
    // A real model answers once it has written everything.
    tokio::time::sleep(st.ttft() + st.generation(completion_tokens)).await;
    Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": content,
                "refusal": refusal,
                "annotations": [],
            },
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": "fp_jobwirefake",
    }))
    .into_response()
}

/// Characters per streamed piece: about one token, as OpenAI sends them (an item is
/// complete when the piece with its closing brace arrives, so coarser pieces would add
/// their own delay to every item).
const STREAM_PIECE_CHARS: usize = 4;

/// An answer sent as server-sent events, as OpenAI streams one: a first chunk with the
/// role, the content in pieces paced at the model's speed after its time to first token, a
/// last chunk with the finish reason, the usage chunk (`choices: []`) when
/// `stream_options.include_usage` asked for it, then `data: [DONE]`.
struct Streamed {
    id: String,
    created: i64,
    model: String,
    content: Option<String>,
    refusal: Option<String>,
    finish_reason: &'static str,
    usage: Option<Value>,
    /// Break the connection off after half the content.
    cut: bool,
}

impl Streamed {
    fn chunk(&self, choices: Value, usage: Option<&Value>) -> String {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "service_tier": "default",
            "system_fingerprint": "fp_jobwirefake",
            "choices": choices,
        });
        if let (Some(u), Some(obj)) = (usage, chunk.as_object_mut()) {
            obj.insert("usage".into(), u.clone());
        }
        format!("data: {chunk}\n\n")
    }

    fn into_sse(self, st: &LlmState) -> Response {
        let delta = |d: Value, finish: Option<&str>| json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": finish}]);
        // `None`: the connection breaks off there.
        let mut events: Vec<(Duration, Option<String>)> = Vec::new();
        events.push((
            st.ttft(),
            Some(self.chunk(
                delta(
                    json!({"role": "assistant", "content": "", "refusal": null}),
                    None,
                ),
                None,
            )),
        ));
        let text = self
            .content
            .as_deref()
            .or(self.refusal.as_deref())
            .unwrap_or("");
        let key = if self.content.is_some() {
            "content"
        } else {
            "refusal"
        };
        let chars: Vec<char> = text.chars().collect();
        let pieces: Vec<&[char]> = chars.chunks(STREAM_PIECE_CHARS).collect();
        let keep = if self.cut {
            pieces.len() / 2
        } else {
            pieces.len()
        };
        for piece in &pieces[..keep] {
            let piece: String = piece.iter().collect();
            let pace = st.generation(tokens(piece.chars().count()));
            events.push((
                pace,
                Some(self.chunk(delta(json!({ key: piece }), None), None)),
            ));
        }
        if self.cut {
            // An error in the body aborts the connection mid-answer (no last chunk).
            events.push((Duration::ZERO, None));
        } else {
            events.push((
                Duration::ZERO,
                Some(self.chunk(delta(json!({}), Some(self.finish_reason)), None)),
            ));
            if let Some(usage) = &self.usage {
                events.push((Duration::ZERO, Some(self.chunk(json!([]), Some(usage)))));
            }
            events.push((Duration::ZERO, Some("data: [DONE]\n\n".to_owned())));
        }
        let cancel = st.inner.cancel.clone();
        let body = futures::stream::unfold(
            (events.into_iter(), cancel),
            |(mut events, cancel)| async move {
                let (wait, event) = events.next()?;
                if !wait.is_zero() {
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = cancel.cancelled() => return None,
                    }
                }
                let item = event
                    .map(Bytes::from)
                    .ok_or_else(|| std::io::Error::other("the answer stream broke off"));
                Some((item, (events, cancel)))
            },
        );
        Response::builder()
            .header("content-type", "text/event-stream; charset=utf-8")
            .header("cache-control", "no-cache")
            .body(axum::body::Body::from_stream(body))
            .unwrap_or_else(|_| server_error())
    }
}
