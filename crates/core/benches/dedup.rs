//! Near-duplicate lookup: [`DuplicateIndex::find`] + [`DuplicateIndex::insert`] per new post
//! with 100,000 earlier posts in the window, on synthetic ~400-character RU/EN job texts
//! (a small vocabulary, so posts of one topic share most of their words, like real channels).
//!
//! `cargo bench -p jobwire-core --bench dedup`. Before Criterion's runs it prints the index's
//! memory, fingerprinting cost, p50/p99 of find+insert and how many re-posts were found.

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use jobwire_core::dedup::{DedupConfig, DuplicateIndex, Fingerprint, fingerprint};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

const EARLIER: usize = 100_000;

const RU_ROLES: &[&str] = &[
    "дизайнера логотипа",
    "разработчика телеграм-бота",
    "монтажёра рилс",
    "копирайтера",
    "таргетолога ВК",
    "SMM-менеджера",
    "верстальщика на Тильде",
    "Flutter-разработчика",
    "иллюстратора",
    "ассистента",
    "переводчика",
    "диктора",
    "аналитика Google Sheets",
    "специалиста по Wildberries",
    "бэкенд-разработчика на Python",
];
const RU_OBJECTS: &[&str] = &[
    "для кофейни",
    "для салона красоты",
    "для онлайн-школы",
    "для доставки воды",
    "для строительной компании",
    "для барбершопа",
    "для фитнес-блога",
    "для интернет-магазина",
    "для детской книги",
    "для юридической фирмы",
    "для стоматологии",
    "для автосервиса",
];
const RU_TASKS: &[&str] = &[
    "Нужно сделать 2-3 концепта на выбор, потом доработка одного",
    "Интеграция с amoCRM и оплата через ЮKassa",
    "8 статей в месяц по 5-7 тыс. знаков",
    "Нужны субтитры, трендовые звуки, динамичный монтаж",
    "Запустить рекламу на лид-формы, цель — заявка до 500₽",
    "Адаптив под мобилки, форма заявки с отправкой в телеграм",
    "Ответы в директе, ведение календаря, отчёты кураторов",
    "Дашборд по продажам: выручка по неделям, по менеджерам, по источникам",
    "Главный слайд и 5-6 инфографик на каждую карточку",
    "Стек не принципиален, желательно Python/aiogram",
];
const EN_ROLES: &[&str] = &[
    "React developer",
    "Discord bot developer",
    "video editor",
    "presentation designer",
    "virtual assistant",
    "SEO specialist",
    "copywriter",
    "Flutter developer",
    "illustrator",
    "translator EN→ES",
    "data analyst",
    "Shopify developer",
    "motion designer",
];
const EN_OBJECTS: &[&str] = &[
    "for a B2B SaaS dashboard",
    "for an NFT community",
    "for a Minecraft channel",
    "for a fintech pitch deck",
    "for a Shopify skincare store",
    "for a mobile puzzle game",
    "for a logistics startup",
    "for a podcast",
    "for a gym app",
    "for a home decor store",
];
const EN_TASKS: &[&str] = &[
    "Build out the customer dashboard with tables, charts and filters",
    "Wallet verification, role assignment and a daily leaderboard",
    "Two videos per week, zooms, captions and retention-focused pacing",
    "Tech audit, keyword research for 30 pages and 4 blog posts per month",
    "Answer customer emails, process refunds, chase suppliers",
    "Keep placeholders and color tags untouched, natives only",
    "Layout, icons, simple charts and a consistent brand look",
    "Must have TypeScript, Next.js and TanStack Query",
];
const FILLER_RU: &[&str] = &[
    "Работа удалённая, оплата после сдачи.",
    "Сроки не горят.",
    "Тестовое оплачиваем.",
    "Опыт от года обязателен.",
    "Пришлите примеры работ.",
    "Возможно долгосрочное сотрудничество.",
];
const FILLER_EN: &[&str] = &[
    "Fully remote, paid weekly.",
    "Long-term work for the right person.",
    "Paid test task.",
    "Send 2-3 relevant samples.",
    "Timezone overlap with CET preferred.",
];

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::UNIX_EPOCH)
}

/// One synthetic job post, about 300-500 characters.
fn job_text(rng: &mut StdRng, n: usize) -> String {
    let handle = format!("@client_{n}_{}", rng.random_range(0..1000));
    if rng.random_bool(0.6) {
        let budget = rng.random_range(3..200) * 1000;
        format!(
            "#вакансия #удалёнка\nИщу {} {} 🔥\n{}.\n{}.\n{} {}\nБюджет: {} ₽, срок {} дней.\nПишите {handle}",
            RU_ROLES.choose(rng).copied().unwrap_or_default(),
            RU_OBJECTS.choose(rng).copied().unwrap_or_default(),
            RU_TASKS.choose(rng).copied().unwrap_or_default(),
            RU_TASKS.choose(rng).copied().unwrap_or_default(),
            FILLER_RU.choose(rng).copied().unwrap_or_default(),
            FILLER_RU.choose(rng).copied().unwrap_or_default(),
            budget,
            rng.random_range(3..30),
        )
    } else {
        let budget = rng.random_range(2..100) * 50;
        format!(
            "#hiring #remote\nLooking for a {} {} 🚀\n{}.\n{}.\n{} {}\nBudget: ${budget}, {} days.\nDM {handle}",
            EN_ROLES.choose(rng).copied().unwrap_or_default(),
            EN_OBJECTS.choose(rng).copied().unwrap_or_default(),
            EN_TASKS.choose(rng).copied().unwrap_or_default(),
            EN_TASKS.choose(rng).copied().unwrap_or_default(),
            FILLER_EN.choose(rng).copied().unwrap_or_default(),
            FILLER_EN.choose(rng).copied().unwrap_or_default(),
            rng.random_range(3..30),
        )
    }
}

