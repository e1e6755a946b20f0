//! Near-duplicate detection: the same vacancy posted again, in another channel, or lightly
//! rewritten is recognised as one job; different vacancies written from one template stay
//! apart.
//!
//! # What counts as the same vacancy
//!
//! Re-posts in job channels differ in everything around the job: hashtags, emoji, a
//! "Forwarded from …"/"Репост:" line, the contact line, the order of sentences, bullets
//! versus prose, and very often *length*: one channel carries the full post, another a
//! two-line summary of it ("Лендинг на Tilda для косметического бренда, 7-10 дней, 25к.
//! Пишите @anna_kosmetika"). What they keep is the *content*: the same task words, the same
//! numbers (budget, volume, deadline), the same contact. Template variants are the opposite
//! case: nearly every word is shared, and what differs is exactly the content (another
//! budget, another task noun).
//!
//! # Design
//!
//! **Features, not shingles.** A [`Fingerprint`] is the *set* of a post's content features
//! after [`normalize`]: word stems, numbers and contacts. Word n-gram or character shingles
//! were tried on paper first and rejected: a summary shares almost no 3-grams with the full
//! post (`лендинг на тильде` vs `лендинг на tilda`), while it shares most of its content
//! words. A set of features is insensitive to sentence order by construction.
//!
//! * the first line is dropped when it is a forward/re-post marker (`forwarded from …`,
//!   `переслано из …`, `репост:`);
//! * hashtags are dropped (cross-posts swap them); emoji and punctuation are separators;
//! * `@handles`, `t.me/…` links (as the same `@handle`), other URLs and `+7 …` phone numbers
//!   become *contact* features, and the words of a sentence that carries a contact are marked
//!   as contact-line words (the contact line is what re-posters rewrite most);
//! * numbers are parsed with their notation folded: `25 000 ₽`, `25к`, `25 тыс` and `25000`
//!   are one value; `1,200`/`1.2k` are 1200; a range shares its multiplier and currency
//!   (`$35-50`, `30-40к`). Numbers with a currency sign or word, or a thousands multiplier,
//!   are *money*;
//! * words are lightly stemmed (one Russian or English inflection ending cut, Cyrillic
//!   transliterated, first 5 letters kept: `монтажёра`/`монтаж`, `бот`/`bot`) and function
//!   and framing words (`ищу`, `нужен`, `бюджет`, `looking`, `dm`, `актуально`, …) skipped;
//! * each feature is a stable 29-bit FNV hash plus a 3-bit kind; a typical 400-character post
//!   has 20-50 of them (80-200 bytes as [`Fingerprint::to_bytes`]).
//!
//! **Decision** ([`compare`], [`Comparison::is_duplicate`]): two fingerprints are the same
//! vacancy when
//! 1. they share at least 5 features (or are identical with at least 3), and
//! 2. the *overlap coefficient* `|A∩B| / min(|A|,|B|)` reaches [`DedupConfig::threshold`]
//!    (0.65: a summary is contained in its full post) and the Jaccard index reaches
//!    [`DedupConfig::min_jaccard`] (0.25: a few generic words of a short post are not
//!    "contained" in a 2,000-character one), and
//! 3. **money guard**: when both name money, the amounts of one are all among the amounts
//!    of the other (another budget is another vacancy; a summary may drop an amount), and
//! 4. **substitution guard**: near-identical texts (Jaccard ≥ 0.5) that each have 1-3
//!    content features the other lacks are a template filled in twice (another task noun,
//!    another volume), not an edit. Edits of a re-post delete, add or rephrase far more;
//!    contact-line words do not count here, and
//! 5. **other-poster guard**: when both name contacts and share none, they must not differ
//!    in numbers both ways (another deadline or volume from another client's similar post;
//!    a re-post that swaps the contact line keeps the numbers).
//!
//! The dataset `data/dev.jsonl` fixes the constants' region; the tests check them on a
//! held-out half of its groups and on synthetic perturbations of its unique posts. A known
//! disagreement: a re-post that *raises the budget* (`бюджет поднят до 70к`) is a different
//! budget and is kept separate, as the issue asks ("other budget stay separate").
//!
//! **Lookup** ([`DuplicateIndex`]): MinHash/LSH banding estimates Jaccard, and summary/full
//! pairs have a Jaccard of 0.3-0.5 while same-topic strangers sit at 0.1-0.2; banding tuned
//! to find the former floods the candidate list with the latter. The index is instead an
//! inverted index from feature to the posts that have it, probed *rarest feature first*
//! (prefix filtering): a re-post shares its rare features (the contact, the specific nouns,
//! the amounts) with the original, so those short posting lists find it, and common words
//! are skipped once a budget of [`DedupConfig::max_probe_postings`] entries is spent. The
//! candidates sharing the most probed features (each weighted by its rarity) are confirmed
//! with [`compare`]. Posting lists are append-only
//! queues of sequence numbers, so eviction of old posts pops from their fronts.
//!
//! Everything here is deterministic and reads no clock: times are passed in.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::LazyLock;

use chrono::{DateTime, Duration, Utc};
use unicode_normalization::char::is_combining_mark;

use crate::normalize::{is_hashtag_char, normalize};

/// Minimum features two different fingerprints must share to be duplicates.
const MIN_SHARED: usize = 5;
/// Minimum size of two identical fingerprints to be duplicates.
const MIN_IDENTICAL: usize = 3;
/// Jaccard index from which two texts count as near-identical for the substitution guard.
const SUBSTITUTION_MIN_JACCARD: f32 = 0.5;
/// Largest number of content features per side that the substitution guard treats as a
/// template filled in differently.
const SUBSTITUTION_MAX_DIFF: usize = 3;
/// How many best-sharing candidates [`DuplicateIndex::find`] confirms with [`compare`].
const MAX_VERIFY: usize = 24;
/// Version byte of [`Fingerprint::to_bytes`].
const FINGERPRINT_VERSION: u8 = 1;

/// Settings of near-duplicate detection.
#[derive(Debug, Clone, PartialEq)]
pub struct DedupConfig {
    /// How far apart two posts may be and still be one vacancy (default 7 days).
    pub window: Duration,
    /// Minimum overlap coefficient `|A∩B| / min(|A|,|B|)` of the feature sets (default 0.65).
    pub threshold: f32,
    /// Minimum Jaccard index `|A∩B| / |A∪B|` of the feature sets (default 0.25).
    pub min_jaccard: f32,
    /// How many posting-list entries one [`DuplicateIndex::find`] reads at most, rarest
    /// features first (default 1024). Bounds the lookup time in a large window.
    pub max_probe_postings: usize,
}

impl Default for DedupConfig {
    fn default() -> Self {
        Self {
            window: Duration::days(7),
            threshold: 0.65,
            min_jaccard: 0.25,
            max_probe_postings: 1024,
        }
    }
}

/// What a feature of a [`Fingerprint`] stands for (the low 3 bits of each stored value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum FeatureKind {
    /// A word stem from the body of the post.
    Word = 0,
    /// A word stem that only occurs in sentences carrying a contact.
    ContactLineWord = 1,
    /// A number without a currency.
    Number = 2,
    /// An amount of money (currency sign or word, or a `к`/`k`/`тыс` multiplier).
    Money = 3,
    /// An `@handle`, a link or a phone number.
    Contact = 4,
}

impl FeatureKind {
    fn from_bits(bits: u32) -> Option<Self> {
        Some(match bits {
            0 => Self::Word,
            1 => Self::ContactLineWord,
            2 => Self::Number,
            3 => Self::Money,
            4 => Self::Contact,
            _ => return None,
        })
    }

    /// Which kind wins when one feature hash was seen as two kinds in one post.
    fn rank(self) -> u8 {
        match self {
            Self::ContactLineWord | Self::Number => 0,
            Self::Word | Self::Money | Self::Contact => 1,
        }
    }
}

/// The content features of one post; see the [module documentation](self).
///
/// Compact (4 bytes per feature) and stable across runs and machines, so it can be stored
/// with the post ([`Fingerprint::to_bytes`], [`Fingerprint::to_hex`]) and an index rebuilt
/// from the database after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Fingerprint {
    /// `hash << 3 | kind`, sorted, one entry per hash.
    features: Vec<u32>,
}

