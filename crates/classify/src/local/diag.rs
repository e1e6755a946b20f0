//! TEMPORARY experiment harness (removed before hand-off).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, dead_code)]
use super::*;
use crate::eval::{assign_folds, cross_validate};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn data() -> Vec<LabeledPost> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
    LabeledPost::parse_all(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn cats() -> Vec<CategorySlug> {
    ["web","bots","mobile","design","video","texts","marketing","ai","assistant","translation","audio","data"]
        .iter().map(|c| CategorySlug::parse(c).unwrap()).collect()
}

fn opts() -> TrainOptions {
    let d = TrainOptions::default();
    let mut o = TrainOptions {
        epochs: env("X_EPOCHS", d.epochs),
        learning_rate: env("X_LR", d.learning_rate),
        l2: env("X_L2", d.l2),
        min_df: env("X_MIN_DF", d.min_df),
        kind_blend: env("X_BLEND", d.kind_blend),
        category_threshold: env("X_CAT_T", d.category_threshold),
        max_categories: env("X_MAXC", d.max_categories),
        calibration_folds: env("X_FOLDS", d.calibration_folds),
        threshold_min_gain: env("X_GAIN", d.threshold_min_gain),
        job_threshold: env("X_JOB_T", d.job_threshold),
        ..d.clone()
    };
    o.features.topic_weight = env("X_TOPIC_W", d.features.topic_weight);
    o.features.lexicon_weight = env("X_LEX_W", d.features.lexicon_weight);
    o.features.cue_weight = env("X_CUE_W", d.features.cue_weight);
    o.features.char_ngram_min = env("X_NMIN", d.features.char_ngram_min);
    o.features.char_ngram_max = env("X_NMAX", d.features.char_ngram_max);
    o.features.word_bigrams = env("X_BIGRAMS", d.features.word_bigrams);
    if !env("X_LEX", true) { o.features.topic_words.clear(); }
    o
}

#[test]
fn diag_cv() {
    let data = data();
    let cats = cats();
    let o = opts();
    let seeds: Vec<u64> = std::env::var("X_SEEDS").unwrap_or("7,1,42,3,5".into()).split(',').map(|s| s.parse().unwrap()).collect();
    let (mut mj, mut mc, mut me, mut mb) = (0.0, 0.0, 0.0, 0.0);
    let mut per: std::collections::BTreeMap<String, f64> = Default::default();
    for &s in &seeds {
        let t = std::time::Instant::now();
        let r = cross_validate(&data, &cats, 5, s, &o).unwrap();
        println!("seed {s:>3}: job P {:.3} R {:.3} F1 {:.3}  cat {:.3}  brier {:.3} ece {:.3}  ({:?})", r.is_job.precision, r.is_job.recall, r.is_job.f1, r.categories.micro_f1, r.confidence_brier, r.confidence_ece, t.elapsed());
        mj += r.is_job.f1; mc += r.categories.micro_f1; me += r.confidence_ece; mb += r.confidence_brier;
        for (k, v) in &r.categories.per_category { *per.entry(k.clone()).or_default() += v; }
    }
    let n = seeds.len() as f64;
    println!("MEAN job F1 {:.4}  cat {:.4}  brier {:.4} ece {:.4}", mj / n, mc / n, mb / n, me / n);
    let line: Vec<String> = per.iter().map(|(k, v)| format!("{k} {:.2}", v / n)).collect();
    println!("  {}", line.join("  "));
}

#[test]
fn diag_errors() {
    let data = data();
    let cats = cats();
    let o = opts();
    let seed = env("X_SEED", 7u64);
    let folds = assign_folds(&data, 5, seed);
    for fold in 0..5 {
        let train: Vec<LabeledPost> = data.iter().zip(&folds).filter(|(_, f)| f.is_some_and(|f| f != fold)).map(|(p, _)| p.clone()).collect();
        let model = LocalModel::train(&train, &cats, &o).unwrap();
        if fold == 0 { println!("thresholds {:?} platt {:?}", model.category_thresholds, model.calibration); }
        for (post, f) in data.iter().zip(&folds) {
            if *f != Some(fold) { continue; }
            let label = post.label.as_ref().unwrap();
            let v = model.predict(&post.text);
            let s = model.scores(&post.text);
            if label.is_job {
                let t: Vec<&str> = label.categories.iter().map(|c| c.as_str()).collect();
                let p: Vec<&str> = v.categories.iter().map(|c| c.as_str()).collect();
                let mut sorted = t.clone(); sorted.sort();
                let mut ps = p.clone(); ps.sort();
                if sorted != ps {
                    let raw = features::extract(&prepare(&post.text, &model.features), &model.features, &model.lexicon);
                    let lex: Vec<String> = model.lexicon.slugs().iter().zip(&raw.lex).filter(|(_, e)| e.score > 0.0).map(|(s, e)| format!("{s}:{}", e.score)).collect();
                    let mut top: Vec<(usize, f32)> = s.categories.iter().copied().enumerate().collect();
                    top.sort_by(|a, b| b.1.total_cmp(&a.1));
                    let top: Vec<String> = top.iter().take(3).map(|(c, p)| format!("{}:{:.2}", cats[*c].as_str(), p)).collect();
                    println!("CAT {} truth {:?} pred {:?} top {:?} lex {:?} | {}", post.id, t, p, top, lex, post.text.chars().take(140).collect::<String>().replace('\n', " / "));
                }
            }
            if label.is_job != v.is_job && env("X_JOBERR", false) {
                println!("JOB {} truth {} ({}) pred {} conf {:.2} | {}", post.id, label.is_job, label.kind.as_str(), v.is_job, v.confidence, post.text.chars().take(140).collect::<String>().replace('\n', " / "));
            }
        }
    }
}

#[test]
fn diag_reliability() {
    let data = data();
    let cats = cats();
    let o = opts();
    let seeds: Vec<u64> = std::env::var("X_SEEDS").unwrap_or("7,1,42,3,5".into()).split(',').map(|s| s.parse().unwrap()).collect();
    let edges = [0.5f32, 0.6, 0.7, 0.8, 0.9, 0.95, 1.01];
    let mut bins = vec![(0usize, 0usize, 0.0f64); edges.len() - 1];
    let mut ll = 0.0f64; let mut n = 0usize;
    for &s in &seeds {
        let folds = assign_folds(&data, 5, s);
        for fold in 0..5 {
            let train: Vec<LabeledPost> = data.iter().zip(&folds).filter(|(_, f)| f.is_some_and(|f| f != fold)).map(|(p, _)| p.clone()).collect();
            let model = LocalModel::train(&train, &cats, &o).unwrap();
            for (post, f) in data.iter().zip(&folds) {
                if *f != Some(fold) { continue; }
                let v = model.predict(&post.text);
                let ok = v.is_job == post.label.as_ref().unwrap().is_job;
                let b = edges.windows(2).position(|w| v.confidence >= w[0] && v.confidence < w[1]).unwrap_or(0);
                bins[b].0 += 1; bins[b].1 += usize::from(ok); bins[b].2 += f64::from(v.confidence);
                let c = f64::from(v.confidence).clamp(1e-6, 1.0 - 1e-6);
                ll -= if ok { c.ln() } else { (1.0 - c).ln() }; n += 1;
            }
        }
    }
    for (i, (cnt, ok, sc)) in bins.iter().enumerate() {
        println!("[{:.2},{:.2}) n {:>4} acc {:.3} conf {:.3}", edges[i], edges[i + 1], cnt, *ok as f64 / (*cnt).max(1) as f64, sc / (*cnt).max(1) as f64);
    }
    println!("logloss {:.4}", ll / n as f64);
}
