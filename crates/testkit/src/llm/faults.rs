//! Faults the fake LLM injects: the public [`Fault`] and [`FaultPlan`], drawing the fault of
//! each request (script first, then seeded random rates) and the fate of each answer item.

use std::{collections::VecDeque, time::Duration};

use rand::{Rng, rngs::StdRng, seq::SliceRandom};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::state::{LlmState, lock};

/// One scripted answer of the fake LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// A correct answer.
    Ok,
    /// HTTP 429 `rate_limit_exceeded` with a `retry-after` header, as OpenAI sends.
    Status429,
    /// HTTP 500 `server_error`, as OpenAI sends.
    Status500,
    /// Holds the request for [`FaultPlan::timeout_hold`] (or until the client hangs up),
    /// then answers 500.
    Timeout,
    /// HTTP 200 whose content is not JSON (a truncated answer), `finish_reason: "stop"`.
    Malformed,
    /// HTTP 200 whose content is valid JSON that does not match the schema
    /// (alternately: `results` missing, or `is_job` given as a string).
    OffSchema,
    /// HTTP 200 whose first result's categories include `"hacked"`.
    UnknownCategory,
    /// HTTP 200 with `content: null` and a `refusal`, as OpenAI's structured outputs refuse.
    Refusal,
    /// HTTP 200 with a cut-off content and `finish_reason: "length"`.
    Truncated,
    /// HTTP 200 without the items of the 1st, 3rd, 5th… post (so a one-post request gets no
    /// item at all).
    Partial,
    /// HTTP 200 whose 1st, 3rd, 5th… items are off-schema, in turn: an unknown kind
    /// (`"vacancy"`), a job whose only category is unknown (`"crypto"`), `is_job` as a string.
    BadItems,
    /// HTTP 200 where every item is a job whose only category is unknown (`"crypto"`): a
    /// model that insists on a category it was not offered.
    UnknownCategoryItems,
    /// HTTP 429 `insufficient_quota` (no `retry-after`), as OpenAI sends when billing is out.
    Quota,
    /// A streamed answer (`stream: true`) breaks off halfway through its content: the
    /// connection drops with no finish reason, usage or `[DONE]`, as when a provider's
    /// server or a proxy fails mid-answer. A plain request gets its content cut halfway with
    /// `finish_reason: "length"` (as [`Fault::Truncated`]).
    StreamCut,
}

/// Which faults to inject: the script first, then random faults by rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultPlan {
    /// Probability of a 429 per request (0.0–1.0).
    pub rate_429: f64,
    /// Probability of a 500 per request.
    pub rate_500: f64,
    /// Probability of a held request (timeout) per request.
    pub rate_timeout: f64,
    /// Probability of non-JSON content per request.
    pub rate_malformed: f64,
    /// Probability of off-schema JSON per request.
    pub rate_off_schema: f64,
    /// Probability that an item is left out of an otherwise correct answer.
    pub rate_drop_item: f64,
    /// Probability that an item of an otherwise correct answer is off-schema (same variants
    /// as [`Fault::BadItems`]).
    pub rate_bad_item: f64,
    /// Answer the items in a random order.
    pub shuffle_items: bool,
    /// Models that are out of quota: every request for them is answered 429
    /// `insufficient_quota` (before the script).
    pub quota_models: Vec<String>,
    /// Models that do not exist: every request for them is answered 404 `model_not_found`.
    pub unknown_models: Vec<String>,
    /// The API key is refused: every request (the model list too) is answered 401
    /// `invalid_api_key`, before anything else is looked at.
    pub refuse_key: bool,
    /// Faults for the next requests, consumed first, one per request.
    pub script: VecDeque<Fault>,
    /// Value of the `retry-after` header on 429 answers, in seconds (default 1).
    pub retry_after_secs: u64,
    /// How long a [`Fault::Timeout`] holds the request (default 120 s).
    #[serde(rename = "timeout_hold_ms", with = "millis")]
    pub timeout_hold: Duration,
}