/// A stored fingerprint that cannot be read back.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FingerprintError {
    /// Empty input, or not 1 + 4·n bytes.
    #[error("fingerprint has a bad length ({0} bytes)")]
    Length(usize),
    /// The version byte is not one this build writes.
    #[error("fingerprint version {0} is not supported")]
    Version(u8),
    /// Features out of order, repeated, or of an unknown kind.
    #[error("fingerprint is corrupt at feature {0}")]
    Corrupt(usize),
    /// The hex text is not hex.
    #[error("fingerprint is not valid hex: {0}")]
    Hex(#[from] hex::FromHexError),
}

impl Fingerprint {
    /// Number of features.
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// Whether the post had no content features at all (only emoji, hashtags, a contact…).
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// The features as `(hash, kind)` pairs, sorted by hash.
    pub fn features(&self) -> impl Iterator<Item = (u32, FeatureKind)> + '_ {
        self.features.iter().map(|&v| {
            (
                v >> 3,
                FeatureKind::from_bits(v & 7).unwrap_or(FeatureKind::Word),
            )
        })
    }

    /// Serializes to bytes: a version byte, then each feature as a little-endian `u32`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + 4 * self.features.len());
        out.push(FINGERPRINT_VERSION);
        for v in &self.features {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Reads what [`Fingerprint::to_bytes`] wrote, checking it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FingerprintError> {
        let (&version, rest) = bytes.split_first().ok_or(FingerprintError::Length(0))?;
        if version != FINGERPRINT_VERSION {
            return Err(FingerprintError::Version(version));
        }
        if rest.len() % 4 != 0 {
            return Err(FingerprintError::Length(bytes.len()));
        }
        let features: Vec<u32> = rest
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (i, &v) in features.iter().enumerate() {
            let ordered = i == 0 || features[i - 1] >> 3 < v >> 3;
            if !ordered || FeatureKind::from_bits(v & 7).is_none() {
                return Err(FingerprintError::Corrupt(i));
            }
        }
        Ok(Self { features })
    }

    /// [`Fingerprint::to_bytes`] as lowercase hex.
    pub fn to_hex(&self) -> String {
        hex::encode(self.to_bytes())
    }

    /// Reads what [`Fingerprint::to_hex`] wrote.
    pub fn from_hex(text: &str) -> Result<Self, FingerprintError> {
        Self::from_bytes(&hex::decode(text.trim())?)
    }

    fn from_raw(mut raw: Vec<(u32, FeatureKind)>) -> Self {
        raw.sort_unstable_by_key(|&(h, k)| (h, Reverse(k.rank())));
        raw.dedup_by_key(|&mut (h, _)| h);
        Self {
            features: raw.into_iter().map(|(h, k)| h << 3 | k as u32).collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Feature extraction
// ---------------------------------------------------------------------------------------

/// Computes the fingerprint of a post's text (as posted; it is [normalized](normalize) here).
pub fn fingerprint(text: &str) -> Fingerprint {
    let mut raw = Vec::new();
    let mut first = true;
    for line in text.lines() {
        let line = normalize(line);
        if line.is_empty() {
            continue;
        }
        let body = if std::mem::take(&mut first) {
            strip_forward_marker(&line)
        } else {
            &line
        };
        for sentence in sentences(body) {
            extract(sentence, &mut raw);
        }
    }
    Fingerprint::from_raw(raw)
}

/// Markers of a forwarded or re-posted message, as the first line starts (normalized).
const FORWARD_MARKERS: [&str; 9] = [
    "forwarded from",
    "forwarded message",
    "переслано от",
    "переслано из",
    "пересланное сообщение",
    "репост",
    "repost",
    "fwd",
    "fw:",
];

/// Drops a forward marker line (`forwarded from x`), or the marker before a `:` on it
/// (`репост: нужен лендинг` keeps `нужен лендинг`).
fn strip_forward_marker(line: &str) -> &str {
    for marker in FORWARD_MARKERS {
        if let Some(rest) = line.strip_prefix(marker)
            && !rest.chars().next().is_some_and(char::is_alphanumeric)
        {
            return rest.split_once(':').map_or("", |(_, after)| after);
        }
    }
    line
}

/// Splits a normalized line at `.`, `!`, `?`, `;` and `…` followed by a space.
fn sentences(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut prev_end = false;
        for (i, c) in rest.char_indices() {
            if c == ' ' && prev_end {
                let (head, tail) = rest.split_at(i);
                rest = &tail[1..];
                return Some(head);
            }
            prev_end = matches!(c, '.' | '!' | '?' | ';' | '…');
        }
        Some(std::mem::take(&mut rest))
    })
}

/// One number found in a sentence.
#[derive(Debug, Clone, Copy)]
struct Num {
    /// Value in thousandths.
    milli: u64,
    money: bool,
    /// A multiplier (`к`, `тыс`, `млн`) was written on it.
    multiplied: bool,
    /// Char index just past the number and its suffixes.
    end: usize,
}

/// Appends the features of one normalized sentence.
fn extract(sentence: &str, out: &mut Vec<(u32, FeatureKind)>) {
    let cs: Vec<char> = sentence.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut nums: Vec<Num> = Vec::new();
    let mut contact = false;
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        let prev = i.checked_sub(1).map(|p| cs[p]);
        let at_boundary = !prev.is_some_and(|p| p.is_alphanumeric() || p == '_');
        if c == '#' && !prev.is_some_and(is_hashtag_char) {
            i += 1;
            while i < cs.len() && is_hashtag_char(cs[i]) {
                i += 1;
            }
            continue;
        }
        if c == '@' && cs.get(i + 1).is_some_and(|&n| is_handle_char(n)) {
            let start = i + 1;
            i = start;
            while i < cs.len() && is_handle_char(cs[i]) {
                i += 1;
            }
            let handle: String = cs[start..i].iter().collect();
            out.push((feature_hash(b'c', &handle), FeatureKind::Contact));
            contact = true;
            continue;
        }
        if at_boundary && let Some((end, value)) = url_at(&cs, i) {
            out.push((feature_hash(b'c', &value), FeatureKind::Contact));
            contact = true;
            i = end;
            continue;
        }
        if c == '+'
            && cs.get(i + 1).is_some_and(char::is_ascii_digit)
            && let Some((end, digits)) = phone_at(&cs, i + 1)
        {
            out.push((feature_hash(b'c', &digits), FeatureKind::Contact));
            contact = true;
            i = end;
            continue;
        }
        if c.is_ascii_digit() && at_boundary {
            let num = number_at(&cs, i);
            if let Some(last) = nums.last_mut()
                && is_range(&cs, last.end, i)
            {
                if num.multiplied && !last.multiplied {
                    let scaled = last.milli.saturating_mul(multiplier_of(&cs, i, num.end));
                    if scaled <= num.milli {
                        last.milli = scaled;
                        last.multiplied = true;
                    }
                }
                let money = last.money || num.money;
                last.money = money;
                nums.push(Num { money, ..num });
            } else {
                nums.push(num);
            }
            i = num.end.max(i + 1);
            continue;
        }
        if c.is_alphanumeric() {
            let end = word_end(&cs, i);
            let word: String = cs[i..end].iter().collect();
            if word.contains('-') {
                // `лид-формы` is also written `лидформы`; `моушн-дизайнер` must keep `дизайнер`.
                words.extend(word.split('-').map(str::to_owned));
                words.push(word.replace('-', ""));
            } else {
                words.push(word);
            }
            i = end;
            continue;
        }
        i += 1;
    }
    for n in nums {
        let kind = if n.money {
            FeatureKind::Money
        } else {
            FeatureKind::Number
        };
        out.push((feature_hash(b'n', &n.milli.to_string()), kind));
    }
    let kind = if contact {
        FeatureKind::ContactLineWord
    } else {
        FeatureKind::Word
    };
    for w in words {
        if let Some(stem) = stem(&w) {
            out.push((feature_hash(b'w', &stem), kind));
        }
    }
}

