//! A RabbitMQ cluster of loopback nodes.

use crate::process::{free_port, wait_for, Server};
use crate::{LocalServerError, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Where Debian keeps RabbitMQ's own scripts: the `/usr/sbin` wrappers run
/// them as the `rabbitmq` user, whose Erlang cookie is not ours.
const RABBITMQ_BIN: &str = "/usr/lib/rabbitmq/bin";

/// How long a node is given to start, or the cluster to agree on its members.
const STARTUP: Duration = Duration::from_secs(180);

/// One node of the cluster.
struct Node {
    name: String,
    port: u16,
    dist_port: u16,
    server: Option<Server>,
}

/// A RabbitMQ cluster of its own, each node on loopback ports of its own.
pub struct RabbitCluster {
    dir: PathBuf,
    nodes: Vec<Node>,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> LocalServerError + '_ {
    move |e| LocalServerError(format!("{what}: {e}"))
}

impl RabbitCluster {
    /// Starts `count` nodes under `dir` and clusters them; returns once
    /// every node runs as a member of one cluster.
    pub fn start(dir: &Path, count: usize) -> Result<RabbitCluster> {
        let dir = dir.join("rabbitmq");
        std::fs::create_dir_all(&dir).map_err(io("the cluster's directory"))?;
        // Every node, and rabbitmqctl, reads the cookie from $HOME.
        let cookie = dir.join(".erlang.cookie");
        let tag = std::process::id();
        let _ = std::fs::remove_file(&cookie);
        std::fs::write(&cookie, format!("autoevalcookie{tag}")).map_err(io("the cookie"))?;
        set_mode(&cookie, 0o400)?;
        let mut nodes = Vec::new();
        for k in 1..=count {
            nodes.push(Node {
                name: format!("autoeval{tag}n{k}@localhost"),
                port: free_port()?,
                dist_port: free_port()?,
                server: None,
            });
        }
        let mut cluster = RabbitCluster { dir, nodes };
        for k in 0..count {
            cluster.start_node(k)?;
        }
        for k in 0..count {
            cluster.wait_running(k)?;
        }
        let first = cluster.nodes[0].name.clone();
        for k in 1..count {
            cluster.ctl(k, &["stop_app"])?;
            cluster.ctl(k, &["join_cluster", &first])?;
            cluster.ctl(k, &["start_app"])?;
        }
        cluster.wait_members(count)?;
        Ok(cluster)
    }

    /// The nodes' AMQP URLs, comma-separated, as `--amqp` takes them.
    pub fn urls(&self) -> String {
        (0..self.nodes.len())
            .map(|k| self.url(k))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Node `k`'s AMQP URL.
    pub fn url(&self, k: usize) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.nodes[k].port)
    }

    /// Node `k`'s AMQP port.
    pub fn port(&self, k: usize) -> u16 {
        self.nodes[k].port
    }

    /// How many nodes the cluster has, running or not.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the cluster has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `k`'s Erlang name.
    pub fn name(&self, k: usize) -> &str {
        &self.nodes[k].name
    }

    fn node_dir(&self, k: usize) -> PathBuf {
        self.dir.join(format!("n{}", k + 1))
    }

    fn env(&self, k: usize) -> Vec<(String, String)> {
        let node = &self.nodes[k];
        let base = self.node_dir(k);
        let vars = [
            ("HOME", self.dir.clone()),
            ("RABBITMQ_NODENAME", node.name.clone().into()),
            ("RABBITMQ_NODE_PORT", node.port.to_string().into()),
            ("RABBITMQ_DIST_PORT", node.dist_port.to_string().into()),
            ("RABBITMQ_MNESIA_BASE", base.join("mnesia")),
            ("RABBITMQ_LOG_BASE", base.join("log")),
            ("RABBITMQ_PID_FILE", base.join("pid")),
            (
                "RABBITMQ_ENABLED_PLUGINS_FILE",
                base.join("enabled_plugins"),
            ),
            ("RABBITMQ_CONFIG_FILE", base.join("rabbitmq.conf")),
        ];
        vars.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned()))
            .collect()
    }

    fn start_node(&mut self, k: usize) -> Result<()> {
        let base = self.node_dir(k);
        std::fs::create_dir_all(base.join("log")).map_err(io("a node's directory"))?;
        std::fs::write(base.join("enabled_plugins"), "[].\n").map_err(io("a plugins file"))?;
        // The guest user may connect from loopback only unless told otherwise.
        let config = format!(
            "loopback_users = none\nlisteners.tcp.default = 127.0.0.1:{}\n",
            self.nodes[k].port
        );
        std::fs::write(base.join("rabbitmq.conf"), config).map_err(io("a node's config"))?;
        let log = std::fs::File::create(base.join("console.log")).map_err(io("a node's log"))?;
        use std::os::unix::process::CommandExt;
        let child = Command::new(Path::new(RABBITMQ_BIN).join("rabbitmq-server"))
            .process_group(0)
            .envs(self.env(k))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(io(
                "cannot start rabbitmq-server (Debian's rabbitmq-server package)",
            ))?;
        self.nodes[k].server = Some(Server::group(child));
        Ok(())
    }

    /// `rabbitmqctl ARGS` against node `k`: what it printed, or an error with what it said.
    pub fn ctl(&self, k: usize, args: &[&str]) -> Result<String> {
        let out = self.ctl_output(k, args)?;
        if !out.status.success() {
            return Err(LocalServerError(format!(
                "rabbitmqctl {} on node {}: {}{}",
                args.join(" "),
                k + 1,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn ctl_output(&self, k: usize, args: &[&str]) -> Result<Output> {
        Command::new(Path::new(RABBITMQ_BIN).join("rabbitmqctl"))
            .envs(self.env(k))
            .args(["-n", &self.nodes[k].name, "-q"])
            .args(args)
            .output()
            .map_err(io("cannot run rabbitmqctl"))
    }

    fn wait_running(&self, k: usize) -> Result<()> {
        wait_for(&format!("RabbitMQ node {} runs", k + 1), STARTUP, || {
            self.ctl_output(k, &["await_startup", "--timeout", "5"])
                .is_ok_and(|o| o.status.success())
        })
    }

    fn live_node(&self) -> Result<usize> {
        (0..self.nodes.len())
            .find(|&k| self.nodes[k].server.is_some())
            .ok_or_else(|| LocalServerError("no node of the cluster runs".into()))
    }

    /// Waits until `count` nodes run as members of the cluster.
    pub fn wait_members(&self, count: usize) -> Result<()> {
        let live = self.live_node()?;
        wait_for(
            &format!("{count} RabbitMQ nodes run clustered"),
            STARTUP,
            || self.running_nodes(live) == Some(count),
        )
    }

    fn running_nodes(&self, via: usize) -> Option<usize> {
        let out = self
            .ctl_output(via, &["cluster_status", "--formatter", "json"])
            .ok()?;
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        status["running_nodes"].as_array().map(Vec::len)
    }

    /// One column of every queue's row, by the queue's name, asked of a running node.
    fn queue_column(&self, column: &str) -> Vec<(String, serde_json::Value)> {
        let Ok(via) = self.live_node() else {
            return Vec::new();
        };
        let out = self.ctl_output(via, &["list_queues", "name", column, "--formatter", "json"]);
        let rows: Vec<serde_json::Value> = out
            .ok()
            .and_then(|o| serde_json::from_slice(&o.stdout).ok())
            .unwrap_or_default();
        rows.into_iter()
            .filter_map(|r| Some((r["name"].as_str()?.to_string(), r[column].clone())))
            .collect()
    }

    /// The node that leads the quorum queue `queue`, when one does.
    pub fn leader_of(&self, queue: &str) -> Option<usize> {
        let (_, leader) = self
            .queue_column("leader")
            .into_iter()
            .find(|(n, _)| n == queue)?;
        let leader = leader.as_str()?;
        self.nodes.iter().position(|n| n.name == leader)
    }

    /// The nodes holding a replica of the quorum queue `queue`.
    pub fn members_of(&self, queue: &str) -> Vec<usize> {
        let members = self
            .queue_column("members")
            .into_iter()
            .find(|(n, _)| n == queue)
            .and_then(|(_, m)| m.as_array().cloned())
            .unwrap_or_default();
        members
            .iter()
            .filter_map(|m| {
                self.nodes
                    .iter()
                    .position(|n| Some(n.name.as_str()) == m.as_str())
            })
            .collect()
    }

    /// Kills node `k` with SIGKILL (its Erlang VM: no goodbye to the
    /// others); returns once its port refuses connections.
    pub fn kill9(&mut self, k: usize) {
        if let Some(mut node) = self.nodes[k].server.take() {
            node.kill9();
        }
        self.wait_port_closed(k);
    }

    /// Stops node `k` as an operator would (`rabbitmqctl stop`); returns
    /// once its port refuses connections.
    pub fn stop(&mut self, k: usize) -> Result<()> {
        self.ctl(k, &["stop"])?;
        if let Some(mut node) = self.nodes[k].server.take() {
            node.wait();
        }
        self.wait_port_closed(k);
        Ok(())
    }

    fn wait_port_closed(&self, k: usize) {
        let port = self.nodes[k].port;
        // A port still open after this long belongs to something else.
        let _ = wait_for("a node's port closes", Duration::from_secs(30), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
        });
    }

    /// Starts node `k` again; returns once it runs in the cluster again.
    pub fn restart(&mut self, k: usize) -> Result<()> {
        self.start_node(k)?;
        self.wait_running(k)?;
        self.wait_members(self.nodes.iter().filter(|n| n.server.is_some()).count())
    }

    /// Whether node `k` runs.
    pub fn is_up(&self, k: usize) -> bool {
        self.nodes[k].server.is_some()
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(io("the cookie's mode"))
}
