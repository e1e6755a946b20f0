//! Which subscribers get a job: an index over all subscribers that answers without looking at
//! each of them.
//!
//! [`SubscriberIndex`] gives exactly the answer of [`scan_matches`] (the plain per-subscriber
//! check, [`Subscriber::wants`]) but does work proportional to what the job touches:
//!
//! * subscribers live in *slots* (`u32`, in id order); paused and blocked ones are not indexed;
//! * per category, the slots of its members *without* include terms (they get every job of
//!   the category unless an exclude term hits);
//! * one Aho-Corasick automaton over every distinct pattern of every include and exclude term
//!   of every subscriber; each pattern points to its terms (a word and a hashtag can share a
//!   pattern), and each term, per category, to the slots that include it and those that
//!   exclude it.
//!
//! For a job, the automaton runs once over the normalized text (overlapping matches, so every
//! occurrence of every pattern is seen) and each raw hit is confirmed with
//! [`Term::accepts_match`]. The result, collected in a bitmap of one bit per slot (so it comes
//! out in id order without sorting), is
//! `(open members of the job's categories ∪ their members with an include hit) − their members
//! with an exclude hit − members whose minimum budget the job's budget fails`.
//!
//! **Minimum budgets** ([`crate::subscriber::MinBudget`]): the index converts each floor to
//! the base currency once, when it is built, with the [`Rates`] it is built with
//! ([`SubscriberIndex::build_with_rates`]); a job's budget is converted once per job. The
//! floors are checked only for the slots already chosen, while the answer is collected, and
//! not at all when nobody has a floor. [`SubscriberIndex::matches`] and [`scan_matches`] treat
//! the job as stating no budget; [`SubscriberIndex::matches_with_budget`] and
//! [`scan_matches_with_budget`] take the extracted one.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::CategorySlug;
use crate::extract::{Budget, BudgetBasis, Rates};
use crate::rules::Term;
use crate::subscriber::{Subscriber, SubscriberId, floor_admits};

/// What the index needs to know about a job's text and categories. (Its budget, for
/// minimum-budget floors, is passed next to it: [`SubscriberIndex::matches_with_budget`].)
#[derive(Debug, Clone, Copy)]
pub struct JobFacts<'a> {
    /// The job's categories.
    pub categories: &'a [CategorySlug],
    /// The job's text, [normalized](crate::normalize::normalize).
    pub normalized_text: &'a str,
}

/// The plain baseline: checks every subscriber with [`Subscriber::wants`] (a job that states
/// no budget). Returns the ids of those who get the job, sorted, each once.
pub fn scan_matches(subscribers: &[Subscriber], job: &JobFacts<'_>) -> Vec<SubscriberId> {
    scan_matches_with_budget(subscribers, job, None, &Rates::empty())
}