fn is_handle_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A URL starting at `i`: `(end, contact value)`. `t.me/name` is the contact `name`, like
/// `@name`; other URLs are kept without scheme and `www.`.
fn url_at(cs: &[char], i: usize) -> Option<(usize, String)> {
    let end = cs[i..]
        .iter()
        .position(|c| c.is_whitespace())
        .map_or(cs.len(), |p| i + p);
    let token: String = cs[i..end].iter().collect();
    let token = token.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '/');
    let bare = token
        .strip_prefix("https://")
        .or_else(|| token.strip_prefix("http://"))
        .unwrap_or(token);
    let bare = bare.strip_prefix("www.").unwrap_or(bare);
    let explicit = token.len() != bare.len();
    let (host, path) = bare.split_once('/').unwrap_or((bare, ""));
    let dotted_host = host.contains('.')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && host
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()));
    if !dotted_host || (!explicit && path.is_empty()) {
        return None;
    }
    let consumed = i + cs[i..end].len().min(token.chars().count());
    if matches!(host, "t.me" | "telegram.me") {
        let name: String = path.chars().take_while(|&c| is_handle_char(c)).collect();
        if !name.is_empty() {
            return Some((consumed.max(i + 1), name));
        }
    }
    Some((consumed.max(i + 1), bare.trim_end_matches('/').to_owned()))
}

/// A phone number whose digits start at `i` (after a `+`): digits, `*` masks, spaces,
/// dashes and parentheses, at least 7 digits or masks. Returns `(end, digits)`.
fn phone_at(cs: &[char], i: usize) -> Option<(usize, String)> {
    let mut end = i;
    let mut digits = String::new();
    while end < cs.len() && matches!(cs[end], '0'..='9' | '*' | ' ' | '-' | '(' | ')') {
        if cs[end] != ' ' && cs[end] != '-' && cs[end] != '(' && cs[end] != ')' {
            digits.push(cs[end]);
        }
        end += 1;
    }
    (digits.len() >= 7).then_some((end, digits))
}

/// Whether the chars between a number ending at `prev_end` and one starting at `start` are
/// a range dash (with optional spaces).
fn is_range(cs: &[char], prev_end: usize, start: usize) -> bool {
    if prev_end > start {
        return false;
    }
    let between: String = cs[prev_end..start].iter().filter(|&&c| c != ' ').collect();
    matches!(between.as_str(), "-" | "–" | "—")
}

/// The multiplier written after the digits of a number spanning `start..end` (1 if none).
fn multiplier_of(cs: &[char], start: usize, end: usize) -> u64 {
    let text: String = cs[start..end].iter().collect();
    if text.contains("млн") || text.contains("кк") || text.contains("kk") {
        1_000_000
    } else {
        1_000
    }
}

const MULTIPLIERS_ATTACHED: [&str; 6] = ["к", "k", "т", "тыс", "тысяч", "тысячи"];
const MILLIONS: [&str; 3] = ["млн", "кк", "kk"];
const CURRENCY_WORDS: [&str; 17] = [
    "р",
    "руб",
    "рубль",
    "рублей",
    "рубля",
    "rub",
    "usd",
    "usdt",
    "eur",
    "евро",
    "грн",
    "тг",
    "долл",
    "долларов",
    "dollars",
    "бакс",
    "баксов",
];

/// Parses the number starting at `i` with its notation: digit groups (`25 000`, `1,200`),
/// a decimal part, a multiplier and a currency before or after it.
fn number_at(cs: &[char], i: usize) -> Num {
    let digits_at = |j: usize| {
        let mut k = j;
        while k < cs.len() && cs[k].is_ascii_digit() {
            k += 1;
        }
        k
    };
    let mut end = digits_at(i);
    let mut int: String = cs[i..end].iter().collect();
    let mut frac = String::new();
    // Thousands groups separated by a space, only after a 1-3 digit head: `25 000`.
    if int.len() <= 3 {
        while end < cs.len() && cs[end] == ' ' {
            let group_end = digits_at(end + 1);
            if group_end - (end + 1) != 3 {
                break;
            }
            int.extend(&cs[end + 1..group_end]);
            end = group_end;
        }
    }
    // `1,200` / `1.200` (thousands) or `0.05` / `1,5` (decimal).
    if end + 1 < cs.len() && matches!(cs[end], '.' | ',') && cs[end + 1].is_ascii_digit() {
        let group_end = digits_at(end + 1);
        let group: String = cs[end + 1..group_end].iter().collect();
        if group.len() == 3 && int.len() <= 3 {
            int.push_str(&group);
            end = group_end;
            while end + 1 < cs.len() && cs[end] == cs[end - 4] && cs[end + 1].is_ascii_digit() {
                let next_end = digits_at(end + 1);
                if next_end - (end + 1) != 3 {
                    break;
                }
                int.extend(&cs[end + 1..next_end]);
                end = next_end;
            }
        } else {
            frac = group;
            end = group_end;
        }
    }
    let int_value: u64 = int
        .get(int.len().saturating_sub(15)..)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let frac_milli: u64 = {
        let mut f: String = frac.chars().take(3).collect();
        while f.len() < 3 {
            f.push('0');
        }
        f.parse().unwrap_or(0)
    };
    let mut milli = int_value.saturating_mul(1000).saturating_add(frac_milli);
    let mut money = false;
    let mut multiplied = false;

    // Currency sign just before: `$35`, `€ 20`.
    let mut b = i;
    if b > 0 && cs[b - 1] == ' ' {
        b -= 1;
    }
    if b > 0 && matches!(cs[b - 1], '$' | '€' | '£' | '₽' | '¥') {
        money = true;
    }

    // Suffixes: letters attached or after one space, then maybe a currency.
    let letters_at = |j: usize| {
        let mut k = j;
        while k < cs.len() && cs[k].is_alphabetic() {
            k += 1;
        }
        k
    };
    let mut pos = end;
    for _ in 0..2 {
        let spaced = pos < cs.len() && cs[pos] == ' ';
        let start = if spaced { pos + 1 } else { pos };
        if start < cs.len() && matches!(cs[start], '$' | '€' | '£' | '₽' | '¥') {
            money = true;
            pos = start + 1;
            continue;
        }
        let word_end = letters_at(start);
        if word_end == start {
            break;
        }
        let word: String = cs[start..word_end].iter().collect();
        let word = word.as_str();
        if !multiplied && MILLIONS.contains(&word) {
            milli = milli.saturating_mul(1_000_000);
            multiplied = true;
            money = true;
            pos = word_end;
        } else if !multiplied
            && (MULTIPLIERS_ATTACHED.contains(&word) && !spaced
                || spaced && word.starts_with("тыс"))
        {
            milli = milli.saturating_mul(1000);
            multiplied = true;
            money = true;
            pos = word_end;
        } else if CURRENCY_WORDS.contains(&word) {
            money = true;
            pos = word_end;
            break;
        } else if !spaced {
            // A unit glued to the number (`48ч`, `20h`, `9am`): not a word of its own.
            pos = word_end;
            break;
        } else {
            break;
        }
        // A `.` after an abbreviation (`тыс.`, `т.р.`).
        if pos < cs.len() && cs[pos] == '.' {
            pos += 1;
            if pos + 1 < cs.len() && cs[pos] == 'р' && cs[pos + 1] == '.' {
                money = true;
                pos += 2;
            }
        }
    }
    Num {
        milli,
        money,
        multiplied,
        end: pos,
    }
}

/// End of the word starting at `i`: letters, digits and combining marks, with inner hyphens
/// between letters of one script (`лид-формы`), but not across scripts (`php-разработчик`).
/// A hyphenated word yields its parts and the joined form.
fn word_end(cs: &[char], i: usize) -> usize {
    let mut k = i;
    while k < cs.len() {
        let c = cs[k];
        if c.is_alphanumeric() || is_combining_mark(c) {
            k += 1;
            continue;
        }
        if c == '-'
            && k > i
            && let Some(&next) = cs.get(k + 1)
            && next.is_alphabetic()
            && cs[k - 1].is_alphabetic()
            && is_cyrillic(next) == is_cyrillic(cs[k - 1])
        {
            k += 1;
            continue;
        }
        break;
    }
    k
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{0400}'..='\u{052F}')
}

/// Function words and the framing every job post uses; they say nothing about which job.
const STOP_WORDS: &str = "
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее
мне было вот от меня еще нет о из ему когда даже ну ли если уже или ни быть был него до вас
там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтобы
без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой здесь этом
один мой тем нее сейчас были куда можно при об хоть после над больше тот через эти нас про
всего них какая много эту моя свою этой перед лучше чуть том такой им более всегда между
наш наша наше наши ваш ваша ваше ваши весь вся всё это эта также либо очень еще ещё сюда
ищу ищем ищется нужен нужна нужно нужны нужен требуется требуются бюджет оплата оплачу
пишите писать пиши напишите пишем лс лички личку личные актуально актуальна актуален срочно
вакансия вакансии заказ задача задачи репост ссылка ссылке контакт контакты связь отклик
отклики откликаться кидайте присылайте присылать прошу подробности детали ответ
the a an and or of to in on for with by at from as is are be we you our your us it its this
that these those will can i me my who what which per via into up out not no if any all also
some more than then so do does have has had need needed needs looking wanted hiring hire
hires seeking must please dm pm send apply write contact contacts budget pay paid rate
still urgent repost details asap am pm just get got let one two etc our ours their them
";

