//! The broker and Redis a soak runs on, and the faults thrown at them:
//! this machine's RabbitMQ with a Redis of the soak's own (its application
//! stopped and started, Redis emptied), or, with `--cluster`, a three-node
//! RabbitMQ cluster and a Redis primary with a replica and three Sentinels
//! the soak starts on loopback ports (a node killed or stopped and started
//! again, the primary killed).

use super::{below, Fault};
use crate::bench::procs::Proc;
use anyhow::{bail, Context, Result};
use autoeval_local_servers::{RabbitCluster, SentinelRedis};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The password of every node of the soak's own servers.
const PASSWORD: &str = "autoeval-soak";

/// Where the soak's fleet keeps its queues and its state.
pub(super) enum Servers {
    /// This machine's RabbitMQ (`url`), and a Redis of the soak's own.
    Local { amqp: String, redis: OwnRedis },
    /// A cluster and Sentinels of the soak's own.
    Cluster {
        rabbit: Box<RabbitCluster>,
        redis: Box<SentinelRedis>,
    },
}

impl Servers {
    /// This machine's broker at `amqp` and a Redis started under `scratch`.
    pub(super) fn local(amqp: &str, scratch: &Path) -> Result<Servers> {
        Ok(Servers::Local {
            amqp: amqp.to_string(),
            redis: OwnRedis::start(scratch)?,
        })
    }

    /// A three-node cluster and a Redis behind Sentinels, started under `scratch`.
    pub(super) fn cluster(scratch: &Path) -> Result<Servers> {
        eprintln!("bench-soak: starting a three-node RabbitMQ cluster and Redis with Sentinels");
        let rabbit = RabbitCluster::start(scratch, 3).context("the soak's RabbitMQ cluster")?;
        let redis = SentinelRedis::start(scratch, PASSWORD).context("the soak's Redis")?;
        Ok(Servers::Cluster {
            rabbit: Box::new(rabbit),
            redis: Box::new(redis),
        })
    }

    /// The faults these servers take, besides the fleet's processes'.
    pub(super) fn takes(&self, fault: Fault) -> bool {
        let cluster = matches!(self, Servers::Cluster { .. });
        match fault {
            Fault::Broker | Fault::Redis | Fault::Partition => !cluster,
            Fault::Node | Fault::Primary => cluster,
            Fault::Worker | Fault::Verifier | Fault::Coordinator => true,
        }
    }

    /// The broker's URL, `--amqp` as the processes take it.
    pub(super) fn amqp(&self) -> String {
        match self {
            Servers::Local { amqp, .. } => amqp.clone(),
            Servers::Cluster { rabbit, .. } => rabbit.urls(),
        }
    }

    /// Redis's URL, `--redis` as the processes take it.
    pub(super) fn redis(&self) -> String {
        match self {
            Servers::Local { redis, .. } => redis.url(),
            Servers::Cluster { redis, .. } => redis.url(0),
        }
    }

    /// Throws `fault`, one of the servers'; returns once it is over.
    pub(super) fn throw(&mut self, fault: Fault, rng: &mut ChaCha8Rng) -> Result<()> {
        let away = Duration::from_secs(2 + below(rng, 13) as u64);
        match (self, fault) {
            (Servers::Local { .. }, Fault::Broker) => {
                rabbitmqctl(&["stop_app"])?;
                std::thread::sleep(away);
                rabbitmqctl(&["start_app"])?;
                rabbitmqctl(&["await_startup"])
            }
            (Servers::Local { redis, .. }, Fault::Redis) => redis.flush(),
            (Servers::Cluster { rabbit, .. }, Fault::Node) => {
                let k = below(rng, rabbit.len());
                if below(rng, 2) == 0 {
                    rabbit.kill9(k);
                } else {
                    rabbit.stop(k)?;
                }
                std::thread::sleep(away);
                Ok(rabbit.restart(k)?)
            }
            (Servers::Cluster { redis, .. }, Fault::Primary) => {
                let k = redis.kill_primary()?;
                redis.wait_promoted_from(k)?;
                Ok(redis.restart_as_replica(k)?)
            }
            (_, other) => bail!("{other:?} is not a fault of these servers"),
        }
    }
}

/// `rabbitmqctl ARGS`, which must succeed.
fn rabbitmqctl(args: &[&str]) -> Result<()> {
    let done = Command::new("rabbitmqctl")
        .args(args)
        .stdout(Stdio::null())
        .output()
        .context("cannot run rabbitmqctl: the broker fault needs this machine's RabbitMQ (or leave `broker` out of --faults)")?;
    if !done.status.success() {
        bail!(
            "rabbitmqctl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&done.stderr)
        );
    }
    Ok(())
}

/// The soak's own Redis: emptied by a fault without touching any other.
pub(super) struct OwnRedis {
    port: u16,
    _server: Proc,
}

impl OwnRedis {
    fn start(scratch: &Path) -> Result<OwnRedis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let server = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(scratch)
            .stdout(Stdio::null())
            .spawn()
            .context("cannot start redis-server (the soak runs a Redis of its own)")?;
        let redis = OwnRedis {
            port,
            _server: Proc::from(server),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while redis.cli(&["ping"]).is_err() {
            if Instant::now() > deadline {
                bail!("the soak's Redis did not answer");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(redis)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn flush(&self) -> Result<()> {
        self.cli(&["FLUSHALL"])
    }

    fn cli(&self, args: &[&str]) -> Result<()> {
        let done = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .context("cannot run redis-cli")?;
        if !done.status.success() || done.stdout.starts_with(b"ERR") {
            bail!("redis-cli {}: failed", args.join(" "));
        }
        Ok(())
    }
}
