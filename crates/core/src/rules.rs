//! Per-channel include/exclude keyword rules.
//!
//! A rule is a list of [`Term`]s. Terms and post texts are both [normalized](crate::normalize)
//! before matching, so `Дизайн`, `дизaйн` (Latin `a`) and `ДИЗАЙН` are one term.
//!
//! Matching is a substring search for [`Term::pattern`] followed by a cheap boundary check,
//! [`Term::accepts_match`]. [`CompiledRules`] does both for one channel with one
//! Aho-Corasick automaton; other indexes (the subscriber filters) reuse the same two
//! methods over their own `PatternSet`.

use std::collections::HashMap;
use std::fmt;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::normalize::{is_hashtag_char, normalize};

/// The longest term accepted, in characters (before normalization).
pub const MAX_TERM_CHARS: usize = 100;

/// One keyword of a rule, already normalized.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// A word or a phrase (`"landing page"`). Matches where a word starts, and may end
    /// anywhere: `дизайн` matches `дизайнера`, `bot` matches `bots` but not `robot`.
    Word(String),
    /// A hashtag, without the `#`. Matches exactly that whole hashtag: `#remote` matches
    /// `#Remote` but neither `#remotework` nor the plain word `remote`.
    Hashtag(String),
}

/// Why a term could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The term is empty or nothing but spaces and invisible characters.
    #[error("empty keyword")]
    Empty,
    /// The term is longer than [`MAX_TERM_CHARS`].
    #[error("keyword is {chars} characters long; the limit is {MAX_TERM_CHARS}")]
    TooLong {
        /// The term's length in characters.
        chars: usize,
    },
    /// A hashtag with characters a hashtag cannot contain (spaces, punctuation).
    #[error("{raw:?} is not a hashtag: after '#' only letters, digits and '_' are allowed")]
    BadHashtag {
        /// The term as given.
        raw: String,
    },
    /// A bad entry in a list of terms.
    #[error("{list} keyword #{position}: {source}")]
    InList {
        /// Which list: `"include"` or `"exclude"`.
        list: &'static str,
        /// 1-based position in the list.
        position: usize,
        /// What is wrong with it.
        #[source]
        source: Box<RuleError>,
    },
}

impl Term {
    /// Parses a keyword as an admin or a subscriber typed it: `#Tag` is a hashtag, anything
    /// else a word or phrase. Both are normalized.
    pub fn parse(raw: &str) -> Result<Term, RuleError> {
        let trimmed = raw.trim();
        let chars = trimmed.chars().count();
        if chars > MAX_TERM_CHARS {
            return Err(RuleError::TooLong { chars });
        }
        let normalized = normalize(trimmed);
        if let Some(tag) = normalized.strip_prefix('#') {
            if tag.is_empty() {
                return Err(RuleError::Empty);
            }
            if !tag.chars().all(is_hashtag_char) {
                return Err(RuleError::BadHashtag {
                    raw: trimmed.to_owned(),
                });
            }
            return Ok(Term::Hashtag(tag.to_owned()));
        }
        if normalized.is_empty() {
            return Err(RuleError::Empty);
        }
        Ok(Term::Word(normalized))
    }

    /// What to search for in normalized text: the word itself, or for a hashtag the tag
    /// without its `#` (the `#` is checked by [`Self::accepts_match`], so the stored tag can be
    /// lent out as is). A raw hit of the pattern is a match only if `accepts_match` says so.
    pub fn pattern(&self) -> &str {
        match self {
            Term::Word(word) => word,
            Term::Hashtag(tag) => tag,
        }
    }

    /// Whether a raw substring hit of [`Self::pattern`] at byte range `start..end` of
    /// `normalized_text` is a real match: for a word, no letter or digit right before it (if
    /// the word itself starts with one); for a hashtag, a `#` right before it, no hashtag
    /// character before that `#`, and none right after the hit. Looks at one character on each
    /// side only.
    ///
    /// Out-of-range or non-char-boundary positions are never a match.
    pub fn accepts_match(&self, normalized_text: &str, start: usize, end: usize) -> bool {
        if start > end {
            return false;
        }
        let (Some(before), Some(after)) =
            (normalized_text.get(..start), normalized_text.get(end..))
        else {
            return false;
        };
        match self {
            Term::Word(word) => {
                // A term starting with punctuation (".net") has no word start to check.
                let starts_with_word_char = word.chars().next().is_some_and(char::is_alphanumeric);
                !starts_with_word_char
                    || !before
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric)
            }
            Term::Hashtag(_) => {
                let Some(before_hash) = before.strip_suffix('#') else {
                    return false;
                };
                !before_hash.chars().next_back().is_some_and(is_hashtag_char)
                    && !after.chars().next().is_some_and(is_hashtag_char)
            }
        }
    }
}

