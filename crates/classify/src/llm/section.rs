//! The `[llm]` section of jobwire's configuration file (an OpenAI-compatible endpoint, and
//! `[llm.fallback]`), owned here beside the [`LlmConfig`] it becomes: the binary reads the
//! section and calls [`LlmSection::config`], which checks every key and builds the client's
//! configuration in one step.

use std::time::Duration;

use jobwire_core::CategorySlug;
use jobwire_core::secret::Secret;
use serde::Deserialize;

use super::{LlmConfig, LlmEndpoint};

/// `[llm]` as written in the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSection {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: url::Url,
    pub model: String,
    /// The environment variable holding the API key (none needed for local servers).
    #[serde(default = "default_llm_api_key_env")]
    pub api_key_env: String,
    /// One request's timeout. A full batch of 30 answers is about 3,000 completion tokens:
    /// 20-40 s on common hosted models, so the default leaves room (120).
    #[serde(default = "default_llm_timeout_secs")]
    pub timeout_secs: u32,
    #[serde(default = "default_llm_max_retries")]
    pub max_retries: u32,
    /// US dollars per million prompt tokens (for the cost accounting and the spend limit).
    #[serde(default)]
    pub price_in_per_mtok: f64,
    /// US dollars per million completion tokens.
    #[serde(default)]
    pub price_out_per_mtok: f64,
    /// US dollars per million prompt tokens served from the provider's prompt cache
    /// (OpenAI: half the input price); unset: the input price.
    pub price_cached_in_per_mtok: Option<f64>,
    /// Past this many dollars of LLM spend in a UTC day, only the local classifier runs
    /// (and the admin is told). No limit when unset.
    pub daily_spend_limit_usd: Option<f64>,
    /// Posts per LLM request (1-50). Each answer is tied to its post by id; posts an answer
    /// lacked are asked again with the next request.
    #[serde(default = "default_llm_batch_size")]
    pub batch_size: usize,
    /// While requests are in flight, the longest the oldest unsure post waits for others to
    /// share a request (0-60000 ms, 250). The posts that came meanwhile go
    /// sooner when no request is in flight any more or `quick_batch` of them wait; every
    /// request repeats the ~1,500-token system prompt, so company halves a post's share of
    /// it. Lower it for latency under load at a higher cost (BENCHMARKS.md has the curve).
    #[serde(default = "default_llm_batch_linger_ms")]
    pub batch_linger_ms: u64,
    /// When no request is in flight, a partial request goes once no unsure post came in for
    /// this long (0-60000 ms, 0: a post goes at once when the LLM is idle, and waits for
    /// company only while requests are in flight). Raise it to gather posts on a quiet
    /// service too, at that much latency.
    #[serde(default = "default_llm_idle_linger_ms")]
    pub idle_linger_ms: u64,
    /// LLM requests in flight at once (1-64).
    #[serde(default = "default_llm_max_in_flight")]
    pub max_in_flight: usize,
    /// A request goes as soon as this many unsure posts wait (1-50, 2): two posts share one
    /// copy of the system prompt, and the second need not wait for a third.
    #[serde(default = "default_llm_quick_batch")]
    pub quick_batch: usize,
    /// The most completion tokens one request may ask for (some models allow 4,096 only).
    #[serde(default = "default_llm_max_output_tokens")]
    pub max_output_tokens: u32,
    /// People's labeled examples most like the posts, put into each request.
    #[serde(default = "default_llm_few_shot")]
    pub few_shot: usize,
    /// With `[classifier] learn_from_llm`, only answers at least this confident (0-1) become
    /// training examples for the local model: an unsure answer, or one a post steered,
    /// would teach it the LLM's mistakes (0.8).
    #[serde(default = "default_llm_learn_min_confidence")]
    pub learn_min_confidence: f32,
    /// Ask with `stream: true`: each post's verdict goes on as soon as its item is complete
    /// in the answer, so the first post of a request is delivered while the model still
    /// writes the rest (true).
    #[serde(default = "default_true")]
    pub stream: bool,
    /// Ask the model for a one-sentence reason per post (false: output tokens are what a
    /// subscriber waits for; switch on to read why the model decided).
    #[serde(default)]
    pub reasons: bool,
    /// A second model (on the same or another endpoint) used when the first fails or is
    /// out of quota.
    pub fallback: Option<LlmFallbackSection>,
}

