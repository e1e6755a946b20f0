//! The oracle: labeled posts the fake LLM answers from.

use std::collections::HashMap;

use jobwire_core::extract::Extraction;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::TestkitError;

/// One labeled post (the fields of the labeled JSONL format the fake needs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleEntry {
    /// The post text exactly as posted.
    pub text: String,
    /// Whether the post offers paid work.
    pub is_job: bool,
    /// `job`, `resume`, `ad` or `chatter`.
    pub kind: String,
    /// Category slugs (empty for non-jobs).
    pub categories: Vec<String>,
}

impl OracleEntry {
    /// A post the fake labels a job of `categories`.
    pub fn job(text: &str, categories: &[&str]) -> Self {
        Self {
            text: text.to_owned(),
            is_job: true,
            kind: "job".to_owned(),
            categories: categories.iter().map(|c| (*c).to_owned()).collect(),
        }
    }
}

/// A line of the labeled JSONL format; extra keys are ignored.
#[derive(Deserialize)]
struct Line {
    text: String,
    is_job: bool,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    categories: Option<Vec<String>>,
}

/// The non-blank lines of JSONL, trimmed, with their line numbers (from 1).
fn numbered_lines(jsonl: &str) -> impl Iterator<Item = (usize, &str)> {
    jsonl
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty())
}

/// Parses labeled JSONL (`id, channel, text, is_job, kind, categories, lang, dup_group`, one
/// object a line; blank lines skipped, unknown keys ignored, `kind` defaults to `job`/`chatter`
/// from `is_job`, `categories` to empty).
pub fn load_oracle_jsonl(jsonl: &str) -> Result<Vec<OracleEntry>, TestkitError> {
    let mut out = Vec::new();
    for (n, line) in numbered_lines(jsonl) {
        let l: Line = serde_json::from_str(line)
            .map_err(|source| TestkitError::OracleLine { line: n, source })?;
        out.push(OracleEntry {
            kind: l
                .kind
                .unwrap_or_else(|| if l.is_job { "job" } else { "chatter" }.to_owned()),
            categories: l.categories.unwrap_or_default(),
            text: l.text,
            is_job: l.is_job,
        });
    }
    Ok(out)
}

/// What a labeled post says about its job, for the fake's `extraction` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OracleExtraction {
    /// The post text exactly as posted.
    pub text: String,
    /// The expected extraction.
    pub extraction: Extraction,
}

/// The keys of an extraction when a line carries them at the top level (the
/// `data/extract.jsonl` style).
const EXTRACTION_KEYS: [&str; 6] = [
    "title",
    "budget",
    "deadline",
    "work_mode",
    "skills",
    "contact",
];

/// Parses the extractions of labeled JSONL: a line with an `extraction` object, or with any of
/// `title`, `budget`, `deadline`, `work_mode`, `skills`, `contact` at the top level, gives one
/// (in the [`Extraction`] JSON shape); other lines are skipped. A line that is not JSON, has
/// no `text`, or whose extraction does not parse is an error.
pub fn load_extractions_jsonl(jsonl: &str) -> Result<Vec<OracleExtraction>, TestkitError> {
    let mut out = Vec::new();
    for (n, line) in numbered_lines(jsonl) {
        let err = |source| TestkitError::OracleLine { line: n, source };
        let v: Value = serde_json::from_str(line).map_err(err)?;
        let source = match v.get("extraction") {
            Some(e @ Value::Object(_)) => e.clone(),
            _ if EXTRACTION_KEYS.iter().any(|k| v.get(k).is_some()) => v.clone(),
            _ => continue,
        };
        let text: String =
            serde_json::from_value(v.get("text").cloned().unwrap_or(Value::Null)).map_err(err)?;
        let extraction: Extraction = serde_json::from_value(source).map_err(err)?;
        out.push(OracleExtraction { text, extraction });
    }
    Ok(out)
}

/// Whitespace-collapsed form of a text (also trims).
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A text index: exact text, then whitespace-collapsed text. The first of a text wins.
#[derive(Debug, Default)]
struct Index {
    exact: HashMap<String, usize>,
    collapsed: HashMap<String, usize>,
}

impl Index {
    fn new<'a>(texts: impl Iterator<Item = &'a str>) -> Self {
        let mut idx = Index::default();
        for (i, t) in texts.enumerate() {
            idx.exact.entry(t.to_owned()).or_insert(i);
            idx.collapsed.entry(collapse(t)).or_insert(i);
        }
        idx
    }

    fn find(&self, text: &str) -> Option<usize> {
        match self.exact.get(text) {
            Some(i) => Some(*i),
            None => self.collapsed.get(&collapse(text)).copied(),
        }
    }
}

/// Labels and extractions, looked up by exact text, then by whitespace-collapsed text.
#[derive(Debug, Default)]
pub(crate) struct Oracle {
    index: Index,
    entries: Vec<OracleEntry>,
    extraction_index: Index,
    extractions: Vec<OracleExtraction>,
}

impl Oracle {
    pub(crate) fn new(entries: Vec<OracleEntry>, extractions: Vec<OracleExtraction>) -> Self {
        Oracle {
            index: Index::new(entries.iter().map(|e| e.text.as_str())),
            entries,
            extraction_index: Index::new(extractions.iter().map(|e| e.text.as_str())),
            extractions,
        }
    }

    pub(crate) fn lookup(&self, text: &str) -> Option<&OracleEntry> {
        self.entries.get(self.index.find(text)?)
    }

    pub(crate) fn extraction(&self, text: &str) -> Option<&Extraction> {
        self.extractions
            .get(self.extraction_index.find(text)?)
            .map(|e| &e.extraction)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn loads_leniently_and_looks_up() {
        let jsonl = r#"{"id":"1","channel":"@c","text":"Need  a\nlogo","is_job":true,"kind":"job","categories":["design"],"lang":"en","dup_group":null,"extra":1}

{"id":"2","text":"hello","is_job":false}
"#;
        let entries = load_oracle_jsonl(jsonl).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].kind, "chatter");
        let o = Oracle::new(entries, Vec::new());
        assert_eq!(
            o.lookup("Need  a\nlogo").unwrap().categories,
            vec!["design"]
        );
        assert!(o.lookup("  Need a logo ").unwrap().is_job);
        assert!(o.lookup("Need a logo!").is_none());
        let err = load_oracle_jsonl("{\"text\":1}").unwrap_err();
        assert!(err.to_string().starts_with("oracle line 1"), "{err}");
    }

    #[test]
    fn extractions_load_from_either_shape() {
        let jsonl = r#"{"text":"a","is_job":true,"extraction":{"title":"Logo","budget":{"min":5,"currency":"USD","basis":"fixed"}}}
{"text":"b","is_job":true,"title":"Bot","skills":["Python"],"work_mode":"remote"}
{"text":"c","is_job":false}
"#;
        let ex = load_extractions_jsonl(jsonl).unwrap();
        assert_eq!(ex.len(), 2);
        assert_eq!(ex[0].extraction.budget.as_ref().unwrap().currency, "USD");
        assert_eq!(ex[1].extraction.skills, ["Python"]);
        let o = Oracle::new(Vec::new(), ex);
        assert_eq!(o.extraction(" b ").unwrap().title.as_deref(), Some("Bot"));
        assert!(o.extraction("c").is_none());
        assert!(load_extractions_jsonl(r#"{"text":"x","budget":{"min":"five"}}"#).is_err());
    }
}
