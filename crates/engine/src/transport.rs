//! What the loops need of a transport: deliveries that are acknowledged,
//! given back or dead-lettered; confirmed sends; and a store that records
//! each round once.

use autoeval_proto::{JudgeKey, JudgeRecord, ResultRecord, UnitKey};
use std::future::Future;
use thiserror::Error;

/// The transport failed; the delivery in hand comes back (it was not acknowledged).
#[derive(Debug, Clone, Error)]
#[error("{0}")]
pub struct TransportError(pub String);

/// The store cannot read or write.
#[derive(Debug, Clone, Error)]
#[error("result store: {message}")]
pub struct StoreError {
    /// What failed, with the cause.
    pub message: String,
    /// Whether it may pass (a connection lost for a moment), so that the
    /// work is given back to be done again rather than the run stopped.
    pub transient: bool,
}

impl StoreError {
    /// A failure that will not pass by waiting.
    pub fn fatal(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
            transient: false,
        }
    }

    /// A failure that may pass.
    pub fn transient(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
            transient: true,
        }
    }
}

/// One message taken from an inbox: a bundle of tasks of one run, held
/// until it is settled one of three ways.
pub trait Delivery: Send + Sync + 'static {
    /// The run its tasks belong to.
    fn run(&self) -> &str;
    /// Whether it was delivered before (a crash or a lost connection gave it back).
    fn redelivered(&self) -> bool;
    /// Done: forgotten by the transport.
    fn ack(self) -> impl Future<Output = Result<(), TransportError>> + Send;
    /// Not done now: back to the inbox, for this process or another.
    fn requeue(self) -> impl Future<Output = Result<(), TransportError>> + Send;
    /// Never doable: set apart with `reason`, then acknowledged.
    fn dead_letter(self, reason: &str) -> impl Future<Output = Result<(), TransportError>> + Send;
}

/// A delivery and its tasks, or why its body cannot be read (poison).
pub struct Incoming<D, T> {
    /// The delivery, to settle.
    pub delivery: D,
    /// Its tasks, or why there are none.
    pub tasks: Result<Vec<T>, String>,
    /// How many tasks its headers name (to count a refused delivery's tasks).
    pub units: usize,
}

/// Where a loop takes its work.
pub trait Inbox<T>: Send + 'static {
    /// What a delivery is on this transport.
    type Delivery: Delivery;
    /// The next delivery; `None` when the inbox ended (closed, or the
    /// subscription was lost: the caller subscribes again).
    fn next(
        &mut self,
    ) -> impl Future<Output = Option<Result<Incoming<Self::Delivery, T>, TransportError>>> + Send;
}

/// Where a loop hands its results on.
pub trait Outbox<T>: Send + Sync + 'static {
    /// Sends `tasks` of `run` (bundled and routed as the transport does);
    /// once this returns, they are kept by the transport.
    fn send(
        &self,
        run: &str,
        tasks: Vec<T>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send;
}

/// Durable storage of each round's record, written once.
pub trait RecordStore: Send + Sync + 'static {
    /// Stores each record unless its (unit, round) is stored already, with
    /// the run's counters in the same step; says for each whether it was
    /// new. A round is its unit's last when it did not keep the meaning or
    /// it was round `rounds`. Once this returns, a crash does not lose them.
    fn record_all(
        &self,
        run: &str,
        records: &[ResultRecord],
        rounds: u32,
    ) -> impl Future<Output = Result<Vec<bool>, StoreError>> + Send;
    /// The stored record of one round of a unit, if any.
    fn stored(
        &self,
        run: &str,
        unit: &UnitKey,
        round: u32,
    ) -> impl Future<Output = Result<Option<ResultRecord>, StoreError>> + Send;
    /// Every stored record of `run`, one at a time, without holding them all.
    fn scan(
        &self,
        run: &str,
        each: impl FnMut(ResultRecord) + Send,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Durable storage of A4 judgements, each pair's first kept.
pub trait JudgementStore: Send + Sync + 'static {
    /// Stores `judgement` made by `judge` unless the
    /// pair has one; a failed call is kept apart, to be asked again. Says
    /// whether it was new.
    fn record_judgement(
        &self,
        run: &str,
        judge: &JudgeKey,
        judgement: &JudgeRecord,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
