//! Group reads of delivery rows: every concurrent send hands the id of its delivery to one
//! task that reads whatever has gathered in a single query and answers each sender. Under
//! load this turns one `SELECT` per delivery into one per batch; an idle sender waits for one
//! round trip, as before.

use std::collections::HashMap;
use std::sync::Arc;

use jobwire_store::{DeliveryId, DeliveryRow, Store, StoreError};
use tokio::sync::{mpsc, oneshot};

/// The most rows read in one query.
const MAX_BATCH: usize = 512;

type Reply = oneshot::Sender<Result<Option<DeliveryRow>, Arc<StoreError>>>;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading a delivery failed: {0}")]
    Store(Arc<StoreError>),
    #[error("the delivery reader has stopped")]
    Stopped,
}

/// Handle to the reader task. Cheap to clone.
#[derive(Debug, Clone)]
pub struct RowReader {
    tx: mpsc::Sender<(DeliveryId, Reply)>,
}

impl RowReader {
    /// Starts the reader task on the current runtime.
    pub fn spawn(store: Arc<dyn Store>) -> Self {
        let (tx, mut rx) = mpsc::channel::<(DeliveryId, Reply)>(4 * MAX_BATCH);
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                let ids: Vec<DeliveryId> = batch.iter().map(|(id, _)| *id).collect();
                match store.deliveries(&ids).await {
                    Ok(rows) => {
                        let rows: HashMap<DeliveryId, DeliveryRow> =
                            rows.into_iter().map(|r| (r.id, r)).collect();
                        for (id, reply) in batch.drain(..) {
                            let _ = reply.send(Ok(rows.get(&id).cloned()));
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, n = ids.len(), "reading a batch of deliveries failed");
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

    /// The delivery's row as stored now (`None`: no such delivery).
    pub async fn read(&self, id: DeliveryId) -> Result<Option<DeliveryRow>, ReadError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((id, reply))
            .await
            .map_err(|_| ReadError::Stopped)?;
        answer
            .await
            .map_err(|_| ReadError::Stopped)?
            .map_err(ReadError::Store)
    }
}