/// The plain baseline for a job with this extracted budget (`None`: not stated): checks
/// every subscriber with [`Subscriber::wants_with_budget`]. Returns the ids of those who get
/// the job, sorted, each once.
pub fn scan_matches_with_budget(
    subscribers: &[Subscriber],
    job: &JobFacts<'_>,
    budget: Option<&Budget>,
    rates: &Rates,
) -> Vec<SubscriberId> {
    let mut out: Vec<SubscriberId> = subscribers
        .iter()
        .filter(|s| s.wants_with_budget(job.categories, job.normalized_text, budget, rates))
        .map(|s| s.id)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The slots that use one term in one category: `slots[include.0..include.1]` include it,
/// `slots[exclude.0..exclude.1]` exclude it (each ascending).
#[derive(Debug, Clone, Copy)]
struct Posting {
    category: u32,
    include: (u32, u32),
    exclude: (u32, u32),
}

/// One distinct term; `postings[postings.0..postings.1]` are its per-category postings.
#[derive(Debug, Clone)]
struct TermEntry {
    term: Term,
    postings: (u32, u32),
}

/// While building: a term's including and excluding slots per category id.
type TermSlots = (Term, Vec<(u32, Vec<u32>, Vec<u32>)>);

/// A subscriber's minimum budget, converted for the index.
#[derive(Debug, Clone, Copy)]
struct Floor {
    basis: BudgetBasis,
    /// The floor in the rates' base currency; `None` when its currency has no rate.
    in_base: Option<f64>,
    require_stated: bool,
}

impl Floor {
    /// Same rules as [`crate::subscriber::MinBudget::admits`], on pre-converted amounts.
    fn admits(&self, job: Option<(BudgetBasis, Option<f64>)>) -> bool {
        match job {
            None => !self.require_stated,
            Some((basis, top)) => basis != self.basis || floor_admits(top, self.in_base),
        }
    }
}

/// All subscribers, indexed for [`SubscriberIndex::matches`]. Immutable: rebuild it (about
/// 0.1-0.2 s for 100,000 subscribers in a release build) when subscribers change.
///
/// Memory is a few `u32`s per (subscriber, category, keyword) plus one copy of each distinct
/// term: about 3 MB for 100,000 synthetic subscribers (1-3 categories, 0-3 + 0-2 keywords).
#[derive(Debug, Clone)]
pub struct SubscriberIndex {
    /// Subscriber id per slot, ascending.
    ids: Vec<SubscriberId>,
    /// Dense category ids.
    category_ids: HashMap<CategorySlug, u32>,
    /// Per category id: active member slots without include terms, ascending.
    open: Vec<Vec<u32>>,
    /// `None` when no subscriber has a keyword, or the automaton could not be built (then
    /// patterns are searched one by one).
    automaton: Option<AhoCorasick>,
    /// Distinct patterns, by automaton pattern id.
    patterns: Vec<String>,
    /// Term ids of each pattern: `pattern_terms[pattern_term_start[p]..[p + 1]]`.
    pattern_terms: Vec<u32>,
    pattern_term_start: Vec<u32>,
    terms: Vec<TermEntry>,
    postings: Vec<Posting>,
    /// Slot lists referenced by `postings`.
    slots: Vec<u32>,
    /// Per slot, its minimum budget; empty when no indexed subscriber has one.
    floors: Vec<Option<Floor>>,
    /// The rates floors were converted with; jobs' budgets are converted with them too.
    rates: Rates,
}

impl SubscriberIndex {
    /// Builds the index with the default, approximate [`Rates`]. If several subscribers share
    /// an id, the last one wins.
    pub fn build(subscribers: impl IntoIterator<Item = Subscriber>) -> SubscriberIndex {
        SubscriberIndex::build_with_rates(subscribers, Rates::default())
    }

    /// Builds the index, converting minimum budgets with `rates`. If several subscribers share
    /// an id, the last one wins.
    pub fn build_with_rates(
        subscribers: impl IntoIterator<Item = Subscriber>,
        rates: Rates,
    ) -> SubscriberIndex {
        let mut all: Vec<(usize, Subscriber)> = subscribers.into_iter().enumerate().collect();
        // By id; for equal ids the later entry first, so `dedup` keeps it.
        all.sort_unstable_by(|(ia, a), (ib, b)| a.id.cmp(&b.id).then(ib.cmp(ia)));
        all.dedup_by_key(|(_, s)| s.id);

        let mut category_ids: HashMap<CategorySlug, u32> = HashMap::new();
        let mut open: Vec<Vec<u32>> = Vec::new();
        let mut ids = Vec::with_capacity(all.len());
        let mut term_ids: HashMap<Term, usize> = HashMap::new();
        let mut term_slots: Vec<TermSlots> = Vec::new();
        let mut cats: Vec<u32> = Vec::new();
        let mut floors: Vec<Option<Floor>> = Vec::new();

        for (slot, (_, sub)) in all.iter().enumerate() {
            let slot = slot as u32;
            ids.push(sub.id);
            if !sub.is_active() || sub.categories.is_empty() {
                continue;
            }
            if let Some(min) = &sub.min_budget {
                if floors.is_empty() {
                    floors = vec![None; all.len()];
                }
                floors[slot as usize] = Some(Floor {
                    basis: min.basis,
                    in_base: min.floor_in_base(&rates),
                    require_stated: min.require_stated,
                });
            }
            cats.clear();
            for category in &sub.categories {
                let next = category_ids.len() as u32;
                let cat = *category_ids.entry(category.clone()).or_insert(next);
                if cat == next {
                    open.push(Vec::new());
                }
                if !cats.contains(&cat) {
                    cats.push(cat);
                }
            }
            // A term with an empty pattern never matches, but still makes the subscriber one
            // with include terms (exactly as `Subscriber::wants` sees it).
            if sub.include.is_empty() {
                for &cat in &cats {
                    open[cat as usize].push(slot);
                }
            }
            let sided = sub
                .include
                .iter()
                .map(|t| (t, true))
                .chain(sub.exclude.iter().map(|t| (t, false)));
            for (term, include) in sided {
                if term.pattern().is_empty() {
                    continue;
                }
                let id = match term_ids.get(term) {
                    Some(&id) => id,
                    None => {
                        term_slots.push((term.clone(), Vec::new()));
                        term_ids.insert(term.clone(), term_slots.len() - 1);
                        term_slots.len() - 1
                    }
                };
                let per_category = &mut term_slots[id].1;
                for &cat in &cats {
                    let at = match per_category.iter().position(|(c, _, _)| *c == cat) {
                        Some(at) => at,
                        None => {
                            per_category.push((cat, Vec::new(), Vec::new()));
                            per_category.len() - 1
                        }
                    };
                    let (_, inc, exc) = &mut per_category[at];
                    push_once(if include { inc } else { exc }, slot);
                }
            }
        }

        // Flatten; group terms by pattern.
        let mut slots = Vec::new();
        let mut postings = Vec::new();
        let mut terms = Vec::with_capacity(term_slots.len());
        let mut pattern_ids: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut terms_of_pattern: Vec<Vec<u32>> = Vec::new();
        for (term, mut per_category) in term_slots {
            per_category.sort_unstable_by_key(|(c, _, _)| *c);
            let first = postings.len() as u32;
            for (category, include, exclude) in per_category {
                let inc_start = slots.len() as u32;
                slots.extend_from_slice(&include);
                let exc_start = slots.len() as u32;
                slots.extend_from_slice(&exclude);
                postings.push(Posting {
                    category,
                    include: (inc_start, exc_start),
                    exclude: (exc_start, slots.len() as u32),
                });
            }
            let pattern = term.pattern().to_owned();
            let p = *pattern_ids.entry(pattern.clone()).or_insert_with(|| {
                patterns.push(pattern);
                terms_of_pattern.push(Vec::new());
                patterns.len() - 1
            });
            terms_of_pattern[p].push(terms.len() as u32);
            terms.push(TermEntry {
                term,
                postings: (first, postings.len() as u32),
            });
        }
        let mut pattern_terms = Vec::new();
        let mut pattern_term_start = vec![0];
        for list in terms_of_pattern {
            pattern_terms.extend(list);
            pattern_term_start.push(pattern_terms.len() as u32);
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()
        };
        for list in &mut open {
            list.shrink_to_fit();
        }
        slots.shrink_to_fit();

        SubscriberIndex {
            ids,
            category_ids,
            open,
            automaton,
            patterns,
            pattern_terms,
            pattern_term_start,
            terms,
            postings,
            slots,
            floors,
            rates,
        }
    }

    /// The rates minimum budgets are compared with.
    pub fn rates(&self) -> &Rates {
        &self.rates
    }

    /// Number of subscribers in the index (paused and blocked ones included).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the index holds no subscribers.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Number of distinct keyword patterns in the automaton.
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// The ids of the subscribers who get this job, which states no budget, sorted, each once.
    /// Same answer as [`scan_matches`] over the subscribers the index was built from.
    pub fn matches(&self, job: &JobFacts<'_>) -> Vec<SubscriberId> {
        self.matches_with_budget(job, None)
    }

    /// The ids of the subscribers who get this job with this extracted budget (`None`: not
    /// stated), sorted, each once. Same answer as [`scan_matches_with_budget`] with the
    /// index's [`rates`](SubscriberIndex::rates) over the subscribers it was built from.
    ///
    /// Work: one automaton pass over the text, plus the open members of the job's
    /// categories, plus the postings of the matched terms *in the job's categories*, plus a
    /// bitmap of one bit per slot that collects the answer in id order (checking the floors
    /// of the chosen slots, if anyone has one).
    pub fn matches_with_budget(
        &self,
        job: &JobFacts<'_>,
        budget: Option<&Budget>,
    ) -> Vec<SubscriberId> {
        let mut job_categories: Vec<u32> = job
            .categories
            .iter()
            .filter_map(|c| self.category_ids.get(c).copied())
            .collect();
        job_categories.sort_unstable();
        job_categories.dedup();
        if job_categories.is_empty() {
            return Vec::new();
        }

        let mut chosen = vec![0u64; self.ids.len().div_ceil(64)];
        for &cat in &job_categories {
            for &slot in &self.open[cat as usize] {
                chosen[slot as usize / 64] |= 1 << (slot % 64);
            }
        }
        let hits = self.hit_terms(job.normalized_text);
        let relevant = || {
            hits.iter().flat_map(|&t| {
                let (from, to) = self.terms[t as usize].postings;
                self.postings[from as usize..to as usize]
                    .iter()
                    .filter(|p| job_categories.binary_search(&p.category).is_ok())
            })
        };
        for posting in relevant() {
            for &slot in self.slot_list(posting.include) {
                chosen[slot as usize / 64] |= 1 << (slot % 64);
            }
        }
        // Excludes last: they win over everything.
        for posting in relevant() {
            for &slot in self.slot_list(posting.exclude) {
                chosen[slot as usize / 64] &= !(1 << (slot % 64));
            }
        }

        let count = chosen.iter().map(|w| w.count_ones() as usize).sum();
        let mut out = Vec::with_capacity(count);
        let job_budget = budget.map(|b| (b.basis, b.top_in_base(&self.rates)));
        let check_floors = !self.floors.is_empty();
        for (w, &word) in chosen.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if check_floors && self.floors[slot].is_some_and(|f| !f.admits(job_budget)) {
                    continue;
                }
                out.push(self.ids[slot]);
            }
        }
        out
    }

    /// Ids of the terms that really match (raw pattern hit accepted by its boundary check).
    fn hit_terms(&self, text: &str) -> Vec<u32> {
        let mut seen = vec![0u64; self.terms.len().div_ceil(64)];
        let mut hits = Vec::new();
        let mut on_hit = |pattern: usize, start: usize, end: usize| {
            let from = self.pattern_term_start[pattern] as usize;
            let to = self.pattern_term_start[pattern + 1] as usize;
            for &t in &self.pattern_terms[from..to] {
                let (word, bit) = (t as usize / 64, 1u64 << (t % 64));
                if seen[word] & bit == 0
                    && self.terms[t as usize].term.accepts_match(text, start, end)
                {
                    seen[word] |= bit;
                    hits.push(t);
                }
            }
        };
        match &self.automaton {
            Some(automaton) => {
                for m in automaton.find_overlapping_iter(text) {
                    on_hit(m.pattern().as_usize(), m.start(), m.end());
                }
            }
            None => {
                for (p, pattern) in self.patterns.iter().enumerate() {
                    let mut from = 0;
                    while let Some(found) = text.get(from..).and_then(|r| r.find(pattern.as_str()))
                    {
                        let start = from + found;
                        on_hit(p, start, start + pattern.len());
                        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
                    }
                }
            }
        }
        hits
    }

    fn slot_list(&self, (from, to): (u32, u32)) -> &[u32] {
        &self.slots[from as usize..to as usize]
    }
}