impl Default for FaultPlan {
    fn default() -> Self {
        FaultPlan {
            rate_429: 0.0,
            rate_500: 0.0,
            rate_timeout: 0.0,
            rate_malformed: 0.0,
            rate_off_schema: 0.0,
            rate_drop_item: 0.0,
            rate_bad_item: 0.0,
            shuffle_items: false,
            quota_models: Vec::new(),
            unknown_models: Vec::new(),
            refuse_key: false,
            script: VecDeque::new(),
            retry_after_secs: 1,
            timeout_hold: Duration::from_secs(120),
        }
    }
}

impl FaultPlan {
    /// A plan with only a script (no random faults).
    pub fn scripted(faults: impl IntoIterator<Item = Fault>) -> Self {
        FaultPlan {
            script: faults.into_iter().collect(),
            ..FaultPlan::default()
        }
    }
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[derive(Debug)]
pub(super) struct Faults {
    pub(super) plan: FaultPlan,
    pub(super) rng: StdRng,
}

impl LlmState {
    /// Draws the fault for the next request.
    pub(super) fn next_fault(&self) -> (Fault, u64, Duration) {
        let mut f = lock(&self.inner.faults);
        let retry = f.plan.retry_after_secs;
        let hold = f.plan.timeout_hold;
        if let Some(fault) = f.plan.script.pop_front() {
            return (fault, retry, hold);
        }
        let p = &f.plan;
        let rates = [
            (p.rate_429, Fault::Status429),
            (p.rate_500, Fault::Status500),
            (p.rate_timeout, Fault::Timeout),
            (p.rate_malformed, Fault::Malformed),
            (p.rate_off_schema, Fault::OffSchema),
        ];
        if rates.iter().all(|(r, _)| *r <= 0.0) {
            return (Fault::Ok, retry, hold);
        }
        let u: f64 = f.rng.random();
        let mut acc = 0.0;
        for (rate, fault) in rates {
            acc += rate.max(0.0);
            if u < acc {
                return (fault, retry, hold);
            }
        }
        (Fault::Ok, retry, hold)
    }
}

/// What happens to one item of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ItemFate {
    Keep,
    Drop,
    Bad,
    UnknownCategory,
}

/// The fates of an answer's items, and a new order for them (a permutation), if shuffled.
#[derive(Debug)]
pub(super) struct Fates {
    pub(super) fates: Vec<ItemFate>,
    pub(super) order: Option<Vec<usize>>,
}

impl LlmState {
    /// Draws what happens to the `n` items of an answer with this fault.
    pub(super) fn item_fates(&self, fault: Fault, n: usize) -> Fates {
        let mut f = lock(&self.inner.faults);
        let (drop, bad, shuffle) = (
            f.plan.rate_drop_item,
            f.plan.rate_bad_item,
            f.plan.shuffle_items,
        );
        let fates = (0..n)
            .map(|i| match fault {
                Fault::Partial if i % 2 == 0 => ItemFate::Drop,
                Fault::BadItems if i % 2 == 0 => ItemFate::Bad,
                Fault::UnknownCategoryItems => ItemFate::UnknownCategory,
                Fault::Partial | Fault::BadItems => ItemFate::Keep,
                _ => {
                    if drop > 0.0 && f.rng.random::<f64>() < drop {
                        ItemFate::Drop
                    } else if bad > 0.0 && f.rng.random::<f64>() < bad {
                        ItemFate::Bad
                    } else {
                        ItemFate::Keep
                    }
                }
            })
            .collect();
        let order = shuffle.then(|| {
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut f.rng);
            order
        });
        Fates { fates, order }
    }
}

/// An off-schema version of an item: an unknown kind, a job whose only category is unknown,
/// or `is_job` as a string, by `nth`.
pub(super) fn spoil(mut item: Value, nth: u64) -> Value {
    if let Some(obj) = item.as_object_mut() {
        match nth % 3 {
            0 => {
                obj.insert("kind".into(), json!("vacancy"));
            }
            1 => {
                obj.insert("is_job".into(), json!(true));
                obj.insert("kind".into(), json!("job"));
                obj.insert("categories".into(), json!(["crypto"]));
            }
            _ => {
                let b = obj.get("is_job").and_then(Value::as_bool).unwrap_or(false);
                obj.insert("is_job".into(), json!(if b { "yes" } else { "no" }));
            }
        }
    }
    item
}
