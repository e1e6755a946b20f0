//! Feature extraction for the local model: hashed character n-grams, words, word bigrams,
//! the generic "kind of text" cues of `local/cues.rs` (money, contacts, hiring vs. offering
//! oneself, promotion, questions, length), and the per-category lexicon evidence of
//! `local/lexicon.rs`.

use serde::{Deserialize, Serialize};

use super::cues::{cue_features, extracted_cues};
use super::lexicon::{Evidence, Lexicon};

/// How text is turned into features. Stored with a trained model (prediction must extract
/// exactly the features training did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureOptions {
    /// Smallest character n-gram (within a word, with boundary marks).
    pub char_ngram_min: usize,
    /// Largest character n-gram.
    pub char_ngram_max: usize,
    /// Emit word bigrams besides word unigrams.
    pub word_bigrams: bool,
    /// Emit the hand-written cue features (money, contacts, first person, promo, ...).
    pub cues: bool,
    /// The value a present cue feature gets (the n-gram part is L2-normalized to 1).
    pub cue_weight: f32,
    /// Emit cue features from the extraction rules (budget and its basis, deadline, contact,
    /// work mode, skills; `jobwire_core::extract`), with the other cues. Absent in model
    /// files of older versions: off.
    #[serde(default)]
    pub extracted_cues: bool,
    /// The value a present topic feature gets: a `topic:<slug>` row shared by all category
    /// heads, one per category whose lexicon matched. 0 (the default) turns these rows off:
    /// each head learns other categories' topics as negative evidence, which hurts posts
    /// that mention several trades; the per-head lexicon features work better.
    pub topic_weight: f32,
    /// The lexicon of each category slug (RU + EN stems; syntax in `local/lexicon.rs`).
    /// Each category head sees dense features of its own lexicon's evidence (see
    /// `lexicon_weight`); empty turns the lexicons off.
    pub topic_words: Vec<(String, Vec<String>)>,
    /// Scale of the dense lexicon features of the category heads (0 turns them off).
    #[serde(default = "default_lexicon_weight")]
    pub lexicon_weight: f32,
    /// Only the first this many characters of a post are analyzed (bounds the cost of
    /// hostile, huge posts; vacancies are short).
    pub max_chars: usize,
}

impl Default for FeatureOptions {
    fn default() -> Self {
        Self {
            char_ngram_min: 3,
            char_ngram_max: 4,
            word_bigrams: true,
            cues: true,
            cue_weight: 3.0,
            extracted_cues: true,
            topic_weight: 0.0,
            topic_words: default_topic_words(),
            lexicon_weight: default_lexicon_weight(),
            max_chars: 4000,
        }
    }
}

fn default_lexicon_weight() -> f32 {
    6.0
}

/// Features of one text before weighting: n-gram counts, cue and topic indicators, all keyed
/// by a stable 32-bit hash (sorted by key, no duplicates), and the lexicon evidence of each
/// category (in the lexicon's order).
#[derive(Debug, Clone, Default)]
pub(crate) struct RawFeatures {
    pub terms: Vec<(u32, f32)>,
    pub cues: Vec<u32>,
    pub topics: Vec<u32>,
    pub lex: Vec<Evidence>,
}

/// FNV-1a, 32 bit, with a namespace byte: stable across Rust versions and platforms, so saved
/// models stay valid.
pub(super) fn hash(ns: u8, parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |b: u8| {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    };
    eat(ns);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            eat(0x1f);
        }
        for &b in p.as_bytes() {
            eat(b);
        }
    }
    h
}

/// [`hash`] of one part given as characters (same value as hashing the collected string).
fn hash_chars(ns: u8, chars: &[char]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    h ^= u32::from(ns);
    h = h.wrapping_mul(0x0100_0193);
    let mut utf8 = [0u8; 4];
    for c in chars {
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// One token of the normalized text.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split_whitespace() {
        if is_url(chunk) {
            out.push("<url>".to_owned());
            continue;
        }
        let mut cur = String::new();
        let mut chars = chunk.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '@'
                && chars
                    .peek()
                    .is_some_and(|n| n.is_alphanumeric() || *n == '_')
            {
                // A Telegram handle: the name itself is noise, the fact of a contact is not.
                flush(&mut cur, &mut out);
                out.push("<handle>".to_owned());
                while chars
                    .peek()
                    .is_some_and(|n| n.is_alphanumeric() || *n == '_')
                {
                    chars.next();
                }
            } else if c.is_alphanumeric() || c == '_' {
                cur.push(if c.is_numeric() { '0' } else { c });
            } else {
                flush(&mut cur, &mut out);
                if matches!(c, '$' | '€' | '₽' | '#' | '%' | '?' | '+' | '/') {
                    out.push(c.to_string());
                }
            }
        }
        flush(&mut cur, &mut out);
    }
    out
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    if !cur.is_empty() {
        // Runs of digits collapse to one shape ("0"), so prices of any size look alike.
        let mut shaped = String::with_capacity(cur.len());
        for c in cur.chars() {
            if !(c == '0' && shaped.ends_with('0')) {
                shaped.push(c);
            }
        }
        out.push(shaped);
        cur.clear();
    }
}

