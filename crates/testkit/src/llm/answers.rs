//! The answers' content: the posts of a request, the oracle's item for each post (with its
//! extraction), token counts and the cut-off JSON of truncated answers.

use jobwire_core::extract::{BudgetBasis, Extraction, extract};
use serde_json::{Value, json};

use super::state::{LlmState, add};

/// The posts of a user message: the whole message as `{"posts":[...]}`, or else its last line
/// that is such an object.
pub(super) fn parse_posts(message: &str) -> Option<Vec<Value>> {
    let from = |s: &str| {
        serde_json::from_str::<Value>(s)
            .ok()
            .and_then(|v| v.get("posts").and_then(Value::as_array).cloned())
    };
    from(message).or_else(|| {
        message
            .lines()
            .rev()
            .map(str::trim)
            .filter(|l| l.starts_with('{'))
            .find_map(from)
    })
}

/// An amount as a model writes it: `45000`, not `45000.0`.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// The extraction JSON of the `classify.v2` schema (every key present, `null` when unknown).
fn extraction_json(e: Option<&Extraction>) -> Value {
    let empty = Extraction::default();
    let e = e.unwrap_or(&empty);
    let budget = e.budget.as_ref().map(|b| {
        let basis = match b.basis {
            BudgetBasis::Fixed => "fixed",
            BudgetBasis::Hourly => "hourly",
            BudgetBasis::Monthly => "monthly",
        };
        json!({"min": number(b.min), "max": b.max.map(number), "currency": b.currency, "basis": basis})
    });
    json!({
        "title": e.title,
        "budget": budget,
        "deadline": e.deadline,
        "work_mode": e.work_mode.and_then(|m| serde_json::to_value(m).ok()),
        "skills": e.skills,
        "contact": e.contact,
    })
}

/// The oracle's answer for one post.
pub(super) fn oracle_item(st: &LlmState, id: &str, text: &str) -> Value {
    let stats = &st.inner.stats;
    let oracle = &st.inner.oracle;
    match oracle.lookup(text) {
        Some(e) => {
            add(&stats.oracle_hits, 1);
            // A job's extraction, with the short title the prompt asks for; `null` for the
            // rest (a schema that wants an object gets one with every field empty).
            let extraction = if e.is_job {
                let mut x = match oracle.extraction(text) {
                    Some(x) => x.clone(),
                    None => extract(text),
                };
                x.title = x.title.map(|t| short_title(&t));
                extraction_json(Some(&x))
            } else {
                Value::Null
            };
            json!({
                "id": id,
                "is_job": e.is_job,
                "kind": e.kind,
                "categories": e.categories,
                "confidence": 0.9,
                "reason": "labeled in the oracle",
                "extraction": extraction,
            })
        }
        None => {
            add(&stats.oracle_misses, 1);
            json!({
                "id": id,
                "is_job": false,
                "kind": "chatter",
                "categories": [],
                "confidence": 0.5,
                "reason": "not in the oracle",
                "extraction": Value::Null,
            })
        }
    }
}

/// Words a title keeps (the prompt asks for at most 8).
const TITLE_WORDS: usize = 8;

/// A title cut to [`TITLE_WORDS`] words.
fn short_title(title: &str) -> String {
    title
        .split_whitespace()
        .take(TITLE_WORDS)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text of a message's `content` (a string or an array of text parts).
pub(super) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

pub(super) fn tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

/// Cuts a JSON text so that it no longer parses.
pub(super) fn truncate_json(s: &str) -> String {
    let n = s.chars().count();
    let cut: String = s.chars().take((n / 2).max(1)).collect();
    if serde_json::from_str::<Value>(&cut).is_ok() {
        // e.g. a one-character "{" would not parse anyway; be safe with a dangling key.
        format!("{cut}{{\"")
    } else {
        cut
    }
}
