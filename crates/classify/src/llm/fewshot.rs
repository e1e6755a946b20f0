//! Few-shot examples from people's labels: the ones most similar to a batch's posts go into
//! the user message.
//!
//! Similarity is the Jaccard index of character trigrams of the
//! [normalized](jobwire_core::normalize::normalize) texts (the first [`GRAM_CHARS`]
//! characters): cheap, language-agnostic, and robust to the look-alike letters and spacing
//! tricks of channel posts.

use jobwire_core::normalize::normalize;
use jobwire_core::{CategorySlug, PostKind};

use super::prompt::cut;

/// How many characters of a text its trigrams are taken from.
pub const GRAM_CHARS: usize = 2000;

/// The most examples kept by [`super::LlmClassifier::set_examples`] (the first ones given).
pub const MAX_EXAMPLES: usize = 2000;

/// The lowest similarity at which an example is still shown (below it, an example is about
/// something else and would only cost tokens).
pub const MIN_SIMILARITY: f64 = 0.05;

/// A post labeled by a person, offered to the model as an example.
#[derive(Debug, Clone, PartialEq)]
pub struct FewShot {
    /// The post text.
    pub text: String,
    /// Whether it offers paid work.
    pub is_job: bool,
    /// What kind of message it is.
    pub kind: PostKind,
    /// Its categories (jobs only; slugs that are not configured are dropped).
    pub categories: Vec<CategorySlug>,
}

/// An example with its trigrams.
#[derive(Debug)]
pub(crate) struct Example {
    pub(crate) shot: FewShot,
    grams: Vec<u64>,
}

impl Example {
    pub(crate) fn new(shot: FewShot) -> Self {
        let grams = trigrams(&shot.text);
        Self { shot, grams }
    }
}

/// The sorted, deduplicated character trigrams of the normalized text (padded with a space
/// at both ends so that short words count).
pub(crate) fn trigrams(text: &str) -> Vec<u64> {
    let norm = normalize(cut(text, GRAM_CHARS));
    let chars: Vec<char> = std::iter::once(' ')
        .chain(norm.chars())
        .chain(std::iter::once(' '))
        .collect();
    let mut grams: Vec<u64> = chars
        .windows(3)
        .map(|w| (u64::from(w[0]) << 42) | (u64::from(w[1]) << 21) | u64::from(w[2]))
        .collect();
    grams.sort_unstable();
    grams.dedup();
    grams
}

/// The Jaccard index of two sorted, deduplicated sets.
pub(crate) fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() + b.len() - common) as f64
}

/// The `k` examples most similar to any of the posts (each example scored by its best
/// match), best first; ties keep the examples' order. Examples under [`MIN_SIMILARITY`] are
/// never picked.
pub(crate) fn pick<'a>(examples: &'a [Example], posts: &[Vec<u64>], k: usize) -> Vec<&'a FewShot> {
    if k == 0 || posts.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, usize)> = examples
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let best = posts
                .iter()
                .map(|p| jaccard(&e.grams, p))
                .fold(0.0_f64, f64::max);
            (best, i)
        })
        .filter(|(s, _)| *s >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(k)
        .map(|(_, i)| &examples[i].shot)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn shot(text: &str) -> Example {
        Example::new(FewShot {
            text: text.into(),
            is_job: false,
            kind: PostKind::Chatter,
            categories: Vec::new(),
        })
    }

    #[test]
    fn the_most_similar_example_comes_first() {
        let examples = [
            shot("Куплю аккаунт инстаграм с живыми подписчиками"),
            shot("Нужен дизайнер для логотипа кофейни, бюджет 5000"),
            shot("Need a Python developer for a Telegram bot"),
        ];
        let post = trigrams("Нужен дизайнер логотипа для пекарни, бюджет 7000 руб");
        let picked = pick(&examples, &[post], 1);
        assert_eq!(picked.len(), 1);
        assert!(picked[0].text.contains("кофейни"));
        // Look-alike Latin letters do not hide the similarity.
        let tricky = trigrams("Нужен дизaйнер для логотипа кофейни, бюджет 5000");
        assert!(jaccard(&tricky, &examples[1].grams) > 0.99);
        assert!(pick(&examples, &[trigrams("zzzz qqqq")], 3).is_empty());
        assert!(pick(&examples, &[], 3).is_empty());
    }
}
