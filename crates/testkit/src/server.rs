//! The server lifecycle both fakes share: bind a TCP listener, serve an axum router in a tokio
//! task with graceful shutdown on a cancellation token, and stop (cancel, then wait).

use std::{net::SocketAddr, time::Duration};

use axum::Router;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::TestkitError;

/// Binds a listener, mapping the error to [`TestkitError::Bind`].
pub(crate) async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, TestkitError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| TestkitError::Bind { addr, source })
}

/// A router served on a bound address in a tokio task until its token is cancelled (by
/// [`Server::shutdown`], on drop, or by whoever else holds the token).
#[derive(Debug)]
pub(crate) struct Server {
    /// Names the fake in log messages (`fake {name} ...`).
    name: &'static str,
    addr: SocketAddr,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port) and serves `app` in a tokio task until `cancel`
    /// is cancelled.
    pub(crate) async fn start(
        addr: SocketAddr,
        app: Router,
        cancel: CancellationToken,
        name: &'static str,
    ) -> Result<Server, TestkitError> {
        let listener = bind(addr).await?;
        let addr = listener.local_addr()?;
        let shutdown = cancel.clone();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown.cancelled_owned())
                .await;
            if let Err(e) = served {
                tracing::warn!(error = %e, "fake {name} server stopped");
            }
        });
        Ok(Server {
            name,
            addr,
            cancel,
            task: Some(task),
        })
    }

    /// The bound address.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://{addr}/` — a socket address always forms a valid URL.
    pub(crate) fn url(&self) -> url::Url {
        let addr = self.addr;
        url::Url::parse(&format!("http://{addr}/")).expect("a socket address forms a valid URL")
    }

    /// Cancels the token, then waits (at most 5 s) for open requests to finish.
    pub(crate) async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
        {
            tracing::warn!("fake {} did not stop within 5 s", self.name);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
