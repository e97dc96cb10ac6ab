//! Where the broker and Redis are, as every command and process that
//! reaches them takes it: each flag declared once, here, and flattened
//! into their arguments.

/// The broker URL a flag left out means: the local RabbitMQ's default account.
pub const DEFAULT_AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
/// The Redis URL a flag left out means: the local Redis.
pub const DEFAULT_REDIS: &str = "redis://127.0.0.1:6379";

/// The broker's URL (`--amqp`, or `AUTOEVAL_AMQP`).
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct AmqpUrl {
    /// Broker URL.
    #[arg(
        long,
        env = "AUTOEVAL_AMQP",
        hide_env_values = true,
        default_value = DEFAULT_AMQP
    )]
    pub amqp: String,
}

impl Default for AmqpUrl {
    fn default() -> Self {
        AmqpUrl {
            amqp: DEFAULT_AMQP.into(),
        }
    }
}

/// Redis's URL (`--redis`, or `AUTOEVAL_REDIS`).
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// Redis URL.
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
