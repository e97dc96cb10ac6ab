//! Tasks as a consumer receives them: the body, who it is for, how often it
//! was delivered, and the three ways to finish it.

use crate::bounded::{close_quietly, Bounded};
use crate::error::amqp;
use crate::headers::{header_number, header_text, header_texts, headers};
use crate::{Broker, BrokerError, Meta};
use autoeval_proto::fleet::{RUN_HEADER, UNITS_HEADER};
use futures_util::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicNackOptions};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::Acker;
use lapin::Channel;

/// Header the dead-letter copy keeps the original routing key in.
const ORIGINAL_KEY_HEADER: &str = "autoeval-routing-key";

/// A subscription to one queue.
pub struct Consumer {
    channel: Channel,
    inner: lapin::Consumer,
}

impl Consumer {
    pub(crate) async fn start(
        channel: Channel,
        queue: &str,
        tag: &str,
    ) -> Result<Consumer, BrokerError> {
        let inner = channel
            .basic_consume(
                queue.into(),
                tag.into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .bounded(format!("consume {queue}"))
            .await?;
        Ok(Consumer { channel, inner })
    }

    /// The next task; `None` when the subscription ended (the connection
    /// was lost or the server cancelled the consumer): subscribe again.
    pub async fn next(&mut self) -> Option<Result<Task, BrokerError>> {
        let delivery = match self.inner.next().await? {
            Ok(d) => d,
            Err(e) => return Some(Err(amqp("receive a task")(e))),
        };
        // A message without headers or a run header names no run: the
        // empty name matches no body, so the message is refused as poison.
        let table = delivery.properties.headers().clone().unwrap_or_default();
        Some(Ok(Task {
            meta: Meta {
                run: header_text(&table, RUN_HEADER).unwrap_or_default(),
                units: header_texts(&table, UNITS_HEADER),
            },
            // Quorum queues count earlier deliveries in this header.
            delivery_count: header_number(&table, "x-delivery-count").unwrap_or(0) as u32,
            routing_key: delivery.routing_key.to_string(),
            data: delivery.data,
            acker: delivery.acker,
        }))
    }

    /// Asks the broker for no more deliveries; those already sent still
    /// arrive from [`Consumer::next`] until it returns `None`.
    pub async fn cancel(&self) {
        let tag = self.inner.tag();
        close_quietly(
            self.channel
                .basic_cancel(tag, lapin::options::BasicCancelOptions::default()),
        )
        .await;
    }

    /// Stops the subscription; unacknowledged tasks go back to the queue.
    pub async fn close(&self) {
        close_quietly(self.channel.close(200, "done".into())).await;
    }
}

/// One delivered task.
pub struct Task {
    /// The message bytes.
    pub data: Vec<u8>,
    /// Run and units from its headers (empty when a sender left them out).
    pub meta: Meta,
    /// Deliveries before this one.
    pub delivery_count: u32,
    /// The routing key it was published with.
    pub routing_key: String,
    acker: Acker,
}

impl Task {
    /// Done: the broker forgets it.
    pub async fn ack(self) -> Result<(), BrokerError> {
        self.acker
            .ack(BasicAckOptions::default())
            .bounded("acknowledge a task")
            .await
            .map(|_| ())
    }

    /// Not done: back to the queue for another worker (counts toward the delivery limit).
    pub async fn requeue(self) -> Result<(), BrokerError> {
        self.acker
            .nack(BasicNackOptions {
                requeue: true,
                ..BasicNackOptions::default()
            })
            .bounded("return a task")
            .await
            .map(|_| ())
    }

    /// Never doable: kept in the dead-letter queue with `reason`, then acknowledged.
    pub async fn refuse(self, broker: &Broker, reason: &str) -> Result<(), BrokerError> {
        let mut table = headers(&self.meta, Some(reason));
        table.insert(
            ORIGINAL_KEY_HEADER.into(),
            AMQPValue::LongString(LongString::from(self.routing_key.as_str())),
        );
        let exchange = broker.topology().dead_exchange();
        broker
            .publish_to(&exchange, &self.routing_key, &self.data, table)
            .await?;
        self.ack().await
    }
}
