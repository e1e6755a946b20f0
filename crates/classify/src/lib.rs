//! Classification of posts: is it a paid job, what kind of message is it, and which
//! categories does it belong to.
//!
//! Two classifiers share one trait, [`Classifier`]:
//!
//! * [`cascade::LiveLocal`] over [`local::LocalModel`] — a small linear model over character
//!   n-grams and word features, trained in pure Rust from a labeled JSONL file (fast, offline,
//!   free; the first pass and the fallback; replaced in place when retrained);
//! * [`llm::LlmClassifier`] — any OpenAI-compatible chat-completions endpoint with strict
//!   JSON-schema output, retries with backoff, and validation of every answer.
//!
//! [`eval`] measures either of them against a labeled dataset (and cross-validates the local
//! model). The classify stage lives in [`stage`].

pub mod cascade;
mod classifier;
pub mod config;
mod error;
pub mod eval;
pub mod events;
pub mod llm;
pub mod local;
pub mod retrain;
pub mod stage;

pub use classifier::{
    Classified, Classifier, ClassifyInput, DEFAULT_LEARN_MIN_CONFIDENCE, Settled, collect_in_order,
};
pub use config::{ClassifierConfig, ClassifierKind, ClassifierSection};
pub use error::ClassifyError;
