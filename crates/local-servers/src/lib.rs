//! Servers started on loopback ports of their own, to be lost on purpose:
//! a RabbitMQ cluster ([`RabbitCluster`], Debian's `rabbitmq-server`
//! clustered with `rabbitmqctl join_cluster`) and a Redis primary with a
//! replica and three Sentinels ([`SentinelRedis`], Debian's `redis-server`).
//! The node-loss tests and `autoeval bench-soak` kill and stop them.
//!
//! Every server is killed when its owner is dropped.

mod process;
mod rabbit;
mod sentinel;

pub use process::{free_port, wait_for, Server};
pub use rabbit::RabbitCluster;
pub use sentinel::{SentinelRedis, PRIMARY_NAME};

/// What went wrong starting, asking or stopping a server.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LocalServerError(pub String);

/// The result of this crate's operations.
pub type Result<T> = std::result::Result<T, LocalServerError>;