static STOP_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.split_whitespace().collect());

/// Russian inflection endings, longest first.
const RU_ENDINGS: [&str; 47] = [
    "ться", "ами", "ями", "ого", "его", "ому", "ему", "ыми", "ими", "ать", "ять", "ить", "ешь",
    "ала", "ила", "али", "или", "ой", "ей", "ом", "ем", "ам", "ям", "ах", "ях", "ов", "ев", "ая",
    "яя", "ое", "ее", "ые", "ие", "ый", "ий", "ую", "юю", "ою", "ею", "ым", "им", "ых", "их", "ть",
    "ет", "ит", "ут",
];
const RU_SHORT_ENDINGS: [char; 10] = ['а', 'я', 'о', 'е', 'ы', 'и', 'у', 'ю', 'ь', 'й'];
const EN_ENDINGS: [&str; 7] = ["ings", "ing", "ers", "er", "ed", "es", "s"];
/// Letters a stem keeps.
const STEM_LEN: usize = 5;

/// The stem of a word, or `None` for a stop word or a one-letter word.
fn stem(word: &str) -> Option<String> {
    let len = word.chars().count();
    if len < 2 || STOP_SET.contains(word) {
        return None;
    }
    if word.chars().any(|c| c.is_ascii_digit()) {
        return Some(word.chars().take(8).collect());
    }
    let cyrillic = word.chars().filter(|&c| is_cyrillic(c)).count();
    let base: &str = if cyrillic * 2 > len {
        let long = RU_ENDINGS
            .iter()
            .find(|e| word.ends_with(*e) && len - e.chars().count() >= 3);
        match long {
            Some(e) => &word[..word.len() - e.len()],
            None => match word.chars().next_back() {
                Some(last) if RU_SHORT_ENDINGS.contains(&last) && len > 3 => {
                    &word[..word.len() - last.len_utf8()]
                }
                _ => word,
            },
        }
    } else {
        EN_ENDINGS
            .iter()
            .find(|e| word.ends_with(*e) && len - e.len() >= 3)
            .map_or(word, |e| &word[..word.len() - e.len()])
    };
    let mut out = String::with_capacity(STEM_LEN + 2);
    for c in base.chars() {
        match transliterate(c) {
            Some(latin) => out.push_str(latin),
            None => out.push(c),
        }
        if out.chars().count() >= STEM_LEN {
            break;
        }
    }
    Some(out.chars().take(STEM_LEN).collect())
}

/// Latin spelling of a Cyrillic letter (`None` for anything else).
fn transliterate(c: char) -> Option<&'static str> {
    Some(match c {
        'а' => "a",
        'б' => "b",
        'в' => "v",
        'г' | 'ґ' => "g",
        'д' => "d",
        'е' | 'э' | 'є' => "e",
        'ж' => "zh",
        'з' => "z",
        'и' | 'й' | 'і' | 'ї' => "i",
        'к' => "k",
        'л' => "l",
        'м' => "m",
        'н' => "n",
        'о' => "o",
        'п' => "p",
        'р' => "r",
        'с' => "s",
        'т' => "t",
        'у' => "u",
        'ф' => "f",
        'х' => "h",
        'ц' => "c",
        'ч' => "ch",
        'ш' => "sh",
        'щ' => "sch",
        'ъ' | 'ь' => "",
        'ы' => "y",
        'ю' => "yu",
        'я' => "ya",
        _ => return None,
    })
}

/// Stable 29-bit hash of a feature (FNV-1a 64, folded). Part of the stored format.
fn feature_hash(tag: u8, text: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in std::iter::once(&tag).chain(text.as_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    ((h >> 32) as u32 ^ h as u32) >> 3
}

// ---------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------

/// How two fingerprints relate; [`Comparison::is_duplicate`] turns it into a decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Features both have.
    pub shared: usize,
    /// Feature counts of the two sides.
    pub sizes: (usize, usize),
    /// `shared / min(sizes)`.
    pub overlap: f32,
    /// `shared / |A ∪ B|`.
    pub jaccard: f32,
    /// Both name money and neither side's amounts are all among the other's amounts.
    pub money_conflict: bool,
    /// Content features (body words and numbers) only the first / only the second has.
    pub content_only: (usize, usize),
    /// Numbers (amounts or not) only the first / only the second has.
    pub numbers_only: (usize, usize),
    /// Contacts of the first / of the second / of both.
    pub contacts: (usize, usize, usize),
}

impl Comparison {
    /// Whether the two posts are the same vacancy (see the [module documentation](self)).
    pub fn is_duplicate(&self, config: &DedupConfig) -> bool {
        let (a, b) = self.sizes;
        if a == 0 || b == 0 {
            return false;
        }
        if self.shared == a && self.shared == b {
            return self.shared >= MIN_IDENTICAL;
        }
        if self.shared < MIN_SHARED
            || self.overlap < config.threshold
            || self.jaccard < config.min_jaccard
            || self.money_conflict
        {
            return false;
        }
        !self.is_substitution() && !self.is_other_poster_other_numbers()
    }

    /// Both name a contact, none is shared, and each has numbers the other lacks (another
    /// deadline, volume or rate): another poster's vacancy from a similar template. A
    /// re-post that swaps the contact keeps the numbers.
    pub fn is_other_poster_other_numbers(&self) -> bool {
        let (a, b, both) = self.contacts;
        a > 0 && b > 0 && both == 0 && self.numbers_only.0 > 0 && self.numbers_only.1 > 0
    }

    /// Near-identical texts that each have a few content features of their own: one
    /// template filled in with another task or number.
    pub fn is_substitution(&self) -> bool {
        let (x, y) = self.content_only;
        x >= 1
            && y >= 1
            && x.max(y) <= SUBSTITUTION_MAX_DIFF
            && self.jaccard >= SUBSTITUTION_MIN_JACCARD
    }

    /// A ranking score among duplicates (higher is closer).
    pub fn score(&self) -> f32 {
        self.overlap + self.jaccard
    }
}

/// Compares two fingerprints feature by feature (a linear merge).
pub fn compare(a: &Fingerprint, b: &Fingerprint) -> Comparison {
    compare_features(&a.features, &b.features)
}

fn compare_features(fa: &[u32], fb: &[u32]) -> Comparison {
    let (mut i, mut j) = (0, 0);
    let mut shared = 0;
    let (mut money_a, mut money_b, mut money_a_missing, mut money_b_missing) = (0, 0, 0, 0);
    let (mut only_a, mut only_b) = (0, 0);
    let is_content = |v: u32| {
        matches!(
            FeatureKind::from_bits(v & 7),
            Some(FeatureKind::Word | FeatureKind::Number | FeatureKind::Money)
        )
    };
    let is_money = |v: u32| v & 7 == FeatureKind::Money as u32;
    let is_number = |v: u32| matches!(v & 7, 2 | 3);
    let is_contact = |v: u32| v & 7 == FeatureKind::Contact as u32;
    let (mut numbers_a, mut numbers_b) = (0, 0);
    let (mut contacts_a, mut contacts_b, mut contacts_both) = (0, 0, 0);
    while i < fa.len() || j < fb.len() {
        let ha = fa.get(i).map(|v| v >> 3);
        let hb = fb.get(j).map(|v| v >> 3);
        match (ha, hb) {
            (Some(x), Some(y)) if x == y => {
                shared += 1;
                let (ma, mb) = (is_money(fa[i]), is_money(fb[j]));
                money_a += usize::from(ma);
                money_b += usize::from(mb);
                // An amount of money matches only an amount of money: `$7/h` is not `7am`.
                money_a_missing += usize::from(ma && !mb);
                money_b_missing += usize::from(mb && !ma);
                let (ca, cb) = (is_contact(fa[i]), is_contact(fb[j]));
                contacts_a += usize::from(ca);
                contacts_b += usize::from(cb);
                contacts_both += usize::from(ca && cb);
                i += 1;
                j += 1;
            }
            (Some(x), y) if y.is_none_or(|y| x < y) => {
                let v = fa[i];
                money_a += usize::from(is_money(v));
                money_a_missing += usize::from(is_money(v));
                only_a += usize::from(is_content(v));
                numbers_a += usize::from(is_number(v));
                contacts_a += usize::from(is_contact(v));
                i += 1;
            }
            _ => {
                let v = fb[j];
                money_b += usize::from(is_money(v));
                money_b_missing += usize::from(is_money(v));
                only_b += usize::from(is_content(v));
                numbers_b += usize::from(is_number(v));
                contacts_b += usize::from(is_contact(v));
                j += 1;
            }
        }
    }
    let smaller = fa.len().min(fb.len());
    let union = fa.len() + fb.len() - shared;
    Comparison {
        shared,
        sizes: (fa.len(), fb.len()),
        overlap: if smaller == 0 {
            0.0
        } else {
            shared as f32 / smaller as f32
        },
        jaccard: if union == 0 {
            0.0
        } else {
            shared as f32 / union as f32
        },
        money_conflict: money_a > 0 && money_b > 0 && money_a_missing > 0 && money_b_missing > 0,
        content_only: (only_a, only_b),
        numbers_only: (numbers_a, numbers_b),
        contacts: (contacts_a, contacts_b, contacts_both),
    }
}

