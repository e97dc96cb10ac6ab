//! What every fleet process shares: `/healthz`, `/readyz` and `/metrics`,
//! shutdown on SIGTERM or Ctrl-C, and the settings of each run it works for.

mod connected;
mod fleet_watch;

pub use connected::{serve_connected, ServiceArgs};
pub use fleet_watch::{FleetWatch, InHand};

use anyhow::{Context, Result};
use autoeval_redis_store::Connection as ConnectionManager;
use autoeval_redis_store::RunStore;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::{watch, Mutex};

/// Whether the process is up and whether it is ready for work, and its metrics.
#[derive(Clone, Default)]
pub struct Health {
    ready: Arc<AtomicBool>,
    metrics: Option<Arc<autoeval_telemetry::Metrics>>,
}

impl Health {
    /// Health that also serves `metrics` at `/metrics`.
    pub fn with_metrics(metrics: Arc<autoeval_telemetry::Metrics>) -> Health {
        Health {
            ready: Arc::default(),
            metrics: Some(metrics),
        }
    }

    /// Says whether the process can take work now (connected, subscribed).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// Serves `/healthz` (alive), `/readyz` (ready: 200, else 503) and,
    /// with metrics, `/metrics` on `addr`; returns the address bound, which
    /// a port of 0 leaves to the system.
    pub async fn serve(&self, addr: &str) -> Result<SocketAddr> {
        use axum::{http::header, http::StatusCode, routing::get, Router};
        let ready = self.ready.clone();
        let metrics = self.metrics.clone();
        let app = Router::new()
            .route(
                "/metrics",
                get(move || {
                    let text = metrics.as_ref().map(|m| m.encode());
                    async move {
                        match text {
                            Some(t) => (
                                StatusCode::OK,
                                [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                                t,
                            ),
                            None => (
                                StatusCode::NOT_FOUND,
                                [(header::CONTENT_TYPE, "text/plain")],
                                "no metrics\n".to_string(),
                            ),
                        }
                    }
                }),
            )
            .route("/healthz", get(|| async { "ok\n" }))
            .route(
                "/readyz",
                get(move || {
                    let ready = ready.load(Ordering::Relaxed);
                    async move {
                        if ready {
                            (StatusCode::OK, "ready\n")
                        } else {
                            (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
                        }
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr} for health checks"))?;
        let bound = listener.local_addr()?;
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the health endpoint stopped");
            }
        });
        Ok(bound)
    }
}

/// This process's name in the fleet: its role, host and process id.
pub fn process_name(role: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{role}@{host}:{}", std::process::id())
}

/// The async runtime of a fleet process: one thread by default, because a
/// worker's async side only moves bytes (model calls, broker, Redis) and one
/// thread does that without waking others; CPU work runs on blocking threads.
pub fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
}

/// A signal that flips once, on SIGTERM or Ctrl-C.
pub fn shutdown_signal() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        let term = async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                match signal(SignalKind::terminate()) {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            }
            #[cfg(not(unix))]
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = term => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        tracing::info!("shutting down: finishing the tasks in hand");
        let _ = tx.send(true);
    });
    rx
}

/// Each run's stage settings, read from Redis once per run: as the whole
/// `StageSettings` a worker builds its backends from, or as the part of
/// them a verifier needs.
pub struct RunSettings<T> {
    conn: ConnectionManager,
    known: Arc<Mutex<HashMap<String, Arc<T>>>>,
}

impl<T> Clone for RunSettings<T> {
    fn clone(&self) -> Self {
        RunSettings {
            conn: self.conn.clone(),
            known: self.known.clone(),
        }
    }
}

impl<T: DeserializeOwned> RunSettings<T> {
    /// Settings read over `conn`.
    pub fn new(conn: ConnectionManager) -> RunSettings<T> {
        RunSettings {
            conn,
            known: Arc::default(),
        }
    }

    /// The settings of `run`; an error when the run is not registered, or
    /// when Redis cannot be read (see [`is_transient`]).
    pub async fn get(&self, run: &str) -> Result<Arc<T>> {
        if let Some(s) = self.known.lock().await.get(run) {
            return Ok(s.clone());
        }
        let meta = RunStore::new(self.conn.clone(), run).meta().await?;
        let text = meta
            .get(autoeval_proto::meta::STAGES)
            .with_context(|| format!("run {run:?} is not registered"))?;
        let settings: Arc<T> = Arc::new(
            serde_json::from_str(text)
                .with_context(|| format!("run {run:?} has unreadable settings"))?,
        );
        self.known
            .lock()
            .await
            .insert(run.to_string(), settings.clone());
        Ok(settings)
    }
}

/// True for an error that may pass (Redis unreachable for a moment): the
/// task goes back to its queue rather than to the dead letters.
pub fn is_transient(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<autoeval_redis_store::StoreError>(),
        Some(autoeval_redis_store::StoreError::Redis { .. })
    )
}

/// Why a run's stage cannot be built, for the engine: transient when Redis
/// could not be read (the delivery goes back), else dead-lettered with why.
pub fn setup_error(e: &anyhow::Error) -> autoeval_engine::SetupError {
    autoeval_engine::SetupError {
        transient: is_transient(e),
        message: format!("{e:#}"),
    }
}
