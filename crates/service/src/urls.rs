//! Where the broker and Redis are, as every command and process that
//! reaches them takes it: each flag declared once, here, and flattened
//! into their arguments.

/// The broker URL a flag left out means: the local RabbitMQ's default account.
pub const DEFAULT_AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
use autoeval_amqp::Broker;
use autoeval_proto::fleet::Topology;

/// The Redis URL a flag left out means: the local Redis.
pub const DEFAULT_REDIS: &str = "redis://127.0.0.1:6379";

/// The broker's URL (`--amqp`, or `AUTOEVAL_AMQP`) and the fleet's name on it.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct AmqpUrl {
    /// Broker URL; on a cluster, its nodes' URLs separated by commas
    /// (each tried in turn; a dropped connection goes to the next that answers).
    #[arg(
        long,
        env = "AUTOEVAL_AMQP",
        hide_env_values = true,
        default_value = DEFAULT_AMQP
    )]
    pub amqp: String,
    /// The fleet's name: its exchanges and queues on the broker are
    /// `autoeval.NAME.…`, so fleets that share a broker never take each
    /// other's work. Default: from the Redis database (database 0: the
    /// unnamed fleet, `autoeval.…`; database N: `dbN`). Every process of a
    /// fleet must be given the same name, or the same Redis database.
    #[arg(long, env = "AUTOEVAL_FLEET_NAME", value_name = "NAME")]
    pub fleet_name: Option<String>,
}

impl Default for AmqpUrl {
    fn default() -> Self {
        AmqpUrl {
            amqp: DEFAULT_AMQP.into(),
            fleet_name: None,
        }
    }
}

impl AmqpUrl {
    /// The broker at `amqp` for the unnamed fleet or the one of Redis's database.
    pub fn at(amqp: impl Into<String>) -> AmqpUrl {
        AmqpUrl {
            amqp: amqp.into(),
            fleet_name: None,
        }
    }

    /// The names of the fleet's exchanges and queues: the fleet named by
    /// `--fleet-name`, else the one the database of Redis at `redis` stands for.
    pub fn topology(&self, redis: &str) -> Result<Topology, FleetNameError> {
        match &self.fleet_name {
            Some(name) => Ok(Topology::named(name)?),
            None => Ok(Topology::of_redis_database(
                autoeval_redis_store::database_of(redis)?,
            )),
        }
    }

    /// Connects once as `name` to this fleet's broker (the fleet of
    /// `--fleet-name`, else of Redis at `redis`).
    pub async fn connect(&self, redis: &str, name: &str) -> anyhow::Result<Broker> {
        let topology = self.topology(redis)?;
        Ok(Broker::connect(&self.amqp, &topology, name).await?)
    }

    /// As [`AmqpUrl::connect`], retrying while the broker is away.
    pub async fn connect_with_backoff(&self, redis: &str, name: &str) -> anyhow::Result<Broker> {
        let topology = self.topology(redis)?;
        Ok(Broker::connect_with_backoff(&self.amqp, &topology, name).await?)
    }
}

/// Why a fleet's name could not be settled.
#[derive(Debug, thiserror::Error)]
pub enum FleetNameError {
    /// `--fleet-name` cannot name queues.
    #[error("--fleet-name: {0}")]
    BadName(#[from] autoeval_proto::fleet::BadFleetName),
    /// The Redis URL, whose database names the fleet by default, does not parse.
    #[error("the fleet's name comes from the Redis database, but {0}")]
    BadRedisUrl(#[from] autoeval_redis_store::StoreError),
}

/// Redis's URL (`--redis`, or `AUTOEVAL_REDIS`).
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// Redis URL; behind Sentinels, their address
    /// (`redis-sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]…][/DB]#PRIMARY`:
    /// the primary is asked of them, and followed through a failover).
    #[arg(
        long,
        env = "AUTOEVAL_REDIS",
        hide_env_values = true,
        default_value = DEFAULT_REDIS
    )]
    pub redis: String,
}

impl Default for RedisUrl {
    fn default() -> Self {
        RedisUrl {
            redis: DEFAULT_REDIS.into(),
        }
    }
}

/// Where a process serves `/healthz`, `/readyz` and `/metrics` (`--health-addr`).
#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthAddr {
    /// Serve /healthz, /readyz and /metrics at this address (port 0: any
    /// free port, printed at start). A worker and a verifier serve them on
    /// a free loopback port when it is not given; the coordinator serves
    /// them only when it is (ready once the run is registered and
    /// published).
    #[arg(long, alias = "metrics-addr", value_name = "ADDR")]
    pub health_addr: Option<String>,
}

impl HealthAddr {
    /// The address a service serves on: as given, else any free loopback port.
    pub fn or_any_port(&self) -> &str {
        self.health_addr.as_deref().unwrap_or("127.0.0.1:0")
    }
}
