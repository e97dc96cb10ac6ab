//! Custody of tasks whose model calls wait for provider batches: a batch
//! takes hours, and a broker takes back a delivery held that long. Once a
//! task is kept here (durably, owned by this process under a lease it
//! renews), its delivery is acknowledged; the task goes on in the
//! background and is released once its answers are sent. If the process
//! dies, its lease lapses and another process of the same model adopts the
//! task, whose calls then find their batches in the batch journal.

use crate::transport::StoreError;
use autoeval_proto::{RoundKey, TranslateTask};
use std::future::Future;

/// Where tasks waiting for batches are kept.
pub trait Custody: Send + Sync + 'static {
    /// Whether tasks are kept at all (one machine holds them in place).
    fn enabled(&self) -> bool;
    /// How many tasks this process carries at once, at most.
    fn capacity(&self) -> usize;
    /// Keeps `task` of `run`, owned by this process.
    fn keep(
        &self,
        run: &str,
        task: &TranslateTask,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// The task of `round` of `run` is done (its answers sent, or left pending by a halt).
    fn release(
        &self,
        run: &str,
        model: &str,
        round: &RoundKey,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Gives the task of `round` up, for any process of its model (this one
    /// too) to adopt: its answers could not be sent on this connection.
    fn abandon(
        &self,
        run: &str,
        model: &str,
        round: &RoundKey,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Tasks (with their runs) whose owner's lease lapsed, now owned by this
    /// process, at most `limit` of them.
    fn adopt(
        &self,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<(String, TranslateTask)>, StoreError>> + Send;
}

/// No custody: tasks are held in place while their calls wait.
pub struct NoCustody;

impl Custody for NoCustody {
    fn enabled(&self) -> bool {
        false
    }
    fn capacity(&self) -> usize {
        0
    }
    async fn keep(&self, _run: &str, _task: &TranslateTask) -> Result<(), StoreError> {
        Ok(())
    }
    async fn release(&self, _run: &str, _model: &str, _round: &RoundKey) -> Result<(), StoreError> {
        Ok(())
    }
    async fn abandon(&self, _run: &str, _model: &str, _round: &RoundKey) -> Result<(), StoreError> {
        Ok(())
    }
    async fn adopt(&self, _limit: usize) -> Result<Vec<(String, TranslateTask)>, StoreError> {
        Ok(Vec::new())
    }
}
