//! Deterministic synthetic subscribers and jobs for benchmarks (`cargo bench`, `jobwire
//! bench`): realistic category spreads and a Russian + English job vocabulary.

use crate::CategorySlug;
use crate::rules::Term;
use crate::seeded::Seeded;
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

fn tail_word(rng: &mut Seeded) -> String {
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

fn slug(raw: &str) -> Option<CategorySlug> {
    CategorySlug::parse(raw).ok()
}

/// `n` subscribers with ids `1..=n`: each in 1–3 of the 12 [`CATEGORIES`], with 0–3
/// include terms (popular words of [`INCLUDE_VOCABULARY`] more likely; one in ten a rarer
/// compound word from a list of about 900) and 0–2 exclude terms; about 2% paused and 1%
/// blocked. The same `(n, seed)` always gives the same subscribers.
pub fn synthetic_subscribers(n: usize, seed: u64) -> Vec<Subscriber> {
    let mut rng = Seeded::new(seed);
    (1..=n)
        .map(|i| {
            let mut sub = Subscriber::new(SubscriberId(i as i64), 1_000_000 + i as i64);
            for _ in 0..1 + rng.below(3) {
                if let Some(c) = slug(rng.pick::<&str>(&CATEGORIES))
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
                if let Ok(t) = Term::parse(rng.pick::<&str>(EXCLUDE_VOCABULARY))
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
    let mut rng = Seeded::new(seed ^ 0x5DEE_CE66_D1CE_4E5B);
    let mut categories = Vec::new();
    for _ in 0..1 + rng.below(2) {
        if let Some(c) = slug(rng.pick::<&str>(&CATEGORIES))
            && !categories.contains(&c)
        {
            categories.push(c);
        }
    }
    let mut text = format!("{} {}!\n\n", rng.pick(FILLER), rng.pick(ROLES));
    while text.chars().count() < 560 {
        text.push_str(rng.pick::<&str>(SENTENCES));
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
