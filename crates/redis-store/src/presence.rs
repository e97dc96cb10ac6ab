//! Where each fleet process is connected: every process tells Redis each
//! second which broker node and which Redis server it is on, and how often
//! it connected again or followed a failover, under a key that expires
//! when it stops telling, so `autoeval status` names the live processes'.

use crate::{redis_err, Connection, StoreError};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};

/// The set of processes that told where they are.
const PROCESSES: &str = "autoeval:processes";
/// How long a process's presence outlives its last report.
const EXPIRES_S: u64 = 5;

fn presence_key(process: &str) -> String {
    format!("autoeval:process:{process}")
}

/// Where one process is connected.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    /// The process, `role@host:pid`.
    pub process: String,
    /// The broker node it connected to last, as its URL fit to print.
    pub broker: Option<String>,
    /// Broker connections it made after its first: a worker or verifier
    /// makes one only after losing one; a coordinator also opens its own.
    pub reconnections: u64,
    /// The Redis server its commands go to, `host:port`.
    pub redis: String,
    /// Redis failovers it followed.
    pub failovers: u64,
}

/// Tells Redis where this process is, for the next few seconds.
pub async fn tell_presence(conn: &Connection, presence: &Presence) -> Result<(), StoreError> {
    let text = serde_json::to_string(presence).map_err(|e| StoreError::Corrupt {
        what: "presence".into(),
        detail: e.to_string(),
    })?;
    let mut conn = conn.clone();
    redis::pipe()
        .set_ex(presence_key(&presence.process), text, EXPIRES_S)
        .ignore()
        .sadd(PROCESSES, &presence.process)
        .ignore()
        .query_async::<()>(&mut conn)
        .await
        .map_err(redis_err("tell where this process is connected"))
}

/// Where each live process is connected, by process; forgets the processes
/// that stopped telling.
pub async fn live_processes(conn: &Connection) -> Result<Vec<Presence>, StoreError> {
    let mut conn = conn.clone();
    let processes: Vec<String> = conn
        .smembers(PROCESSES)
        .await
        .map_err(redis_err("read the fleet's processes"))?;
    let mut live = Vec::new();
    for process in processes {
        let told: Option<String> = conn
            .get(presence_key(&process))
            .await
            .map_err(redis_err("read where a process is connected"))?;
        match told.and_then(|t| serde_json::from_str::<Presence>(&t).ok()) {
            Some(p) => live.push(p),
            None => {
                let _: Result<(), _> = conn.srem(PROCESSES, &process).await;
            }
        }
    }
    live.sort_by(|a, b| a.process.cmp(&b.process));
    Ok(live)
}

impl crate::RunStore {
    /// Where each live process of the fleet is connected.
    pub async fn processes(&self) -> Result<Vec<Presence>, StoreError> {
        live_processes(&self.conn).await
    }
}