/// Slots arrive in ascending order, so a repeat can only be the last element.
fn push_once(list: &mut Vec<u32>, slot: u32) {
    if list.last() != Some(&slot) {
        list.push(slot);
    }
}

/// Deterministic synthetic subscribers and jobs for benchmarks (`cargo bench`, `jobwire
/// bench`): realistic category spreads and a Russian + English job vocabulary.
pub mod synthetic {
    use crate::CategorySlug;
    use crate::rules::Term;
    use crate::subscriber::{Subscriber, SubscriberId};

    /// The twelve category slugs used by the generators.
    pub const CATEGORIES: [&str; 12] = [
        "web",
        "mobile",
        "design",
        "bots",
        "data",
        "devops",
        "qa",
        "marketing",
        "copywriting",
        "smm",
        "video",
        "support",
    ];

    /// Words subscribers include, roughly most popular first; job texts are made of them.
    pub const INCLUDE_VOCABULARY: &[&str] = &[
        "python",
        "дизайн",
        "react",
        "удаленно",
        "бот",
        "figma",
        "javascript",
        "лендинг",
        "сайт",
        "telegram",
        "разработчик",
        "typescript",
        "копирайтер",
        "монтаж",
        "smm",
        "таргет",
        "wordpress",
        "tilda",
        "django",
        "парсер",
        "логотип",
        "frontend",
        "backend",
        "node",
        "vue",
        "golang",
        "rust",
        "java",
        "kotlin",
        "swift",
        "flutter",
        "php",
        "laravel",
        "fastapi",
        "sql",
        "postgresql",
        "excel",
        "аналитик",
        "тестировщик",
        "selenium",
        "docker",
        "kubernetes",
        "devops",
        "linux",
        "aws",
        "seo",
        "тексты",
        "статьи",
        "перевод",
        "рилс",
        "сторис",
        "видеомонтаж",
        "анимация",
        "иллюстрация",
        "баннер",
        "верстка",
        "интернет-магазин",
        "менеджер",
        "ассистент",
        "поддержка",
        "unity",
        "blender",
        "motion",
        "ui/ux",
        "landing page",
        "telegram bot",
        "чат-бот",
        "bot",
        "scraping",
        "ml",
        "data science",
        "mobile",
        "ios",
        "android",
        "fullstack",
        "#remote",
        "#фриланс",
        "#python",
        "#дизайн",
        "#вакансия",
    ];

