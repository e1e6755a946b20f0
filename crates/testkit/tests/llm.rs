//! The fake LLM driven over real HTTP by async-openai (and raw reqwest for bad requests).

use std::{net::SocketAddr, time::Duration};

use async_openai::{
    Client,
    config::OpenAIConfig,
    error::OpenAIError,
    types::chat::{
        ChatCompletionRequestSystemMessageArgs, ChatCompletionRequestUserMessageArgs,
        ChatCompletionStreamOptions, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
        CreateChatCompletionResponse, FinishReason, ResponseFormat, ResponseFormatJsonSchema,
    },
};
use jobwire_testkit::llm::{FakeLlm, FakeLlmConfig, Fault, FaultPlan, load_oracle_jsonl};
use serde_json::{Value, json};

mod common;
use common::Exchange;

const ORACLE: &str = r#"{"id":"a1","channel":"@freelance","text":"Нужен лендинг на Tilda, бюджет 15к","is_job":true,"kind":"job","categories":["web","design"],"lang":"ru","dup_group":null}
{"id":"a2","channel":"@freelance","text":"Курс по SMM со скидкой 50%!","is_job":false,"kind":"ad","categories":[],"lang":"ru","dup_group":null}
"#;

fn schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["results"],
        "properties": {"results": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["id", "is_job", "kind", "categories"],
            "properties": {
                "id": {"type": "string"},
                "is_job": {"type": "boolean"},
                "kind": {"type": "string", "enum": ["job", "resume", "ad", "chatter"]},
                "categories": {"type": "array", "items": {"type": "string", "enum": ["web", "design", "bots"]}}
            }
        }}}
    })
}

fn request(posts: &[(&str, &str)]) -> CreateChatCompletionRequest {
    request_with("Classify each post. Answer JSON.", posts)
}

fn request_with(system: &str, posts: &[(&str, &str)]) -> CreateChatCompletionRequest {
    let posts: Vec<Value> = posts
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}))
        .collect();
    CreateChatCompletionRequestArgs::default()
        .model("gpt-4o-mini")
        .messages(vec![
            ChatCompletionRequestSystemMessageArgs::default()
                .content(system)
                .build()
                .expect("system message")
                .into(),
            ChatCompletionRequestUserMessageArgs::default()
                .content(json!({"posts": posts}).to_string())
                .build()
                .expect("user message")
                .into(),
        ])
        .response_format(ResponseFormat::JsonSchema {
            json_schema: ResponseFormatJsonSchema {
                description: None,
                name: "classification".into(),
                schema: schema(),
                strict: Some(true),
            },
        })
        .build()
        .expect("request")
}

async fn start(faults: FaultPlan) -> (FakeLlm, Client<OpenAIConfig>) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = FakeLlm::start(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        FakeLlmConfig {
            oracle: load_oracle_jsonl(ORACLE).expect("oracle"),
            faults,
            seed: 7,
            ..FakeLlmConfig::default()
        },
    )
    .await
    .expect("fake llm starts");
    let http = reqwest013::Client::builder()
        .timeout(Duration::from_millis(1500))
        .build()
        .expect("client");
    let client = Client::with_config(
        OpenAIConfig::new()
            .with_api_base(fake.url().as_str())
            .with_api_key("sk-test"),
    )
    .with_http_client(http);
    (fake, client)
}

fn content(resp: &CreateChatCompletionResponse) -> String {
    resp.choices[0].message.content.clone().expect("content")
}

/// The old `classify.v1` protocol (a `results` list) is still answered.
#[tokio::test]
async fn oracle_answers_conform_to_the_schema() {
    let (fake, client) = start(FaultPlan::default()).await;
    assert!(fake.url().as_str().ends_with("/v1"));
    let resp = client
        .chat()
        .create(request(&[
            ("p1", "Нужен лендинг на Tilda, бюджет 15к"),
            ("p2", "  Курс по SMM\nсо скидкой 50%! "),
            ("p3", "good morning, channel"),
        ]))
        .await
        .expect("completion");
    assert_eq!(resp.model, "gpt-4o-mini");
    assert_eq!(resp.choices[0].finish_reason, Some(FinishReason::Stop));
    let v: Value = serde_json::from_str(&content(&resp)).expect("content is JSON");
    assert_eq!(
        v,
        json!({"results": [
            {"id": "p1", "is_job": true, "kind": "job", "categories": ["web", "design"]},
            {"id": "p2", "is_job": false, "kind": "ad", "categories": []},
            {"id": "p3", "is_job": false, "kind": "chatter", "categories": []},
        ]})
    );
    let usage = resp.usage.expect("usage");
    assert!(
        usage.prompt_tokens > 10 && usage.completion_tokens > 10,
        "{usage:?}"
    );
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );
    let s = fake.stats();
    assert_eq!(
        (s.requests, s.ok, s.posts, s.oracle_hits, s.oracle_misses),
        (1, 1, 3, 2, 1)
    );
    assert_eq!(s.prompt_tokens, u64::from(usage.prompt_tokens));
}

