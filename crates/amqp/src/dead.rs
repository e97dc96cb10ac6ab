//! Reading the dead-letter queue: what is there and why, and taking a
//! run's letters out once they are republished.

use crate::bounded::{close_quietly, Bounded};
use crate::headers::{header_text, header_texts};
use crate::{Broker, BrokerError};
use autoeval_proto::fleet::{REASON_HEADER, RUN_HEADER, UNITS_HEADER};
use lapin::options::{BasicAckOptions, BasicGetOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};

/// One message in the dead-letter queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter {
    /// Its run, when it carried one.
    pub run: String,
    /// The unit and round of each task in it, when it carried them.
    pub units: Vec<String>,
    /// The routing key it was published with.
    pub routing_key: String,
    /// Why it is here.
    pub reason: String,
}

/// Why a message was dead-lettered: a worker's stated reason, else the
/// broker's (`x-death`), else it was never routed to a queue at all.
fn reason(table: &FieldTable, routing_key: &str) -> String {
    if let Some(r) = header_text(table, REASON_HEADER) {
        return r;
    }
    let death = match table.inner().get(&ShortString::from("x-death")) {
        Some(AMQPValue::FieldArray(a)) => a.as_slice().first().cloned(),
        _ => None,
    };
    if let Some(AMQPValue::FieldTable(d)) = death {
        let why = header_text(&d, "reason").unwrap_or_else(|| "unknown".into());
        let queue = header_text(&d, "queue").unwrap_or_default();
        return match why.as_str() {
            "delivery_limit" => format!("delivered too often from {queue} (every attempt failed)"),
            other => format!("{other} by {queue}"),
        };
    }
    format!("unroutable: no queue takes {routing_key} (no worker serves that model)")
}

impl Broker {
    /// Up to `limit` dead letters, left in place.
    pub async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, BrokerError> {
        let channel = self.spare_channel().await?;
        let mut out = Vec::new();
        while out.len() < limit {
            let Some(m) = channel
                .basic_get(
                    self.topology().dead_queue().as_str().into(),
                    BasicGetOptions::default(),
                )
                .bounded("read the dead letters")
                .await?
            else {
                break;
            };
            out.push(letter(&m.delivery));
        }
        // Closing the channel returns every letter it held, unacknowledged.
        close_quietly(channel.close(200, "done".into())).await;
        Ok(out)
    }

    /// Takes every dead letter of `run` out of the queue; returns them.
    pub async fn take_dead_letters(&self, run: &str) -> Result<Vec<DeadLetter>, BrokerError> {
        let channel = self.spare_channel().await?;
        let mut taken = Vec::new();
        while let Some(m) = channel
            .basic_get(
                self.topology().dead_queue().as_str().into(),
                BasicGetOptions::default(),
            )
            .bounded("read the dead letters")
            .await?
        {
            let l = letter(&m.delivery);
            if l.run == run {
                m.delivery
                    .acker
                    .ack(BasicAckOptions::default())
                    .bounded("remove a dead letter")
                    .await?;
                taken.push(l);
            }
        }
        close_quietly(channel.close(200, "done".into())).await;
        Ok(taken)
    }
}

fn letter(d: &lapin::message::Delivery) -> DeadLetter {
    let table = d.properties.headers().clone().unwrap_or_default();
    DeadLetter {
        run: header_text(&table, RUN_HEADER).unwrap_or_default(),
        units: header_texts(&table, UNITS_HEADER),
        routing_key: d.routing_key.to_string(),
        reason: reason(&table, d.routing_key.as_str()),
    }
}