fn is_url(chunk: &str) -> bool {
    chunk.contains("://")
        || chunk.starts_with("www.")
        || chunk.starts_with("t.me/")
        || (chunk.contains('.')
            && chunk.contains('/')
            && chunk.chars().next().is_some_and(char::is_alphanumeric))
}

/// The word tokens of a normalized text: [`tokens`] without links, handles and punctuation.
pub(crate) fn word_tokens(normalized: &str) -> Vec<String> {
    let mut toks = tokens(normalized);
    toks.retain(|t| t.chars().next().is_some_and(char::is_alphanumeric));
    toks
}

/// The `topic:<slug>` feature key of a category.
pub(crate) fn topic_key(slug: &str) -> u32 {
    hash(b't', &[slug])
}

/// Extracts features from already-normalized text.
pub(crate) fn extract(normalized: &str, opts: &FeatureOptions, lexicon: &Lexicon) -> RawFeatures {
    let toks = tokens(normalized);
    let mut terms: Vec<u32> = Vec::with_capacity(toks.len() * 8);
    let lo = opts.char_ngram_min.max(1);
    let hi = opts.char_ngram_max.max(lo);
    let mut buf: Vec<char> = Vec::with_capacity(40);
    for (i, t) in toks.iter().enumerate() {
        terms.push(hash(b'w', &[t]));
        if opts.word_bigrams
            && let Some(next) = toks.get(i + 1)
        {
            terms.push(hash(b'b', &[t, next]));
        }
        if t.starts_with('<') || t.chars().count() == 1 || opts.char_ngram_max == 0 {
            continue;
        }
        buf.clear();
        buf.push('^');
        buf.extend(t.chars().take(24));
        buf.push('$');
        for n in lo..=hi {
            if n >= buf.len() {
                break;
            }
            for w in buf.windows(n) {
                terms.push(hash_chars(b'c', w));
            }
        }
    }
    terms.sort_unstable();
    let mut counted: Vec<(u32, f32)> = Vec::with_capacity(terms.len());
    for h in terms {
        match counted.last_mut() {
            Some((last, n)) if *last == h => *n += 1.0,
            _ => counted.push((h, 1.0)),
        }
    }
    let mut cues = if opts.cues {
        cue_features(normalized)
    } else {
        Vec::new()
    };
    if opts.extracted_cues {
        cues.extend(extracted_cues(normalized));
    }
    let words: Vec<String> = toks
        .into_iter()
        .filter(|t| t.chars().next().is_some_and(char::is_alphanumeric))
        .collect();
    let lex = lexicon.evidence(&words);
    let mut topics: Vec<u32> = lexicon
        .slugs()
        .iter()
        .zip(&lex)
        .filter(|(_, e)| e.score > 0.0)
        .map(|(slug, _)| topic_key(slug))
        .collect();
    topics.sort_unstable();
    topics.dedup();
    cues.sort_unstable();
    cues.dedup();
    RawFeatures {
        terms: counted,
        cues,
        topics,
        lex,
    }
}

/// Lexicons (RU + EN stems) of the standard taxonomy (see `data/SCHEMA.md`), written from the
/// category descriptions and common freelance vocabulary, not from particular posts. The
/// syntax is described in `local/lexicon.rs`.
pub fn default_topic_words() -> Vec<(String, Vec<String>)> {
    super::lexicon::default_lexicon()
}

/// A stable 64-bit fingerprint of a text (SHA-256 of the trimmed text, first 8 bytes).
pub(crate) fn fingerprint(text: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.trim().as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_urls_and_numbers_are_shaped() {
        let t = tokens("пишите @ivan_dev, бюджет 15000₽ https://x.ru/a");
        assert_eq!(t, ["пишите", "<handle>", "бюджет", "0", "₽", "<url>"]);
    }

    #[test]
    fn extraction_is_deterministic_and_bounded() {
        let opts = FeatureOptions::default();
        let lexicon = Lexicon::new(&opts.topic_words);
        let a = extract("need a tg bot, budget $100", &opts, &lexicon);
        let b = extract("need a tg bot, budget $100", &opts, &lexicon);
        assert_eq!(a.terms, b.terms);
        assert_eq!(a.lex, b.lex);
        assert!(!a.cues.is_empty());
        assert_eq!(a.topics, [topic_key("bots")]);
        let bots = lexicon.slugs().iter().position(|s| s == "bots");
        assert!(bots.is_some_and(|i| a.lex[i].score >= 2.0), "{:?}", a.lex);
        let huge = "ж".repeat(10_000);
        let f = extract(&huge, &opts, &lexicon);
        // One long word yields n-grams of its first 24 characters only.
        assert!(f.terms.len() < 100);
    }
}