#[tokio::test]
async fn content_faults_reach_the_client_as_200_answers() {
    let (fake, client) = start(FaultPlan::scripted([
        Fault::Malformed,
        Fault::OffSchema,
        Fault::OffSchema,
        Fault::UnknownCategory,
        Fault::Refusal,
        Fault::Truncated,
        Fault::Ok,
    ]))
    .await;
    let req = || request(&[("p1", "Нужен лендинг на Tilda, бюджет 15к")]);
    let chat = client.chat();

    let malformed = content(&chat.create(req()).await.expect("malformed"));
    assert!(
        serde_json::from_str::<Value>(&malformed).is_err(),
        "{malformed}"
    );

    let off1: Value =
        serde_json::from_str(&content(&chat.create(req()).await.expect("off 1"))).expect("json");
    assert!(off1.get("results").is_none(), "{off1}");
    let off2: Value =
        serde_json::from_str(&content(&chat.create(req()).await.expect("off 2"))).expect("json");
    assert!(off2["results"][0]["is_job"].is_string(), "{off2}");

    let unknown: Value =
        serde_json::from_str(&content(&chat.create(req()).await.expect("unknown"))).expect("json");
    let cats = unknown["results"][0]["categories"]
        .as_array()
        .expect("categories")
        .clone();
    assert!(cats.contains(&json!("hacked")), "{unknown}");

    let refusal = chat.create(req()).await.expect("refusal");
    assert!(refusal.choices[0].message.content.is_none());
    assert!(refusal.choices[0].message.refusal.is_some());

    let truncated = chat.create(req()).await.expect("truncated");
    assert_eq!(
        truncated.choices[0].finish_reason,
        Some(FinishReason::Length)
    );
    assert!(serde_json::from_str::<Value>(&content(&truncated)).is_err());

    let ok: Value =
        serde_json::from_str(&content(&chat.create(req()).await.expect("ok"))).expect("json");
    assert_eq!(ok["results"][0]["categories"], json!(["web", "design"]));

    let s = fake.stats();
    assert_eq!(
        (
            s.malformed,
            s.off_schema,
            s.unknown_category,
            s.refusals,
            s.truncated,
            s.ok
        ),
        (1, 2, 1, 1, 1, 1)
    );
}

#[tokio::test]
async fn status_faults_and_timeouts() {
    let mut plan = FaultPlan::scripted([Fault::Status429; 4]);
    plan.retry_after_secs = 0;
    plan.timeout_hold = Duration::from_secs(10);
    let (fake, client) = start(plan).await;
    let req = || request(&[("p1", "x")]);

    // async-openai retries 3 times on its own; four 429s reach the caller.
    match client.chat().create(req()).await {
        Err(OpenAIError::ApiError(e)) => {
            assert_eq!(e.status_code.as_u16(), 429);
            assert_eq!(e.api_error.code.as_deref(), Some("rate_limit_exceeded"));
        }
        other => panic!("expected a 429, got {other:?}"),
    }
    assert_eq!(fake.stats().status_429, 4);

    fake.set_faults(FaultPlan::scripted([Fault::Status500; 4]));
    match client.chat().create(req()).await {
        Err(OpenAIError::ApiError(e)) => assert_eq!(e.status_code.as_u16(), 500),
        other => panic!("expected a 500, got {other:?}"),
    }

    fake.set_faults(FaultPlan {
        timeout_hold: Duration::from_secs(10),
        ..FaultPlan::scripted([Fault::Timeout])
    });
    match client.chat().create(req()).await {
        Err(OpenAIError::Reqwest(e)) => assert!(e.is_timeout(), "{e}"),
        other => panic!("expected a client timeout, got {other:?}"),
    }
    // The script is used up: the next request succeeds.
    client.chat().create(req()).await.expect("recovered");
    let s = fake.stats();
    assert_eq!((s.status_500, s.timeouts, s.ok), (4, 1, 1));
}

