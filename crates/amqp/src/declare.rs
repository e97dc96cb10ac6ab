//! Declaring the fleet's exchanges and queues, so that every queue a run
//! needs survives the loss of one broker node of a cluster: each is a
//! quorum queue, created with a replica on up to [`QUORUM_REPLICAS`] nodes.
//!
//! A queue that exists is only looked up (a passive declaration), never
//! declared again with its arguments: RabbitMQ refuses a declaration whose
//! arguments differ from the queue's ("inequivalent arg"), and queues made
//! by earlier versions carry no replica count.

use crate::bounded::{close_quietly, Bounded};
use crate::error::BrokerError;
use crate::Broker;
use autoeval_proto::fleet::{DELIVERY_LIMIT, QUORUM_REPLICAS, VERIFY_KEY};
use lapin::options::{
    BasicAckOptions, BasicGetOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, ExchangeKind};

fn text(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

/// Arguments every quorum queue of the fleet is created with.
fn quorum_arguments() -> FieldTable {
    let mut args = FieldTable::default();
    args.insert("x-queue-type".into(), text("quorum"));
    // The broker places as many replicas as the cluster has nodes, up to this.
    args.insert(
        "x-quorum-initial-group-size".into(),
        AMQPValue::LongInt(QUORUM_REPLICAS as i32),
    );
    args
}

/// Arguments of a stage queue: quorum, dead-lettered at least once after the delivery limit.
fn stage_queue_arguments(dead_exchange: &str) -> FieldTable {
    let mut args = quorum_arguments();
    args.insert("x-dead-letter-exchange".into(), text(dead_exchange));
    args.insert("x-dead-letter-strategy".into(), text("at-least-once"));
    // At-least-once dead-lettering needs the queue to refuse publishes when full.
    args.insert("x-overflow".into(), text("reject-publish"));
    args.insert(
        "x-delivery-limit".into(),
        AMQPValue::LongInt(DELIVERY_LIMIT as i32),
    );
    args
}

fn durable() -> QueueDeclareOptions {
    QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    }
}

fn passive() -> QueueDeclareOptions {
    QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    }
}

/// True when the broker answered that a queue is not there (or, for a
/// classic queue, that the node it lives on is down).
pub(crate) fn is_not_found(e: &lapin::Error) -> bool {
    e.to_string().contains("NOT_FOUND")
}

/// True when the broker refused a declaration over its arguments (a queue
/// another process created at the same moment with other ones).
fn is_inequivalent(e: &BrokerError) -> bool {
    e.to_string().contains("PRECONDITION_FAILED")
}

impl Broker {
    /// A channel of its own, for operations whose failure closes it.
    pub(crate) async fn spare_channel(&self) -> Result<Channel, BrokerError> {
        self.connection
            .create_channel()
            .bounded("open a channel")
            .await
    }

    /// Whether `queue` exists (looked up on a channel of its own, which a
    /// missing queue closes).
    async fn queue_exists(&self, queue: &str) -> Result<bool, BrokerError> {
        let channel = self.spare_channel().await?;
        let found = channel
            .queue_declare(queue.into(), passive(), FieldTable::default())
            .await;
        match found {
            Ok(_) => {
                close_quietly(channel.close(200, "looked up".into())).await;
                Ok(true)
            }
            Err(e) if is_not_found(&e) => Ok(false),
            Err(e) => Err(crate::error::amqp(format!("look up {queue}"))(e)),
        }
    }

