//! The labeled JSONL format of `data/dev.jsonl` (see `data/SCHEMA.md`): one object per line.

use serde::Deserialize;

use crate::{CategorySlug, PostKind};

/// One line of a labeled dataset, as written in the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabeledLine {
    pub id: String,
    pub channel: String,
    pub text: String,
    #[serde(default)]
    pub is_job: Option<bool>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub dup_group: Option<String>,
}

/// A checked label: kind and categories parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub is_job: bool,
    pub kind: PostKind,
    pub categories: Vec<CategorySlug>,
}

/// A labeled example: text plus its label (when the line carried one).
#[derive(Debug, Clone)]
pub struct LabeledPost {
    pub id: String,
    pub channel: String,
    pub text: String,
    pub label: Option<Label>,
    pub dup_group: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("line {line}: not a dataset record: {source}")]
    Json {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("line {line}: unknown kind {kind:?} (expected job, resume, ad or chatter)")]
    Kind { line: usize, kind: String },
    #[error("line {line}: {source}")]
    Category {
        line: usize,
        #[source]
        source: crate::InvalidCategory,
    },
}

impl LabeledPost {
    /// Parses one JSONL line; `line` is 1-based and only used in errors.
    pub fn parse_line(raw: &str, line: usize) -> Result<Self, DatasetError> {
        let rec: LabeledLine =
            serde_json::from_str(raw).map_err(|source| DatasetError::Json { line, source })?;
        let label = match (rec.is_job, rec.kind.as_deref()) {
            (None, None) => None,
            (is_job, kind) => {
                let kind = match kind {
                    Some(k) => PostKind::parse(k).ok_or_else(|| DatasetError::Kind {
                        line,
                        kind: k.to_owned(),
                    })?,
                    None if is_job == Some(true) => PostKind::Job,
                    None => PostKind::Chatter,
                };
                let categories = rec
                    .categories
                    .iter()
                    .map(|c| CategorySlug::parse(c))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|source| DatasetError::Category { line, source })?;
                Some(Label {
                    is_job: is_job.unwrap_or(kind == PostKind::Job),
                    kind,
                    categories,
                })
            }
        };
        Ok(Self {
            id: rec.id,
            channel: rec.channel,
            text: rec.text,
            label,
            dup_group: rec.dup_group,
        })
    }

    /// Parses a whole JSONL document, skipping blank lines.
    pub fn parse_all(doc: &str) -> Result<Vec<Self>, DatasetError> {
        doc.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| Self::parse_line(l, i + 1))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_labeled_line_and_reports_bad_ones() {
        let ok = r#"{"id":"d1","channel":"@c","text":"hi","is_job":true,"kind":"job","categories":["web"],"lang":"en","dup_group":null}"#;
        let post = LabeledPost::parse_line(ok, 1).expect("valid line");
        let label = post.label.expect("labeled");
        assert!(label.is_job);
        assert_eq!(label.categories[0].as_str(), "web");

        let unlabeled = r#"{"id":"d2","channel":"@c","text":"hi"}"#;
        assert!(
            LabeledPost::parse_line(unlabeled, 2)
                .expect("valid")
                .label
                .is_none()
        );

        let bad_kind = r#"{"id":"d3","channel":"@c","text":"hi","is_job":false,"kind":"spam"}"#;
        let err = LabeledPost::parse_line(bad_kind, 3).expect_err("bad kind");
        assert!(err.to_string().contains("line 3"));
        assert!(LabeledPost::parse_line("{", 4).is_err());
    }
}
