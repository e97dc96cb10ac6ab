//! The fleet's coordinator, as a library the command line calls: it
//! registers the run in Redis, publishes its tasks to the broker, follows
//! the results the verifiers record and writes the same `results.jsonl` as
//! a one-machine run; the command line then writes the summary and report.

mod addresses;
mod arrivals;
mod ending;
mod execute;
mod follow;
mod gauges;
pub mod gc;
pub mod judge;
mod pending;
mod publish;
mod pull;
mod reconcile;
mod refuse;
mod session;
mod waves;
pub use refuse::unpriced as refuse_unpriced;

pub use ending::{raised_caps, Detached, Paused, EXIT_DETACHED, EXIT_PAUSED};
pub use execute::{execute, Finished};
pub use pull::{pull, stored_records, ReadArgs};
pub use session::FleetRun;
pub use waves::Waves;

use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_redis_store::{Cap, RunStore};
pub use follow::{dead_units, stage_queues, tally, Ending};
use std::sync::Arc;

/// Where the fleet is.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct FleetArgs {
    /// Run on the fleet: publish the tasks to the broker for `autoeval-worker`
    /// and `autoeval-verifier` processes, and follow the results in Redis.
    #[arg(long)]
    pub fleet: bool,
    /// The broker.
    #[command(flatten)]
    pub broker: autoeval_service::AmqpUrl,
    /// Redis.
    #[command(flatten)]
    pub store: autoeval_service::RedisUrl,
    /// Seconds to wait for a worker serving each model before publishing
    /// anyway (tasks for a model nobody serves become dead letters).
    #[arg(long, default_value_t = 60)]
    pub worker_wait_s: u64,
    /// Where /healthz, /readyz and /metrics are served while the
    /// coordinator runs.
    #[command(flatten)]
    pub health: autoeval_service::HealthAddr,
    /// After the run ends, keep serving /metrics this many seconds (or until
    /// SIGTERM), so that Prometheus scrapes the end of the run.
    #[arg(long, default_value_t = 0)]
    pub linger_s: u64,
    /// Once every unit has its outcome and the results are in the run's
    /// directory, the run's keys in Redis expire after this many seconds
    /// (`autoeval fleet gc` removes finished runs at once).
    #[arg(long, default_value_t = KEEP_S)]
    pub keep_s: u64,
}

/// How long a finished run's keys stay in Redis by default: a day, for
/// `status` and `judge --fleet` after the run.
pub const KEEP_S: u64 = 86_400;

/// A fleet run's caps.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct BudgetArgs {
    /// Most the run may spend on model calls, in US dollars (as the price
    /// table prices them): at the cap the run pauses (exit 75), and
    /// `autoeval resume DIR [--fleet] --budget-usd MORE` continues it.
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Most prompt plus completion tokens the run may pay for; at the cap it pauses.
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<u64>,
    /// Remove the run's caps (a cap not given otherwise stays as it was).
    #[arg(long, conflicts_with_all = ["budget_usd", "budget_tokens"])]
    pub no_budget: bool,
}

impl BudgetArgs {
    /// True when a cap is given.
    pub fn capped(&self) -> bool {
        self.budget_usd.is_some() || self.budget_tokens.is_some()
    }

    /// True when the caps are to change.
    fn given(&self) -> bool {
        self.capped() || self.no_budget
    }

    /// The cost cap as the store takes it: a cap not given is kept.
    fn usd(&self) -> Cap<f64> {
        match (self.budget_usd, self.no_budget) {
            (Some(v), _) => Cap::To(v),
            (None, true) => Cap::Remove,
            (None, false) => Cap::Keep,
        }
    }

    /// The token cap as the store takes it.
    fn tokens(&self) -> Cap<u64> {
        match (self.budget_tokens, self.no_budget) {
            (Some(v), _) => Cap::To(v),
            (None, true) => Cap::Remove,
            (None, false) => Cap::Keep,
        }
    }

    /// A one-machine run's caps: `kept` (those it was given before),
    /// changed as these arguments say (a cap given replaces its kind,
    /// `--no-budget` removes both).
    pub fn applied_to(&self, kept: autoeval_engine::budget::Caps) -> autoeval_engine::budget::Caps {
        if self.no_budget {
            return autoeval_engine::budget::Caps::default();
        }
        autoeval_engine::budget::Caps {
            usd: self.budget_usd.or(kept.usd),
            tokens: self.budget_tokens.or(kept.tokens),
        }
    }
}

/// What `execute` is asked to do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Run the plan (or follow it, when it was published before).
    Run,
    /// Redo the units whose last round failed or whose tasks are dead letters.
    RedoFailed,
    /// Continue a run paused at a cap, with the caps given.
    Resume,
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Shared by `status`: a handle on the fleet's broker and a run's store.
pub async fn open(fleet: &FleetArgs, run: &str) -> Result<(Arc<Broker>, RunStore)> {
    let store = RunStore::new(
        autoeval_redis_store::connect(&fleet.store.redis).await?,
        run,
    );
    let broker = fleet
        .broker
        .connect(&fleet.store.redis, "autoeval-status")
        .await?;
    Ok((Arc::new(broker), store))
}
