//! Speed of the local model: prediction over the development set's texts, and training.
//!
//! `cargo bench -p jobwire-classify --bench local`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jobwire_classify::local::{LocalModel, TrainOptions};
use jobwire_core::CategorySlug;
use jobwire_core::dataset::LabeledPost;

fn dev_set() -> Vec<LabeledPost> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
    let doc = std::fs::read_to_string(path).expect("data/dev.jsonl is readable");
    LabeledPost::parse_all(&doc).expect("dev.jsonl parses")
}

fn categories() -> Vec<CategorySlug> {
    jobwire_core::category::standard()
}

fn bench(c: &mut Criterion) {
    let data = dev_set();
    let cats = categories();
    let opts = TrainOptions::default();
    let model = LocalModel::train(&data, &cats, &opts).expect("trains");
    let texts: Vec<&str> = data.iter().map(|p| p.text.as_str()).collect();

    let mut i = 0usize;
    c.bench_function("predict one post (dev.jsonl texts in turn)", |b| {
        b.iter(|| {
            i = (i + 1) % texts.len();
            black_box(model.predict(black_box(texts[i])))
        })
    });
    c.bench_function("predict all 240 dev posts", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(model.predict(black_box(t)));
            }
        })
    });

    let mut group = c.benchmark_group("train");
    group.sample_size(10);
    group.bench_function("240 dev posts (with inner calibration folds)", |b| {
        b.iter(|| black_box(LocalModel::train(&data, &cats, &opts).expect("trains")))
    });
    // ~2000 posts: the dev set eight times over, each copy lightly edited so the copies are
    // distinct texts (as a grown training set of LLM-labeled posts would be).
    let big: Vec<LabeledPost> = (0..8)
        .flat_map(|k| {
            data.iter().map(move |p| {
                let mut p = p.clone();
                p.text = format!("{} #{k}", p.text);
                p.id = format!("{}-{k}", p.id);
                p
            })
        })
        .collect();
    group.bench_function("1920 posts (with inner calibration folds)", |b| {
        b.iter(|| black_box(LocalModel::train(&big, &cats, &opts).expect("trains")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