#[tokio::test]
async fn raw_429_carries_retry_after_and_openai_body() {
    let (fake, _client) = start(FaultPlan::scripted([Fault::Status429, Fault::Status500])).await;
    let http = reqwest013::Client::new();
    let url = format!("{}/chat/completions", fake.url());
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "{\"posts\":[]}"}]});
    let r = http.post(&url).json(&body).send().await.expect("send");
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "1");
    let v: Value = r.json().await.expect("json");
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    let (status, v) = http.post(&url).json(&body).exchange().await;
    assert_eq!(status, 500);
    assert_eq!(v["error"]["type"], "server_error");
}

#[tokio::test]
async fn requests_are_validated_like_openai() {
    let (fake, _client) = start(FaultPlan::default()).await;
    let http = reqwest013::Client::new();
    let url = format!("{}/chat/completions", fake.url());
    let post = |body: Value| http.post(&url).json(&body).exchange();

    let (status, v) = post(json!({"messages": [{"role": "user", "content": "hi"}]})).await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["type"], "invalid_request_error");

    let (status, v) = post(json!({"model": "m", "messages": []})).await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["param"], "messages");
    assert_eq!(v["error"]["code"], "empty_array");

    let (status, _) = http.post(&url).body("{nope").exchange().await;
    assert_eq!(status, 400);

    // Not the posts protocol: an empty result set, counted as unparsed.
    let (status, v) = post(json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]})).await;
    assert_eq!(status, 200);
    assert_eq!(v["choices"][0]["message"]["content"], "{\"items\":[]}");

    let (_, models) = http.get(format!("{}/models", fake.url())).exchange().await;
    assert_eq!(models["object"], "list");
    let s = fake.stats();
    assert_eq!((s.bad_request, s.unparsed), (3, 1));
}

#[tokio::test]
async fn random_faults_follow_the_seed_and_the_http_fault_endpoint() {
    async fn outcomes(seed_plan: Value) -> Vec<u16> {
        let (fake, _client) = start(FaultPlan::default()).await;
        let http = reqwest013::Client::new();
        let testkit = |path: &str| format!("http://{}/__testkit/{path}", fake.addr());
        let (status, _) = http
            .post(testkit("faults"))
            .json(&seed_plan)
            .exchange()
            .await;
        assert_eq!(status, 200);
        let url = format!("{}/chat/completions", fake.url());
        let body =
            json!({"model": "m", "messages": [{"role": "user", "content": "{\"posts\":[]}"}]});
        let mut out = Vec::new();
        for _ in 0..40 {
            out.push(http.post(&url).json(&body).exchange().await.0);
        }
        let (_, stats) = http.get(testkit("stats")).exchange().await;
        assert_eq!(stats["requests"], 40);
        out
    }
    let plan = json!({"rate_429": 0.3, "rate_500": 0.2});
    let a = outcomes(plan.clone()).await;
    let b = outcomes(plan).await;
    assert_eq!(a, b, "same seed, same faults");
    let n429 = a.iter().filter(|s| **s == 429).count();
    let n500 = a.iter().filter(|s| **s == 500).count();
    assert!((4..=22).contains(&n429), "{a:?}");
    assert!((1..=16).contains(&n500), "{a:?}");
    assert_eq!(
        a.len() - n429 - n500,
        a.iter().filter(|s| **s == 200).count()
    );
}

const EXTRACT_ORACLE: &str = r#"{"id":"a1","text":"Нужен лендинг на Tilda, бюджет 15к","is_job":true,"kind":"job","categories":["web","design"],"extraction":{"title":"Лендинг на Tilda","budget":{"min":15000,"currency":"RUB","basis":"fixed"},"work_mode":"remote","skills":["Tilda"],"contact":"@shop"}}
{"id":"a2","text":"Курс по SMM со скидкой 50%!","is_job":false,"kind":"ad","categories":[]}
{"id":"a3","text":"Need a Python dev for a parser, $300, remote. Contact @parse_boss","is_job":true,"kind":"job","categories":["bots"]}
"#;