/// `[llm.fallback]`: the model asked when the primary fails.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmFallbackSection {
    /// Default: the primary's `base_url`.
    pub base_url: Option<url::Url>,
    pub model: String,
    /// Default: the primary's `api_key_env`.
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub price_in_per_mtok: f64,
    #[serde(default)]
    pub price_out_per_mtok: f64,
    pub price_cached_in_per_mtok: Option<f64>,
}

/// A key of `[llm]` whose value cannot be used: the key's full name and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} {message}")]
pub struct SectionError {
    pub key: &'static str,
    pub message: &'static str,
}

fn invalid(key: &'static str, message: &'static str) -> SectionError {
    SectionError { key, message }
}

fn price(key: &'static str, value: f64) -> Result<f64, SectionError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(invalid(key, "must be a price of at least 0"))
    }
}

impl LlmSection {
    /// An endpoint and model with every other key at its default.
    pub fn new(base_url: url::Url, model: &str) -> Self {
        Self {
            base_url,
            model: model.to_owned(),
            api_key_env: default_llm_api_key_env(),
            timeout_secs: default_llm_timeout_secs(),
            max_retries: default_llm_max_retries(),
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
            price_cached_in_per_mtok: None,
            daily_spend_limit_usd: None,
            batch_size: default_llm_batch_size(),
            batch_linger_ms: default_llm_batch_linger_ms(),
            idle_linger_ms: default_llm_idle_linger_ms(),
            max_in_flight: default_llm_max_in_flight(),
            quick_batch: default_llm_quick_batch(),
            max_output_tokens: default_llm_max_output_tokens(),
            few_shot: default_llm_few_shot(),
            learn_min_confidence: default_llm_learn_min_confidence(),
            stream: true,
            reasons: false,
            fallback: None,
        }
    }

    /// Checks every key and builds the client's configuration: `categories` are the ones the
    /// model may answer (with their descriptions), `env_var` reads the variables that
    /// `api_key_env` name (an unset or empty one sends no key).
    pub fn config(
        &self,
        categories: Vec<(CategorySlug, String)>,
        env_var: impl Fn(&str) -> Option<String>,
    ) -> Result<LlmConfig, SectionError> {
        if self.model.trim().is_empty() {
            return Err(invalid("llm.model", "must not be empty"));
        }
        if !(1..=50).contains(&self.batch_size) {
            return Err(invalid("llm.batch_size", "must be between 1 and 50"));
        }
        let linger = |key, ms: u64| {
            if ms > 60_000 {
                Err(invalid(key, "must be at most 60000 (a minute)"))
            } else {
                Ok(Duration::from_millis(ms))
            }
        };
        let batch_linger = linger("llm.batch_linger_ms", self.batch_linger_ms)?;
        let idle_linger = linger("llm.idle_linger_ms", self.idle_linger_ms)?;
        if !(1..=64).contains(&self.max_in_flight) {
            return Err(invalid("llm.max_in_flight", "must be between 1 and 64"));
        }
        if !(1..=50).contains(&self.quick_batch) {
            return Err(invalid("llm.quick_batch", "must be between 1 and 50"));
        }
        if self.max_output_tokens < 256 {
            return Err(invalid("llm.max_output_tokens", "must be at least 256"));
        }
        if !(0.0..=1.0).contains(&self.learn_min_confidence) {
            return Err(invalid(
                "llm.learn_min_confidence",
                "must be between 0 and 1",
            ));
        }
        if let Some(limit) = self.daily_spend_limit_usd
            && !(limit.is_finite() && limit >= 0.0)
        {
            return Err(invalid(
                "llm.daily_spend_limit_usd",
                "must be an amount of at least 0",
            ));
        }
        let key = |name: &str| env_var(name).filter(|v| !v.is_empty()).map(Secret::from);
        let fallback = match &self.fallback {
            None => None,
            Some(f) => {
                if f.model.trim().is_empty() {
                    return Err(invalid("llm.fallback.model", "must not be empty"));
                }
                let base_url = f.base_url.as_ref().unwrap_or(&self.base_url);
                let mut endpoint = LlmEndpoint::new(base_url.as_str(), f.model.as_str());
                endpoint.api_key = key(f.api_key_env.as_deref().unwrap_or(&self.api_key_env));
                endpoint.price_in_per_mtok =
                    price("llm.fallback.price_in_per_mtok", f.price_in_per_mtok)?;
                endpoint.price_out_per_mtok =
                    price("llm.fallback.price_out_per_mtok", f.price_out_per_mtok)?;
                endpoint.price_cached_in_per_mtok = f
                    .price_cached_in_per_mtok
                    .map(|p| price("llm.fallback.price_cached_in_per_mtok", p))
                    .transpose()?;
                Some(endpoint)
            }
        };
        let mut config = LlmConfig::new(self.base_url.as_str(), self.model.as_str(), categories);
        config.api_key = key(&self.api_key_env);
        config.price_in_per_mtok = price("llm.price_in_per_mtok", self.price_in_per_mtok)?;
        config.price_out_per_mtok = price("llm.price_out_per_mtok", self.price_out_per_mtok)?;
        config.price_cached_in_per_mtok = self
            .price_cached_in_per_mtok
            .map(|p| price("llm.price_cached_in_per_mtok", p))
            .transpose()?;
        config.timeout = Duration::from_secs(u64::from(self.timeout_secs.max(1)));
        config.max_retries = self.max_retries;
        config.batch_size = self.batch_size;
        config.batch_linger = batch_linger;
        config.idle_linger = idle_linger;
        config.max_in_flight = self.max_in_flight;
        config.quick_batch = self.quick_batch;
        config.max_output_tokens = self.max_output_tokens;
        config.few_shot = self.few_shot;
        config.learn_min_confidence = self.learn_min_confidence;
        config.stream = self.stream;
        config.reasons = self.reasons;
        config.fallback = fallback;
        Ok(config)
    }
}

