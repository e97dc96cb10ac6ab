//! RabbitMQ as the engine's transport: a consumer is an inbox of bundles,
//! a confirming publisher an outbox, and a delivery is settled by
//! acknowledging, returning or dead-lettering its message.

use crate::{bundle_messages, Broker, Consumer, Task};
use autoeval_engine::{Delivery, Inbox, Incoming, Outbox, TransportError};
use autoeval_proto::wire::{decode, MessageKind};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;
use std::sync::Arc;

fn lost(e: crate::BrokerError) -> TransportError {
    TransportError(e.to_string())
}

/// A subscription whose messages are bundles of `T` of one kind.
pub struct AmqpInbox<T> {
    consumer: Consumer,
    broker: Arc<Broker>,
    kind: MessageKind,
    tasks: PhantomData<fn() -> T>,
}

impl<T> AmqpInbox<T> {
    /// The bundles of `kind` that `consumer` receives; refused ones go to `broker`'s dead letters.
    pub fn new(consumer: Consumer, broker: Arc<Broker>, kind: MessageKind) -> AmqpInbox<T> {
        AmqpInbox {
            consumer,
            broker,
            kind,
            tasks: PhantomData,
        }
    }

    /// Asks for no more deliveries; those in hand are still settled.
    pub async fn cancel(&self) {
        self.consumer.cancel().await;
    }

    /// Ends the subscription; messages not acknowledged go back to the queue.
    pub async fn close(&self) {
        self.consumer.close().await;
    }
}

/// One message in hand.
pub struct AmqpDelivery {
    task: Task,
    broker: Arc<Broker>,
}

impl Delivery for AmqpDelivery {
    fn run(&self) -> &str {
        &self.task.meta.run
    }

    fn redelivered(&self) -> bool {
        self.task.delivery_count > 0
    }

    async fn ack(self) -> Result<(), TransportError> {
        let broker = self.broker.clone();
        unless_lost(&broker, self.task.ack()).await
    }

    async fn requeue(self) -> Result<(), TransportError> {
        let broker = self.broker.clone();
        unless_lost(&broker, self.task.requeue()).await
    }

    async fn dead_letter(self, reason: &str) -> Result<(), TransportError> {
        let broker = self.broker.clone();
        unless_lost(&broker, self.task.refuse(&broker, reason)).await
    }
}

/// `settle`, given up once `broker`'s connection is down: the broker gives
/// the message back itself then, and lapin may never end the settle.
async fn unless_lost(
    broker: &Broker,
    settle: impl std::future::Future<Output = Result<(), crate::BrokerError>>,
) -> Result<(), TransportError> {
    tokio::select! {
        settled = settle => settled.map_err(lost),
        () = broker.lost() => Err(TransportError(
            "the broker connection was lost; the message goes back to its queue".into(),
        )),
    }
}

impl<T: DeserializeOwned + Send + 'static> Inbox<T> for AmqpInbox<T> {
    type Delivery = AmqpDelivery;

    async fn next(&mut self) -> Option<Result<Incoming<AmqpDelivery, T>, TransportError>> {
        // Over a connection that died, lapin may never end the consumer's
        // stream: the connection's own state ends the wait too.
        let received = tokio::select! {
            received = self.consumer.next() => received,
            () = self.broker.lost() => {
                return Some(Err(TransportError("the broker connection was lost".into())))
            }
        };
        let task = match received? {
            Ok(t) => t,
            Err(e) => return Some(Err(lost(e))),
        };
        // The run a worker serves a message for is the one its headers name;
        // a body of another run is refused, not served under the wrong run.
        let tasks = decode::<Vec<T>>(&task.data, self.kind)
            .map_err(|e| e.to_string())
            .and_then(|(header, body)| {
                if header.run == task.meta.run {
                    Ok(body)
                } else {
                    Err(format!(
                        "the message's run header {:?} is not its body's run {:?}",
                        task.meta.run, header.run
                    ))
                }
            });
        Some(Ok(Incoming {
            units: task.meta.units.len(),
            delivery: AmqpDelivery {
                task,
                broker: self.broker.clone(),
            },
            tasks,
        }))
    }
}

/// Publishes bundles of `T` of one kind, each task routed by `route`:
/// its routing key and its round.
pub struct AmqpOutbox<T> {
    broker: Arc<Broker>,
    kind: MessageKind,
    route: fn(&T) -> (String, autoeval_proto::RoundKey),
}

impl<T> AmqpOutbox<T> {
    /// An outbox of `kind` messages on `broker`.
    pub fn new(
        broker: Arc<Broker>,
        kind: MessageKind,
        route: fn(&T) -> (String, autoeval_proto::RoundKey),
    ) -> AmqpOutbox<T> {
        AmqpOutbox {
            broker,
            kind,
            route,
        }
    }
}

impl<T: Serialize + Send + Sync + 'static> Outbox<T> for AmqpOutbox<T> {
    async fn send(&self, run: &str, tasks: Vec<T>) -> Result<(), TransportError> {
        let (run_name, kind, route) = (run.to_string(), self.kind, self.route);
        // Encoding holds the tasks' replies, which may be megabytes: off the
        // async runtime, so heartbeats and health checks go on meanwhile.
        let messages =
            tokio::task::spawn_blocking(move || bundle_messages(&run_name, kind, tasks, route))
                .await
                .map_err(|e| TransportError(format!("cannot encode a bundle: {e}")))?
                .map_err(|e| TransportError(format!("cannot encode a bundle: {e}")))?;
        for (key, bytes, meta) in messages {
            self.broker
                .publish(&key, &bytes, &meta)
                .await
                .map_err(lost)?;
        }
        Ok(())
    }
}

/// How translate tasks are routed: to their model's queue.
pub fn route_translate(t: &autoeval_proto::TranslateTask) -> (String, autoeval_proto::RoundKey) {
    (
        autoeval_proto::fleet::translate_key(&t.model),
        t.round_key(),
    )
}

/// How verify tasks are routed: to the one verify queue.
pub fn route_verify(v: &autoeval_proto::VerifyTask) -> (String, autoeval_proto::RoundKey) {
    (
        autoeval_proto::fleet::VERIFY_KEY.to_string(),
        v.task.round_key(),
    )
}
