//! One connection to the broker: the topology declared, publishing with
//! confirms, consuming, and the queues' depths read.

use crate::bounded::{close_quietly, Bounded, OPERATION_TIMEOUT};
use crate::declare::is_not_found;
use crate::error::PERMANENT_TRIES;
use crate::error::{amqp, BrokerError};
use crate::headers::{headers, Meta};
use crate::redact;
use crate::Consumer;
use autoeval_proto::fleet::{judge_key, translate_key, Topology};
use lapin::options::{
    BasicPublishOptions, BasicQosOptions, ConfirmSelectOptions, QueueDeclareOptions,
};
use lapin::tcp::{OwnedIdentity, OwnedTLSConfig};
use lapin::types::{FieldTable, LongString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use std::time::Duration;

/// How long a publish waits for the broker's confirm before its connection
/// is given up: far longer than a healthy broker takes, far shorter than
/// the consumer timeout that would take held deliveries away.
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(30);

/// One connection to the broker with a confirming publisher channel, for
/// one fleet's exchanges and queues.
pub struct Broker {
    pub(crate) connection: Connection,
    /// The node connected to, as its URL fit to print.
    node: String,
    topology: Topology,
    pub(crate) publisher: Channel,
    /// The channel queue depths are read on, kept between reads (a run is
    /// followed with several reads a second) and opened again after the
    /// broker closed it over a missing queue. Held for a whole read, so a
    /// read that closes it never pulls it from under another.
    inspector: tokio::sync::Mutex<Option<Channel>>,
}

/// The TLS settings for `url`: the environment's CA and client certificate
/// for `amqps://`, nothing for plaintext.
fn tls_config(url: &str) -> Result<OwnedTLSConfig, BrokerError> {
    if !autoeval_proto::tls::wants_tls(url) {
        return Ok(OwnedTLSConfig::default());
    }
    let material = autoeval_proto::tls::TlsMaterial::from_lookup(
        |var| std::env::var(var).ok(),
        |p| std::fs::read(p),
    )?;
    Ok(OwnedTLSConfig {
        cert_chain: material.ca_text(),
        identity: material
            .identity
            .map(|(pem, key)| OwnedIdentity::PKCS8 { pem, key }),
    })
}

/// Why a connection failed, in one line.
fn connect_detail(url: &str, error: &str) -> String {
    // The client repeats its cause at each layer ("IO error: X"): X says it.
    let cause = error.rsplit(": ").next().unwrap_or_default();
    autoeval_proto::tls::explain_failure(url, cause)
}

impl Broker {
    /// Connects once to a node of `urls` (one URL, or a comma-separated
    /// list of one cluster's nodes: each tried in turn, from the one after
    /// the node this process was last on) and declares the fleet's shared
    /// exchanges and queues.
    pub async fn connect(
        urls: &str,
        topology: &Topology,
        name: &str,
    ) -> Result<Broker, BrokerError> {
        let nodes = autoeval_proto::fleet::url_list(urls);
        if let [url] = nodes.as_slice() {
            return Broker::connect_node(url, topology, name).await;
        }
        if nodes.is_empty() {
            return Err(BrokerError::Connect {
                url: redact(urls),
                detail: "no broker URL given".into(),
            });
        }
        let first = crate::nodes::first_to_try(urls, nodes.len());
        let (mut away, mut refused) = (Vec::new(), None);
        for k in (0..nodes.len()).map(|i| (first + i) % nodes.len()) {
            match Broker::connect_node(nodes[k], topology, name).await {
                Ok(broker) => {
                    crate::nodes::connected(urls, k);
                    return Ok(broker);
                }
                Err(e) if e.is_permanent() => {
                    refused.get_or_insert(e);
                }
                Err(e) => away.push(format!("{}: {}", redact(nodes[k]), e.detail())),
            }
        }
        match refused {
            Some(e) if away.is_empty() => Err(e),
            _ => Err(BrokerError::Connect {
                url: redact(urls),
                detail: format!("no node answers: {}", away.join("; ")),
            }),
        }
    }

    /// Connects once to the one node at `url`.
    async fn connect_node(
        url: &str,
        topology: &Topology,
        name: &str,
    ) -> Result<Broker, BrokerError> {
        let properties =
            ConnectionProperties::default().with_connection_name(LongString::from(name));
        let tls = tls_config(url)?;
        let runtime = lapin::runtime::default_runtime().map_err(|e| BrokerError::Connect {
            url: redact(url),
            detail: e.to_string(),
        })?;
        let connecting = Connection::connect_with_config(url, properties, tls, runtime);
        let connection = match tokio::time::timeout(OPERATION_TIMEOUT, connecting).await {
            Ok(made) => made.map_err(|e| BrokerError::Connect {
                url: redact(url),
                detail: connect_detail(url, &e.to_string()),
            })?,
            Err(_) => {
                return Err(BrokerError::TimedOut {
                    what: format!("connecting to {}", redact(url)),
                    seconds: OPERATION_TIMEOUT.as_secs(),
                })
            }
        };
        let publisher = connection
            .create_channel()
            .bounded("open a channel")
            .await?;
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .bounded("turn on publisher confirms")
            .await?;
        let broker = Broker {
            connection,
            node: redact(url),
            topology: topology.clone(),
            publisher,
            inspector: tokio::sync::Mutex::default(),
        };
        broker.declare_common().await?;
        crate::nodes::note_connection(&broker.node);
        Ok(broker)
    }

    /// Connects, retrying with exponential backoff (0.2 s doubling to 5 s)
    /// while the broker is away (refused, reset, timed out); an error no
    /// retry can mend (a TLS handshake with a plaintext port, credentials or
    /// a vhost the broker refuses, unreadable TLS material) is answered
    /// after [`PERMANENT_TRIES`] tries in a row, so that the process exits
    /// and its orchestrator shows it failing rather than running.
    pub async fn connect_with_backoff(
        url: &str,
        topology: &Topology,
        name: &str,
    ) -> Result<Broker, BrokerError> {
        let mut wait = Duration::from_millis(200);
        let mut permanent = 0;
        loop {
            match Broker::connect(url, topology, name).await {
                Ok(b) => return Ok(b),
                Err(e) => {
                    permanent = if e.is_permanent() { permanent + 1 } else { 0 };
                    if permanent >= PERMANENT_TRIES {
                        return Err(match e {
                            BrokerError::Connect { url, detail } => {
                                BrokerError::Refused { url, detail }
                            }
                            other => other,
                        });
                    }
                    tracing::warn!(error = %e, retry_in_ms = wait.as_millis() as u64, "broker unavailable");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    /// The node connected to, as its URL fit to print.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The names of the fleet's exchanges and queues.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// True while the connection is up.
    pub fn is_connected(&self) -> bool {
        self.connection.status().connected()
    }

    /// Ends once the connection is down (it is looked at every second).
    pub async fn lost(&self) {
        while self.is_connected() {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Declares the translate queue of a model this process serves.
    pub async fn declare_translate(&self, model: &str) -> Result<String, BrokerError> {
        let queue = self.topology.translate_queue(model);
        self.declare_stage(&queue, &translate_key(model)).await?;
        Ok(queue)
    }

    /// Declares the queue of A4 questions for a judge model this process serves.
    pub async fn declare_judge(&self, model: &str) -> Result<String, BrokerError> {
        let queue = self.topology.judge_queue(model);
        self.declare_stage(&queue, &judge_key(model)).await?;
        Ok(queue)
    }

    /// Publishes to the tasks exchange and waits for the broker's confirm.
    pub async fn publish(
        &self,
        routing_key: &str,
        payload: &[u8],
        meta: &Meta,
    ) -> Result<(), BrokerError> {
        let exchange = self.topology.tasks_exchange();
        self.publish_to(&exchange, routing_key, payload, headers(meta, None))
            .await
    }

    pub(crate) async fn publish_to(
        &self,
        exchange: &str,
        routing_key: &str,
        payload: &[u8],
        headers: FieldTable,
    ) -> Result<(), BrokerError> {
        let properties = BasicProperties::default()
            .with_delivery_mode(2)
            .with_headers(headers);
        let sent = tokio::time::timeout(
            CONFIRM_TIMEOUT,
            self.publish_confirmed(exchange, routing_key, payload, properties),
        )
        .await;
        match sent {
            Ok(sent) => sent,
            Err(_) => {
                // A publisher blocked past the timeout holds deliveries it
                // cannot hand on: the connection goes, so that everything it
                // held returns to the queues and its user connects again.
                close_quietly(
                    self.connection
                        .close(320, "publish confirm timed out".into()),
                )
                .await;
                Err(BrokerError::ConfirmTimedOut {
                    routing_key: routing_key.into(),
                    seconds: CONFIRM_TIMEOUT.as_secs(),
                })
            }
        }
    }

    async fn publish_confirmed(
        &self,
        exchange: &str,
        routing_key: &str,
        payload: &[u8],
        properties: BasicProperties,
    ) -> Result<(), BrokerError> {
        let confirm = self
            .publisher
            .basic_publish(
                exchange.into(),
                routing_key.into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                payload,
                properties,
            )
            // Bounded by the caller's CONFIRM_TIMEOUT, which also closes the
            // connection so that what it held returns to the queues.
            .await
            .map_err(amqp(format!("publish to {routing_key}")))?
            .await
            .map_err(amqp(format!("confirm a publish to {routing_key}")))?;
        if confirm.is_nack() {
            return Err(BrokerError::Nacked {
                routing_key: routing_key.into(),
            });
        }
        if let Some(returned) = confirm.take_message() {
            return Err(BrokerError::Unroutable {
                routing_key: routing_key.into(),
                reply: returned.reply_text.to_string(),
            });
        }
        Ok(())
    }

    /// Consumes `queue` on its own channel with `prefetch` unacknowledged deliveries at most.
    pub async fn consume(
        &self,
        queue: &str,
        prefetch: u16,
        tag: &str,
    ) -> Result<Consumer, BrokerError> {
        let channel = self
            .connection
            .create_channel()
            .bounded("open a channel")
            .await?;
        channel
            .basic_qos(prefetch.max(1), BasicQosOptions::default())
            .bounded("set the prefetch")
            .await?;
        Consumer::start(channel, queue, tag).await
    }

    /// Messages ready in `queue` and its consumers; `None` when it does not exist.
    pub async fn depth(&self, queue: &str) -> Result<Option<(u32, u32)>, BrokerError> {
        let mut kept = self.inspector.lock().await;
        let channel = match kept.as_ref().filter(|c| c.status().connected()) {
            Some(c) => c.clone(),
            None => {
                let c = self
                    .connection
                    .create_channel()
                    .bounded("open a channel")
                    .await?;
                *kept = Some(c.clone());
                c
            }
        };
        let options = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        let found = tokio::time::timeout(
            OPERATION_TIMEOUT,
            channel.queue_declare(queue.into(), options, FieldTable::default()),
        )
        .await
        .map_err(|_| BrokerError::TimedOut {
            what: format!("look up {queue}"),
            seconds: OPERATION_TIMEOUT.as_secs(),
        })?;
        if found.is_err() {
            // A passive declare of a missing queue closes its channel.
            *kept = None;
        }
        match found {
            Ok(q) => Ok(Some((q.message_count(), q.consumer_count()))),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(amqp(format!("look up {queue}"))(e)),
        }
    }

    /// Deletes a queue and the messages in it (for tools and tests that clean up).
    pub async fn delete_queue(&self, queue: &str) -> Result<(), BrokerError> {
        self.publisher
            .queue_delete(queue.into(), lapin::options::QueueDeleteOptions::default())
            .bounded(format!("delete {queue}"))
            .await
            .map(|_| ())
    }

    /// Deletes `queue` if it has no consumer and no message ready; true
    /// when it was deleted or was not there, false when in use or not
    /// empty. Quorum queues refuse the broker's own `if-unused` check, so
    /// it is looked at first: a consumer that attaches between the look
    /// and the delete loses its subscription, and reconnects.
    pub async fn delete_queue_if_idle(&self, queue: &str) -> Result<bool, BrokerError> {
        match self.depth(queue).await? {
            None => Ok(true),
            Some((0, 0)) => self.delete_queue(queue).await.map(|()| true),
            Some(_) => Ok(false),
        }
    }

    /// Drops the messages ready in a queue, as a lost broker volume would
    /// (for tools and tests of recovery); answers how many were dropped.
    pub async fn purge_queue(&self, queue: &str) -> Result<u32, BrokerError> {
        self.publisher
            .queue_purge(queue.into(), lapin::options::QueuePurgeOptions::default())
            .bounded(format!("purge {queue}"))
            .await
    }

    /// Closes the connection.
    pub async fn close(&self) {
        close_quietly(self.connection.close(200, "bye".into())).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            redact("amqp://guest:secret@127.0.0.1:5672/%2f"),
            "amqp://guest:***@127.0.0.1:5672/%2f"
        );
        assert_eq!(redact("amqp://127.0.0.1"), "amqp://127.0.0.1");
        assert_eq!(
            redact("amqps://u:p@h:5671/%2f?auth_mechanism=external&cacertfile=/s/ca.pem"),
            "amqps://u:***@h:5671/%2f?***"
        );
    }
}
