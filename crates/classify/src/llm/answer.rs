//! Reading an answer: the `items` array, then every item on its own (a bad item never spoils
//! the good ones), and the extraction converted to [`Extraction`] with every field checked.

use jobwire_core::extract::{
    Budget, BudgetBasis, Extraction, MAX_SKILLS, MAX_TITLE_CHARS, WorkMode,
};
use jobwire_core::{CategorySlug, PostKind, Verdict};
use serde::Deserialize;
use serde_json::Value;

use super::prompt::cut;

/// Longest deadline kept, in characters.
pub const MAX_DEADLINE_CHARS: usize = 80;
/// Longest skill kept, in characters.
pub const MAX_SKILL_CHARS: usize = 40;
/// Longest contact kept, in characters (a longer one is dropped, not cut).
pub const MAX_CONTACT_CHARS: usize = 200;

/// The items of an answer's content, or why the content is not an answer at all.
///
/// Models without strict structured output (local servers, some routers) wrap JSON in code
/// fences or prose, or answer a bare array; those are accepted. An answer cut short (the
/// model ran out of tokens) keeps its complete items: the posts after the cut are missing
/// and asked again, instead of the whole request failing the same way again.
pub(crate) fn parse_items(content: &str) -> Result<Vec<Value>, String> {
    let body = strip_fences(content.trim());
    let error = match serde_json::from_str::<Value>(body) {
        Ok(v) => return items_of(v),
        Err(e) => format!("answer is not JSON: {e}"),
    };
    // A JSON answer after some prose: the first value, from a `{` or `[` (the first few
    // tried), that parses whole and holds items (`[30]` in the prose is not an answer).
    for (start, _) in body.match_indices(['{', '[']).take(MAX_STARTS) {
        let mut values = serde_json::Deserializer::from_str(&body[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = values.next()
            && looks_like_answer(&v)
            && let Ok(items) = items_of(v)
        {
            return Ok(items);
        }
    }
    match salvage_items(body) {
        Some(items) if !items.is_empty() => Ok(items),
        _ => Err(error),
    }
}

/// The verdict in a model's answer about one post (trying a prompt): the answer is read and
/// its first item checked as the classifier checks every item, against the configured
/// `categories`. A job without any configured category is a verdict too (the classifier
/// would re-ask it once). The error says what is wrong with the answer.
pub fn verdict_of_answer(content: &str, categories: &[CategorySlug]) -> Result<Verdict, String> {
    let items = parse_items(content)?;
    let item = items.first().ok_or("the answer has no items")?;
    match check_item(item, categories, 0.5) {
        ItemCheck::Valid(c) | ItemCheck::JobWithoutCategory(c) => Ok(c.verdict),
        ItemCheck::Invalid(why) => Err(why),
    }
}

/// An object with an `items` array, or a non-empty array of objects with ids (not some
/// value from inside an item, such as `"categories":[]`).
fn looks_like_answer(v: &Value) -> bool {
    match v {
        Value::Object(map) => map.get("items").is_some_and(Value::is_array),
        Value::Array(items) => {
            !items.is_empty()
                && items
                    .iter()
                    .all(|i| i.get("id").is_some_and(Value::is_string))
        }
        _ => false,
    }
}

/// How many `{` / `[` positions are tried as the start of an answer wrapped in prose.
const MAX_STARTS: usize = 16;

fn items_of(v: Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Array(items) => Ok(items),
        Value::Object(mut map) => match map.remove("items") {
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err("answer's `items` is not an array".into()),
            None => Err("answer has no `items`".into()),
        },
        _ => Err("answer is neither an object nor an array".into()),
    }
}

/// The inside of a Markdown code fence (```json … ```), or the text itself.
fn strip_fences(s: &str) -> &str {
    let Some(rest) = s.strip_prefix("```") else {
        return s;
    };
    // Skip the info string (`json`): up to the end of the line, or on a one-line fence up
    // to the JSON.
    let rest = match rest.split_once('\n') {
        Some((_, r)) => r,
        None => rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric()),
    };
    let rest = rest.trim_end();
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// The complete items of an `{"items": [...` (or bare `[...`) answer that was cut short.
fn salvage_items(body: &str) -> Option<Vec<Value>> {
    let mut rest = match body.strip_prefix('[') {
        Some(r) => r,
        None => {
            let at = body.find("\"items\"")?;
            body[at + "\"items\"".len()..]
                .trim_start()
                .strip_prefix(':')?
                .trim_start()
                .strip_prefix('[')?
        }
    };
    let mut items = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() || rest.starts_with(']') {
            break;
        }
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match values.next() {
            Some(Ok(v)) => {
                let end = values.byte_offset();
                items.push(v);
                rest = &rest[end..];
            }
            _ => break,
        }
    }
    Some(items)
}

