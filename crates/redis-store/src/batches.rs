//! A fleet run's batch journal in Redis, shared by every worker of the
//! run: `batch-calls` (each call's state by model and `custom_id`),
//! `batch-records` (each batch as submitted) and `batch-status` (each
//! batch's size and end, small enough for `status` to read whole). The keys
//! are the run's, so they expire and are removed with it.

use crate::redis_err;
use crate::Connection;
use autoeval_models::{
    BatchEnd, BatchJournal, BatchOutcome, BatchRecord, BatchStatus, CacheFuture, CallState,
    JournalUnavailable,
};
use autoeval_proto::fleet::run_key;
use redis::AsyncCommands;
use std::collections::HashMap;

/// The batch journal of one run.
pub struct RedisJournal {
    conn: Connection,
    calls: String,
    records: String,
    status: String,
}

/// The field of one call: its model and its id.
fn call_field(model: &str, custom_id: &str) -> String {
    format!("{model}\n{custom_id}")
}

/// The field of one batch.
fn batch_field(model: &str, id: &str) -> String {
    format!("{model}\n{id}")
}

fn away(e: crate::StoreError) -> JournalUnavailable {
    JournalUnavailable(e.to_string())
}

fn corrupt(e: serde_json::Error) -> JournalUnavailable {
    JournalUnavailable(format!("an unreadable journal entry: {e}"))
}

impl RedisJournal {
    /// The journal of `run` over an open connection.
    pub fn new(conn: Connection, run: &str) -> RedisJournal {
        RedisJournal {
            conn,
            calls: run_key(run, "batch-calls"),
            records: run_key(run, "batch-records"),
            status: run_key(run, "batch-status"),
        }
    }

    /// The names of its keys, for deleting a run.
    pub fn keys(run: &str) -> [String; 3] {
        [
            run_key(run, "batch-calls"),
            run_key(run, "batch-records"),
            run_key(run, "batch-status"),
        ]
    }

    async fn write_submitted(&self, record: &BatchRecord) -> Result<(), JournalUnavailable> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        let field = batch_field(&record.model, &record.id);
        pipe.hset(
            &self.records,
            &field,
            serde_json::to_string(record).map_err(corrupt)?,
        )
        .ignore();
        let status = BatchStatus {
            id: record.id.clone(),
            model: record.model.clone(),
            submitted_at: record.submitted_at,
            requests: record.calls.len() as u64,
            end: None,
        };
        pipe.hset(
            &self.status,
            &field,
            serde_json::to_string(&status).map_err(corrupt)?,
        )
        .ignore();
        let states: Vec<(String, String)> = record
            .calls
            .iter()
            .map(|c| {
                let state = CallState::Submitted {
                    batch: record.id.clone(),
                    attempt: c.attempt,
                };
                serde_json::to_string(&state)
                    .map(|s| (call_field(&record.model, &c.custom_id), s))
                    .map_err(corrupt)
            })
            .collect::<Result<_, _>>()?;
        if !states.is_empty() {
            pipe.hset_multiple(&self.calls, &states).ignore();
        }
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("record a batch"))
            .map_err(away)
    }

    async fn write_ended(
        &self,
        model: &str,
        id: &str,
        end: &BatchEnd,
        outcomes: &[(String, u32, BatchOutcome)],
    ) -> Result<(), JournalUnavailable> {
        let mut conn = self.conn.clone();
        let fields: Vec<String> = outcomes
            .iter()
            .map(|(c, _, _)| call_field(model, c))
            .collect();
        let now: Vec<Option<String>> = if fields.is_empty() {
            Vec::new()
        } else {
            redis::cmd("HMGET")
                .arg(&self.calls)
                .arg(&fields)
                .query_async(&mut conn)
                .await
                .map_err(redis_err("read the calls of a batch"))
                .map_err(away)?
        };
        let mut pipe = redis::pipe();
        pipe.atomic();
        let mut states = Vec::new();
        for ((field, (_, attempt, outcome)), current) in fields.iter().zip(outcomes).zip(now) {
            // A call since submitted in a later batch waits for that one.
            let waiting = match current {
                None => true,
                Some(text) => matches!(
                    serde_json::from_str::<CallState>(&text),
                    Ok(CallState::Submitted { batch, .. }) if batch == id
                ),
            };
            if waiting {
                let state = CallState::Ended {
                    attempt: *attempt,
                    outcome: outcome.clone(),
                };
                states.push((
                    field.clone(),
                    serde_json::to_string(&state).map_err(corrupt)?,
                ));
            }
        }
        if !states.is_empty() {
            pipe.hset_multiple(&self.calls, &states).ignore();
        }
        let field = batch_field(model, id);
        let status: Option<String> = conn
            .hget(&self.status, &field)
            .await
            .map_err(redis_err("read a batch's status"))
            .map_err(away)?;
        if let Some(Ok(mut status)) = status.map(|s| serde_json::from_str::<BatchStatus>(&s)) {
            status.end = Some(end.clone());
            pipe.hset(
                &self.status,
                &field,
                serde_json::to_string(&status).map_err(corrupt)?,
            )
            .ignore();
        }
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("record how a batch ended"))
            .map_err(away)
    }
}

impl BatchJournal for RedisJournal {
    fn state<'a>(
        &'a self,
        model: &'a str,
        custom_id: &'a str,
    ) -> CacheFuture<'a, Result<CallState, JournalUnavailable>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let text: Option<String> = conn
                .hget(&self.calls, call_field(model, custom_id))
                .await
                .map_err(redis_err("read a batched call"))
                .map_err(away)?;
            match text {
                None => Ok(CallState::New),
                Some(t) => serde_json::from_str(&t).map_err(corrupt),
            }
        })
    }

    fn submitted<'a>(
        &'a self,
        record: &'a BatchRecord,
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>> {
        Box::pin(self.write_submitted(record))
    }

    fn record<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
    ) -> CacheFuture<'a, Result<Option<BatchRecord>, JournalUnavailable>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let text: Option<String> = conn
                .hget(&self.records, batch_field(model, id))
                .await
                .map_err(redis_err("read a batch"))
                .map_err(away)?;
            text.map(|t| serde_json::from_str(&t).map_err(corrupt))
                .transpose()
        })
    }

    fn ended<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
        end: &'a BatchEnd,
        outcomes: &'a [(String, u32, BatchOutcome)],
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>> {
        Box::pin(self.write_ended(model, id, end, outcomes))
    }

    fn batches(&self) -> CacheFuture<'_, Result<Vec<BatchStatus>, JournalUnavailable>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let all: HashMap<String, String> = conn
                .hgetall(&self.status)
                .await
                .map_err(redis_err("read the run's batches"))
                .map_err(away)?;
            let mut out: Vec<BatchStatus> = all
                .values()
                .filter_map(|t| serde_json::from_str(t).ok())
                .collect();
            out.sort_by(|a, b| (a.submitted_at, &a.id).cmp(&(b.submitted_at, &b.id)));
            Ok(out)
        })
    }
}
