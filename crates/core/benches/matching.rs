//! Fan-out matching: [`SubscriberIndex::matches`] against the plain scan, over 100,000
//! synthetic subscribers and realistic ~600-character jobs.
//!
//! `cargo bench -p jobwire-core --bench matching`. Before Criterion's runs it prints p50/p99
//! latencies of both over 2,000 distinct jobs.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use jobwire_core::CategorySlug;
use jobwire_core::matching::synthetic::{synthetic_job, synthetic_subscribers};
use jobwire_core::matching::{JobFacts, SubscriberIndex, scan_matches};
use jobwire_core::normalize::normalize;

const SUBSCRIBERS: usize = 100_000;

fn jobs(n: u64) -> Vec<(Vec<CategorySlug>, String)> {
    (0..n)
        .map(|seed| {
            let (cats, text) = synthetic_job(seed);
            (cats, normalize(&text))
        })
        .collect()
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn report_latencies() {
    let subs = synthetic_subscribers(SUBSCRIBERS, 7);
    let started = Instant::now();
    let index = SubscriberIndex::build(subs.clone());
    let build = started.elapsed();
    let jobs = jobs(2_000);
    let mut index_times = Vec::with_capacity(jobs.len());
    let mut scan_times = Vec::with_capacity(jobs.len());
    let mut delivered = 0usize;
    for (cats, text) in &jobs {
        let job = JobFacts {
            categories: cats,
            normalized_text: text,
        };
        let t = Instant::now();
        let hits = black_box(index.matches(black_box(&job)));
        index_times.push(t.elapsed());
        delivered += hits.len();
        if scan_times.len() < 300 {
            let t = Instant::now();
            let scanned = black_box(scan_matches(black_box(&subs), black_box(&job)));
            scan_times.push(t.elapsed());
            assert_eq!(hits, scanned, "index and scan disagree");
        }
    }
    let (i50, i99, imax) = percentiles(index_times);
    let (s50, s99, smax) = percentiles(scan_times);
    eprintln!(
        "matching {SUBSCRIBERS} subscribers, {} patterns, built in {build:?}; \
         {:.0} recipients per job on average",
        index.pattern_count(),
        delivered as f64 / jobs.len() as f64
    );
    eprintln!("  index: p50 {i50:?}  p99 {i99:?}  max {imax:?}  (2000 jobs)");
    eprintln!("  scan:  p50 {s50:?}  p99 {s99:?}  max {smax:?}  (300 jobs)");
    eprintln!(
        "  median speed-up {:.1}x",
        s50.as_secs_f64() / i50.as_secs_f64()
    );
}

fn bench(c: &mut Criterion) {
    report_latencies();

    let subs = synthetic_subscribers(SUBSCRIBERS, 7);
    let index = SubscriberIndex::build(subs.clone());
    let jobs = jobs(64);
    let mut group = c.benchmark_group("matching_100k");
    let mut i = 0;
    group.bench_function("index", |b| {
        b.iter(|| {
            let (cats, text) = &jobs[i % jobs.len()];
            i += 1;
            index.matches(black_box(&JobFacts {
                categories: cats,
                normalized_text: text,
            }))
        })
    });
    let mut i = 0;
    group.sample_size(20);
    group.bench_function("scan", |b| {
        b.iter(|| {
            let (cats, text) = &jobs[i % jobs.len()];
            i += 1;
            scan_matches(
                black_box(&subs),
                black_box(&JobFacts {
                    categories: cats,
                    normalized_text: text,
                }),
            )
        })
    });
    group.finish();

    c.bench_function("build_index_100k", |b| {
        b.iter_batched(
            || subs.clone(),
            SubscriberIndex::build,
            criterion::BatchSize::LargeInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