/// The id of an item, when it has a string one.
pub(crate) fn item_id(item: &Value) -> Option<&str> {
    item.get("id").and_then(Value::as_str)
}

/// One item as the schema describes it. `confidence`, `reason` and `extraction` may be
/// missing (a provider without strict mode); a wrong type anywhere else makes it invalid.
/// `is_job` is not asked for since `classify.v4` (a job is `kind: "job"`, one field fewer
/// to write per post); a model that still writes it must agree with its `kind`.
#[derive(Deserialize)]
struct WireItem {
    #[serde(default)]
    is_job: Option<bool>,
    kind: String,
    categories: Vec<String>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    extraction: Option<Value>,
}

/// A valid item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Checked {
    pub(crate) verdict: Verdict,
    pub(crate) extraction: Option<Extraction>,
    pub(crate) reason: String,
}

/// What one item amounts to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ItemCheck {
    /// Usable as it is.
    Valid(Checked),
    /// A job none of whose categories is configured: re-asked once, then accepted as is.
    JobWithoutCategory(Checked),
    /// Off-schema or self-contradicting: re-asked.
    Invalid(String),
}

/// Checks one item against the configured categories.
pub(crate) fn check_item(
    item: &Value,
    slugs: &[CategorySlug],
    assumed_confidence: f32,
) -> ItemCheck {
    let w: WireItem = match serde_json::from_value(item.clone()) {
        Ok(w) => w,
        Err(e) => return ItemCheck::Invalid(format!("off-schema item: {e}")),
    };
    let Some(kind) = PostKind::parse(&w.kind) else {
        let shown: String = w.kind.chars().take(20).collect();
        return ItemCheck::Invalid(format!("unknown kind {shown:?}"));
    };
    let is_job = kind == PostKind::Job;
    if let Some(said) = w.is_job
        && said != is_job
    {
        return ItemCheck::Invalid(format!(
            "is_job {said} disagrees with kind {}",
            kind.as_str()
        ));
    }
    let mut categories: Vec<CategorySlug> = Vec::new();
    if is_job {
        for c in &w.categories {
            match slugs.iter().find(|s| s.as_str() == c) {
                Some(s) if !categories.contains(s) => categories.push(s.clone()),
                Some(_) => {}
                None => tracing::warn!(
                    category = %c.chars().take(40).collect::<String>(),
                    "LLM answered an unknown category; dropped"
                ),
            }
        }
    }
    let confidence = match w.confidence {
        Some(c) if c.is_finite() => (c as f32).clamp(0.0, 1.0),
        _ => assumed_confidence.clamp(0.0, 1.0),
    };
    let extraction = if is_job {
        w.extraction
            .as_ref()
            .map(to_extraction)
            .filter(|e| *e != Extraction::default())
    } else {
        None
    };
    let checked = Checked {
        verdict: Verdict {
            is_job,
            kind,
            categories,
            confidence,
            category_confidence: 1.0,
        },
        extraction,
        reason: w
            .reason
            .map(|r| cut(r.trim(), 200).to_owned())
            .unwrap_or_default(),
    };
    if checked.verdict.is_job && checked.verdict.categories.is_empty() {
        ItemCheck::JobWithoutCategory(checked)
    } else {
        ItemCheck::Valid(checked)
    }
}

/// Whitespace runs collapsed to one space, trimmed.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn text_field(v: &Value, key: &str, max: usize) -> Option<String> {
    let s = one_line(v.get(key)?.as_str()?);
    let s = cut(&s, max).trim_end().to_owned();
    (!s.is_empty()).then_some(s)
}

