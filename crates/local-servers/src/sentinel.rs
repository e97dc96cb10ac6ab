//! A Redis primary with one replica, watched by three Sentinels that
//! promote the replica when the primary is lost.

use crate::process::{free_port, wait_for, Server};
use crate::{LocalServerError, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The name the Sentinels know the primary by.
pub const PRIMARY_NAME: &str = "autoeval";

/// How long a primary that does not answer is given before the Sentinels
/// agree it is down: short, as every wait here is.
const DOWN_AFTER_MS: u32 = 2000;

/// How long the Sentinels are given to see a change.
const SETTLE: Duration = Duration::from_secs(60);

/// Two Redis servers and three Sentinels of their own.
pub struct SentinelRedis {
    dir: PathBuf,
    ports: [u16; 2],
    servers: [Option<Server>; 2],
    sentinel_ports: [u16; 3],
    sentinels: Vec<Server>,
    password: String,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> LocalServerError + '_ {
    move |e| LocalServerError(format!("{what}: {e}"))
}

impl SentinelRedis {
    /// Starts the servers and the Sentinels under `dir`, every one asking
    /// for `password`, with the append-only file on; returns once the
    /// replica follows the primary and every Sentinel sees both.
    pub fn start(dir: &Path, password: &str) -> Result<SentinelRedis> {
        let dir = dir.join("redis");
        std::fs::create_dir_all(&dir).map_err(io("Redis's directory"))?;
        let mut redis = SentinelRedis {
            dir,
            ports: [free_port()?, free_port()?],
            servers: [None, None],
            sentinel_ports: [free_port()?, free_port()?, free_port()?],
            sentinels: Vec::new(),
            password: password.into(),
        };
        redis.start_server(0, None)?;
        redis.start_server(1, Some(redis.ports[0]))?;
        for k in 0..3 {
            redis.start_sentinel(k)?;
        }
        redis.wait_sentinels_see(redis.ports[0])?;
        Ok(redis)
    }

    /// The `redis-sentinel://` address of the Sentinels, with database `db`.
    pub fn url(&self, db: u32) -> String {
        let hosts: Vec<String> = self
            .sentinel_ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!(
            "redis-sentinel://:{}@{}/{db}#{PRIMARY_NAME}",
            self.password,
            hosts.join(",")
        )
    }

    fn start_server(&mut self, k: usize, replica_of: Option<u16>) -> Result<()> {
        let port = self.ports[k];
        let data = self.dir.join(format!("server{k}"));
        std::fs::create_dir_all(&data).map_err(io("a data directory"))?;
        let mut args: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--dir",
            &data.to_string_lossy(),
            "--appendonly",
            "yes",
            "--save",
            "",
            "--requirepass",
            &self.password,
            "--masterauth",
            &self.password,
        ]
        .map(String::from)
        .to_vec();
        if let Some(primary) = replica_of {
            args.extend([
                "--replicaof".into(),
                "127.0.0.1".into(),
                primary.to_string(),
            ]);
        }
        let log = std::fs::File::create(data.join("log")).map_err(io("a server's log"))?;
        let child = Command::new("redis-server")
            .args(&args)
            .stdout(log)
            .spawn()
            .map_err(io(
                "cannot start redis-server (Debian's redis-server package)",
            ))?;
        self.servers[k] = Some(Server::new(child));
        wait_for("a Redis server answers", SETTLE, || {
            self.cli(port, &["ping"]).starts_with("PONG")
        })
    }

    fn start_sentinel(&mut self, k: usize) -> Result<()> {
        let port = self.sentinel_ports[k];
        let config = self.dir.join(format!("sentinel{k}.conf"));
        let text = format!(
            "port {port}\nbind 127.0.0.1\ndir {dir}\nrequirepass {pw}\n\
             sentinel monitor {PRIMARY_NAME} 127.0.0.1 {primary} 2\n\
             sentinel auth-pass {PRIMARY_NAME} {pw}\n\
             sentinel down-after-milliseconds {PRIMARY_NAME} {DOWN_AFTER_MS}\n\
             sentinel failover-timeout {PRIMARY_NAME} 10000\n",
            dir = self.dir.display(),
            pw = self.password,
            primary = self.ports[0],
        );
        std::fs::write(&config, text).map_err(io("a Sentinel's config"))?;
        let log = std::fs::File::create(self.dir.join(format!("sentinel{k}.log")))
            .map_err(io("a Sentinel's log"))?;
        let child = Command::new("redis-server")
            .arg(&config)
            .arg("--sentinel")
            .stdout(log)
            .spawn()
            .map_err(io("cannot start redis-server --sentinel"))?;
        self.sentinels.push(Server::new(child));
        Ok(())
    }

    /// `redis-cli -p PORT ARGS` with the password: what it printed, empty when it failed.
    pub fn cli(&self, port: u16, args: &[&str]) -> String {
        Command::new("redis-cli")
            .args([
                "-p",
                &port.to_string(),
                "--no-auth-warning",
                "-a",
                &self.password,
            ])
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// The port of the server the first Sentinel names the primary now.
    pub fn primary(&self) -> Option<u16> {
        self.primary_by(self.sentinel_ports[0])
    }

    fn primary_by(&self, sentinel: u16) -> Option<u16> {
        let said = self.cli(
            sentinel,
            &["sentinel", "get-master-addr-by-name", PRIMARY_NAME],
        );
        said.lines().nth(1)?.trim().parse().ok()
    }

    /// Waits until every Sentinel names `primary` and sees a replica that is up.
    fn wait_sentinels_see(&self, primary: u16) -> Result<()> {
        wait_for(
            "the Sentinels see the primary and its replica",
            SETTLE,
            || {
                self.sentinel_ports.iter().all(|&p| {
                    let replicas = self.cli(p, &["sentinel", "replicas", PRIMARY_NAME]);
                    self.primary_by(p) == Some(primary)
                        && replicas.contains("slave")
                        && !replicas.contains("s_down")
                        && !replicas.contains("disconnected")
                })
            },
        )
    }

    /// Kills the primary with SIGKILL and returns at once (the Sentinels
    /// promote the replica meanwhile); answers the killed server's index.
    pub fn kill_primary(&mut self) -> Result<usize> {
        let was = self
            .primary()
            .ok_or_else(|| LocalServerError("the Sentinels name no primary".into()))?;
        let k =
            self.ports.iter().position(|&p| p == was).ok_or_else(|| {
                LocalServerError(format!("the primary {was} is no server of ours"))
            })?;
        if let Some(mut server) = self.servers[k].take() {
            server.kill9();
        }
        Ok(k)
    }

    /// Waits until the Sentinels name a primary other than server `k`.
    pub fn wait_promoted_from(&self, k: usize) -> Result<()> {
        let was = self.ports[k];
        wait_for("the Sentinels promote the replica", SETTLE, || {
            self.primary().is_some_and(|p| p != was)
        })
    }

    /// Has the Sentinels hand the primary's role to the replica while both
    /// keep running (`SENTINEL FAILOVER`): the old primary becomes a
    /// replica under its connections. Returns once they name the new one.
    pub fn demote_primary(&self) -> Result<()> {
        let was = self
            .primary()
            .ok_or_else(|| LocalServerError("the Sentinels name no primary".into()))?;
        self.cli(
            self.sentinel_ports[0],
            &["sentinel", "failover", PRIMARY_NAME],
        );
        wait_for("the Sentinels hand over the primary", SETTLE, || {
            self.primary().is_some_and(|p| p != was)
        })
    }

    /// Starts server `k` again as a replica of the primary now; returns
    /// once the Sentinels see it follow.
    pub fn restart_as_replica(&mut self, k: usize) -> Result<()> {
        let primary = self
            .primary()
            .ok_or_else(|| LocalServerError("the Sentinels name no primary".into()))?;
        self.start_server(k, Some(primary))?;
        self.wait_sentinels_see(primary)
    }

    /// Whether server `k` runs.
    pub fn is_up(&self, k: usize) -> bool {
        self.servers[k].is_some()
    }
}
