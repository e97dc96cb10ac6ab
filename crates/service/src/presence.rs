//! Telling the fleet where this process is connected (the broker node,
//! the Redis primary), for `autoeval status`, and counting reconnections
//! and failovers in its metrics.

use autoeval_redis_store::{tell_presence, Connection, Presence};
use autoeval_telemetry::Metrics;
use std::sync::Arc;
use std::time::Duration;

/// How often a process says where it is connected.
const TELL_EVERY: Duration = Duration::from_secs(1);

/// Where this process (`role`) is connected now.
fn presence(process: &str, redis: &Connection) -> (Presence, autoeval_amqp::Connections) {
    let broker = autoeval_amqp::connections();
    let made: u64 = broker.by_node.values().sum();
    let presence = Presence {
        process: process.to_string(),
        broker: broker.last.clone(),
        reconnections: made.saturating_sub(1),
        redis: redis.primary(),
        failovers: redis.failovers(),
    };
    (presence, broker)
}

/// Says every second, until the runtime ends, where this process is
/// connected, and brings `metrics` up to it.
pub fn spawn_presence(
    redis: Connection,
    role: &str,
    metrics: Arc<Metrics>,
) -> tokio::task::JoinHandle<()> {
    let process = crate::process_name(role);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TELL_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let (now, broker) = presence(&process, &redis);
            metrics.connections.observe(
                &broker.by_node,
                broker.last.as_deref(),
                &now.redis,
                now.failovers,
            );
            if let Err(e) = tell_presence(&redis, &now).await {
                tracing::debug!(error = %e, "cannot tell Redis where this process is connected");
            }
        }
    })
}
