//! The trait both classifiers implement, and what goes in and out of it.

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use jobwire_core::Verdict;
use jobwire_core::extract::Extraction;

use crate::ClassifyError;

/// A post to classify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifyInput {
    /// A stable id for the post (used to match batched answers; any unique string).
    pub id: String,
    /// The post text as received (untrusted data, never instructions).
    pub text: String,
    /// The channel it came from (for logs; not shown to the model as instructions).
    pub channel: String,
}

/// A verdict plus the bookkeeping that is stored with every classification.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    /// The decision.
    pub verdict: Verdict,
    /// Which model produced it (`local:<hash>` for the local model; for the LLM the configured
    /// model name of the endpoint that answered, never the name its response reports).
    /// A metrics label and a stored column, so its values are bounded.
    pub model: String,
    /// The prompt version (`classify.v1`) or the local model format version (`local.v1`).
    pub prompt_version: String,
    /// Prompt tokens billed (0 for the local model; for a batch, this post's share).
    pub tokens_in: u32,
    /// Completion tokens billed (0 for the local model; for a batch, this post's share).
    pub tokens_out: u32,
    /// Wall time of the classification (for a batch, the whole request).
    pub latency_ms: u32,
    /// What the post says about the job (title, budget, …); `None` for non-jobs or when
    /// the classifier did not extract anything.
    pub extraction: Option<Extraction>,
    /// What this classification cost in US dollars (0 for the local model; for a batch,
    /// this post's share).
    pub cost_usd: f64,
}

/// The lowest confidence at which an LLM's answer is kept as a training example by default
/// ([`Classifier::learn_min_confidence`]).
pub const DEFAULT_LEARN_MIN_CONFIDENCE: f32 = 0.8;

/// Something that classifies posts: the local model or an LLM.
#[async_trait]
pub trait Classifier: Send + Sync {
    /// Classifies one post. A [`ClassifyError::Unavailable`] means "try again later".
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError>;

    /// Classifies several posts, one result per post in the same order. A classifier that
    /// can answer many posts in one request (the LLM) overrides this; by default the posts
    /// are classified one by one. One post's failure does not fail the others.
    async fn classify_many(
        &self,
        posts: &[ClassifyInput],
    ) -> Vec<Result<Classified, ClassifyError>> {
        let mut out = Vec::with_capacity(posts.len());
        for post in posts {
            out.push(self.classify(post).await);
        }
        out
    }

    /// Classifies `posts` and yields each post's result (with its position in `posts`) as
    /// soon as it is known, in any order, once each: the classify stage stores and delivers
    /// a verdict while the LLM still writes the rest of its answer. The default yields
    /// [`Classifier::classify_many`]'s results when they are all in.
    fn classify_stream(&self, posts: Vec<ClassifyInput>) -> BoxStream<'_, Settled> {
        Box::pin(
            futures::stream::once(async move { self.classify_many(&posts).await })
                .flat_map(|all| futures::stream::iter(all.into_iter().enumerate())),
        )
    }

    /// How many posts [`Classifier::classify_many`] usefully takes at once.
    fn max_batch(&self) -> usize {
        1
    }

    /// A short name for logs and metrics (`local`, `llm:<model>`).
    fn name(&self) -> &str;

    /// The lowest confidence at which the classify stage keeps this classifier's LLM answers
    /// as training examples for the local model (with `learn_from_llm`): an unsure answer,
    /// or one a post steered, would teach the local model the LLM's mistakes. Default
    /// [`DEFAULT_LEARN_MIN_CONFIDENCE`].
    fn learn_min_confidence(&self) -> f32 {
        DEFAULT_LEARN_MIN_CONFIDENCE
    }

    /// Whether this exact text was part of the classifier's training data (lets an
    /// evaluation report how many evaluated posts the model had already seen). `false` by
    /// default, and for LLMs.
    fn was_trained_on(&self, _text: &str) -> bool {
        false
    }
}

/// One post's result as [`Classifier::classify_stream`] yields it: the post's position in
/// the input, and its result.
pub type Settled = (usize, Result<Classified, ClassifyError>);

/// The results of [`Classifier::classify_stream`] in the order of its `n` inputs; a post the
/// stream never answered gets [`ClassifyError::Unavailable`] (it waits and is asked again).
pub async fn collect_in_order(
    mut stream: BoxStream<'_, Settled>,
    n: usize,
) -> Vec<Result<Classified, ClassifyError>> {
    let mut out: Vec<Option<Result<Classified, ClassifyError>>> = (0..n).map(|_| None).collect();
    while let Some((i, result)) = stream.next().await {
        if let Some(slot) = out.get_mut(i) {
            *slot = Some(result);
        }
    }
    out.into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(ClassifyError::Unavailable {
                    attempts: 0,
                    last_error: "the classifier gave no answer for this post".into(),
                    retry_after: None,
                })
            })
        })
        .collect()
}

/// [`Classifier::classify`] for a classifier that answers in batches: `post` as a batch of
/// one. `empty` is the error of a batch answered with nothing.
pub(crate) async fn classify_as_batch(
    classifier: &dyn Classifier,
    post: &ClassifyInput,
    empty: &str,
) -> Result<Classified, ClassifyError> {
    classifier
        .classify_many(std::slice::from_ref(post))
        .await
        .pop()
        .unwrap_or_else(|| Err(ClassifyError::Invalid(empty.into())))
}
