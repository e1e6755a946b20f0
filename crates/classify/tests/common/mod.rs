//! Shared helpers of the integration tests.
#![allow(dead_code)]

use jobwire_core::CategorySlug;
use jobwire_core::dataset::LabeledPost;

/// The 12 categories of the standard taxonomy.
pub const SLUGS: [&str; 12] = [
    "web",
    "bots",
    "mobile",
    "design",
    "video",
    "texts",
    "marketing",
    "ai",
    "assistant",
    "translation",
    "audio",
    "data",
];

pub fn categories() -> Vec<CategorySlug> {
    SLUGS
        .iter()
        .map(|s| CategorySlug::parse(s).expect("valid slug"))
        .collect()
}

pub fn dev_jsonl() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/dev.jsonl");
    std::fs::read_to_string(path).expect("data/dev.jsonl is readable")
}

pub fn dev_set() -> Vec<LabeledPost> {
    LabeledPost::parse_all(&dev_jsonl()).expect("dev.jsonl parses")
}