impl fmt::Display for Term {
    /// Writes the term so that [`Term::parse`] reads it back: `#tag` or the word.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Word(word) => f.write_str(word),
            Term::Hashtag(tag) => write!(f, "#{tag}"),
        }
    }
}

/// The keyword rules of one channel, as the admin wrote them (parsed and normalized).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelRules {
    /// A post must match at least one of these. Empty: every post passes this side.
    pub include: Vec<Term>,
    /// A post matching any of these is dropped, even if it matched an include term.
    pub exclude: Vec<Term>,
}

impl ChannelRules {
    /// Parses raw include and exclude terms (see [`Term::parse`]). Blank entries are skipped;
    /// the first bad entry is an error naming its list and position.
    pub fn parse<I, E>(include: I, exclude: E) -> Result<Self, RuleError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
        E: IntoIterator,
        E::Item: AsRef<str>,
    {
        Ok(Self {
            include: parse_list(include, "include")?,
            exclude: parse_list(exclude, "exclude")?,
        })
    }

    /// Whether there are no rules at all (every post passes).
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }
}

fn parse_list<I>(raw: I, list: &'static str) -> Result<Vec<Term>, RuleError>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    raw.into_iter()
        .enumerate()
        .filter(|(_, r)| !r.as_ref().trim().is_empty())
        .map(|(i, r)| {
            Term::parse(r.as_ref()).map_err(|source| RuleError::InList {
                list,
                position: i + 1,
                source: Box::new(source),
            })
        })
        .collect()
}

/// What the rules of a channel say about one post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleDecision {
    /// The post goes on.
    Pass,
    /// An exclude term matched (it wins over any include match).
    Excluded {
        /// The exclude term that matched, as [`Term`]'s `Display` writes it.
        term: String,
    },
    /// The channel has include terms and none matched.
    NoIncludeMatched,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Include,
    Exclude,
}

/// [`ChannelRules`] compiled into one Aho-Corasick automaton, for checking many posts.
#[derive(Debug, Clone)]
pub struct CompiledRules {
    /// The distinct patterns of all terms.
    patterns: PatternSet,
    /// The terms behind each pattern (a word and a hashtag can share one).
    terms: Vec<Vec<(Term, Side)>>,
    has_include: bool,
    has_exclude: bool,
}

impl CompiledRules {
    /// Compiles the rules. Terms with an empty pattern (only constructible by hand, never by
    /// [`Term::parse`]) are ignored.
    pub fn new(rules: &ChannelRules) -> Self {
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut patterns = Vec::new();
        let mut terms: Vec<Vec<(Term, Side)>> = Vec::new();
        let sided = rules
            .include
            .iter()
            .map(|t| (t, Side::Include))
            .chain(rules.exclude.iter().map(|t| (t, Side::Exclude)));
        for (term, side) in sided {
            let pattern = term.pattern();
            if pattern.is_empty() {
                continue;
            }
            let id = *index.entry(pattern).or_insert_with(|| {
                patterns.push(pattern.to_owned());
                terms.push(Vec::new());
                patterns.len() - 1
            });
            if !terms[id].iter().any(|(t, s)| t == term && *s == side) {
                terms[id].push((term.clone(), side));
            }
        }
        let has_include = !rules.include.is_empty();
        let has_exclude = terms.iter().flatten().any(|(_, s)| *s == Side::Exclude);
        Self {
            patterns: PatternSet::new(patterns),
            terms,
            has_include,
            has_exclude,
        }
    }

    /// Checks one [normalized](crate::normalize::normalize) text. Exclude terms win over
    /// include terms; without include terms every post passes the include side.
    pub fn check(&self, normalized_text: &str) -> RuleDecision {
        let mut included = !self.has_include;
        let mut on_hit = |id: usize, start: usize, end: usize| -> Option<RuleDecision> {
            for (term, side) in &self.terms[id] {
                if !term.accepts_match(normalized_text, start, end) {
                    continue;
                }
                match side {
                    Side::Exclude => {
                        return Some(RuleDecision::Excluded {
                            term: term.to_string(),
                        });
                    }
                    Side::Include => {
                        included = true;
                        if !self.has_exclude {
                            return Some(RuleDecision::Pass);
                        }
                    }
                }
            }
            None
        };
        for (id, start, end) in self.patterns.find_all(normalized_text) {
            if let Some(decision) = on_hit(id, start, end) {
                return decision;
            }
        }
        if included {
            RuleDecision::Pass
        } else {
            RuleDecision::NoIncludeMatched
        }
    }
}

/// Distinct non-empty patterns, searched for together: one Aho-Corasick automaton finds
/// every (overlapping) occurrence of each in one pass over a text.
#[derive(Debug, Clone)]
pub(crate) struct PatternSet {
    patterns: Vec<String>,
    /// `None` when there are no patterns, or if the automaton could not be built (absurdly
    /// many of them): then the patterns are searched one by one.
    automaton: Option<AhoCorasick>,
}

