//! The classifier's shared state ([`Inner`]): its endpoints, prompt, examples and the pool
//! of posts waiting for a request; the pool's flusher (`pool.rs`) and the requests
//! (`request.rs`) work on it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use jobwire_core::CategorySlug;
use serde_json::Value;
use tokio::sync::{Notify, Semaphore, oneshot};

use super::accounting::{Counters, Spent};
use super::config::{LlmConfig, MAX_BATCH};
use super::fewshot::{self, Example};
use super::pool::{Pool, Waiting};
use super::request::Endpoint;
use super::transport::Switch;
use super::{prompt, steering};
use crate::{Classified, ClassifyError, ClassifyInput};

pub(super) struct Inner {
    pub(super) config: LlmConfig,
    pub(super) primary: Endpoint,
    pub(super) fallback: Option<Endpoint>,
    /// The prompt of the next request (swapped when another version becomes current).
    pub(super) prompt: RwLock<Arc<ActivePrompt>>,
    /// The categories' descriptions the prompt lists (configured, then as an admin edits
    /// them; the set of slugs never changes).
    pub(super) described: RwLock<Arc<Vec<(CategorySlug, String)>>>,
    pub(super) schema: Value,
    pub(super) slugs: Vec<CategorySlug>,
    pub(super) name: String,
    pub(super) examples: RwLock<Arc<Vec<Example>>>,
    /// Until when the primary is skipped, and why.
    pub(super) cooldown: Mutex<Option<(Instant, Switch)>>,
    pub(super) counters: Counters,
    pub(super) pool: Mutex<Pool>,
    /// Tells the flusher that the pool changed.
    pub(super) wake: Notify,
    /// One permit per request in flight.
    pub(super) slots: Arc<Semaphore>,
    /// Short ids (`p1`, `p2`, …) are unique over the classifier's life, so a re-asked post
    /// keeps its id next to new posts.
    pub(super) next_id: AtomicU64,
}

/// A prompt in use: the name recorded with its verdicts and the system prompt made from its
/// template for the configured categories.
#[derive(Debug)]
pub(crate) struct ActivePrompt {
    pub(crate) version: String,
    pub(crate) system: String,
    /// The template it was made from (`None`: the built-in [`PROMPT_TEMPLATE`]), kept to
    /// render it again when the categories' descriptions change.
    pub(crate) template: Option<String>,
}

/// Where a post's answer comes (when its item arrives, or its request fails).
pub(super) type Answer = oneshot::Receiver<Result<Classified, ClassifyError>>;

impl Inner {
    /// The prompt in use now.
    pub(super) fn described(&self) -> Arc<Vec<(CategorySlug, String)>> {
        self.described
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn current_prompt(&self) -> Arc<ActivePrompt> {
        self.prompt
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Puts `posts` into the pool; one receiver per post, in order.
    pub(super) fn submit(self: &Arc<Self>, posts: &[ClassifyInput]) -> Vec<Answer> {
        let (items, waits) = self.waiting(posts);
        self.enqueue(items, false);
        waits
    }

    /// `posts` as they wait in the pool, and one receiver per post, in order.
    pub(super) fn waiting(&self, posts: &[ClassifyInput]) -> (Vec<Waiting>, Vec<Answer>) {
        let want_grams = self.config.few_shot > 0 && !self.current_examples().is_empty();
        let now = Instant::now();
        let queued = tokio::time::Instant::now();
        let mut waits = Vec::with_capacity(posts.len());
        let items: Vec<Waiting> = posts
            .iter()
            .map(|p| {
                let (tx, rx) = oneshot::channel();
                waits.push(rx);
                let n = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
                Waiting {
                    id: format!("p{n}"),
                    post: p.id.clone(),
                    alone: steering::looks_like_instructions(prompt::cut(
                        &p.text,
                        self.config.max_post_chars,
                    )),
                    text: p.text.clone(),
                    grams: if want_grams {
                        fewshot::trigrams(&p.text)
                    } else {
                        Vec::new()
                    },
                    started: now,
                    queued_at: queued,
                    reasks: 0,
                    struck: false,
                    problem: String::new(),
                    share: Spent::default(),
                    tx: Some(tx),
                }
            })
            .collect();
        (items, waits)
    }

    pub(super) fn current_examples(&self) -> Arc<Vec<Example>> {
        self.examples
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn batch_size(&self) -> usize {
        self.config.batch_size.clamp(1, MAX_BATCH)
    }

    pub(super) fn lock_pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
