//! A Redis connection that follows the primary through a failover.
//!
//! Given one server's address, it is that server's self-reconnecting
//! connection. Given Sentinels (`redis-sentinel://`), it asks them for the
//! primary, and asks again whenever a command fails in a way a failover
//! explains (the connection lost or refused, a timeout, or `READONLY`: the
//! old primary came back as a replica); when they name another server it
//! moves there. The failed command's error reaches its caller, who retries
//! as after any lost connection.

use crate::connect::{client_for, explain};
use crate::StoreError;
use autoeval_proto::sentinel::SentinelUrl;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, ServerErrorKind, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// How long asking one Sentinel, or checking the server it names, may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// The least time between two askings of the Sentinels: while they still
/// elect a new primary every failing command would otherwise ask again.
const ASK_INTERVAL: Duration = Duration::from_millis(500);

/// An open Redis connection, cheap to clone, that reconnects by itself and,
/// behind Sentinels, follows the primary.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
}

struct Shared {
    current: RwLock<Current>,
    /// The Sentinels, when the address named them.
    sentinels: Option<Sentinels>,
    /// How often this connection moved to a new primary.
    failovers: AtomicU64,
    db: i64,
}

#[derive(Clone)]
struct Current {
    manager: ConnectionManager,
    /// The server, `host:port`.
    primary: String,
    /// Counts the moves, so that commands failing at once move once.
    generation: u64,
}

struct Sentinels {
    url: SentinelUrl,
    /// When they were last asked; held while asking, so one asks at a time.
    asked: tokio::sync::Mutex<Option<Instant>>,
}

/// Whether a reply is a server's error a failover explains: the connection
/// returns a server's error as a value (`READONLY` from a primary that
/// came back as a replica), not as the call's error.
fn demoted(reply: &Value) -> bool {
    match reply {
        Value::ServerError(e) => matches!(
            e.kind(),
            Some(ServerErrorKind::ReadOnly | ServerErrorKind::MasterDown)
        ),
        Value::Array(items) => items.iter().any(demoted),
        _ => false,
    }
}

/// Whether `e` is what a primary's loss or demotion looks like.
fn after_failover(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || matches!(
            e.kind(),
            ErrorKind::Server(ServerErrorKind::ReadOnly | ServerErrorKind::MasterDown)
        )
}

/// A server's URL, with the Sentinel address's credentials, TLS and database.
fn server_url(of: &SentinelUrl, host: &str, port: u16, db: i64) -> Result<String, String> {
    let scheme = if of.tls { "rediss" } else { "redis" };
    let host = match host.contains(':') {
        true => format!("[{host}]"),
        false => host.to_string(),
    };
    let mut url = url::Url::parse(&format!("{scheme}://{host}:{port}/{db}"))
        .map_err(|e| format!("{host}:{port} makes no URL: {e}"))?;
    if let Some(user) = &of.username {
        let _ = url.set_username(user);
    }
    if let Some(password) = &of.password {
        let _ = url.set_password(Some(password));
    }
    Ok(url.to_string())
}

async fn bounded<T>(
    op: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(ASK_TIMEOUT, op).await {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(_) => Err(format!("no answer in {} s", ASK_TIMEOUT.as_secs())),
    }
}

/// Asks one Sentinel for the primary of `of`; answers its URL and `host:port`
/// once the server there says it is the primary.
async fn ask_one(of: &SentinelUrl, host: &str, port: u16) -> Result<(String, String), String> {
    let client = client_for(&server_url(of, host, port, 0)?)?;
    let mut sentinel = bounded(client.get_multiplexed_async_connection()).await?;
    let named: Option<(String, u16)> = bounded(
        redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&of.primary)
            .query_async(&mut sentinel),
    )
    .await?;
    let (ip, port) = named.ok_or_else(|| format!("it knows no primary named {:?}", of.primary))?;
    let url = server_url(of, &ip, port, of.db)?;
    let mut server = bounded(client_for(&url)?.get_multiplexed_async_connection()).await?;
    let role: Vec<Value> = bounded(redis::cmd("ROLE").query_async(&mut server)).await?;
    match role.first() {
        Some(Value::BulkString(r)) if r.as_slice() == b"master" => {
            Ok((url, format!("{ip}:{port}")))
        }
        _ => Err(format!(
            "it names {ip}:{port}, which is not (yet) a primary"
        )),
    }
}

