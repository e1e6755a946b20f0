//! End-to-end tests of near-duplicate detection over the dev set and synthetic
//! perturbations of its posts, and the fixtures (sample posts, perturbations, a start time)
//! the other test modules share.

#![allow(clippy::unwrap_used)]

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::stem::{is_cyrillic, stem};
use super::*;
use crate::dataset::LabeledPost;

const DEV: &str = include_str!("../../../../data/dev.jsonl");

pub(super) fn t0() -> DateTime<Utc> {
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

fn run_with(posts: &[&LabeledPost], config: DedupConfig) -> (PairwiseScores, Vec<(usize, usize)>) {
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

pub(super) fn dup(a: &str, b: &str) -> bool {
    compare(&fingerprint(a), &fingerprint(b)).is_duplicate(&DedupConfig::default())
}

pub(super) const RU_POST: &str = "Нужен лендинг на Тильде для бренда натуральной косметики 🌿\n\
    Что есть: логотип, фото продукции, тексты частично.\n\
    Что нужно: главный экран + каталог (8 позиций), форма заявки с отправкой в телеграм, \
    адаптив под мобилки.\nСрок: 7-10 дней\nБюджет: 25 000 ₽\nКонтакт: @anna_kosmetika\n\
    #вакансия #tilda #фриланс";

pub(super) const EN_POST: &str = "Looking for a presentation designer 🎨\n\
    Seed-stage fintech startup, we need our 18-slide pitch deck redesigned before investor \
    meetings next month. Content is final, we need visual polish: layout, icons, 3-4 simple \
    charts, consistent brand look.\nBudget: $600-800 fixed\nDeadline: 10 days\n\
    Please DM @marco_fintech with 2-3 decks you've done #design #pitchdeck";

/// Sentences (and lines) in reverse order.
pub(super) fn reorder(text: &str) -> String {
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

pub(super) fn add_emoji(text: &str) -> String {
    let lines: Vec<String> = text.lines().map(|l| format!("🔥 {l} ✅")).collect();
    format!("‼️💥\n{}\n👉👉", lines.join("\n"))
}

pub(super) fn forwarded(text: &str) -> String {
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
pub(super) type Perturbation = (&'static str, fn(&str) -> String);

pub(super) fn same_job_perturbations() -> Vec<Perturbation> {
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
        let (w, sep) = piece.split_at(piece.trim_end_matches(|c: char| !c.is_alphabetic()).len());
        if w.to_lowercase().starts_with(&prefix) {
            out.push_str(replacement);
        } else {
            out.push_str(w);
        }
        out.push_str(sep);
    }
    (out != text).then_some(out)
}