    /// Creates the quorum queue `queue` with `args` unless it exists.
    async fn ensure_queue(&self, queue: &str, args: FieldTable) -> Result<(), BrokerError> {
        if self.queue_exists(queue).await? {
            return Ok(());
        }
        let channel = self.spare_channel().await?;
        let made = channel
            .queue_declare(queue.into(), durable(), args)
            .bounded(format!("declare the queue {queue}"))
            .await;
        match made {
            Ok(_) => {
                close_quietly(channel.close(200, "declared".into())).await;
                Ok(())
            }
            // Made meanwhile by a process of another version: it is there.
            Err(e) if is_inequivalent(&e) && self.queue_exists(queue).await? => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn bind(&self, queue: &str, exchange: &str, key: &str) -> Result<(), BrokerError> {
        self.publisher
            .queue_bind(
                queue.into(),
                exchange.into(),
                key.into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .bounded(format!("bind the queue {queue}"))
            .await
    }

    /// Declares the exchanges and queues every process of the fleet shares.
    pub(crate) async fn declare_common(&self) -> Result<(), BrokerError> {
        let names = self.topology();
        let durable = ExchangeDeclareOptions {
            durable: true,
            ..ExchangeDeclareOptions::default()
        };
        let (dead, unrouted) = (names.dead_exchange(), names.unrouted_exchange());
        let mut tasks_args = FieldTable::default();
        tasks_args.insert("alternate-exchange".into(), text(&unrouted));
        for (name, kind, args) in [
            (&dead, ExchangeKind::Fanout, FieldTable::default()),
            (&unrouted, ExchangeKind::Fanout, FieldTable::default()),
            (&names.tasks_exchange(), ExchangeKind::Direct, tasks_args),
        ] {
            self.publisher
                .exchange_declare(name.as_str().into(), kind, durable, args)
                .bounded(format!("declare the exchange {name}"))
                .await?;
        }
        let dead_queue = names.dead_queue();
        self.ensure_queue(&dead_queue, quorum_arguments()).await?;
        for exchange in [&dead, &unrouted] {
            self.bind(&dead_queue, exchange, "").await?;
        }
        if let Err(e) = self.move_legacy_dead_letters().await {
            // Its letters wait for a later connection: a node holding it
            // may be down, and nothing a run needs is in it.
            tracing::warn!(error = %e, "could not yet move the dead letters of an earlier version");
        }
        self.declare_stage(&names.verify_queue(), VERIFY_KEY).await
    }

    /// Declares a stage queue and binds it to the tasks exchange under `key`.
    pub(crate) async fn declare_stage(&self, queue: &str, key: &str) -> Result<(), BrokerError> {
        let names = self.topology();
        self.ensure_queue(queue, stage_queue_arguments(&names.dead_exchange()))
            .await?;
        self.bind(queue, &names.tasks_exchange(), key).await
    }

    /// Moves the letters of the classic dead-letter queue of earlier
    /// versions into the quorum one and deletes it: unbound first, so
    /// that no letter goes to both; each letter republished to the dead
    /// exchange with its headers and routing key, confirmed, then taken
    /// out. Processes doing this at once each move different letters.
    async fn move_legacy_dead_letters(&self) -> Result<(), BrokerError> {
        let names = self.topology();
        let legacy = names.legacy_dead_queue();
        if !self.queue_exists(&legacy).await? {
            return Ok(());
        }
        for exchange in [names.dead_exchange(), names.unrouted_exchange()] {
            self.publisher
                .queue_unbind(
                    legacy.as_str().into(),
                    exchange.as_str().into(),
                    "".into(),
                    FieldTable::default(),
                )
                .bounded(format!("unbind {legacy}"))
                .await?;
        }
        let channel = self.spare_channel().await?;
        let mut moved = 0;
        while let Some(m) = channel
            .basic_get(legacy.as_str().into(), BasicGetOptions::default())
            .bounded(format!("read {legacy}"))
            .await?
        {
            let d = &m.delivery;
            let headers = d.properties.headers().clone().unwrap_or_default();
            self.publish_to(
                &names.dead_exchange(),
                d.routing_key.as_str(),
                &d.data,
                headers,
            )
            .await?;
            d.acker
                .ack(BasicAckOptions::default())
                .bounded("take out a moved letter")
                .await?;
            moved += 1;
        }
        let gone = channel
            .queue_delete(
                legacy.as_str().into(),
                QueueDeleteOptions {
                    if_empty: true,
                    ..QueueDeleteOptions::default()
                },
            )
            .bounded(format!("delete {legacy}"))
            .await;
        close_quietly(channel.close(200, "moved".into())).await;
        gone?;
        tracing::info!(moved, from = %legacy, to = %names.dead_queue(), "moved the dead letters of an earlier version");
        Ok(())
    }
}
