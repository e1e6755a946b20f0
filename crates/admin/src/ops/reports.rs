//! Subscribers' reports: accepted (the label becomes a training example) or rejected.

use chrono::Utc;
use jobwire_store::{ExampleSource, ReportId, ReportRow, ReportStatus};

use super::{Actor, Label, OpError};
use crate::state::AdminState;

impl AdminState {
    /// The report, if it exists and is still pending.
    async fn pending_report(&self, id: ReportId) -> Result<ReportRow, OpError> {
        let report = self
            .store
            .report(id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no report {id}")))?;
        if report.status != ReportStatus::Pending {
            return Err(OpError::Conflict(format!(
                "report {id} was {} already",
                report.status.as_str()
            )));
        }
        Ok(report)
    }

    /// The report as decided (a concurrent decision is a conflict).
    async fn decided(&self, id: ReportId, done: bool) -> Result<ReportRow, OpError> {
        if !done {
            return Err(OpError::Conflict(format!(
                "report {id} was decided already"
            )));
        }
        self.store
            .report(id)
            .await?
            .ok_or_else(|| OpError::NotFound(format!("no report {id}")))
    }

    /// Accepts a pending report: its label becomes a training example (source `report`) of
    /// the stored post's own text when the report points at one (a `/wrong` reply quotes
    /// the delivered card, with its header and the subscriber's comment), else of the
    /// report's text; a report with neither is refused.
    pub async fn accept_report(
        &self,
        actor: &Actor,
        id: ReportId,
        label: &Label,
    ) -> Result<ReportRow, OpError> {
        let labeled = self.check_label(label)?;
        let report = self.pending_report(id).await?;
        let post_text = match report.post_id {
            Some(post_id) => self
                .store
                .post(post_id)
                .await?
                .map(|p| p.text)
                .filter(|t| !t.trim().is_empty()),
            None => None,
        };
        let text = match post_text {
            Some(t) => t,
            None if !report.text.trim().is_empty() => report.text.clone(),
            None => {
                return Err(OpError::BadInput(format!(
                    "report {id} has no text to learn from (empty, and no stored post)"
                )));
            }
        };
        let example = labeled.example(report.post_id, text, ExampleSource::Report);
        let done = self
            .store
            .decide_report(id, Some(&example), Utc::now())
            .await?;
        let row = self.decided(id, done).await?;
        self.audit(
            actor,
            "report.accept",
            &format!("report {id}"),
            &labeled.summary(),
        )
        .await;
        tracing::info!(report = id.get(), "admin: report accepted");
        Ok(row)
    }

    /// Rejects (dismisses) a pending report.
    pub async fn reject_report(&self, actor: &Actor, id: ReportId) -> Result<ReportRow, OpError> {
        self.pending_report(id).await?;
        let done = self.store.decide_report(id, None, Utc::now()).await?;
        let row = self.decided(id, done).await?;
        self.audit(actor, "report.reject", &format!("report {id}"), "")
            .await;
        tracing::info!(report = id.get(), "admin: report rejected");
        Ok(row)
    }
}
