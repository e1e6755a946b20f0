//! Posts: an admin's label (a training example), back to the classifier, failed deliveries
//! sent again.

use chrono::Utc;
use jobwire_core::{CategorySlug, PostKind};
use jobwire_store::{ExampleId, ExampleSource, NewExample, PostId, PostStatus};

use super::{Actor, OpError};
use crate::state::AdminState;

/// The kinds a label may have.
pub const KINDS: [&str; 4] = ["job", "resume", "ad", "chatter"];

/// A label as an admin gives it (a JSON body, or the panel's form).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    pub is_job: bool,
    pub kind: String,
    #[serde(default)]
    pub categories: Vec<String>,
}

/// A checked label: the kind and the configured categories, sorted and deduplicated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labeled {
    pub is_job: bool,
    pub kind: PostKind,
    pub categories: Vec<CategorySlug>,
}

impl Labeled {
    /// `job web,design`, as the audit shows a label.
    pub fn summary(&self) -> String {
        let cats: Vec<&str> = self.categories.iter().map(CategorySlug::as_str).collect();
        format!("{} {}", self.kind.as_str(), cats.join(","))
    }

    pub(super) fn example(
        &self,
        post_id: Option<PostId>,
        text: String,
        source: ExampleSource,
    ) -> NewExample {
        NewExample {
            post_id,
            text,
            is_job: self.is_job,
            kind: self.kind,
            categories: self.categories.clone(),
            source,
        }
    }
}

impl AdminState {
    /// Checks a label against the taxonomy; the error names the bad value.
    pub fn check_label(&self, label: &Label) -> Result<Labeled, OpError> {
        let bad = |m: String| OpError::BadInput(m);
        let kind = PostKind::parse(&label.kind)
            .filter(|_| KINDS.contains(&label.kind.as_str()))
            .ok_or_else(|| {
                bad(format!(
                    "unknown kind {:?}: use one of {}",
                    label.kind,
                    KINDS.join(", ")
                ))
            })?;
        if label.is_job != (label.kind == "job") {
            return Err(bad(format!(
                "is_job {} disagrees with kind {:?}: is_job is true exactly for kind \"job\"",
                label.is_job, label.kind
            )));
        }
        if let Some(unknown) = label.categories.iter().find(|c| !self.knows_category(c)) {
            return Err(bad(format!(
                "unknown category {unknown:?}: configured categories are {}",
                self.category_slugs().join(", ")
            )));
        }
        if label.is_job && label.categories.is_empty() {
            return Err(bad("a job needs at least one category".to_owned()));
        }
        let mut categories = label
            .categories
            .iter()
            .map(|c| CategorySlug::parse(c).map_err(|e| bad(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        categories.sort();
        categories.dedup();
        Ok(Labeled {
            is_job: label.is_job,
            kind,
            categories,
        })
    }

    /// An admin's label of a post becomes a training example (source `relabel`).
    pub async fn label_post(
        &self,
        actor: &Actor,
        id: PostId,
        label: &Label,
    ) -> Result<(ExampleId, Labeled), OpError> {
        let labeled = self.check_label(label)?;
        let post = self
            .store
            .post(id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no post {id}")))?;
        let example = labeled.example(Some(post.id), post.text, ExampleSource::Relabel);
        let example_id = self.store.add_example(&example, Utc::now()).await?;
        self.audit(
            actor,
            "post.label",
            &format!("post {id}"),
            &labeled.summary(),
        )
        .await;
        tracing::info!(
            post = id.get(),
            example_id = example_id.get(),
            "admin: post relabeled"
        );
        Ok((example_id, labeled))
    }

    /// The post goes back to the classifier (whichever process runs it picks it up at its
    /// next scheduler tick). Returns the status it had.
    pub async fn reclassify_post(&self, actor: &Actor, id: PostId) -> Result<PostStatus, OpError> {
        let post = self
            .store
            .post(id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no post {id}")))?;
        if !self.store.requeue_post(post.id).await? {
            return Err(OpError::Conflict(format!(
                "post {id} is a re-post of an earlier one; classify that one instead"
            )));
        }
        let was = format!("was {}", post.status.as_str());
        self.audit(actor, "post.reclassify", &format!("post {id}"), &was)
            .await;
        Ok(post.status)
    }

    /// The job's failed deliveries are sent again (sent ones are not sent twice; blocked
    /// chats stay blocked). Returns how many.
    pub async fn redeliver_post(&self, actor: &Actor, id: PostId) -> Result<u64, OpError> {
        let post = self
            .store
            .post(id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no post {id}")))?;
        let n = self.store.retry_failed_deliveries(post.id).await?;
        if n == 0 {
            return Err(OpError::Conflict(format!(
                "post {id} has no failed deliveries to send again"
            )));
        }
        self.audit(
            actor,
            "post.redeliver",
            &format!("post {id}"),
            &format!("{n} deliveries"),
        )
        .await;
        Ok(n)
    }
}