    /// Words subscribers exclude.
    pub const EXCLUDE_VOCABULARY: &[&str] = &[
        "стажировка",
        "бесплатно",
        "офис",
        "junior",
        "senior",
        "без опыта",
        "срочно",
        "wordpress",
        "php",
        "internship",
        "unpaid",
        "#офис",
        "1с",
        "крипта",
        "казино",
    ];

    /// Halves of rarer, personal keywords (`нейро` + `дизайн`, `cloud` + `ops`): the long tail
    /// of what subscribers type, which grows the automaton without matching many jobs.
    const TAIL_PREFIXES: &[&str] = &[
        "веб",
        "моб",
        "дата",
        "нейро",
        "крипто",
        "гейм",
        "инфо",
        "арт",
        "медиа",
        "эко",
        "авто",
        "бизнес",
        "контент",
        "smart",
        "cloud",
        "micro",
        "auto",
        "growth",
        "lead",
        "brand",
        "event",
        "sales",
        "game",
        "web3",
        "no-code",
        "low-code",
        "motion",
        "sound",
        "product",
        "email",
    ];
    const TAIL_SUFFIXES: &[&str] = &[
        "дизайн",
        "аналитика",
        "разработка",
        "маркетинг",
        "продажи",
        "сервис",
        "студия",
        "контент",
        "монтаж",
        "тексты",
        "боты",
        "сайты",
        "проекты",
        "школа",
        "ops",
        "dev",
        "bot",
        "tools",
        "design",
        "writer",
        "editor",
        "manager",
        "analyst",
        "engineer",
        "artist",
        "builder",
        "coach",
        "studio",
        "lab",
        "hub",
    ];

