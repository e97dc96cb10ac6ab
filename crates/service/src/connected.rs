//! What every fleet process does the same: its connection settings on the
//! command line, and serving over a broker connection that is made again
//! whenever it is lost, until shutdown.

use crate::Health;
use autoeval_amqp::{Broker, BrokerError};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::watch;

/// Where a fleet process finds the broker and Redis, and how it serves.
#[derive(clap::Args, Debug, Clone)]
pub struct ServiceArgs {
    /// The broker.
    #[command(flatten)]
    pub broker: crate::AmqpUrl,
    /// Redis.
    #[command(flatten)]
    pub store: crate::RedisUrl,
    /// Threads of the async runtime: one moves the bytes of hundreds of
    /// calls in flight; more only help when one core cannot keep up.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Where /healthz, /readyz and /metrics are served.
    #[command(flatten)]
    pub health: crate::HealthAddr,
    /// The broker's consumer_timeout, in seconds (RabbitMQ's default: 30
    /// minutes), which what this process holds must stay under: the
    /// verifier lowers its prefetch until a bundle's longest wait in hand,
    /// at the default check time limit, does; the worker warns of a run
    /// whose tasks could take longer.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub consumer_timeout_s: u64,
}

impl ServiceArgs {
    /// The names of this fleet's exchanges and queues (see
    /// [`crate::AmqpUrl::topology`]), said in the log for the operator who
    /// wonders why a process takes no work.
    pub fn topology(&self) -> Result<autoeval_proto::fleet::Topology, crate::FleetNameError> {
        let topology = self.broker.topology(&self.store.redis)?;
        tracing::info!(
            fleet = topology.name().unwrap_or("(unnamed)"),
            verify_queue = topology.verify_queue(),
            "this process works for the fleet whose queues are named after it"
        );
        Ok(topology)
    }
}

/// Connects to the broker at `amqp` as `name` and runs `serve` over the
/// connection until it returns; `serve` says whether every subscription
/// was made (the process is ready meanwhile). A lost connection is made
/// again, with backoff, and served again; shutdown ends it after `serve`
/// has finished the work it began. A connection no retry can make (TLS
/// against a plaintext port, refused credentials, an unknown vhost) ends
/// it with that error, for the process to exit with.
pub async fn serve_connected<F, Fut>(
    amqp: &str,
    topology: &autoeval_proto::fleet::Topology,
    name: &str,
    health: &Health,
    shutdown: watch::Receiver<bool>,
    mut serve: F,
) -> Result<(), BrokerError>
where
    F: FnMut(Arc<Broker>) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut stop = shutdown.clone();
    loop {
        let broker = tokio::select! {
            b = Broker::connect_with_backoff(amqp, topology, name) => Arc::new(b?),
            _ = stop.changed() => return Ok(()),
        };
        serve(broker.clone()).await;
        health.set_ready(false);
        broker.close().await;
        if *shutdown.borrow() {
            tracing::info!("stopped");
            return Ok(());
        }
        tracing::warn!("subscription ended; reconnecting");
    }
}