/// The `classify.v2` answer schema (strict: everything required, nullable as `[T, "null"]`).
fn v2_schema() -> Value {
    let ns = json!({"type": ["string", "null"]});
    json!({
        "type": "object", "additionalProperties": false, "required": ["items"],
        "properties": {"items": {"type": "array", "items": {
            "type": "object", "additionalProperties": false,
            "required": ["id", "is_job", "kind", "categories", "confidence", "reason", "extraction"],
            "properties": {
                "id": {"type": "string"},
                "is_job": {"type": "boolean"},
                "kind": {"type": "string", "enum": ["job", "resume", "ad", "chatter"]},
                "categories": {"type": "array", "items": {"type": "string", "enum": ["web", "design", "bots"]}},
                "confidence": {"type": "number"},
                "reason": {"type": "string"},
                "extraction": {
                    "type": "object", "additionalProperties": false,
                    "required": ["title", "budget", "deadline", "work_mode", "skills", "contact"],
                    "properties": {
                        "title": ns, "deadline": ns, "contact": ns,
                        "budget": {"type": ["object", "null"], "additionalProperties": false,
                            "required": ["min", "max", "currency", "basis"],
                            "properties": {"min": {"type": "number"}, "max": {"type": ["number", "null"]},
                                "currency": {"type": "string"}, "basis": {"type": "string", "enum": ["fixed", "hourly", "monthly"]}}},
                        "work_mode": {"type": ["string", "null"], "enum": ["remote", "on_site", "hybrid", null]},
                        "skills": {"type": "array", "items": {"type": "string"}}
                    }
                }
            }
        }}}
    })
}

async fn start_v2(faults: FaultPlan) -> FakeLlm {
    let config = FakeLlmConfig {
        faults,
        seed: 11,
        ..FakeLlmConfig::from_jsonl(EXTRACT_ORACLE).expect("oracle")
    };
    FakeLlm::start(SocketAddr::from(([127, 0, 0, 1], 0)), config)
        .await
        .expect("fake llm starts")
}

/// A `classify.v2` request: system prompt, then a user message with an example line before
/// the posts line. Returns the HTTP status and the parsed content (or the body on errors).
async fn ask_v2(fake: &FakeLlm, model: &str, system: &str, posts: &[(&str, &str)]) -> (u16, Value) {
    let posts: Vec<Value> = posts
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}))
        .collect();
    let user = format!(
        "Posts labeled by people:\n{}\n\nPosts to classify:\n{}",
        json!({"text": "{\"posts\":[{\"id\":\"x\",\"text\":\"decoy\"}]}", "is_job": false, "kind": "chatter", "categories": []}),
        json!({ "posts": posts })
    );
    let body = json!({
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "c", "strict": true, "schema": v2_schema()}},
    });
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (status, v) = reqwest013::Client::new()
        .post(format!("{}/chat/completions", fake.url()))
        .json(&body)
        .exchange()
        .await;
    if status != 200 {
        return (status, v);
    }
    let content = v["choices"][0]["message"]["content"]
        .as_str()
        .expect("content");
    (
        status,
        serde_json::from_str(content).expect("content is JSON"),
    )
}

