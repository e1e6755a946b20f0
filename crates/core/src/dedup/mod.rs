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
//!
//! [`normalize`]: crate::normalize::normalize

mod compare;
mod feature_set;
mod features;
mod index;
mod pairwise;
mod section;
mod stem;

#[cfg(test)]
mod tests;

use chrono::Duration;

pub use compare::{Comparison, compare};
pub use feature_set::{FeatureKind, Fingerprint, FingerprintError};
pub use features::fingerprint;
pub use index::DuplicateIndex;
pub use pairwise::{PairwiseScores, clusters_from_links, pairwise_scores};
pub use section::DedupSection;

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