// ---------------------------------------------------------------------------------------
// Index
// ---------------------------------------------------------------------------------------

/// A hasher for keys that already are hashes (feature hashes, slot numbers).
#[derive(Debug, Default, Clone, Copy)]
struct PremixedHasher(u64);

impl Hasher for PremixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<PremixedHasher>>;

/// One indexed post.
#[derive(Debug, Clone)]
struct Entry {
    post_id: i64,
    at: DateTime<Utc>,
    features: Box<[u32]>,
}

/// An in-memory index of recent posts' fingerprints that finds the earlier post a new one
/// duplicates. See the [module documentation](self) for how lookups work.
///
/// Posts are numbered by insertion (`seq`); each posting list holds the low 32 bits of the
/// sequence numbers of the posts with that feature, oldest first. Call
/// [`DuplicateIndex::evict_older_than`] regularly (say, every minute with `now - window`) to
/// keep memory bounded by the window; [`DuplicateIndex::find`] ignores posts outside the
/// window either way.
#[derive(Debug, Clone)]
pub struct DuplicateIndex {
    config: DedupConfig,
    /// `entries[k]` has sequence number `base + k`; evicted ones are `None` until the front
    /// catches up.
    entries: VecDeque<Option<Entry>>,
    base: u64,
    live: usize,
    /// Feature hash → sequence numbers (low 32 bits) of the posts that have it, ascending.
    postings: FastMap<u32, VecDeque<u32>>,
    /// Eviction order: `(posted at, seq)`, oldest on top.
    by_time: BinaryHeap<Reverse<(DateTime<Utc>, u64)>>,
}

