//! The fleet's state in Redis, laid out as [`autoeval_proto::fleet`]
//! documents. A round's result is written at most once: one script sets it
//! only if absent and updates the counters and the unit's final outcome in
//! the same step, so a redelivered task can never count twice, and the
//! counters always equal a recount of the stored results.

mod admission;
mod batches;
mod budget;
mod cache;
mod connect;
mod custody;
mod error;
mod failover;
mod gate;
mod holding;
mod presence;
mod records;
mod run_store;
mod runs;
mod serving;

pub use batches::RedisJournal;
pub use budget::{Budget, Budgets, Cap, CapsSet, RunSpend};
pub use cache::RedisCache;
pub use connect::{connect, database_of};
pub use custody::{RedisCustody, CUSTODY_LEASE};
pub use error::StoreError;
pub use failover::Connection;
pub use gate::{limit_key, RedisGate};
pub use holding::{Busy, Held, Holding, Work};
pub use presence::{live_processes, tell_presence, Presence};
pub use records::RedisRecords;
pub use run_store::{counter_field, Arrived, RunStore};
pub use runs::{all_runs, runs_made_from, runs_with_keys};
pub use serving::{forget_queued_model, queued_models, served_models, spawn_serving_reporter};

pub(crate) use error::redis_err;