// Defaults of the optional keys, one function per key: serde names them per field.
fn default_llm_api_key_env() -> String {
    "JOBWIRE_LLM_API_KEY".to_owned()
}

fn default_llm_timeout_secs() -> u32 {
    120
}

fn default_llm_batch_size() -> usize {
    30
}

fn default_llm_max_in_flight() -> usize {
    8
}

fn default_llm_quick_batch() -> usize {
    2
}

fn default_llm_few_shot() -> usize {
    3
}

fn default_llm_learn_min_confidence() -> f32 {
    crate::DEFAULT_LEARN_MIN_CONFIDENCE
}

fn default_true() -> bool {
    true
}

fn default_llm_max_retries() -> u32 {
    3
}

fn default_llm_batch_linger_ms() -> u64 {
    250
}

fn default_llm_idle_linger_ms() -> u64 {
    0
}

fn default_llm_max_output_tokens() -> u32 {
    16_384
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(extra: &str) -> LlmSection {
        let text = format!("base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n{extra}");
        toml_section(&text)
    }

    fn toml_section(text: &str) -> LlmSection {
        serde_json::from_value(toml_to_json(text)).expect("valid section")
    }

    /// The few `key = value` lines these tests write, as JSON (classify has no TOML parser).
    fn toml_to_json(text: &str) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line.split_once(" = ").expect("key = value");
            let value = serde_json::from_str(value).expect("a JSON-compatible value");
            map.insert(key.to_owned(), value);
        }
        serde_json::Value::Object(map)
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "JOBWIRE_LLM_API_KEY" => Some("sk-primary".to_owned()),
            "OTHER_KEY" => Some("sk-other".to_owned()),
            "EMPTY_KEY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn defaults_and_keys_reach_the_client_config() {
        let config = section("").config(Vec::new(), env).expect("valid");
        assert_eq!(config.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(config.model, "m");
        assert_eq!(
            config.api_key.as_ref().map(Secret::expose),
            Some("sk-primary")
        );
        assert_eq!(config.timeout, Duration::from_secs(120));
        assert_eq!(config.max_retries, 3);
        assert_eq!(config.batch_size, 30);
        assert_eq!(config.batch_linger, Duration::from_millis(250));
        assert_eq!(config.idle_linger, Duration::ZERO);
        assert_eq!(config.max_in_flight, 8);
        assert_eq!(config.quick_batch, 2);
        assert!(config.stream && !config.reasons);
        let set = section("stream = false\nreasons = true\nquick_batch = 5")
            .config(Vec::new(), env)
            .expect("valid");
        assert!(!set.stream && set.reasons && set.quick_batch == 5);
        let bad = section("quick_batch = 0").config(Vec::new(), env);
        assert_eq!(bad.map(|_| ()).map_err(|e| e.key), Err("llm.quick_batch"));
        assert_eq!(config.max_output_tokens, 16_384);
        assert_eq!(config.few_shot, 3);
        assert_eq!(config.learn_min_confidence, 0.8);
        assert_eq!(
            section("learn_min_confidence = 0.95")
                .config(Vec::new(), env)
                .expect("valid")
                .learn_min_confidence,
            0.95
        );
        assert!(config.fallback.is_none());
        assert!(!format!("{config:?}").contains("sk-primary"));
    }

    #[test]
    fn a_fallback_inherits_the_primary_endpoint_and_key_unless_it_names_its_own() {
        let mut s = section("price_in_per_mtok = 0.5");
        s.fallback = Some(LlmFallbackSection {
            base_url: None,
            model: "small".to_owned(),
            api_key_env: None,
            price_in_per_mtok: 0.1,
            price_out_per_mtok: 0.2,
            price_cached_in_per_mtok: Some(0.05),
        });
        let config = s.config(Vec::new(), env).expect("valid");
        let fallback = config.fallback.clone().expect("a fallback");
        assert_eq!(fallback.base_url, config.base_url);
        assert_eq!(fallback.price_cached_in_per_mtok, Some(0.05));
        assert_eq!(config.price_cached_in_per_mtok, None, "the input price");
        assert_eq!(
            fallback.api_key.as_ref().map(Secret::expose),
            Some("sk-primary")
        );
        assert_eq!(
            (fallback.price_in_per_mtok, fallback.price_out_per_mtok),
            (0.1, 0.2)
        );
        assert_eq!(config.price_in_per_mtok, 0.5);

        if let Some(f) = s.fallback.as_mut() {
            f.base_url = Some("http://10.0.0.1/v1".parse().expect("url"));
            f.api_key_env = Some("OTHER_KEY".to_owned());
        }
        let fallback = s
            .config(Vec::new(), env)
            .expect("valid")
            .fallback
            .expect("set");
        assert_eq!(fallback.base_url, "http://10.0.0.1/v1");
        assert_eq!(
            fallback.api_key.as_ref().map(Secret::expose),
            Some("sk-other")
        );

        let mut s = section("api_key_env = \"EMPTY_KEY\"");
        s.fallback = None;
        assert!(s.config(Vec::new(), env).expect("valid").api_key.is_none());
    }

    #[test]
    fn each_bad_value_names_its_key() {
        for (extra, key) in [
            ("batch_size = 0", "llm.batch_size"),
            ("batch_size = 51", "llm.batch_size"),
            ("batch_linger_ms = 60001", "llm.batch_linger_ms"),
            ("idle_linger_ms = 60001", "llm.idle_linger_ms"),
            ("max_in_flight = 0", "llm.max_in_flight"),
            ("max_in_flight = 65", "llm.max_in_flight"),
            ("max_output_tokens = 255", "llm.max_output_tokens"),
            ("price_in_per_mtok = -1", "llm.price_in_per_mtok"),
            ("price_out_per_mtok = -0.5", "llm.price_out_per_mtok"),
            ("daily_spend_limit_usd = -3", "llm.daily_spend_limit_usd"),
            ("learn_min_confidence = 1.5", "llm.learn_min_confidence"),
            ("learn_min_confidence = -0.1", "llm.learn_min_confidence"),
        ] {
            let err = section(extra).config(Vec::new(), env).expect_err(extra);
            assert_eq!(err.key, key, "{extra}");
        }
        let mut blank = section("");
        blank.model = "  ".to_owned();
        assert_eq!(
            blank.config(Vec::new(), env).expect_err("blank").key,
            "llm.model"
        );
        let mut s = section("");
        s.fallback = Some(LlmFallbackSection {
            base_url: None,
            model: String::new(),
            api_key_env: None,
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
            price_cached_in_per_mtok: None,
        });
        let err = s.config(Vec::new(), env).expect_err("blank fallback model");
        assert_eq!(err.to_string(), "llm.fallback.model must not be empty");
    }
}
