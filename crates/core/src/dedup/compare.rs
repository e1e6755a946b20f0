//! Comparing two fingerprints: [`compare`] merges their sorted features into a
//! [`Comparison`] (shared features, overlap, Jaccard, money, content, number and contact
//! differences) and [`Comparison::is_duplicate`] applies the decision rules and guards
//! described in the parent module's docs.

use super::DedupConfig;
use super::feature_set::{FeatureKind, Fingerprint};

/// Minimum features two different fingerprints must share to be duplicates.
const MIN_SHARED: usize = 5;
/// Minimum size of two identical fingerprints to be duplicates.
const MIN_IDENTICAL: usize = 3;
/// Jaccard index from which two texts count as near-identical for the substitution guard.
const SUBSTITUTION_MIN_JACCARD: f32 = 0.5;
/// Largest number of content features per side that the substitution guard treats as a
/// template filled in differently.
const SUBSTITUTION_MAX_DIFF: usize = 3;

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
    /// Whether the two posts are the same vacancy (see the [module documentation](super)).
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

/// What one fingerprint of a compared pair has, counted while merging.
#[derive(Debug, Default)]
struct Tally {
    /// Money features.
    money: usize,
    /// Money features the other fingerprint does not have as money.
    money_missing: usize,
    /// Content features (words, numbers, money) the other lacks.
    content_only: usize,
    /// Numbers and amounts the other lacks.
    numbers_only: usize,
    /// Contact features.
    contacts: usize,
}

impl Tally {
    /// A feature the other fingerprint lacks.
    fn add_unshared(&mut self, v: u32) {
        self.money += usize::from(is_money(v));
        self.money_missing += usize::from(is_money(v));
        self.content_only += usize::from(is_content(v));
        self.numbers_only += usize::from(is_number(v));
        self.contacts += usize::from(is_contact(v));
    }
}

fn is_content(v: u32) -> bool {
    matches!(
        FeatureKind::from_bits(v & 7),
        Some(FeatureKind::Word | FeatureKind::Number | FeatureKind::Money)
    )
}

fn is_money(v: u32) -> bool {
    v & 7 == FeatureKind::Money as u32
}

fn is_number(v: u32) -> bool {
    matches!(v & 7, 2 | 3)
}

fn is_contact(v: u32) -> bool {
    v & 7 == FeatureKind::Contact as u32
}

pub(super) fn compare_features(fa: &[u32], fb: &[u32]) -> Comparison {
    let (mut i, mut j) = (0, 0);
    let mut shared = 0;
    let (mut a, mut b) = (Tally::default(), Tally::default());
    let mut contacts_both = 0;
    while i < fa.len() || j < fb.len() {
        let ha = fa.get(i).map(|v| v >> 3);
        let hb = fb.get(j).map(|v| v >> 3);
        match (ha, hb) {
            (Some(x), Some(y)) if x == y => {
                shared += 1;
                let (ma, mb) = (is_money(fa[i]), is_money(fb[j]));
                a.money += usize::from(ma);
                b.money += usize::from(mb);
                // An amount of money matches only an amount of money: `$7/h` is not `7am`.
                a.money_missing += usize::from(ma && !mb);
                b.money_missing += usize::from(mb && !ma);
                let (ca, cb) = (is_contact(fa[i]), is_contact(fb[j]));
                a.contacts += usize::from(ca);
                b.contacts += usize::from(cb);
                contacts_both += usize::from(ca && cb);
                i += 1;
                j += 1;
            }
            (Some(x), y) if y.is_none_or(|y| x < y) => {
                a.add_unshared(fa[i]);
                i += 1;
            }
            _ => {
                b.add_unshared(fb[j]);
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
        money_conflict: a.money > 0 && b.money > 0 && a.money_missing > 0 && b.money_missing > 0,
        content_only: (a.content_only, b.content_only),
        numbers_only: (a.numbers_only, b.numbers_only),
        contacts: (a.contacts, b.contacts, contacts_both),
    }
}

#[cfg(test)]
mod tests {
    use crate::dedup::tests::{EN_POST, RU_POST, dup, same_job_perturbations};
    use crate::dedup::{FeatureKind, fingerprint};

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
}