impl PatternSet {
    pub(crate) fn new(patterns: Vec<String>) -> PatternSet {
        let automaton = if patterns.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()
        };
        PatternSet {
            patterns,
            automaton,
        }
    }

    /// The number of patterns.
    pub(crate) fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Every occurrence of every pattern in `text`, overlapping ones too: `(pattern index,
    /// start, end)` in bytes.
    pub(crate) fn find_all<'a>(
        &'a self,
        text: &'a str,
    ) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
        let in_one_pass = self.automaton.iter().flat_map(move |automaton| {
            automaton
                .find_overlapping_iter(text)
                .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
        });
        let one_by_one = self
            .patterns
            .iter()
            .enumerate()
            .filter(|_| self.automaton.is_none())
            .flat_map(move |(id, pattern)| {
                overlapping_indices(text, pattern)
                    .map(move |(start, p)| (id, start, start + p.len()))
            });
        in_one_pass.chain(one_by_one)
    }
}

/// All (possibly overlapping) occurrences of a non-empty `pattern`.
fn overlapping_indices<'a>(
    text: &'a str,
    pattern: &'a str,
) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let found = from + text.get(from..)?.find(pattern)?;
        let step = text[found..].chars().next().map_or(1, char::len_utf8);
        from = found + step;
        Some((found, pattern))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    fn word(w: &str) -> Term {
        Term::Word(w.to_owned())
    }

    fn tag(t: &str) -> Term {
        Term::Hashtag(t.to_owned())
    }

    #[test]
    fn terms_parse_and_normalize() {
        let cases: &[(&str, Result<Term, RuleError>)] = &[
            ("Дизайн", Ok(word("дизайн"))),
            ("  Landing   PAGE ", Ok(word("landing page"))),
            ("pуthоn", Ok(word("python"))),
            ("#Remote", Ok(tag("remote"))),
            ("#UI_UX", Ok(tag("ui_ux"))),
            ("#дизaйн", Ok(tag("дизайн"))),
            ("C++", Ok(word("c++"))),
            ("", Err(RuleError::Empty)),
            ("  \u{200B} ", Err(RuleError::Empty)),
            ("#", Err(RuleError::Empty)),
            (
                "#two words",
                Err(RuleError::BadHashtag {
                    raw: "#two words".into(),
                }),
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(&Term::parse(raw), expected, "Term::parse({raw:?})");
        }
        assert_eq!(
            Term::parse(&"a".repeat(101)),
            Err(RuleError::TooLong { chars: 101 })
        );
        assert_eq!(Term::parse(&"ж".repeat(100)), Ok(word(&"ж".repeat(100))));
    }

    #[test]
    fn display_round_trips_through_parse() {
        for raw in ["#Remote", "Landing Page", "дизайн", "c#", ".net"] {
            let term = Term::parse(raw).unwrap();
            assert_eq!(Term::parse(&term.to_string()), Ok(term));
        }
        assert_eq!(tag("remote").to_string(), "#remote");
    }

    /// Whether `term` matches anywhere in `text` (both raw, normalized here), using only
    /// `pattern` + `accepts_match` the way an external index would.
    fn term_matches(term: &Term, text: &str) -> bool {
        let text = normalize(text);
        overlapping_indices(&text, term.pattern())
            .any(|(start, p)| term.accepts_match(&text, start, start + p.len()))
    }

    #[test]
    fn word_and_hashtag_boundaries() {
        let cases: &[(&str, &str, bool)] = &[
            ("дизайн", "Ищем дизайнера в команду", true),
            ("дизайн", "веб-дизайн", true),
            ("дизайн", "#дизайн", true),
            ("дизайн", "ВЕБДИЗАЙН", false),
            ("bot", "telegram bots wanted", true),
            ("bot", "a robot", false),
            ("bot", "bot", true),
            ("bot", "(bot)", true),
            ("landing page", "Сделать Landing\n  Page", true),
            ("landing page", "landing pages", true),
            ("landing page", "landing", false),
            ("python", "Pуthоn developer", true),
            ("python", "python3", true),
            ("c++", "C++/Qt", true),
            (".net", "ASP.NET Core", true),
            ("#remote", "#Remote only", true),
            ("#remote", "#remote, #office", true),
            ("#remote", "#remotework", false),
            ("#remote", "remote", false),
            ("#remote", "not#remote", false),
            ("#remote", "##remote", true),
            ("#ui_ux", "#UI_UX", true),
            ("#ui", "#ui_ux", false),
            ("дизайн", "", false),
        ];
        for (raw, text, expected) in cases {
            let term = Term::parse(raw).unwrap();
            assert_eq!(term_matches(&term, text), *expected, "{raw:?} in {text:?}");
        }
    }

    #[test]
    fn accepts_match_rejects_bad_ranges() {
        let term = word("ж");
        assert!(term.accepts_match("ж", 0, 2));
        assert!(!term.accepts_match("ж", 1, 2));
        assert!(!term.accepts_match("ж", 0, 5));
        assert!(!term.accepts_match("ж", 2, 0));
    }

    #[track_caller]
    fn check(include: &[&str], exclude: &[&str], text: &str, expected: RuleDecision) {
        let rules = ChannelRules::parse(include, exclude).unwrap();
        let compiled = CompiledRules::new(&rules);
        assert_eq!(
            compiled.check(&normalize(text)),
            expected,
            "include {include:?}, exclude {exclude:?}, text {text:?}"
        );
    }

    fn excluded(term: &str) -> RuleDecision {
        RuleDecision::Excluded { term: term.into() }
    }

    #[test]
    fn include_and_exclude_rules() {
        use RuleDecision::{NoIncludeMatched, Pass};
        check(&[], &[], "anything at all", Pass);
        check(&[], &[], "", Pass);
        check(&["дизайн", "figma"], &[], "Нужен ДИЗАЙНЕР", Pass);
        check(
            &["дизайн", "figma"],
            &[],
            "Нужен верстальщик",
            NoIncludeMatched,
        );
        check(&["дизайн"], &[], "", NoIncludeMatched);
        check(&[], &["резюме"], "Моё резюме: дизайнер", excluded("резюме"));
        check(&[], &["резюме"], "Вакансия: дизайнер", Pass);
        // exclude wins over include, wherever it is in the text
        check(
            &["дизайн"],
            &["резюме"],
            "Дизайнер, резюме",
            excluded("резюме"),
        );
        check(
            &["дизайн"],
            &["резюме"],
            "резюме дизайнера",
            excluded("резюме"),
        );
        // hashtags
        check(&["#remote"], &[], "Работа #Remote", Pass);
        check(&["#remote"], &[], "Работа remote", NoIncludeMatched);
        check(
            &["remote"],
            &["#ищуработу"],
            "#remote #ИщуРаботу",
            excluded("#ищуработу"),
        );
        check(&[], &["#ad"], "#adobe", Pass);
        // phrases
        check(&["landing page"], &[], "Нужен landing page", Pass);
        check(&["landing page"], &[], "landing и page", NoIncludeMatched);
        // the same pattern as a word and as a hashtag, on both sides
        check(&["remote"], &["#remote"], "remote job", Pass);
        check(
            &["remote"],
            &["#remote"],
            "#remote job",
            excluded("#remote"),
        );
        // a boundary-rejected hit must not hide a later real one
        check(&["bot"], &[], "robot and bots", Pass);
        check(&[], &["bot"], "robot", Pass);
        // obfuscated spellings
        check(&[], &["казино"], "КАЗ\u{200B}ИНО бонус", excluded("казино"));
        check(&[], &["казино"], "кaзинo", excluded("казино"));
        check(&["python"], &[], "Ｐｙｔｈｏｎ", Pass);
    }

    #[test]
    fn channel_rules_report_the_bad_entry() {
        let err = ChannelRules::parse(["ok", "#"], Vec::<String>::new()).unwrap_err();
        assert_eq!(
            err,
            RuleError::InList {
                list: "include",
                position: 2,
                source: Box::new(RuleError::Empty)
            }
        );
        assert!(err.to_string().contains("include"), "{err}");
        let rules = ChannelRules::parse(["", " a "], [" "]).unwrap();
        assert_eq!(rules.include, [word("a")]);
        assert!(rules.exclude.is_empty());
    }

    proptest! {
        #[test]
        fn automaton_agrees_with_per_term_matching(
            include in proptest::collection::vec("#?[abаб]{1,3}", 0..4),
            exclude in proptest::collection::vec("#?[abаб]{1,3}", 0..4),
            text in "[abаб# _]{0,30}",
        ) {
            let rules = ChannelRules::parse(&include, &exclude).unwrap();
            let text = normalize(&text);
            let hit = |t: &Term| overlapping_indices(&text, t.pattern())
                .any(|(s, p)| t.accepts_match(&text, s, s + p.len()));
            let decision = CompiledRules::new(&rules).check(&text);
            let any_excluded = rules.exclude.iter().any(hit);
            let any_included = rules.include.is_empty() || rules.include.iter().any(hit);
            match decision {
                RuleDecision::Excluded { term } => {
                    prop_assert!(any_excluded);
                    let t = Term::parse(&term).unwrap();
                    prop_assert!(rules.exclude.contains(&t) && hit(&t));
                }
                RuleDecision::Pass => prop_assert!(!any_excluded && any_included),
                RuleDecision::NoIncludeMatched => prop_assert!(!any_excluded && !any_included),
            }
        }
    }
}
