//! Synthetic channel posts for `jobwire bench llm`: a deterministic, labeled mix of vacancies
//! in the twelve standard categories, résumés, ads and chatter, in Russian and English, 100 to
//! 1,500 characters long, in the style of `data/dev.jsonl` but written from templates of their
//! own (the local model never saw them).
//!
//! Every post is made distinct: its own contact, its own amounts, its own business and task
//! mix; and each generated post is checked against the near-duplicate detector the intake
//! runs ([`DuplicateIndex`]), drawn again when the detector would take it for an earlier one.
//!
//! The words are data (`posts/words.toml`, read once by `posts/words.rs`); the texts are put
//! together in `posts/texts.rs`.

use chrono::{DateTime, Utc};
use jobwire_core::dedup::{DedupConfig, DuplicateIndex, fingerprint};
use jobwire_core::seeded::Seeded;
use jobwire_testkit::llm::OracleEntry;

mod texts;
mod words;

use texts::{ad, chatter, job, resume};
use words::words;

/// Post kinds as the labeled JSONL names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Job,
    Resume,
    Ad,
    Chatter,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Job => "job",
            Kind::Resume => "resume",
            Kind::Ad => "ad",
            Kind::Chatter => "chatter",
        }
    }
}

/// One generated post with its true labels.
#[derive(Debug, Clone)]
pub struct BenchPost {
    pub channel: &'static str,
    pub text: String,
    pub kind: Kind,
    /// Category slugs (jobs only).
    pub categories: Vec<&'static str>,
    pub russian: bool,
}

impl BenchPost {
    pub fn is_job(&self) -> bool {
        self.kind == Kind::Job
    }

    /// The fake LLM's answer for this post.
    pub fn oracle_entry(&self) -> OracleEntry {
        OracleEntry {
            text: self.text.clone(),
            is_job: self.is_job(),
            kind: self.kind.as_str().to_owned(),
            categories: self.categories.iter().map(|c| (*c).to_owned()).collect(),
        }
    }
}

/// What [`generate`] made.
#[derive(Debug, Clone)]
pub struct Generated {
    pub posts: Vec<BenchPost>,
    /// Posts the duplicate detector still took for an earlier one after every redraw (kept
    /// anyway; the intake will drop them).
    pub near_duplicates: usize,
    /// Redraws needed to keep posts apart.
    pub redraws: usize,
}

/// Generates `n` distinct labeled posts from `seed`: about 45% vacancies, 20% résumés, 17%
/// ads and 18% chatter, 60% in Russian.
pub fn generate(n: usize, seed: u64) -> Generated {
    let mut rng = Seeded::new(seed);
    let mut index = DuplicateIndex::new(DedupConfig::default());
    let now: DateTime<Utc> = Utc::now();
    let mut posts = Vec::with_capacity(n);
    let mut near_duplicates = 0;
    let mut redraws = 0;
    for i in 0..n {
        let roll = rng.below(100);
        let kind = match roll {
            0..45 => Kind::Job,
            45..65 => Kind::Resume,
            65..82 => Kind::Ad,
            _ => Kind::Chatter,
        };
        let russian = rng.chance(0.6);
        let mut attempt = 0;
        loop {
            let post = make(&mut rng, i, attempt, kind, russian);
            let fp = fingerprint(&post.text);
            let duplicate = index.find(&fp, now).is_some();
            if !duplicate || attempt >= 30 {
                near_duplicates += usize::from(duplicate);
                index.insert(i as i64, now, fp);
                posts.push(post);
                break;
            }
            attempt += 1;
            redraws += 1;
        }
    }
    Generated {
        posts,
        near_duplicates,
        redraws,
    }
}

fn make(rng: &mut Seeded, i: usize, attempt: usize, kind: Kind, russian: bool) -> BenchPost {
    // The contact is unique per post (and per redraw): the post's own poster.
    let handle = handle(rng, i, attempt);
    let target = target_length(rng, kind);
    let (text, categories) = match kind {
        Kind::Job => job(rng, russian, &handle, target),
        Kind::Resume => (resume(rng, russian, &handle, target), Vec::new()),
        Kind::Ad => (ad(rng, russian, &handle, target), Vec::new()),
        Kind::Chatter => (chatter(rng, russian, &handle, target), Vec::new()),
    };
    let wd = words();
    let channel = if russian {
        rng.pick(&wd.ru_channels)
    } else {
        rng.pick(&wd.en_channels)
    };
    BenchPost {
        channel: channel.as_str(),
        text: bound(text),
        kind,
        categories,
        russian,
    }
}