/// The index with `EARLIER` posts spread over the last 6 days, and the texts.
fn build() -> (DuplicateIndex, Vec<String>) {
    let mut rng = StdRng::seed_from_u64(7);
    let texts: Vec<String> = (0..EARLIER).map(|n| job_text(&mut rng, n)).collect();
    let mut index = DuplicateIndex::new(DedupConfig::default());
    let step = chrono::Duration::days(6).num_seconds() / EARLIER as i64;
    for (n, text) in texts.iter().enumerate() {
        let at = t0() + chrono::Duration::seconds(step * n as i64);
        index.insert(n as i64, at, fingerprint(text));
    }
    (index, texts)
}

/// New posts: half fresh, half re-posts of earlier ones (forwarded, hashtags swapped).
fn new_posts(texts: &[String], n: usize) -> Vec<(Option<i64>, Fingerprint)> {
    let mut rng = StdRng::seed_from_u64(99);
    (0..n)
        .map(|k| {
            if k % 2 == 0 {
                (None, fingerprint(&job_text(&mut rng, EARLIER + k)))
            } else {
                let original = rng.random_range(0..texts.len());
                let text = texts[original]
                    .replace("#вакансия #удалёнка", "#работа")
                    .replace("#hiring #remote", "#jobs");
                (
                    Some(original as i64),
                    fingerprint(&format!("Forwarded from Jobs Channel\n{text}")),
                )
            }
        })
        .collect()
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn report(index: &DuplicateIndex, texts: &[String]) {
    let started = Instant::now();
    for text in texts.iter().take(10_000) {
        black_box(fingerprint(black_box(text)));
    }
    let per_fp = started.elapsed() / 10_000;
    let avg_len = texts.iter().map(|t| t.chars().count()).sum::<usize>() / texts.len();

    let mut index = index.clone();
    let posts = new_posts(texts, 4_000);
    let now = t0() + chrono::Duration::days(6);
    let mut times = Vec::with_capacity(posts.len());
    let (mut found_reposts, mut reposts, mut false_hits) = (0, 0, 0);
    for (k, (original, fp)) in posts.into_iter().enumerate() {
        let t = Instant::now();
        let hit = black_box(index.find(&fp, now));
        index.insert((EARLIER + k) as i64, now, fp);
        times.push(t.elapsed());
        match original {
            Some(id) => {
                reposts += 1;
                found_reposts += usize::from(hit == Some(id));
            }
            None => false_hits += usize::from(hit.is_some()),
        }
    }
    let (p50, p99, max) = percentiles(times);
    eprintln!(
        "dedup: {EARLIER} posts (avg {avg_len} chars) in the index, approx_memory_bytes = {:.1} MB ({} B/post)",
        index.approx_memory_bytes() as f64 / 1e6,
        index.approx_memory_bytes() / index.len()
    );
    eprintln!(
        "dedup: fingerprint() {per_fp:?}/post; find+insert p50 {p50:?} p99 {p99:?} max {max:?}"
    );
    // The generator draws from a tiny vocabulary: some "fresh" posts have an earlier twin
    // with the same role, budget, deadline and task sentences, differing only in the client.
    eprintln!(
        "dedup: re-posts found {found_reposts}/{reposts}; fresh posts matched to an earlier look-alike {false_hits}/2000"
    );
}

fn bench(c: &mut Criterion) {
    let (index, texts) = build();
    report(&index, &texts);
    let posts = new_posts(&texts, 2_000);
    let now = t0() + chrono::Duration::days(6);
    let mut group = c.benchmark_group("dedup");
    group.sample_size(20);
    let mut live = index.clone();
    let mut k = 0usize;
    group.bench_function("find+insert (100k in window)", |b| {
        b.iter(|| {
            let (_, fp) = &posts[k % posts.len()];
            let hit = live.find(black_box(fp), now);
            live.insert((EARLIER * 2 + k) as i64, now, fp.clone());
            k += 1;
            black_box(hit)
        })
    });
    group.bench_function("find only (100k in window)", |b| {
        let mut j = 0usize;
        b.iter(|| {
            let (_, fp) = &posts[j % posts.len()];
            j += 1;
            black_box(index.find(black_box(fp), now))
        })
    });
    group.bench_function("fingerprint (~400 chars)", |b| {
        let mut j = 0usize;
        b.iter(|| {
            j += 1;
            black_box(fingerprint(black_box(&texts[j % texts.len()])))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
