//! Progress of long commands on stderr (indicatif, as `import` shows it): `run --replay`
//! counts the posts taken in, `eval` the posts classified, `retrain` shows that it works,
//! `bench` the jobs matched, posts taken in and messages delivered.
//! Drawn only when stderr is a terminal: piped into a file or a CI log, nothing is written
//! (the summaries on stdout and the log lines are the record).

use std::io::IsTerminal;
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use jobwire_classify::{Classified, Classifier, ClassifyError, ClassifyInput, Settled};

/// Whether bars are drawn: stderr is a terminal.
pub fn enabled() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar of `len` steps named `message` (`{pos}/{len}`, rate and time left), hidden when
/// stderr is not a terminal.
pub fn bar(len: u64, message: &'static str) -> ProgressBar {
    bar_if(enabled(), len, message)
}

fn bar_if(draw: bool, len: u64, message: &'static str) -> ProgressBar {
    if !draw {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// A counter without a known end (`{pos}` so far, the rate and the time spent), hidden when
/// stderr is not a terminal.
pub fn counter(message: &'static str) -> ProgressBar {
    counter_if(enabled(), message)
}

fn counter_if(draw: bool, message: &'static str) -> ProgressBar {
    if !draw {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}: {pos} ({per_sec}, {elapsed})")
    {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// A classifier that moves `bar` by one for each post it answers (a failure counts too: the
/// post was dealt with), otherwise the classifier it wraps.
pub struct Progressed {
    inner: Arc<dyn Classifier>,
    bar: ProgressBar,
}

impl std::fmt::Debug for Progressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progressed")
            .field("inner", &self.inner.name())
            .field("done", &self.bar.position())
            .finish()
    }
}

impl Progressed {
    pub fn new(inner: Arc<dyn Classifier>, bar: ProgressBar) -> Self {
        Self { inner, bar }
    }
}

#[async_trait]
impl Classifier for Progressed {
    async fn classify(&self, post: &ClassifyInput) -> Result<Classified, ClassifyError> {
        let result = self.inner.classify(post).await;
        self.bar.inc(1);
        result
    }

    async fn classify_many(
        &self,
        posts: &[ClassifyInput],
    ) -> Vec<Result<Classified, ClassifyError>> {
        let results = self.inner.classify_many(posts).await;
        self.bar.inc(results.len() as u64);
        results
    }

    fn classify_stream(&self, posts: Vec<ClassifyInput>) -> BoxStream<'_, Settled> {
        let bar = self.bar.clone();
        self.inner
            .classify_stream(posts)
            .inspect(move |_| bar.inc(1))
            .boxed()
    }

    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn learn_min_confidence(&self) -> f32 {
        self.inner.learn_min_confidence()
    }

    fn was_trained_on(&self, text: &str) -> bool {
        self.inner.was_trained_on(text)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Fails every post (a failure moves the bar too).
    struct Sure;

    #[async_trait]
    impl Classifier for Sure {
        async fn classify(&self, _post: &ClassifyInput) -> Result<Classified, ClassifyError> {
            Err(ClassifyError::Unavailable {
                attempts: 1,
                last_error: "a stand-in".into(),
                retry_after: None,
            })
        }

        fn name(&self) -> &str {
            "sure"
        }
    }

    #[tokio::test]
    async fn the_bar_counts_each_post_once_whatever_the_call() {
        let bar = ProgressBar::hidden();
        let c = Progressed::new(Arc::new(Sure), bar.clone());
        let post = ClassifyInput {
            id: "1".into(),
            text: "a post".into(),
            channel: "c".into(),
        };
        let _ = c.classify(&post).await;
        assert_eq!(bar.position(), 1);
        let _ = c.classify_many(&[post.clone(), post.clone()]).await;
        assert_eq!(bar.position(), 3);
        let settled: Vec<_> = c.classify_stream(vec![post.clone(); 4]).collect().await;
        assert_eq!(settled.len(), 4);
        assert_eq!(bar.position(), 7);
        assert_eq!(c.name(), "sure");
    }

    #[test]
    fn nothing_is_drawn_off_a_terminal() {
        assert!(bar_if(false, 10, "x").is_hidden());
        assert!(counter_if(false, "x").is_hidden());
        // On a terminal: a bar of the given length (indicatif itself draws nothing to a
        // stderr that is not one).
        let drawn = bar_if(true, 10, "x");
        assert_eq!(drawn.length(), Some(10));
        drawn.finish_and_clear();
    }
}
