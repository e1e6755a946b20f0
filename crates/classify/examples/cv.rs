//! Cross-validates the local model on a labeled JSONL file and prints the report.
//!
//! `cargo run -p jobwire-classify --example cv -- data/dev.jsonl [k] [seed] [extra.jsonl]`
//!
//! With `extra.jsonl` every fold also trains on it (never scored); `CV_EXTRA_FRAC` (0–1)
//! keeps that share of its channels (the first ones in sorted order), for a learning curve;
//! `CV_GROUPED=true` makes the folds by channel (an unseen channel), `CV_XCUES=false` turns the
//! extraction cues off, `CV_CAL_CHANNEL=false` the channel-grouped calibration folds.
//!
//! Hyper-parameters can be overridden for experiments with `CV_<NAME>=value` environment
//! variables (`CV_EPOCHS`, `CV_LR`, `CV_L2`, `CV_MIN_DF`, `CV_BALANCE`, `CV_BLEND`,
//! `CV_CAT_T`, `CV_MIN_GAIN`, `CV_MAX_CATS`, `CV_LEX_W`, `CV_NMIN`, `CV_NMAX`, `CV_BIGRAMS`, `CV_CUES`, `CV_CUE_W`, `CV_TOPIC_W`, `CV_TOPICS`).

use std::time::Instant;

use jobwire_classify::eval::{FoldsBy, cross_validate_with};
use jobwire_classify::local::{LocalModel, TrainOptions};
use jobwire_core::CategorySlug;
use jobwire_core::dataset::LabeledPost;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map_or("data/dev.jsonl", String::as_str);
    let k: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(42);
    let data = LabeledPost::parse_all(&std::fs::read_to_string(path)?)?;
    let mut extra = match args.get(4) {
        Some(p) => LabeledPost::parse_all(&std::fs::read_to_string(p)?)?,
        None => Vec::new(),
    };
    let frac: f64 = env("CV_EXTRA_FRAC", 1.0);
    if frac < 1.0 {
        let mut channels: Vec<String> = extra.iter().map(|p| p.channel.clone()).collect();
        channels.sort();
        channels.dedup();
        let keep = (channels.len() as f64 * frac).round() as usize;
        let kept: std::collections::HashSet<&String> = channels.iter().take(keep).collect();
        extra.retain(|p| kept.contains(&p.channel));
    }
    let by = if env("CV_GROUPED", false) {
        FoldsBy::Channel
    } else {
        FoldsBy::Post
    };
    let categories: Vec<CategorySlug> = jobwire_core::category::standard();
    let d = TrainOptions::default();
    let mut opts = TrainOptions {
        epochs: env("CV_EPOCHS", d.epochs),
        learning_rate: env("CV_LR", d.learning_rate),
        l2: env("CV_L2", d.l2),
        min_df: env("CV_MIN_DF", d.min_df),
        balance_classes: env("CV_BALANCE", d.balance_classes),
        kind_blend: env("CV_BLEND", d.kind_blend),
        category_threshold: env("CV_CAT_T", d.category_threshold),
        threshold_min_gain: env("CV_MIN_GAIN", d.threshold_min_gain),
        max_categories: env("CV_MAX_CATS", d.max_categories),
        ..d.clone()
    };
    opts.features.char_ngram_min = env("CV_NMIN", d.features.char_ngram_min);
    opts.features.char_ngram_max = env("CV_NMAX", d.features.char_ngram_max);
    opts.features.word_bigrams = env("CV_BIGRAMS", d.features.word_bigrams);
    opts.features.cues = env("CV_CUES", d.features.cues);
    opts.features.cue_weight = env("CV_CUE_W", d.features.cue_weight);
    opts.features.topic_weight = env("CV_TOPIC_W", d.features.topic_weight);
    opts.features.extracted_cues = env("CV_XCUES", d.features.extracted_cues);
    opts.features.lexicon_weight = env("CV_LEX_W", d.features.lexicon_weight);
    opts.calibration_by_channel = env("CV_CAL_CHANNEL", d.calibration_by_channel);
    if !env("CV_TOPICS", true) {
        opts.features.topic_words.clear();
    }

    let started = Instant::now();
    let report = cross_validate_with(&data, &extra, &categories, k, seed, &opts, by)?;
    println!("extra training posts: {}", extra.len());
    let cv_time = started.elapsed();
    println!("{report}");
    let started = Instant::now();
    let model = LocalModel::train(&data, &categories, &opts)?;
    let train_time = started.elapsed();
    let mut saved = Vec::new();
    model.save(&mut saved)?;
    let started = Instant::now();
    for p in &data {
        let _ = model.predict(&p.text);
    }
    let per_post = started.elapsed() / data.len().max(1) as u32;
    println!(
        "cv {cv_time:?}; full training {train_time:?}; {} features; saved {} KB; predict {per_post:?}/post",
        model.n_features(),
        saved.len() / 1024
    );
    println!("{}", report.to_json());
    Ok(())
}