impl DuplicateIndex {
    /// An empty index.
    pub fn new(config: DedupConfig) -> Self {
        Self {
            config,
            entries: VecDeque::new(),
            base: 0,
            live: 0,
            postings: FastMap::default(),
            by_time: BinaryHeap::new(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &DedupConfig {
        &self.config
    }

    /// The id of the earlier post that `fp` (posted at `at`) duplicates, if one within the
    /// window (`|at - its time| <= window`) is indexed; the closest one when several are.
    pub fn find(&self, fp: &Fingerprint, at: DateTime<Utc>) -> Option<i64> {
        if fp.is_empty() || self.live == 0 {
            return None;
        }
        let lo = at
            .checked_sub_signed(self.config.window)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let hi = at
            .checked_add_signed(self.config.window)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);

        let mut lists: Vec<&VecDeque<u32>> = fp
            .features
            .iter()
            .filter_map(|v| self.postings.get(&(v >> 3)))
            .collect();
        lists.sort_unstable_by_key(|l| l.len());
        let mut counts: FastMap<u32, u32> = FastMap::default();
        counts.reserve(256);
        let mut budget = self.config.max_probe_postings.max(1);
        for list in lists {
            if budget == 0 {
                break;
            }
            let take = list.len().min(budget);
            budget -= take;
            // A shared rare feature (a contact, a specific noun) says more than a common one.
            let weight = (1u32 << 16) / u32::try_from(list.len()).unwrap_or(u32::MAX).max(1) + 1;
            for &seq in list.iter().rev().take(take) {
                *counts.entry(seq).or_insert(0) += weight;
            }
        }
        let mut candidates: Vec<(u32, u32)> = counts.into_iter().collect();
        // Most (rarity-weighted) shared probed features first; newest first among equals.
        candidates.sort_unstable_by_key(|&(seq, n)| (Reverse(n), Reverse(self.age_rank(seq))));
        let mut best: Option<(f32, i64)> = None;
        for &(seq, _) in candidates.iter().take(MAX_VERIFY) {
            let Some(entry) = self.entry(seq) else {
                continue;
            };
            if entry.at < lo || entry.at > hi {
                continue;
            }
            let cmp = compare_features(&fp.features, &entry.features);
            if cmp.is_duplicate(&self.config) && best.is_none_or(|(s, _)| cmp.score() > s) {
                best = Some((cmp.score(), entry.post_id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// Adds a post. Posts with an empty fingerprint are not indexed (nothing can match them).
    pub fn insert(&mut self, post_id: i64, at: DateTime<Utc>, fp: Fingerprint) {
        if fp.is_empty() {
            return;
        }
        let seq = self.base + self.entries.len() as u64;
        for v in &fp.features {
            self.postings
                .entry(v >> 3)
                .or_default()
                .push_back(seq as u32);
        }
        self.entries.push_back(Some(Entry {
            post_id,
            at,
            features: fp.features.into_boxed_slice(),
        }));
        self.by_time.push(Reverse((at, seq)));
        self.live += 1;
    }

    /// Removes every post older than `cutoff`.
    pub fn evict_older_than(&mut self, cutoff: DateTime<Utc>) {
        let mut touched: Vec<u32> = Vec::new();
        while let Some(&Reverse((at, seq))) = self.by_time.peek() {
            if at >= cutoff {
                break;
            }
            self.by_time.pop();
            let Some(slot) = seq
                .checked_sub(self.base)
                .and_then(|k| self.entries.get_mut(k as usize))
            else {
                continue;
            };
            if let Some(entry) = slot.take() {
                touched.extend(entry.features.iter().map(|v| v >> 3));
                self.live -= 1;
            }
        }
        while let Some(None) = self.entries.front() {
            self.entries.pop_front();
            self.base += 1;
        }
        touched.sort_unstable();
        touched.dedup();
        for hash in touched {
            let Some(list) = self.postings.get_mut(&hash) else {
                continue;
            };
            while let Some(&seq) = list.front() {
                if is_live(&self.entries, self.base, seq) {
                    break;
                }
                list.pop_front();
            }
            if list.is_empty() {
                self.postings.remove(&hash);
            }
        }
        if self.entries.is_empty() {
            self.entries.shrink_to(1024);
        }
    }

    /// Number of indexed posts.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no post is indexed.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Heap memory held by the index, approximately (allocations, not allocator overhead).
    pub fn approx_memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let entries = self.entries.capacity() * size_of::<Option<Entry>>()
            + self
                .entries
                .iter()
                .flatten()
                .map(|e| e.features.len() * size_of::<u32>())
                .sum::<usize>();
        // hashbrown: one control byte per bucket plus the (key, value) pair.
        let postings = self.postings.capacity() * (size_of::<(u32, VecDeque<u32>)>() + 1)
            + self
                .postings
                .values()
                .map(|l| l.capacity() * size_of::<u32>())
                .sum::<usize>();
        let heap = self.by_time.capacity() * size_of::<Reverse<(DateTime<Utc>, u64)>>();
        size_of::<Self>() + entries + postings + heap
    }

    fn entry(&self, seq: u32) -> Option<&Entry> {
        let k = seq.wrapping_sub(self.base as u32) as usize;
        self.entries.get(k)?.as_ref()
    }

    /// Position of `seq` from the oldest live entry (larger is newer).
    fn age_rank(&self, seq: u32) -> u32 {
        seq.wrapping_sub(self.base as u32)
    }
}

fn is_live(entries: &VecDeque<Option<Entry>>, base: u64, seq: u32) -> bool {
    let k = seq.wrapping_sub(base as u32) as usize;
    entries.get(k).is_some_and(Option::is_some)
}

// ---------------------------------------------------------------------------------------
// Evaluation helpers
// ---------------------------------------------------------------------------------------

/// Pairwise quality of a duplicate clustering against labeled groups.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairwiseScores {
    /// Predicted duplicate pairs that are true pairs / predicted pairs (1.0 when none).
    pub precision: f64,
    /// True pairs that were predicted / true pairs (1.0 when none).
    pub recall: f64,
    /// Pairs of posts sharing a label.
    pub true_pairs: usize,
    /// Pairs of posts in one predicted cluster.
    pub predicted_pairs: usize,
    /// Pairs both labeled and predicted.
    pub correct_pairs: usize,
}

/// Scores predicted clusters against true duplicate groups, over pairs of posts.
///
/// Index `i` is one post: `truth[i]` its duplicate group (`None` when unique) and
/// `predicted[i]` the id of the cluster it ended in (for example from
/// [`clusters_from_links`]). Posts beyond the shorter slice are ignored.
pub fn pairwise_scores<G: Eq + Hash>(truth: &[Option<G>], predicted: &[usize]) -> PairwiseScores {
    let n = truth.len().min(predicted.len());
    let pairs = |k: usize| k * k.saturating_sub(1) / 2;
    let mut by_group: HashMap<&G, usize> = HashMap::new();
    let mut by_cluster: HashMap<usize, usize> = HashMap::new();
    let mut by_both: HashMap<(&G, usize), usize> = HashMap::new();
    for i in 0..n {
        *by_cluster.entry(predicted[i]).or_default() += 1;
        if let Some(g) = &truth[i] {
            *by_group.entry(g).or_default() += 1;
            *by_both.entry((g, predicted[i])).or_default() += 1;
        }
    }
    let true_pairs: usize = by_group.values().map(|&k| pairs(k)).sum();
    let predicted_pairs: usize = by_cluster.values().map(|&k| pairs(k)).sum();
    let correct_pairs: usize = by_both.values().map(|&k| pairs(k)).sum();
    let ratio = |num: usize, den: usize| {
        if den == 0 {
            1.0
        } else {
            num as f64 / den as f64
        }
    };
    PairwiseScores {
        precision: ratio(correct_pairs, predicted_pairs),
        recall: ratio(correct_pairs, true_pairs),
        true_pairs,
        predicted_pairs,
        correct_pairs,
    }
}

/// Clusters `n` posts by duplicate links `(i, j)` (union-find): returns, per post, the
/// index of its cluster's representative (the smallest index in the cluster). Links with an
/// index `>= n` are ignored.
pub fn clusters_from_links(n: usize, links: &[(usize, usize)]) -> Vec<usize> {
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut parent: Vec<usize> = (0..n).collect();
    for &(a, b) in links {
        if a >= n || b >= n {
            continue;
        }
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        parent[hi] = lo;
    }
    (0..n).map(|i| root(&mut parent, i)).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::dataset::LabeledPost;
    use chrono::TimeZone;

    const DEV: &str = include_str!("../../../data/dev.jsonl");

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 1, 9, 0, 0).unwrap()
    }

    fn dev() -> Vec<LabeledPost> {
        LabeledPost::parse_all(DEV).expect("dev.jsonl parses")
    }

    /// Runs posts in order through one index (find before insert, one minute apart) and
    /// scores the clusters formed by the found links.
    fn run(posts: &[&LabeledPost]) -> (PairwiseScores, Vec<(usize, usize)>) {
        run_with(posts, DedupConfig::default())
    }

    fn run_with(
        posts: &[&LabeledPost],
        config: DedupConfig,
    ) -> (PairwiseScores, Vec<(usize, usize)>) {
        let mut index = DuplicateIndex::new(config);
        let mut links = Vec::new();
        for (i, post) in posts.iter().enumerate() {
            let at = t0() + Duration::minutes(i as i64);
            let fp = fingerprint(&post.text);
            if let Some(found) = index.find(&fp, at) {
                links.push((found as usize, i));
            }
            index.insert(i as i64, at, fp);
        }
        let clusters = clusters_from_links(posts.len(), &links);
        let truth: Vec<Option<&str>> = posts.iter().map(|p| p.dup_group.as_deref()).collect();
        (pairwise_scores(&truth, &clusters), links)
    }

    fn dup(a: &str, b: &str) -> bool {
        compare(&fingerprint(a), &fingerprint(b)).is_duplicate(&DedupConfig::default())
    }

    const RU_POST: &str = "Нужен лендинг на Тильде для бренда натуральной косметики 🌿\n\
        Что есть: логотип, фото продукции, тексты частично.\n\
        Что нужно: главный экран + каталог (8 позиций), форма заявки с отправкой в телеграм, \
        адаптив под мобилки.\nСрок: 7-10 дней\nБюджет: 25 000 ₽\nКонтакт: @anna_kosmetika\n\
        #вакансия #tilda #фриланс";

    const EN_POST: &str = "Looking for a presentation designer 🎨\n\
        Seed-stage fintech startup, we need our 18-slide pitch deck redesigned before investor \
        meetings next month. Content is final, we need visual polish: layout, icons, 3-4 simple \
        charts, consistent brand look.\nBudget: $600-800 fixed\nDeadline: 10 days\n\
        Please DM @marco_fintech with 2-3 decks you've done #design #pitchdeck";

    /// Sentences (and lines) in reverse order.
    fn reorder(text: &str) -> String {
        let mut parts: Vec<String> = Vec::new();
        for line in text.lines() {
            for sentence in line.split_inclusive(". ") {
                parts.push(sentence.trim().to_owned());
            }
        }
        parts.reverse();
        parts.join("\n")
    }

    fn swap_hashtags(text: &str) -> String {
        let kept: Vec<&str> = text
            .split(' ')
            .flat_map(|w| w.split('\n'))
            .filter(|w| !w.starts_with('#'))
            .collect();
        format!(
            "#работа #remote #срочно\n{}\n#jobs #удаленка",
            kept.join(" ")
        )
    }

    fn is_emoji(c: char) -> bool {
        matches!(c as u32, 0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0xFE0F | 0x200D | 0x203C | 0x2049)
    }

    fn strip_emoji(text: &str) -> String {
        text.chars().filter(|&c| !is_emoji(c)).collect()
    }

    fn add_emoji(text: &str) -> String {
        let lines: Vec<String> = text.lines().map(|l| format!("🔥 {l} ✅")).collect();
        format!("‼️💥\n{}\n👉👉", lines.join("\n"))
    }

    fn forwarded(text: &str) -> String {
        format!("Forwarded from Фриланс Заказы | Remote IT\n{text}")
    }

    fn reposted(text: &str) -> String {
        format!("Репост: {text}")
    }

    /// Replaces every `@handle` with another contact line.
    fn other_contact(text: &str) -> String {
        let words: Vec<String> = text
            .split(' ')
            .map(|w| {
                w.split('\n')
                    .map(|p| {
                        if p.starts_with('@') {
                            "t.me/new_recruiter_bot"
                        } else {
                            p
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect();
        words.join(" ")
    }

    fn all_perturbations(text: &str) -> String {
        forwarded(&swap_hashtags(&strip_emoji(&reorder(text))))
    }

    /// The perturbations under which a post stays the same vacancy.
    type Perturbation = (&'static str, fn(&str) -> String);

    fn same_job_perturbations() -> Vec<Perturbation> {
        vec![
            ("sentence order", reorder),
            ("hashtags swapped", swap_hashtags),
            ("emoji stripped", strip_emoji),
            ("emoji added", add_emoji),
            ("forwarded prefix", forwarded),
            ("repost prefix", reposted),
            ("contact line changed", other_contact),
            ("all of the above", all_perturbations),
        ]
    }

    #[test]
    fn each_perturbation_of_a_post_is_the_same_job_ru_and_en() {
        for (name, perturb) in same_job_perturbations() {
            for post in [RU_POST, EN_POST] {
                let changed = perturb(post);
                assert!(
                    dup(post, &changed),
                    "{name}: not recognised\n{post}\n---\n{changed}"
                );
            }
        }
    }

    #[test]
    fn a_short_summary_of_a_post_is_the_same_job() {
        assert!(dup(
            RU_POST,
            "Лендинг на Tilda для косметического бренда, каталог 8 позиций + форма заявки. \
             7-10 дней, 25к. Пишите @anna_kosmetika"
        ));
        assert!(dup(
            EN_POST,
            "#design #pitchdeck\nSeed fintech needs its 18-slide pitch deck redesigned (content \
             is done, need layout/icons/charts/brand consistency). $600-800 fixed, 10 days. \
             Portfolio to @marco_fintech 🙏"
        ));
    }

    #[test]
    fn template_variants_stay_separate() {
        // Another budget.
        assert!(!dup(RU_POST, &RU_POST.replace("25 000", "40 000")));
        assert!(!dup(RU_POST, &RU_POST.replace("25 000 ₽", "35к")));
        assert!(!dup(EN_POST, &EN_POST.replace("$600-800", "$1,500-2,000")));
        // Another task noun.
        assert!(!dup(
            RU_POST,
            &RU_POST.replace("лендинг", "интернет-магазин")
        ));
        assert!(!dup(
            EN_POST,
            &EN_POST.replace("pitch deck", "annual report")
        ));
        // Another volume.
        assert!(!dup(RU_POST, &RU_POST.replace("8 позиций", "40 позиций")));
        assert!(!dup(EN_POST, &EN_POST.replace("18-slide", "40-slide")));
        // The same poster's template for another job.
        let voice = "Ищу диктора 🎙 мужской голос, низкий, спокойный. Озвучка роликов для \
            ютуб-канала про историю, 10-15 минут текста в неделю. Нужна своя запись без шумов.\n\
            Оплата 1500₽ за 10 минут готового звука.\nДемки кидайте @history_yt_prod";
        let other = "Ищу дикторку 🎙 женский голос, мягкий, спокойный. Озвучка роликов для \
            ютуб-канала про космос, 20-25 минут текста в неделю. Нужна своя запись без шумов.\n\
            Оплата 1200₽ за 10 минут готового звука.\nДемки кидайте @history_yt_prod";
        assert!(!dup(voice, other));
    }

    #[test]
    fn unrelated_and_empty_posts_do_not_match() {
        assert!(!dup(RU_POST, EN_POST));
        assert!(!dup("", ""));
        assert!(!dup("🔥🔥🔥 #вакансия", "🔥 #job"));
        assert!(
            fingerprint("🔥🔥🔥 #вакансия @someone")
                .features()
                .all(|(_, k)| k == FeatureKind::Contact)
        );
        // Short posts match only when identical in content.
        assert!(dup(
            "Ищу монтажёра рилс, фитнес, 700₽",
            "ищу МОНТАЖЕРА рилс 🔥 фитнес 700 руб"
        ));
        assert!(!dup(
            "Ищу монтажёра рилс, фитнес",
            "Ищу монтажёра рилс, кулинария"
        ));
    }

    #[test]
    fn numbers_are_read_in_every_notation() {
        let money = |text: &str| -> Vec<u32> {
            fingerprint(text)
                .features()
                .filter(|&(_, k)| k == FeatureKind::Money)
                .map(|(h, _)| h)
                .collect()
        };
        let expected = money("25000 руб");
        assert_eq!(expected.len(), 1);
        for text in [
            "25 000 ₽",
            "25к",
            "25 тыс.",
            "25 тыс руб",
            "₽25000",
            "25 000р",
            "25k",
        ] {
            assert_eq!(money(text), expected, "{text}");
        }
        assert_eq!(money("$1,200-1,500"), money("$1.2-1.5k"));
        assert_eq!(money("30-40к").len(), 2);
        assert_eq!(money("30-40к"), money("30 000 - 40 000 ₽"));
        assert_eq!(money("$35-50/h"), money("35-50 usd"));
        assert!(money("8 статей, 2 раза в месяц").is_empty());
    }

    #[test]
    fn contacts_in_links_and_handles_are_one_feature() {
        let contacts = |text: &str| -> Vec<u32> {
            fingerprint(text)
                .features()
                .filter(|&(_, k)| k == FeatureKind::Contact)
                .map(|(h, _)| h)
                .collect()
        };
        assert_eq!(
            contacts("пишите @Zerno_HR"),
            contacts("https://t.me/zerno_hr")
        );
        assert_eq!(contacts("звоните +7 (999) 123-45-67").len(), 1);
        assert_eq!(contacts("github.com/k-sergeev-dev, резюме").len(), 1);
        assert!(contacts("по text.ru от 90%").is_empty());
    }

    #[test]
    fn fingerprint_round_trips_through_bytes_and_hex() {
        let fp = fingerprint(RU_POST);
        assert!(fp.len() > 15, "{}", fp.len());
        let bytes = fp.to_bytes();
        assert_eq!(bytes.len(), 1 + 4 * fp.len());
        assert_eq!(Fingerprint::from_bytes(&bytes).unwrap(), fp);
        assert_eq!(Fingerprint::from_hex(&fp.to_hex()).unwrap(), fp);
        // Stable across runs and builds: the stored column must keep meaning the same.
        assert_eq!(
            fingerprint("Нужен Python-бот, 5000₽ @shop").to_hex(),
            fingerprint("нужен python бот 5 000 руб @SHOP").to_hex()
        );

        assert_eq!(
            Fingerprint::from_bytes(&[]),
            Err(FingerprintError::Length(0))
        );
        assert_eq!(
            Fingerprint::from_bytes(&[9, 0, 0, 0, 0]),
            Err(FingerprintError::Version(9))
        );
        assert_eq!(
            Fingerprint::from_bytes(&bytes[..bytes.len() - 1]),
            Err(FingerprintError::Length(bytes.len() - 1))
        );
        let mut repeated = bytes.clone();
        repeated.copy_within(1..5, 5);
        assert_eq!(
            Fingerprint::from_bytes(&repeated),
            Err(FingerprintError::Corrupt(1))
        );
        let mut bad_kind = bytes.clone();
        bad_kind[1] |= 7;
        assert_eq!(
            Fingerprint::from_bytes(&bad_kind),
            Err(FingerprintError::Corrupt(0))
        );
        assert!(matches!(
            Fingerprint::from_hex("zz"),
            Err(FingerprintError::Hex(_))
        ));
    }

    #[test]
    fn index_finds_the_earlier_post_within_the_window_only() {
        let mut index = DuplicateIndex::new(DedupConfig::default());
        index.insert(1, t0(), fingerprint(RU_POST));
        index.insert(2, t0(), fingerprint(EN_POST));
        assert_eq!(index.len(), 2);
        let repost = fingerprint(&forwarded(RU_POST));
        assert_eq!(index.find(&repost, t0() + Duration::days(6)), Some(1));
        assert_eq!(
            index.find(&fingerprint(&reorder(EN_POST)), t0() + Duration::hours(1)),
            Some(2)
        );
        // Outside the window: not a duplicate any more, even before eviction.
        assert_eq!(index.find(&repost, t0() + Duration::days(8)), None);
        // A template variant is not found.
        assert_eq!(
            index.find(&fingerprint(&RU_POST.replace("25 000", "60 000")), t0()),
            None
        );

        index.insert(
            3,
            t0() + Duration::days(2),
            fingerprint(&add_emoji(RU_POST)),
        );
        index.evict_older_than(t0() + Duration::days(1));
        assert_eq!(index.len(), 1);
        assert_eq!(index.find(&repost, t0() + Duration::days(3)), Some(3));
        assert_eq!(
            index.find(&fingerprint(EN_POST), t0() + Duration::days(3)),
            None
        );
        index.evict_older_than(t0() + Duration::days(3));
        assert!(index.is_empty());
        assert_eq!(index.find(&repost, t0() + Duration::days(3)), None);
        assert!(
            index.postings.is_empty(),
            "evicted posts leave no postings behind"
        );
    }

    #[test]
    fn eviction_handles_posts_inserted_out_of_time_order() {
        let mut index = DuplicateIndex::new(DedupConfig::default());
        index.insert(1, t0() + Duration::days(5), fingerprint(EN_POST));
        index.insert(2, t0(), fingerprint(RU_POST));
        index.evict_older_than(t0() + Duration::days(1));
        assert_eq!(index.len(), 1);
        assert_eq!(index.find(&fingerprint(RU_POST), t0()), None);
        assert_eq!(
            index.find(&fingerprint(EN_POST), t0() + Duration::days(5)),
            Some(1)
        );
        let before = index.approx_memory_bytes();
        assert!(before > 0);
    }

    #[test]
    fn pairwise_scores_count_pairs() {
        // Truth: {0,1,2} and {3,4}; 5 unique. Predicted: {0,1}, {2}, {3,4,5}.
        let truth = [Some("a"), Some("a"), Some("a"), Some("b"), Some("b"), None];
        let predicted = clusters_from_links(6, &[(0, 1), (3, 4), (5, 4), (9, 1)]);
        assert_eq!(predicted, [0, 0, 2, 3, 3, 3]);
        let s = pairwise_scores(&truth, &predicted);
        assert_eq!(
            (s.true_pairs, s.predicted_pairs, s.correct_pairs),
            (4, 4, 2)
        );
        assert!((s.precision - 0.5).abs() < 1e-9 && (s.recall - 0.5).abs() < 1e-9);
        let none: [Option<&str>; 0] = [];
        assert_eq!(pairwise_scores(&none, &[]).precision, 1.0);
    }

    #[test]
    fn dev_set_pairwise_precision_and_recall() {
        let posts = dev();
        let all: Vec<&LabeledPost> = posts.iter().collect();
        let (full, _) = run(&all);
        // Held-out split: groups g01-g10 and odd-numbered unique posts vs the rest.
        let first_half = |p: &LabeledPost| match &p.dup_group {
            Some(g) => g.trim_start_matches('g').parse::<u32>().unwrap_or(0) <= 10,
            None => p.id.trim_start_matches('d').parse::<u32>().unwrap_or(0) % 2 == 1,
        };
        let a: Vec<&LabeledPost> = posts.iter().filter(|p| first_half(p)).collect();
        let b: Vec<&LabeledPost> = posts.iter().filter(|p| !first_half(p)).collect();
        let (half_a, _) = run(&a);
        let (half_b, _) = run(&b);
        for (name, s) in [
            ("full", full),
            ("g01-g10", half_a),
            ("g11-g20 (held out)", half_b),
        ] {
            eprintln!(
                "dev.jsonl {name}: precision {:.3} recall {:.3} ({} of {} true pairs, {} predicted)",
                s.precision, s.recall, s.correct_pairs, s.true_pairs, s.predicted_pairs
            );
        }
        assert!(full.precision >= 0.95 && full.recall >= 0.90, "{full:?}");
        assert!(
            half_b.precision >= 0.95 && half_b.recall >= 0.90,
            "{half_b:?}"
        );
    }

    /// The defaults are not a knife edge: neighbouring thresholds give the same quality.
    #[test]
    fn dev_set_quality_is_stable_around_the_defaults() {
        let posts = dev();
        let all: Vec<&LabeledPost> = posts.iter().collect();
        for threshold in [0.55, 0.6, 0.65, 0.7, 0.75] {
            for min_jaccard in [0.2, 0.25, 0.3] {
                let config = DedupConfig {
                    threshold,
                    min_jaccard,
                    ..DedupConfig::default()
                };
                let (s, _) = run_with(&all, config);
                eprintln!(
                    "threshold {threshold} min_jaccard {min_jaccard}: precision {:.3} recall {:.3}",
                    s.precision, s.recall
                );
                assert!(
                    s.precision >= 0.95 && s.recall >= 0.90,
                    "{threshold} {min_jaccard}: {s:?}"
                );
            }
        }
    }

    /// Unique job posts of the dev set, perturbed: each perturbation must still be found as
    /// a duplicate of its original; template variants must not be.
    #[test]
    fn synthetic_perturbations_of_unique_dev_posts() {
        let posts = dev();
        let unique: Vec<&LabeledPost> = posts
            .iter()
            .filter(|p| p.dup_group.is_none() && p.label.as_ref().is_some_and(|l| l.is_job))
            .collect();
        assert!(unique.len() > 50);
        let config = DedupConfig::default();
        let mut index = DuplicateIndex::new(config.clone());
        for (i, p) in unique.iter().enumerate() {
            index.insert(i as i64, t0(), fingerprint(&p.text));
        }
        let at = t0() + Duration::hours(5);
        for (name, perturb) in same_job_perturbations() {
            let found = unique
                .iter()
                .enumerate()
                .filter(|(i, p)| index.find(&fingerprint(&perturb(&p.text)), at) == Some(*i as i64))
                .count();
            let rate = found as f64 / unique.len() as f64;
            eprintln!(
                "perturbation {name}: {found}/{} found ({rate:.3})",
                unique.len()
            );
            assert!(rate >= 0.95, "{name}: {found}/{}", unique.len());
        }
        for (name, variant) in [
            ("other budget", other_budget as fn(&str) -> Option<String>),
            ("other task noun", other_task_noun),
        ] {
            let variants: Vec<(usize, String)> = unique
                .iter()
                .enumerate()
                .filter_map(|(i, p)| variant(&p.text).map(|v| (i, v)))
                .collect();
            let wrongly = variants
                .iter()
                .filter(|(i, v)| index.find(&fingerprint(v), at) == Some(*i as i64))
                .count();
            let rate = 1.0 - wrongly as f64 / variants.len() as f64;
            eprintln!(
                "template variant {name}: {}/{} kept separate ({rate:.3})",
                variants.len() - wrongly,
                variants.len()
            );
            assert!(
                variants.len() > 30,
                "{name}: only {} variants",
                variants.len()
            );
            assert!(
                rate >= 0.95,
                "{name}: {wrongly} of {} matched",
                variants.len()
            );
        }
    }

    /// The post with its first amount of money changed (first digit + 1), when it has one.
    fn other_budget(text: &str) -> Option<String> {
        let cs: Vec<char> = text.chars().collect();
        let money_near = |start: usize, end: usize| {
            let before = cs[start.saturating_sub(2)..start]
                .iter()
                .any(|c| matches!(c, '$' | '€' | '₽'));
            let after: String = cs[end..(end + 8).min(cs.len())].iter().collect();
            let after = after.to_lowercase();
            let after = after.trim_start();
            let unit: String = after.chars().take_while(|c| c.is_alphabetic()).collect();
            before
                || after.starts_with(['₽', '$', '€'])
                || after.starts_with("000")
                || ["р", "руб", "рублей", "к", "k", "тыс", "usd"].contains(&unit.as_str())
        };
        let mut i = 0;
        while i < cs.len() {
            if cs[i].is_ascii_digit() && (i == 0 || !cs[i - 1].is_ascii_digit()) {
                let mut end = i;
                while end < cs.len() && cs[end].is_ascii_digit() {
                    end += 1;
                }
                if money_near(i, end) {
                    let mut out = cs.clone();
                    out[i] = match cs[i] {
                        '9' => '1',
                        d => char::from(d as u8 + 1),
                    };
                    return Some(out.into_iter().collect());
                }
                i = end;
            } else {
                i += 1;
            }
        }
        None
    }

    /// The post with its first long content word (the task, in most posts), in all its
    /// forms, replaced by another noun.
    fn other_task_noun(text: &str) -> Option<String> {
        let lower = text.to_lowercase();
        let word = lower
            .split(|c: char| !c.is_alphabetic() && c != '#' && c != '@')
            .filter(|w| !w.starts_with('#') && !w.starts_with('@'))
            .find(|w| w.chars().count() >= 6 && stem(w).is_some())?;
        let prefix: String = word.chars().take(5).collect();
        let candidates: [&str; 3] = if word.chars().any(is_cyrillic) {
            ["бухгалтерию", "озвучку", "переводчика"]
        } else {
            ["bookkeeping", "voiceover", "translator"]
        };
        // A noun the post does not already use in some form.
        let replacement = candidates.into_iter().find(|c| {
            let head: String = c.chars().take(5).collect();
            !lower.contains(&head)
        })?;
        let mut out = String::new();
        for piece in text.split_inclusive(|c: char| !c.is_alphabetic()) {
            let (w, sep) =
                piece.split_at(piece.trim_end_matches(|c: char| !c.is_alphabetic()).len());
            if w.to_lowercase().starts_with(&prefix) {
                out.push_str(replacement);
            } else {
                out.push_str(w);
            }
            out.push_str(sep);
        }
        (out != text).then_some(out)
    }
}