/// At most 1,500 characters, cut at a line or sentence end where possible.
fn bound(text: String) -> String {
    const MAX: usize = 1500;
    if text.chars().count() <= MAX {
        return text;
    }
    let cut: String = text.chars().take(MAX).collect();
    let end = cut
        .rfind('\n')
        .or_else(|| cut.rfind(". "))
        .unwrap_or(cut.len());
    cut[..end].trim_end().to_owned()
}

/// How long a post should get: short, medium or long, by kind (chatter is short).
fn target_length(rng: &mut Seeded, kind: Kind) -> usize {
    let roll = rng.below(100);
    let (lo, hi) = match (kind, roll) {
        (Kind::Chatter, 0..70) => (100, 220),
        (Kind::Chatter, _) => (220, 450),
        (_, 0..30) => (110, 300),
        (_, 30..78) => (300, 700),
        _ => (700, 1450),
    };
    rng.range(lo, hi) as usize
}

fn handle(rng: &mut Seeded, i: usize, attempt: usize) -> String {
    let name = rng.pick(&words().handle_names);
    let word = rng.pick(&words().handle_words);
    match rng.below(3) {
        0 => format!("@{name}_{word}{}", i * 7 + attempt),
        1 => format!("@{word}_{name}_{}", i + 31 * attempt),
        _ => format!("@{name}{}{word}", (i * 13 + attempt * 5) % 9973),
    }
}

/// The posts as labeled JSONL, one line each in the schema of `data/dev.jsonl` (ids
/// `b0001`…), for `jobwire bench llm --write-posts`.
pub fn labeled_jsonl(posts: &[BenchPost]) -> Result<String, serde_json::Error> {
    let mut out = String::new();
    for (i, p) in posts.iter().enumerate() {
        let line = serde_json::json!({
            "id": format!("b{:04}", i + 1),
            "channel": p.channel,
            "text": p.text,
            "is_job": p.is_job(),
            "kind": p.kind.as_str(),
            "categories": p.categories,
            "lang": if p.russian { "ru" } else { "en" },
            "dup_group": null,
        });
        out.push_str(&serde_json::to_string(&line)?);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_posts_read_back_as_a_labeled_dataset() {
        let g = generate(40, 3);
        let doc = labeled_jsonl(&g.posts).expect("json");
        let back = jobwire_core::dataset::LabeledPost::parse_all(&doc).expect("parses");
        assert_eq!(back.len(), 40);
        for (p, b) in g.posts.iter().zip(&back) {
            assert_eq!(b.text, p.text);
            assert_eq!(b.channel, p.channel);
            let label = b.label.as_ref().expect("labeled");
            assert_eq!(label.is_job, p.is_job());
            assert_eq!(label.kind.as_str(), p.kind.as_str());
            let cats: Vec<&str> = label.categories.iter().map(|c| c.as_str()).collect();
            assert_eq!(cats, p.categories);
        }
    }

    #[test]
    fn the_mix_is_realistic_distinct_and_deterministic() {
        let g = generate(600, 7);
        assert_eq!(g.posts.len(), 600);
        assert_eq!(g.near_duplicates, 0, "{} redraws", g.redraws);
        let share = |k: Kind| g.posts.iter().filter(|p| p.kind == k).count() as f64 / 600.0;
        assert!((0.38..=0.52).contains(&share(Kind::Job)));
        for k in [Kind::Resume, Kind::Ad, Kind::Chatter] {
            assert!(share(k) > 0.1, "{k:?}");
        }
        let ru = g.posts.iter().filter(|p| p.russian).count() as f64 / 600.0;
        assert!((0.5..=0.7).contains(&ru));
        for p in &g.posts {
            let n = p.text.chars().count();
            assert!((90..=1500).contains(&n), "{n}: {}", p.text);
            assert_eq!(p.is_job(), !p.categories.is_empty());
            for c in &p.categories {
                assert!(jobwire_core::category::standard_slugs().any(|s| s == *c));
            }
        }
        let again = generate(600, 7);
        assert!(
            g.posts
                .iter()
                .zip(&again.posts)
                .all(|(a, b)| a.text == b.text)
        );
    }
}