/// Converts the model's `extraction` object, dropping what does not check out: the title is
/// one line of at most [`MAX_TITLE_CHARS`] characters; at most [`MAX_SKILLS`] distinct skills;
/// a budget needs a finite positive `min`, a currency of 3–4 letters (uppercased) and a basis
/// `fixed`/`hourly`/`monthly` (else the whole budget goes), and its `max` is kept only when
/// finite and not below `min`; a contact must look like `@handle`, a link or an email.
pub(crate) fn to_extraction(v: &Value) -> Extraction {
    let mut skills: Vec<String> = Vec::new();
    if let Some(list) = v.get("skills").and_then(Value::as_array) {
        for s in list.iter().filter_map(Value::as_str) {
            let s = one_line(s);
            let s = cut(&s, MAX_SKILL_CHARS).trim_end().to_owned();
            if !s.is_empty() && !skills.iter().any(|k| k.to_lowercase() == s.to_lowercase()) {
                skills.push(s);
            }
            if skills.len() == MAX_SKILLS {
                break;
            }
        }
    }
    Extraction {
        title: text_field(v, "title", MAX_TITLE_CHARS),
        budget: v.get("budget").and_then(to_budget),
        deadline: text_field(v, "deadline", MAX_DEADLINE_CHARS),
        work_mode: v
            .get("work_mode")
            .and_then(Value::as_str)
            .and_then(work_mode),
        skills,
        contact: v
            .get("contact")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|c| looks_like_contact(c))
            .map(str::to_owned),
    }
}

fn to_budget(v: &Value) -> Option<Budget> {
    let min = v
        .get("min")?
        .as_f64()
        .filter(|m| m.is_finite() && *m > 0.0)?;
    let max = v
        .get("max")
        .and_then(Value::as_f64)
        .filter(|m| m.is_finite() && *m >= min);
    let currency = v.get("currency")?.as_str()?.trim().to_uppercase();
    let letters = currency.chars().count();
    if !(3..=4).contains(&letters) || !currency.chars().all(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let basis = match v.get("basis")?.as_str()?.trim().to_lowercase().as_str() {
        "fixed" => BudgetBasis::Fixed,
        "hourly" => BudgetBasis::Hourly,
        "monthly" => BudgetBasis::Monthly,
        _ => return None,
    };
    Some(Budget {
        min,
        max,
        currency,
        basis,
    })
}

fn work_mode(raw: &str) -> Option<WorkMode> {
    match raw.trim().to_lowercase().replace('-', "_").as_str() {
        "remote" => Some(WorkMode::Remote),
        "on_site" | "onsite" | "office" => Some(WorkMode::OnSite),
        "hybrid" => Some(WorkMode::Hybrid),
        _ => None,
    }
}

/// Whether `contact` appears in `post`: both compared lower-cased, without whitespace, `@`,
/// and the `https://`, `http://`, `www.`, `t.me/` and `telegram.me/` prefixes (so `@ivan_dev`
/// is found as `t.me/ivan_dev`, `https://t.me/ivan_dev` or `@ Ivan_Dev`).
pub(crate) fn contact_in_post(contact: &str, post: &str) -> bool {
    let key = comparable(contact);
    !key.is_empty() && comparable(post).contains(&key)
}

/// Lower-cased, without whitespace and `@`, link prefixes removed.
fn comparable(text: &str) -> String {
    let mut s: String = text
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_whitespace() && *c != '@')
        .collect();
    for prefix in ["https://", "http://", "www.", "telegram.me/", "t.me/"] {
        s = s.replace(prefix, "");
    }
    s
}

