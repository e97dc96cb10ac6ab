//! `/healthz`, `/readyz` and `/metrics`, served on a thread of their own,
//! so that a probe is answered at once however busy the process's async
//! runtime is; `/healthz` still fails when that runtime stops running.

use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the process's async runtime may go without running before
/// `/healthz` says the process is not alive.
pub const STALE_RUNTIME: Duration = Duration::from_secs(30);

/// How often the runtime shows it runs.
const TICK: Duration = Duration::from_secs(1);

/// Whether the process is up and whether it is ready for work, and its metrics.
#[derive(Clone)]
pub struct Health {
    ready: Arc<AtomicBool>,
    metrics: Option<Arc<autoeval_telemetry::Metrics>>,
    /// Milliseconds from `epoch` to the runtime's last tick.
    ticked_ms: Arc<AtomicU64>,
    epoch: Instant,
}

impl Default for Health {
    fn default() -> Health {
        Health {
            ready: Arc::default(),
            metrics: None,
            ticked_ms: Arc::default(),
            epoch: Instant::now(),
        }
    }
}

impl Health {
    /// Health that also serves `metrics` at `/metrics`.
    pub fn with_metrics(metrics: Arc<autoeval_telemetry::Metrics>) -> Health {
        Health {
            metrics: Some(metrics),
            ..Health::default()
        }
    }

    /// Says whether the process can take work now (connected, subscribed).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// The async runtime runs now.
    fn tick(&self) {
        let now = self.epoch.elapsed().as_millis() as u64;
        self.ticked_ms.store(now, Ordering::Relaxed);
    }

    /// How long since the async runtime last ran.
    fn since_tick(&self) -> Duration {
        let now = self.epoch.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.ticked_ms.load(Ordering::Relaxed)))
    }

    /// Serves `/healthz` (alive: the async runtime ran within
    /// [`STALE_RUNTIME`]), `/readyz` (ready: 200, else 503) and, with
    /// metrics, `/metrics` on `addr`, from a thread of their own; returns the
    /// address bound, which a port of 0 leaves to the system. Call it on the
    /// runtime whose liveness `/healthz` reports.
    pub async fn serve(&self, addr: &str) -> Result<SocketAddr> {
        let listener = std::net::TcpListener::bind(addr)
            .with_context(|| format!("cannot listen on {addr} for health checks"))?;
        listener.set_nonblocking(true)?;
        let bound = listener.local_addr()?;
        self.tick();
        let ticking = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(TICK).await;
                ticking.tick();
            }
        });
        let app = self.router();
        std::thread::Builder::new()
            .name("health".into())
            .spawn(move || {
                let served = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(anyhow::Error::from)
                    .and_then(|rt| {
                        rt.block_on(async move {
                            let listener = tokio::net::TcpListener::from_std(listener)?;
                            axum::serve(listener, app).await?;
                            anyhow::Ok(())
                        })
                    });
                if let Err(e) = served {
                    tracing::error!(error = %e, "the health endpoint stopped");
                }
            })
            .context("cannot start the health endpoint's thread")?;
        Ok(bound)
    }

    fn router(&self) -> axum::Router {
        use axum::{http::header, http::StatusCode, routing::get, Router};
        let ready = self.ready.clone();
        let metrics = self.metrics.clone();
        let alive = self.clone();
        Router::new()
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
            .route(
                "/healthz",
                get(move || {
                    let stalled = alive.since_tick();
                    async move {
                        if stalled < STALE_RUNTIME {
                            (StatusCode::OK, "ok\n".to_string())
                        } else {
                            (
                                StatusCode::SERVICE_UNAVAILABLE,
                                format!(
                                    "the async runtime has not run for {} s\n",
                                    stalled.as_secs()
                                ),
                            )
                        }
                    }
                }),
            )
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
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// `GET path` on `addr` over a plain socket: the status line and how long it took.
    fn get(addr: SocketAddr, path: &str) -> (String, Duration) {
        let asked = Instant::now();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        (
            text.lines().next().unwrap_or_default().to_string(),
            asked.elapsed(),
        )
    }

    #[test]
    fn probes_are_answered_while_the_runtime_is_busy_and_fail_once_it_stopped() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let health = Health::default();
        let addr = runtime.block_on(async {
            let addr = health.serve("127.0.0.1:0").await.unwrap();
            // Let the ticker run once.
            tokio::time::sleep(Duration::from_millis(20)).await;
            addr
        });
        // The runtime is not running now (as if one step held it for long):
        // the probe is answered by the health thread all the same.
        let (status, took) = get(addr, "/healthz");
        assert!(status.contains("200"), "{status}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // A runtime that has not ticked within the stale limit is not alive.
        let stale = Health {
            epoch: Instant::now() - STALE_RUNTIME - Duration::from_secs(1),
            ..Health::default()
        };
        assert!(stale.since_tick() >= STALE_RUNTIME);
        let addr = runtime.block_on(stale.serve("127.0.0.1:0")).unwrap();
        // `serve` ticked once, just now: alive.
        assert!(get(addr, "/healthz").0.contains("200"));
        stale.ticked_ms.store(0, Ordering::Relaxed);
        let (status, _) = get(addr, "/healthz");
        assert!(status.contains("503"), "{status}");
        assert!(get(addr, "/readyz").0.contains("503"));
        stale.set_ready(true);
        assert!(get(addr, "/readyz").0.contains("200"));
    }
}
