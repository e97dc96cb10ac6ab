//! What every fleet process shares: `/healthz`, `/readyz` and `/metrics`,
//! shutdown on SIGTERM or Ctrl-C, and the settings of each run it works for.

mod connected;
mod file_variables;
mod fleet_watch;
mod health;
mod presence;
mod urls;

pub use connected::{serve_connected, ServiceArgs};
pub use file_variables::{file_variables, variables_from_files};
pub use fleet_watch::{FleetWatch, InHand};
pub use health::{Health, STALE_RUNTIME};
pub use presence::spawn_presence;
pub use urls::{AmqpUrl, FleetNameError, HealthAddr, RedisUrl, DEFAULT_AMQP, DEFAULT_REDIS};

use anyhow::{Context, Result};
use autoeval_redis_store::Connection;
use autoeval_redis_store::RunStore;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{watch, Mutex};

/// The exit of a service's `main`: a failure is one line saying what to
/// fix (`error: …` with its causes), never a backtrace, whatever
/// `RUST_BACKTRACE` says.
pub fn exit_with(result: Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// A service's `main`: reads the `_FILE` variables, sets up the logs,
/// parses the command line and runs `run` with it, exiting as
/// [`exit_with`] says.
pub fn main_of<A: clap::Parser>(run: impl FnOnce(A) -> Result<()>) -> std::process::ExitCode {
    exit_with(variables_from_files().and_then(|()| {
        autoeval_telemetry::init_logs("info");
        run(A::parse())
    }))
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
    conn: Connection,
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
    pub fn new(conn: Connection) -> RunSettings<T> {
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