    fn tail_word(rng: &mut SplitMix64) -> String {
        format!("{}{}", rng.pick(TAIL_PREFIXES), rng.pick(TAIL_SUFFIXES))
    }

    const ROLES: &[&str] = &[
        "Python-разработчик",
        "дизайнер лендинга",
        "React developer",
        "копирайтер",
        "монтажер рилс",
        "таргетолог",
        "разработчик Telegram-бота",
        "тестировщик",
        "DevOps engineer",
        "SMM-менеджер",
        "аналитик данных",
        "Flutter developer",
    ];

    const FILLER: &[&str] = &[
        "Ищем в команду",
        "Нужен",
        "Looking for a",
        "Требуется",
        "We are hiring a",
        "Открыта вакансия:",
    ];

    const SENTENCES: &[&str] = &[
        "Работа удаленно, гибкий график, оплата раз в неделю.",
        "Fully remote, flexible hours, paid weekly in USDT.",
        "Опыт от 2 лет, портфолио обязательно.",
        "Задачи: поддержка и развитие проекта, новые фичи, код-ревью.",
        "Tasks: build new features, fix bugs, talk to the client.",
        "Бюджет обсуждается, пишите в ЛС с примерами работ.",
        "Срок — 2 недели, возможно долгосрочное сотрудничество.",
        "Стек и инструменты:",
        "Please send your CV and a short intro.",
        "Оплата: 80 000 – 120 000 ₽ в месяц, зависит от опыта.",
    ];

