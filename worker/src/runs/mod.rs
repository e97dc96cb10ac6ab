//! The worker's runs: a worker serves many runs at once, each with the
//! settings its coordinator registered. [`RunTranslators`] and
//! [`RunJudges`] build each run's translator and judges once, with the
//! worker's own backends (its slots, rate gate, keys and metrics), from
//! what a [`Registry`] reads; [`RedisRegistry`] reads it from Redis.

mod per_run;
mod registry;

pub use per_run::{Registry, RunJudges, RunTranslators};
pub use registry::RedisRegistry;
