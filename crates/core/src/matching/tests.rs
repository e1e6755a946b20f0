//! The index against the plain scan: hand-written cases, minimum budgets, synthetic data
//! and random subscribers and jobs.

#![allow(clippy::unwrap_used)]

use super::synthetic::{synthetic_job, synthetic_subscribers};
use super::*;
use crate::extract::BudgetBasis;
use crate::normalize::normalize;
use crate::rules::Term;
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