    /// SplitMix64: a tiny, good-enough deterministic generator.
    #[derive(Debug, Clone)]
    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in `0..n` (`n > 0`).
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// Skewed towards 0 (popular words first): `n * u²` for uniform `u`.
        fn skewed(&mut self, n: usize) -> usize {
            let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
            ((u * u * n as f64) as usize).min(n - 1)
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    fn slug(raw: &str) -> Option<CategorySlug> {
        CategorySlug::parse(raw).ok()
    }

    /// `n` subscribers with ids `1..=n`: each in 1–3 of the 12 [`CATEGORIES`], with 0–3
    /// include terms (popular words of [`INCLUDE_VOCABULARY`] more likely; one in ten a rarer
    /// compound word from a list of about 900) and 0–2 exclude terms; about 2% paused and 1%
    /// blocked. The same `(n, seed)` always gives the same subscribers.
    pub fn synthetic_subscribers(n: usize, seed: u64) -> Vec<Subscriber> {
        let mut rng = SplitMix64(seed);
        (1..=n)
            .map(|i| {
                let mut sub = Subscriber::new(SubscriberId(i as i64), 1_000_000 + i as i64);
                for _ in 0..1 + rng.below(3) {
                    if let Some(c) = slug(rng.pick(&CATEGORIES))
                        && !sub.categories.contains(&c)
                    {
                        sub.categories.push(c);
                    }
                }
                for _ in 0..rng.below(4) {
                    let word = if rng.below(10) == 0 {
                        tail_word(&mut rng)
                    } else {
                        INCLUDE_VOCABULARY[rng.skewed(INCLUDE_VOCABULARY.len())].to_owned()
                    };
                    if let Ok(t) = Term::parse(&word)
                        && !sub.include.contains(&t)
                    {
                        sub.include.push(t);
                    }
                }
                for _ in 0..rng.below(3) {
                    if let Ok(t) = Term::parse(rng.pick(EXCLUDE_VOCABULARY))
                        && !sub.exclude.contains(&t)
                    {
                        sub.exclude.push(t);
                    }
                }
                let state = rng.below(100);
                sub.paused = state < 2;
                sub.blocked = state == 2;
                sub
            })
            .collect()
    }

    /// A job: 1–2 categories and a realistic raw (not normalized) text of about 600
    /// characters mixing Russian and English, vocabulary words and hashtags. Deterministic
    /// in `seed`.
    pub fn synthetic_job(seed: u64) -> (Vec<CategorySlug>, String) {
        let mut rng = SplitMix64(seed ^ 0x5DEE_CE66_D1CE_4E5B);
        let mut categories = Vec::new();
        for _ in 0..1 + rng.below(2) {
            if let Some(c) = slug(rng.pick(&CATEGORIES))
                && !categories.contains(&c)
            {
                categories.push(c);
            }
        }
        let mut text = format!("{} {}!\n\n", rng.pick(FILLER), rng.pick(ROLES));
        while text.chars().count() < 560 {
            text.push_str(rng.pick(SENTENCES));
            text.push(' ');
            if rng.below(2) == 0 {
                let words: Vec<&str> = (0..2 + rng.below(4))
                    .map(|_| {
                        let w = INCLUDE_VOCABULARY[rng.skewed(INCLUDE_VOCABULARY.len())];
                        w.trim_start_matches('#')
                    })
                    .collect();
                text.push_str(&words.join(", "));
                text.push_str(".\n");
            }
            if rng.below(6) == 0 {
                text.push_str(&tail_word(&mut rng));
                text.push_str(", ");
            }
            if rng.below(8) == 0 {
                text.push_str(rng.pick(EXCLUDE_VOCABULARY).trim_start_matches('#'));
                text.push_str(". ");
            }
        }
        text.push_str("\n#вакансия #");
        text.push_str(if rng.below(2) == 0 {
            "remote"
        } else {
            "фриланс"
        });
        (categories, text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::synthetic::{synthetic_job, synthetic_subscribers};
    use super::*;
    use crate::normalize::normalize;
    use crate::subscriber::MinBudget;
    use proptest::prelude::*;

    fn slug(s: &str) -> CategorySlug {
        CategorySlug::parse(s).unwrap()
    }

    fn sub(id: i64, cats: &[&str], include: &[&str], exclude: &[&str]) -> Subscriber {
        let mut s = Subscriber::new(SubscriberId(id), id * 10);
        s.categories = cats.iter().map(|c| slug(c)).collect();
        s.include = include.iter().map(|t| Term::parse(t).unwrap()).collect();
        s.exclude = exclude.iter().map(|t| Term::parse(t).unwrap()).collect();
        s
    }

    fn ids(raw: &[i64]) -> Vec<SubscriberId> {
        raw.iter().map(|&i| SubscriberId(i)).collect()
    }

    #[test]
    fn index_answers_like_the_rules_say() {
        let mut paused = sub(7, &["bots"], &[], &[]);
        paused.paused = true;
        let mut blocked = sub(8, &["bots"], &["bot"], &[]);
        blocked.blocked = true;
        let subs = vec![
            sub(5, &["bots"], &[], &[]),                 // every bots job
            sub(3, &["bots", "web"], &["bot"], &[]),     // "bot" at a word start
            sub(4, &["bots"], &["robot"], &[]),          // only robots
            sub(2, &["web"], &["bot"], &[]),             // wrong category
            sub(1, &["bots"], &["python"], &["срочно"]), // excluded
            sub(6, &["bots"], &["#remote"], &[]),        // hashtag
            sub(9, &["bots"], &[], &["#remote"]),        // hashtag excluded
            sub(10, &["bots"], &["#bots"], &[]),         // no such hashtag
            paused,
            blocked,
        ];
        let index = SubscriberIndex::build(subs.clone());
        assert_eq!(index.len(), 10);
        let text = normalize("СРОЧНО: Python-разработчик для Telegram-BOTS. #Remote");
        let cats = [slug("bots")];
        let job = JobFacts {
            categories: &cats,
            normalized_text: &text,
        };
        let expected = ids(&[3, 5, 6]);
        assert_eq!(index.matches(&job), expected);
        assert_eq!(scan_matches(&subs, &job), expected);

        // A category nobody follows, or none at all: nobody.
        let other = [slug("video")];
        let job = JobFacts {
            categories: &other,
            normalized_text: &text,
        };
        assert!(index.matches(&job).is_empty());
        let job = JobFacts {
            categories: &[],
            normalized_text: &text,
        };
        assert!(index.matches(&job).is_empty());
    }

    #[test]
    fn minimum_budgets_in_the_index_and_the_scan() {
        let with_floor = |id: i64, floor: Option<MinBudget>| {
            let mut s = sub(id, &["web"], &[], &[]);
            s.min_budget = floor;
            s
        };
        let strict = MinBudget {
            require_stated: true,
            ..MinBudget::new(10_000.0, "RUB", BudgetBasis::Fixed)
        };
        let subs = vec![
            with_floor(1, None),
            with_floor(2, Some(MinBudget::new(10_000.0, "RUB", BudgetBasis::Fixed))),
            with_floor(3, Some(MinBudget::new(300.0, "USD", BudgetBasis::Fixed))),
            with_floor(4, Some(MinBudget::new(20.0, "USD", BudgetBasis::Hourly))),
            with_floor(5, Some(strict)),
        ];
        let index = SubscriberIndex::build(subs.clone());
        let cats = [slug("web")];
        let job = JobFacts {
            categories: &cats,
            normalized_text: "нужен лендинг",
        };
        let rates = Rates::default();
        let check = |budget: Option<Budget>, expected: &[i64]| {
            let got = index.matches_with_budget(&job, budget.as_ref());
            assert_eq!(got, ids(expected), "{budget:?}");
            assert_eq!(
                scan_matches_with_budget(&subs, &job, budget.as_ref(), &rates),
                got
            );
        };
        let fixed = |amount: f64, currency: &str| Budget {
            min: amount,
            max: None,
            currency: currency.into(),
            basis: BudgetBasis::Fixed,
        };
        // No budget: only the one who requires a stated budget misses it.
        check(None, &[1, 2, 3, 4]);
        assert_eq!(index.matches(&job), ids(&[1, 2, 3, 4]));
        // 15 000 ₽ ≈ $167: enough for 10 000 ₽, not for $300.
        check(Some(fixed(15_000.0, "RUB")), &[1, 2, 4, 5]);
        // $500 ≈ 45 000 ₽: enough for everyone.
        check(Some(fixed(500.0, "USD")), &[1, 2, 3, 4, 5]);
        // 5 000 ₽: below both fixed floors.
        check(Some(fixed(5_000.0, "RUB")), &[1, 4]);
        // $15/h: only the hourly floor compares it, and rejects it.
        let hourly = Budget {
            basis: BudgetBasis::Hourly,
            ..fixed(15.0, "USD")
        };
        check(Some(hourly), &[1, 2, 3, 5]);
        // An unknown currency cannot be compared.
        check(Some(fixed(1.0, "XYZ")), &[1, 2, 3, 4, 5]);

        // Rates of the index's own: with a rouble worth a dollar, 15 000 ₽ clears $300.
        let even = Rates::from_pairs([("RUB", 1.0), ("USD", 1.0)]).unwrap();
        let index = SubscriberIndex::build_with_rates(subs.clone(), even.clone());
        let budget = fixed(15_000.0, "RUB");
        let got = index.matches_with_budget(&job, Some(&budget));
        assert_eq!(got, ids(&[1, 2, 3, 4, 5]));
        assert_eq!(
            scan_matches_with_budget(&subs, &job, Some(&budget), &even),
            got
        );
    }

    #[test]
    fn later_duplicate_id_wins() {
        let index = SubscriberIndex::build(vec![
            sub(1, &["web"], &[], &[]),
            sub(1, &["web"], &["python"], &[]),
        ]);
        assert_eq!(index.len(), 1);
        let cats = [slug("web")];
        let job = JobFacts {
            categories: &cats,
            normalized_text: "нужен дизайнер",
        };
        assert!(index.matches(&job).is_empty());
    }

    #[test]
    fn synthetic_data_is_deterministic_and_realistic() {
        let a = synthetic_subscribers(2000, 42);
        assert_eq!(a, synthetic_subscribers(2000, 42));
        assert_ne!(a, synthetic_subscribers(2000, 43));
        assert!(a.iter().all(|s| (1..=3).contains(&s.categories.len())));
        assert!(
            a.iter()
                .all(|s| s.include.len() <= 3 && s.exclude.len() <= 2)
        );
        assert!(a.iter().any(|s| s.include.is_empty()) && a.iter().any(|s| s.include.len() == 3));

        let index = SubscriberIndex::build(a.clone());
        let mut total = 0;
        for seed in 0..30 {
            let (cats, text) = synthetic_job(seed);
            assert_eq!((cats.clone(), text.clone()), synthetic_job(seed));
            let n = text.chars().count();
            assert!((560..900).contains(&n), "job text of {n} chars");
            let text = normalize(&text);
            let job = JobFacts {
                categories: &cats,
                normalized_text: &text,
            };
            let hits = index.matches(&job);
            assert_eq!(hits, scan_matches(&a, &job), "seed {seed}");
            total += hits.len();
        }
        // Jobs reach some but far from all subscribers.
        assert!(total > 30 * 20 && total < 30 * 1000, "{total}");
    }

    const WORDS: &[&str] = &[
        "bot",
        "bots",
        "robot",
        "ro",
        "o",
        "бот",
        "боты",
        "работа",
        "дизайн",
        "дизайнер",
        "landing page",
        "page",
        "a",
        "a a",
        ".net",
        "c++",
        "#bot",
        "#бот",
        "#bots",
        "python",
        "питон",
        "ёлка",
        "елка",
    ];
    const SEPARATORS: &[&str] = &[" ", " ", "#", "-", ". ", "ро", "", "\n", "_", "@"];

    fn subscriber_strategy() -> impl Strategy<Value = Subscriber> {
        let terms = || proptest::collection::vec(proptest::sample::select(WORDS), 0..4);
        (
            proptest::collection::vec(0usize..4, 0..3),
            terms(),
            proptest::collection::vec(proptest::sample::select(WORDS), 0..3),
            0u8..10,
        )
            .prop_map(|(cats, include, exclude, state)| {
                let names = ["web", "bots", "design", "data"];
                let mut s = Subscriber::new(SubscriberId(0), 0);
                s.categories = cats.into_iter().map(|c| slug(names[c])).collect();
                s.include = include
                    .into_iter()
                    .map(|t| Term::parse(t).unwrap())
                    .collect();
                s.exclude = exclude
                    .into_iter()
                    .map(|t| Term::parse(t).unwrap())
                    .collect();
                s.paused = state == 0;
                s.blocked = state == 1;
                s
            })
            .prop_flat_map(|s| (Just(s), proptest::option::of(floor_strategy())))
            .prop_map(|(mut s, floor)| {
                s.min_budget = floor;
                s
            })
    }

    const CURRENCIES: &[&str] = &["RUB", "USD", "EUR", "KZT", "XTR", "BTC"];
    const BASES: &[BudgetBasis] = &[
        BudgetBasis::Fixed,
        BudgetBasis::Hourly,
        BudgetBasis::Monthly,
    ];

    fn floor_strategy() -> impl Strategy<Value = MinBudget> {
        (
            0.0f64..200_000.0,
            proptest::sample::select(CURRENCIES),
            proptest::sample::select(BASES),
            any::<bool>(),
        )
            .prop_map(|(amount, currency, basis, require_stated)| MinBudget {
                amount,
                currency: currency.into(),
                basis,
                require_stated,
            })
    }

    fn budget_strategy() -> impl Strategy<Value = Budget> {
        (
            0.0f64..200_000.0,
            proptest::option::of(0.0f64..400_000.0),
            proptest::sample::select(CURRENCIES),
            proptest::sample::select(BASES),
        )
            .prop_map(|(min, max, currency, basis)| Budget {
                min,
                max,
                currency: currency.into(),
                basis,
            })
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            (
                proptest::sample::select(WORDS),
                proptest::sample::select(SEPARATORS),
            ),
            0..25,
        )
        .prop_map(|parts| {
            parts
                .into_iter()
                .map(|(w, s)| format!("{w}{s}"))
                .collect::<String>()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn index_equals_scan(
            subs in proptest::collection::vec(subscriber_strategy(), 0..40),
            text in text_strategy(),
            job_cats in proptest::collection::vec(
                proptest::sample::select(&["web", "bots", "design", "data", "video"][..]), 0..3),
            id_shift in -5i64..5,
            budget in proptest::option::of(budget_strategy()),
        ) {
            // Unique ids, not in input order.
            let subs: Vec<Subscriber> = subs
                .into_iter()
                .enumerate()
                .map(|(i, mut s)| {
                    s.id = SubscriberId((i as i64 * 7919) % 101 + id_shift * 1000);
                    s
                })
                .collect();
            let cats: Vec<CategorySlug> = job_cats.into_iter().map(slug).collect();
            let text = normalize(&text);
            let job = JobFacts { categories: &cats, normalized_text: &text };
            let index = SubscriberIndex::build(subs.clone());
            prop_assert_eq!(index.matches(&job), scan_matches(&subs, &job));
            prop_assert_eq!(
                index.matches_with_budget(&job, budget.as_ref()),
                scan_matches_with_budget(&subs, &job, budget.as_ref(), &Rates::default())
            );
        }
    }
}
