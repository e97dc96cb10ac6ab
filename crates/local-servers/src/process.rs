//! A server process killed with its owner, free ports and waiting for a
//! condition.

use crate::{LocalServerError, Result};
use std::process::Child;
use std::time::{Duration, Instant};

/// A server this crate started; killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    /// Whether the child leads a process group of its own, killed whole:
    /// `rabbitmq-server` is a script whose Erlang VM is its child.
    group: bool,
}

impl Server {
    /// Takes charge of `child`.
    pub fn new(child: Child) -> Server {
        Server {
            child,
            group: false,
        }
    }

    /// Takes charge of `child`, started as the leader of a process group
    /// of its own (`CommandExt::process_group(0)`), with all its group.
    pub fn group(child: Child) -> Server {
        Server { child, group: true }
    }

    /// Sends SIGKILL (to the whole group, for a group) and waits for the
    /// process to end.
    pub fn kill9(&mut self) {
        if self.group {
            let group = format!("-{}", self.child.id());
            // A group already gone (killed before) is no error.
            let _ = std::process::Command::new("kill")
                .args(["-s", "KILL", "--", &group])
                .stderr(std::process::Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to end by itself.
    pub fn wait(&mut self) {
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A free port on the loopback.
pub fn free_port() -> Result<u16> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| LocalServerError(format!("no free loopback port: {e}")))
}

/// Polls `ready` every 20 ms until it holds; an error naming `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) -> Result<()> {
    let deadline = Instant::now() + limit;
    while !ready() {
        if Instant::now() >= deadline {
            return Err(LocalServerError(format!("{what}: not within {limit:?}")));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
