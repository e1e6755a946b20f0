//! The generator's words: per category (needs, tasks, requirements, résumé offers, course
//! names, budgets), the vacancies' phrasing per language, and the pools of businesses, names,
//! channels and filler sentences. They live in `words.toml`, read once.

use std::sync::LazyLock;

use serde::Deserialize;

/// Everything the generator draws from (`words.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Words {
    pub(super) ru_channels: Vec<String>,
    pub(super) en_channels: Vec<String>,
    pub(super) ru_biz: Vec<String>,
    pub(super) en_biz: Vec<String>,
    pub(super) ru_names: Vec<String>,
    pub(super) en_names: Vec<String>,
    pub(super) handle_names: Vec<String>,
    pub(super) handle_words: Vec<String>,
    pub(super) portfolio_sites: Vec<String>,
    pub(super) ru_marks: Vec<String>,
    pub(super) en_marks: Vec<String>,
    pub(super) ru_webinar: Vec<String>,
    pub(super) en_webinar: Vec<String>,
    pub(super) ru_weekdays: Vec<String>,
    pub(super) en_weekdays: Vec<String>,
    pub(super) ru_job_filler: Vec<String>,
    pub(super) en_job_filler: Vec<String>,
    pub(super) ru_resume_filler: Vec<String>,
    pub(super) en_resume_filler: Vec<String>,
    pub(super) ru_ad_filler: Vec<String>,
    pub(super) en_ad_filler: Vec<String>,
    pub(super) ru_chatter_filler: Vec<String>,
    pub(super) en_chatter_filler: Vec<String>,
    /// Categories a vacancy plausibly asks for together.
    pub(super) pairs: Vec<(String, String)>,
    pub(super) ru_job: JobWords,
    pub(super) en_job: JobWords,
    pub(super) cats: Vec<Cat>,
}

/// The words of a vacancy in one language (its businesses and filler are `*_biz` and
/// `*_job_filler`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JobWords {
    /// Openers; `{tag}` is the category's hashtag.
    pub(super) openers: Vec<String>,
    /// One-line forms of the head: `{need}`, `{task}`, `{biz}`.
    pub(super) heads: Vec<String>,
    /// The head of a long post, before its list of tasks.
    pub(super) need_for: String,
    pub(super) scope: String,
    pub(super) also: String,
    pub(super) requirements: String,
    pub(super) bullet: String,
    pub(super) about: Vec<String>,
    pub(super) cities: Vec<String>,
}

/// What the generator knows about one category.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Cat {
    pub(super) slug: String,
    pub(super) ru_tag: String,
    pub(super) en_tag: String,
    pub(super) ru_need: Vec<String>,
    pub(super) ru_tasks: Vec<String>,
    pub(super) ru_reqs: Vec<String>,
    pub(super) en_need: Vec<String>,
    pub(super) en_tasks: Vec<String>,
    pub(super) en_reqs: Vec<String>,
    /// Résumés: the profession and what they offer.
    pub(super) ru_pro: String,
    /// The profession in the genitive ("для дизайнера").
    pub(super) ru_pro_gen: String,
    pub(super) ru_offer: Vec<String>,
    pub(super) en_pro: String,
    pub(super) en_offer: Vec<String>,
    /// Chatter: "those who …".
    pub(super) ru_doing: String,
    pub(super) en_doing: String,
    /// Ads: what a course teaches.
    pub(super) ru_course: String,
    pub(super) en_course: String,
    /// Typical project budgets, roubles and dollars.
    pub(super) rub: (u64, u64),
    pub(super) usd: (u64, u64),
}

/// The file as built into the binary.
const WORDS_TOML: &str = include_str!("words.toml");

static WORDS: LazyLock<Words> = LazyLock::new(|| {
    // The file is part of the source; a test parses it, so this cannot fail in a build
    // whose tests passed.
    toml::from_str(WORDS_TOML).unwrap_or_else(|e| panic!("bench_llm/posts/words.toml: {e}"))
});

/// The generator's words, parsed on first use.
pub(super) fn words() -> &'static Words {
    &WORDS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_parse_and_every_standard_category_is_there() {
        let w: Words = match toml::from_str(WORDS_TOML) {
            Ok(w) => w,
            Err(e) => panic!("words.toml: {e}"),
        };
        let slugs: Vec<&str> = w.cats.iter().map(|c| c.slug.as_str()).collect();
        let standard: Vec<&str> = jobwire_core::category::standard_slugs().collect();
        assert_eq!(slugs.len(), standard.len(), "{slugs:?}");
        for s in &standard {
            assert!(slugs.contains(s), "{s} missing from words.toml");
        }
        for (a, b) in &w.pairs {
            assert!(
                slugs.contains(&a.as_str()) && slugs.contains(&b.as_str()),
                "{a}, {b}"
            );
        }
        for c in &w.cats {
            let pools = [
                &c.ru_need,
                &c.ru_tasks,
                &c.ru_reqs,
                &c.en_need,
                &c.en_tasks,
                &c.en_reqs,
                &c.ru_offer,
                &c.en_offer,
            ];
            for pool in pools {
                assert!(!pool.is_empty(), "{}", c.slug);
            }
            assert!(c.rub.0 <= c.rub.1 && c.usd.0 <= c.usd.1, "{}", c.slug);
        }
        assert!(!w.ru_channels.is_empty() && !w.en_channels.is_empty());
    }
}
