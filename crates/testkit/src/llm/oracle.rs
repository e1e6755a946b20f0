//! The oracle: labeled posts the fake LLM answers from.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

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

/// Parses labeled JSONL (`id, channel, text, is_job, kind, categories, lang, dup_group`, one
/// object a line; blank lines skipped, unknown keys ignored, `kind` defaults to `job`/`chatter`
/// from `is_job`, `categories` to empty).
pub fn load_oracle_jsonl(jsonl: &str) -> Result<Vec<OracleEntry>, TestkitError> {
    let mut out = Vec::new();
    for (i, line) in jsonl.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(line).map_err(|source| TestkitError::OracleLine {
            line: i + 1,
            source,
        })?;
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

/// Whitespace-collapsed form of a text (also trims).
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lookup by exact text, then by whitespace-collapsed text. The first entry of a text wins.
#[derive(Debug, Default)]
pub(crate) struct Oracle {
    exact: HashMap<String, usize>,
    collapsed: HashMap<String, usize>,
    entries: Vec<OracleEntry>,
}

impl Oracle {
    pub(crate) fn new(entries: Vec<OracleEntry>) -> Self {
        let mut o = Oracle::default();
        for (i, e) in entries.iter().enumerate() {
            o.exact.entry(e.text.clone()).or_insert(i);
            o.collapsed.entry(collapse(&e.text)).or_insert(i);
        }
        o.entries = entries;
        o
    }

    pub(crate) fn lookup(&self, text: &str) -> Option<&OracleEntry> {
        let idx = match self.exact.get(text) {
            Some(i) => *i,
            None => *self.collapsed.get(&collapse(text))?,
        };
        self.entries.get(idx)
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
        let o = Oracle::new(entries);
        assert_eq!(
            o.lookup("Need  a\nlogo").unwrap().categories,
            vec!["design"]
        );
        assert!(o.lookup("  Need a logo ").unwrap().is_job);
        assert!(o.lookup("Need a logo!").is_none());
        let err = load_oracle_jsonl("{\"text\":1}").unwrap_err();
        assert!(err.to_string().starts_with("oracle line 1"), "{err}");
    }
}