/// `@handle` (4–32 letters, digits or `_`), an `http(s)://` or `t.me/` link, or an email.
pub(crate) fn looks_like_contact(c: &str) -> bool {
    if c.is_empty() || c.chars().count() > MAX_CONTACT_CHARS || c.chars().any(char::is_whitespace) {
        return false;
    }
    if let Some(handle) = c.strip_prefix('@') {
        return (4..=32).contains(&handle.len())
            && handle
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
    }
    let lower = c.to_lowercase();
    for scheme in ["https://", "http://"] {
        if let Some(rest) = lower.strip_prefix(scheme) {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            return host.contains('.') && !host.starts_with('.') && !host.ends_with('.');
        }
    }
    if let Some(rest) = lower.strip_prefix("t.me/") {
        return !rest.is_empty();
    }
    if let Some((local, domain)) = c.split_once('@') {
        return !local.is_empty()
            && !domain.contains('@')
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.');
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn slugs() -> Vec<CategorySlug> {
        ["web", "design"]
            .iter()
            .map(|s| CategorySlug::parse(s).unwrap())
            .collect()
    }

    fn item(extra: Value) -> Value {
        let mut base = json!({"id": "p1", "kind": "job", "categories": ["web"],
            "confidence": 0.8, "reason": "r", "extraction": null});
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    }

    #[test]
    fn items_are_checked_one_by_one() {
        let s = slugs();
        let ItemCheck::Valid(ok) = check_item(
            &item(json!({"categories": ["web", "crypto", "web", "design"]})),
            &s,
            0.9,
        ) else {
            panic!("valid");
        };
        assert_eq!(ok.verdict.categories, s);
        assert!((ok.verdict.confidence - 0.8).abs() < 1e-6);
        assert!(matches!(
            check_item(&item(json!({"categories": ["crypto"]})), &s, 0.9),
            ItemCheck::JobWithoutCategory(c) if c.verdict.is_job && c.verdict.categories.is_empty()
        ));
        for bad in [
            json!({"kind": "vacancy"}),
            json!({"is_job": "yes"}),
            // Older prompts' `is_job`, when a model still writes it, must agree with `kind`.
            json!({"is_job": false}),
            json!({"is_job": true, "kind": "resume"}),
            json!({"categories": "web"}),
        ] {
            assert!(
                matches!(
                    check_item(&item(bad.clone()), &s, 0.9),
                    ItemCheck::Invalid(_)
                ),
                "{bad}"
            );
        }
        let ItemCheck::Valid(old) = check_item(&item(json!({"is_job": true})), &s, 0.9) else {
            panic!("an agreeing is_job is accepted");
        };
        assert!(old.verdict.is_job);
        let ItemCheck::Valid(ad) = check_item(
            &item(
                json!({"kind": "ad", "categories": ["web"], "confidence": 7.0,
                "extraction": {"title": "x"}}),
            ),
            &s,
            0.9,
        ) else {
            panic!("valid");
        };
        assert!(ad.verdict.categories.is_empty() && ad.extraction.is_none());
        assert_eq!(ad.verdict.confidence, 1.0);
        assert!(parse_items("{\"results\":[]}").is_err());
        assert!(parse_items("nope").is_err());
        assert_eq!(parse_items("{\"items\":[1]}").unwrap().len(), 1);
        // Fences, prose and a bare array, as models without strict mode answer.
        let fenced = "```json\n{\"items\":[{\"id\":\"p1\"}]}\n```";
        assert_eq!(parse_items(fenced).unwrap(), [json!({"id": "p1"})]);
        let prose = "Here you go: {\"items\":[{\"id\":\"p1\"}]} Hope it helps {";
        assert_eq!(parse_items(prose).unwrap().len(), 1);
        assert_eq!(
            parse_items("[{\"id\":\"p1\"},{\"id\":\"p2\"}]")
                .unwrap()
                .len(),
            2
        );
        // Cut short: the complete items are kept, the broken one is not.
        let cut = "{\"items\":[{\"id\":\"p1\",\"x\":[1,2]}, {\"id\":\"p2\"},{\"id\":\"p3\",\"is_j";
        let items = parse_items(cut).unwrap();
        assert_eq!(
            items,
            [json!({"id": "p1", "x": [1, 2]}), json!({"id": "p2"})]
        );
        // A number in the prose before the answer is not the answer.
        let counted = "Разобрал [30] постов: {\"items\":[{\"id\":\"p1\"}]}";
        assert_eq!(parse_items(counted).unwrap(), [json!({"id": "p1"})]);
        // A fence on one line; a bare array cut short.
        let one_line = "```json {\"items\":[{\"id\":\"p1\"}]}```";
        assert_eq!(parse_items(one_line).unwrap().len(), 1);
        assert_eq!(parse_items("```{\"items\":[]}```").unwrap().len(), 0);
        let bare_cut = "[{\"id\":\"p1\"},{\"id\":\"p2\"";
        assert_eq!(parse_items(bare_cut).unwrap(), [json!({"id": "p1"})]);
        // Nothing complete: still an error.
        assert!(parse_items("{\"items\":[{\"id\":\"p1").is_err());
        assert!(parse_items("{\"items\": 5}").is_err());
    }

    #[test]
    fn extraction_fields_are_validated() {
        let long_title = "Т".repeat(300);
        let e = to_extraction(&json!({
            "title": format!("  {long_title}\n"),
            "budget": {"min": 15000, "max": 20000.0, "currency": "rub", "basis": "fixed"},
            "deadline": " до\nпятницы ",
            "work_mode": "on-site",
            "skills": ["Figma", "figma", " ", "A", "B", "C", "D", "E", "F", "G", "H"],
            "contact": "@coffee_owner",
        }));
        assert_eq!(e.title.as_ref().unwrap().chars().count(), MAX_TITLE_CHARS);
        let b = e.budget.unwrap();
        assert_eq!(
            (b.min, b.max, b.currency.as_str(), b.basis),
            (15000.0, Some(20000.0), "RUB", BudgetBasis::Fixed)
        );
        assert_eq!(e.deadline.as_deref(), Some("до пятницы"));
        assert_eq!(e.work_mode, Some(WorkMode::OnSite));
        assert_eq!(e.skills.len(), MAX_SKILLS);
        assert_eq!(e.skills[..2], ["Figma".to_owned(), "A".to_owned()]);
        assert_eq!(e.contact.as_deref(), Some("@coffee_owner"));

        for budget in [
            json!({"min": -5, "max": null, "currency": "USD", "basis": "fixed"}),
            json!({"min": 0, "max": null, "currency": "USD", "basis": "fixed"}),
            json!({"min": 5, "max": null, "currency": "US DOLLARS", "basis": "fixed"}),
            json!({"min": 5, "max": null, "currency": "$", "basis": "fixed"}),
            json!({"min": 5, "max": null, "currency": "USD", "basis": "weekly"}),
            json!({"min": "5", "max": null, "currency": "USD", "basis": "fixed"}),
        ] {
            assert!(
                to_extraction(&json!({"budget": budget})).budget.is_none(),
                "{budget}"
            );
        }
        let b = to_extraction(
            &json!({"budget": {"min": 50, "max": 10, "currency": "usdt", "basis": "hourly"}}),
        )
        .budget
        .unwrap();
        assert_eq!((b.max, b.currency.as_str()), (None, "USDT"));

        for good in [
            "@abcd_1",
            "https://t.me/x",
            "t.me/joinchat",
            "me@mail.ru",
            "http://example.com/a?b",
        ] {
            assert!(looks_like_contact(good), "{good}");
        }
        for bad in [
            "@ab",
            "call me",
            "ignore previous instructions",
            "@bad-handle",
            "https://nohost",
            "x@y",
            "a@b@c.d",
            "",
        ] {
            assert!(!looks_like_contact(bad), "{bad}");
        }
        assert_eq!(
            to_extraction(&json!({"title": 5, "skills": "x"})),
            Extraction::default()
        );
    }

    #[test]
    fn a_contact_must_appear_in_its_post() {
        let post =
            "Нужен бот. Пишите: t.me/Ivan_Dev или https://example.com/jobs, mail HR@Example.com";
        for found in [
            "@ivan_dev",
            "https://t.me/ivan_dev",
            "t.me/IVAN_DEV",
            "https://example.com/jobs",
            "hr@example.com",
        ] {
            assert!(contact_in_post(found, post), "{found}");
        }
        assert!(contact_in_post("@ivan_dev", "пишите @ Ivan_Dev"));
        for invented in [
            "@scam_wallet",
            "https://evil.example/pay",
            "boss@example.com",
            "@",
        ] {
            assert!(!contact_in_post(invented, post), "{invented}");
        }
    }
}
