//! Group commit of delivery status changes: every concurrent send hands its update to one
//! task that writes whatever has gathered in a single transaction and then answers each
//! sender. Under load this turns thousands of tiny transactions per second into tens of
//! larger ones; an idle sender waits for one round trip, as before.

use std::sync::Arc;

use chrono::Utc;
use jobwire_store::{DeliveryUpdate, Store, StoreError};
use tokio::sync::{mpsc, oneshot};

/// The most updates written in one transaction.
const MAX_BATCH: usize = 512;

type Reply = oneshot::Sender<Result<bool, Arc<StoreError>>>;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("recording a delivery status failed: {0}")]
    Store(Arc<StoreError>),
    #[error("the status recorder has stopped")]
    Stopped,
}

/// Handle to the recorder task. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Recorder {
    tx: mpsc::Sender<(DeliveryUpdate, Reply)>,
}

impl Recorder {
    /// Starts the recorder task on the current runtime.
    pub fn spawn(store: Arc<dyn Store>) -> Self {
        let (tx, mut rx) = mpsc::channel::<(DeliveryUpdate, Reply)>(4 * MAX_BATCH);
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                let updates: Vec<DeliveryUpdate> = batch.iter().map(|(u, _)| u.clone()).collect();
                match store.apply_delivery_updates(&updates, Utc::now()).await {
                    Ok(applied) => {
                        for ((_, reply), ok) in batch.drain(..).zip(applied) {
                            let _ = reply.send(Ok(ok));
                        }
                    }
                    Err(e) => {
                        tracing::error!(error = %e, n = updates.len(), "delivery status batch failed");
                        let e = Arc::new(e);
                        for (_, reply) in batch.drain(..) {
                            let _ = reply.send(Err(e.clone()));
                        }
                    }
                }
            }
        });
        Self { tx }
    }

    /// Records one update once it is committed; says whether it applied.
    pub async fn record(&self, update: DeliveryUpdate) -> Result<bool, RecordError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((update, reply))
            .await
            .map_err(|_| RecordError::Stopped)?;
        answer
            .await
            .map_err(|_| RecordError::Stopped)?
            .map_err(RecordError::Store)
    }
}