/// Asks each Sentinel in turn for the primary.
async fn ask(of: &SentinelUrl) -> Result<(String, String), String> {
    let mut why = Vec::new();
    for (host, port) in &of.sentinels {
        match ask_one(of, host, *port).await {
            Ok(found) => return Ok(found),
            Err(e) => why.push(format!("Sentinel {host}:{port}: {e}")),
        }
    }
    Err(format!("no Sentinel names a primary: {}", why.join("; ")))
}

impl Connection {
    /// Connects to the server at `url`, or through the Sentinels it names.
    pub async fn open(url: &str) -> Result<Connection, StoreError> {
        let unreachable = |detail: String| StoreError::Unreachable {
            url: autoeval_proto::fleet::redact_url(url),
            detail,
        };
        if !autoeval_proto::sentinel::is_sentinel_url(url) {
            let manager = manage(url).await.map_err(unreachable)?;
            let primary = primary_of(url);
            return Ok(Connection::new(
                manager,
                primary,
                None,
                crate::database_of(url)?,
            ));
        }
        let parsed = SentinelUrl::parse(url).map_err(|e| unreachable(e.to_string()))?;
        let (server, primary) = ask(&parsed).await.map_err(unreachable)?;
        let manager = manage(&server).await.map_err(unreachable)?;
        let db = parsed.db;
        let sentinels = Sentinels {
            url: parsed,
            asked: tokio::sync::Mutex::new(None),
        };
        Ok(Connection::new(manager, primary, Some(sentinels), db))
    }

    fn new(
        manager: ConnectionManager,
        primary: String,
        sentinels: Option<Sentinels>,
        db: i64,
    ) -> Connection {
        let current = Current {
            manager,
            primary,
            generation: 0,
        };
        Connection {
            shared: Arc::new(Shared {
                current: RwLock::new(current),
                sentinels,
                failovers: AtomicU64::new(0),
                db,
            }),
        }
    }

    /// The server commands go to, `host:port`.
    pub fn primary(&self) -> String {
        self.current().primary
    }

    /// How often this connection moved to a new primary.
    pub fn failovers(&self) -> u64 {
        self.shared.failovers.load(Ordering::Relaxed)
    }

    fn current(&self) -> Current {
        self.shared
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// After an error a failover explains on the connection of
    /// `generation`: asks the Sentinels for the primary, unless another
    /// command did since, and moves to it.
    async fn follow(&self, generation: u64) {
        let Some(sentinels) = &self.shared.sentinels else {
            return;
        };
        let mut asked = sentinels.asked.lock().await;
        let moved = self.current().generation != generation;
        if moved || asked.is_some_and(|at| at.elapsed() < ASK_INTERVAL) {
            return;
        }
        *asked = Some(Instant::now());
        let found = ask(&sentinels.url).await;
        let (server, primary) = match found {
            Ok(f) if f.1 != self.current().primary => f,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "the Sentinels name no primary yet");
                return;
            }
        };
        match manage(&server).await {
            Ok(manager) => {
                let mut current = self
                    .shared
                    .current
                    .write()
                    .unwrap_or_else(|e| e.into_inner());
                let from = std::mem::replace(&mut current.primary, primary.clone());
                current.manager = manager;
                current.generation += 1;
                self.shared.failovers.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%from, to = %primary, "Redis failed over: following the new primary");
            }
            Err(e) => tracing::warn!(error = %e, to = %primary, "cannot reach the new primary yet"),
        }
    }
}

/// A self-reconnecting connection to the one server at `url`.
async fn manage(url: &str) -> Result<ConnectionManager, String> {
    let client = client_for(url)?;
    ConnectionManager::new(client)
        .await
        .map_err(|e| explain(url, &e))
}

/// The `host:port` of a server's URL, as far as it can be read.
fn primary_of(url: &str) -> String {
    use redis::IntoConnectionInfo;
    url.into_connection_info()
        .map(|info| info.addr().to_string())
        .unwrap_or_else(|_| autoeval_proto::fleet::redact_url(url))
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let Current {
                mut manager,
                generation,
                ..
            } = self.current();
            let answer = manager.send_packed_command(cmd).await;
            match &answer {
                Err(e) if after_failover(e) => self.follow(generation).await,
                Ok(reply) if demoted(reply) => self.follow(generation).await,
                _ => {}
            }
            answer
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let Current {
                mut manager,
                generation,
                ..
            } = self.current();
            let answer = manager.send_packed_commands(pipeline, offset, count).await;
            match &answer {
                Err(e) if after_failover(e) => self.follow(generation).await,
                Ok(replies) if replies.iter().any(demoted) => self.follow(generation).await,
                _ => {}
            }
            answer
        })
    }

    fn get_db(&self) -> i64 {
        self.shared.db
    }
}