fn ids(answer: &Value) -> Vec<String> {
    answer["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test]
async fn v2_answers_items_with_extractions_and_logs_requests() {
    let fake = start_v2(FaultPlan::default()).await;
    let posts = [
        ("p1", "Нужен лендинг на Tilda, бюджет 15к"),
        ("p2", "Курс по SMM со скидкой 50%!"),
        (
            "p3",
            "Need a Python dev for a parser, $300, remote. Contact @parse_boss",
        ),
        ("p4", "good morning"),
    ];
    let (status, a) = ask_v2(&fake, "m1", "SYSTEM A", &posts).await;
    assert_eq!(status, 200);
    assert_eq!(
        ids(&a),
        ["p1", "p2", "p3", "p4"],
        "the decoy example line is not a post"
    );
    let items = a["items"].as_array().expect("items");
    assert_eq!(items[0]["categories"], json!(["web", "design"]));
    let ex = &items[0]["extraction"];
    assert_eq!(
        ex["budget"],
        json!({"min": 15000, "max": null, "currency": "RUB", "basis": "fixed"})
    );
    assert_eq!(
        (
            ex["work_mode"].as_str(),
            ex["contact"].as_str(),
            ex["deadline"].is_null()
        ),
        (Some("remote"), Some("@shop"), true)
    );
    // Not in the extraction oracle: extracted from the text.
    assert_eq!(items[2]["extraction"]["contact"], "@parse_boss");
    assert_eq!(items[1]["extraction"]["title"], Value::Null);
    assert_eq!(
        (items[3]["kind"].as_str(), items[3]["reason"].as_str()),
        (Some("chatter"), Some("not in the oracle"))
    );

    let (_, b) = ask_v2(&fake, "m1", "SYSTEM A", &posts[..2]).await;
    assert_eq!(ids(&b), ["p1", "p2"]);
    ask_v2(&fake, "m1", "SYSTEM B", &posts[..1]).await;
    let log = fake.requests_log();
    assert_eq!(log.len(), 3);
    assert_eq!(log[1].ids, ["p1", "p2"]);
    assert_eq!(log[0].system_hash, log[1].system_hash);
    assert_ne!(log[0].system_hash, log[2].system_hash);
    assert_eq!(log[0].post_chars[3], "good morning".chars().count());
    assert!(log[0].user.contains("decoy"));
    let (_, over_http) = reqwest013::Client::new()
        .get(format!("http://{}/__testkit/requests", fake.addr()))
        .exchange()
        .await;
    assert_eq!(over_http[1]["ids"], json!(["p1", "p2"]));
    assert_eq!(over_http[2]["model"], "m1");
    let s = fake.stats();
    assert_eq!(
        (s.answered_requests, s.posts, s.max_posts_per_request),
        (3, 7, 4)
    );
    assert!((s.requests_per_1000_posts() - 3000.0 / 7.0).abs() < 1e-9);
    assert!((s.mean_posts_per_request() - 7.0 / 3.0).abs() < 1e-9);
    fake.reset_stats();
    assert!(fake.requests_log().is_empty());
}

#[tokio::test]
async fn item_faults_drop_spoil_and_shuffle_items() {
    let fake = start_v2(FaultPlan::scripted([Fault::Partial, Fault::BadItems])).await;
    let posts = [
        ("p1", "a"),
        ("p2", "b"),
        ("p3", "c"),
        ("p4", "d"),
        ("p5", "e"),
    ];
    let (_, partial) = ask_v2(&fake, "m", "S", &posts).await;
    assert_eq!(ids(&partial), ["p2", "p4"]);
    let (_, bad) = ask_v2(&fake, "m", "S", &posts).await;
    let items = bad["items"].as_array().expect("items");
    assert_eq!(items.len(), 5);
    assert_eq!(items[0]["kind"], "vacancy");
    assert_eq!(items[2]["categories"], json!(["crypto"]));
    assert!(items[4]["is_job"].is_string());
    assert_eq!(items[1]["kind"], "chatter");
    let s = fake.stats();
    assert_eq!((s.dropped_items, s.bad_items, s.ok), (3, 3, 0));

    fake.set_faults(FaultPlan {
        shuffle_items: true,
        rate_drop_item: 0.3,
        ..FaultPlan::default()
    });
    let many: Vec<(String, String)> = (1..=20)
        .map(|i| (format!("p{i}"), format!("post {i}")))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (_, shuffled) = ask_v2(&fake, "m", "S", &many).await;
    let got = ids(&shuffled);
    assert!(got.len() < 20 && got.len() > 5, "{got:?}");
    let mut sorted = got.clone();
    sorted.sort_by_key(|id| id[1..].parse::<u32>().expect("number"));
    assert_ne!(got, sorted, "order is shuffled");
    sorted.dedup();
    assert_eq!(sorted.len(), got.len(), "no id twice");
}

#[tokio::test]
async fn out_of_quota_and_unknown_models() {
    let fake = start_v2(FaultPlan {
        quota_models: vec!["broke".into()],
        unknown_models: vec!["gpt-nope".into()],
        ..FaultPlan::scripted([Fault::Quota])
    })
    .await;
    let posts = [("p1", "a")];
    let (status, body) = ask_v2(&fake, "broke", "S", &posts).await;
    assert_eq!(status, 429);
    assert_eq!(body["error"]["code"], "insufficient_quota");
    let (status, body) = ask_v2(&fake, "gpt-nope", "S", &posts).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "model_not_found");
    // The model faults did not consume the script: the scripted quota error comes now.
    assert_eq!(ask_v2(&fake, "fine", "S", &posts).await.0, 429);
    assert_eq!(ask_v2(&fake, "fine", "S", &posts).await.0, 200);
    let s = fake.stats();
    assert_eq!((s.insufficient_quota, s.model_not_found, s.ok), (2, 1, 1));
    let models: Vec<String> = fake.requests_log().into_iter().map(|r| r.model).collect();
    assert_eq!(models, ["broke", "gpt-nope", "fine", "fine"]);
}

/// `stream: true` is answered as OpenAI does (server-sent events, the content in pieces at
/// the model's pace after its time to first token, the usage chunk last when asked), with
/// the same content as the whole answer; a repeated prompt prefix of at least 1,024 tokens
/// is reported cached.
#[tokio::test]
async fn streamed_answers_come_in_pieces_at_the_models_pace_and_prefixes_are_cached() {
    use futures::StreamExt;
    let (fake, client) = start(FaultPlan::default()).await;
    let ttft = Duration::from_millis(150);
    fake.set_speed(ttft, 2000);
    // A stable instruction of about 1,250 tokens: long enough for the provider's cache.
    let system = "Classify each post by the rules above, answer JSON only. ".repeat(88);
    let posts = [
        ("1", "Нужен лендинг на Tilda, бюджет 15к"),
        ("2", "Курс по SMM со скидкой 50%!"),
    ];
    let whole_started = std::time::Instant::now();
    let whole = client
        .chat()
        .create(request_with(&system, &posts))
        .await
        .expect("whole answer");
    let whole_took = whole_started.elapsed();
    let usage = whole.usage.clone().expect("usage");
    // Answered once written: time to first token plus the generation of every token.
    let writing = Duration::from_secs_f64(f64::from(usage.completion_tokens) / 2000.0);
    assert!(whole_took >= ttft + writing, "{whole_took:?}");
    assert_eq!(
        usage
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens),
        Some(0),
        "nothing cached yet"
    );

    let mut req = request_with(&system, &posts);
    req.stream = Some(true);
    req.stream_options = Some(ChatCompletionStreamOptions {
        include_usage: Some(true),
        include_obfuscation: None,
    });
    let started = std::time::Instant::now();
    let mut stream = client.chat().create_stream(req).await.expect("stream");
    let (mut text, mut pieces, mut first, mut finish, mut streamed_usage) =
        (String::new(), 0, None, None, None);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.expect("a chunk");
        if let Some(u) = chunk.usage {
            assert!(chunk.choices.is_empty(), "the usage chunk has no choices");
            streamed_usage = Some(u);
        }
        for c in chunk.choices {
            if let Some(piece) = c.delta.content.filter(|p| !p.is_empty()) {
                first.get_or_insert_with(|| started.elapsed());
                text.push_str(&piece);
                pieces += 1;
            }
            if c.finish_reason.is_some() {
                finish = c.finish_reason;
            }
        }
    }
    assert_eq!(text, content(&whole), "the same answer, streamed");
    assert!(pieces > 3, "{pieces} pieces");
    assert!(first.expect("content came") >= ttft, "{first:?}");
    assert_eq!(finish, Some(FinishReason::Stop));
    let streamed_usage = streamed_usage.expect("the usage chunk");
    assert_eq!(streamed_usage.completion_tokens, usage.completion_tokens);
    // The same prompt again: its prefix (beyond 1,024 tokens, in steps of 128) is cached.
    let cached = streamed_usage
        .prompt_tokens_details
        .and_then(|d| d.cached_tokens)
        .expect("cached tokens reported");
    assert!(cached >= 1024 && (cached - 1024) % 128 == 0, "{cached}");
    assert!(cached <= streamed_usage.prompt_tokens);
    let s = fake.stats();
    assert_eq!(s.streamed_requests, 1);
    assert_eq!(s.cached_tokens, u64::from(cached));

    // stream_options without stream is refused, as OpenAI does.
    let http = reqwest013::Client::new();
    let (status, v) = http
        .post(format!("{}/chat/completions", fake.url()))
        .json(
            &json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                      "stream_options": {"include_usage": true}}),
        )
        .exchange()
        .await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["param"], "stream_options");
}
