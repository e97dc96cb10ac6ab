//! Redis as the engine's record store: each run's rounds in its own hash,
//! written by [`RunStore::record_all`]'s one script.

use crate::{redis_err, Connection, RunStore, StoreError};
use autoeval_engine::{RecordStore, StoreError as EngineError};
use autoeval_proto::{ResultRecord, UnitKey};
use redis::AsyncCommands;
use std::collections::HashMap;
use std::sync::Mutex;

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> EngineError {
        let transient = matches!(e, StoreError::Redis { .. });
        EngineError {
            message: e.to_string(),
            transient,
        }
    }
}

/// Every run's records, over one connection.
pub struct RedisRecords {
    conn: Connection,
    runs: Mutex<HashMap<String, RunStore>>,
}

impl RedisRecords {
    /// The records of every run kept over `conn`.
    pub fn new(conn: Connection) -> RedisRecords {
        RedisRecords {
            conn,
            runs: Mutex::default(),
        }
    }

    pub(crate) fn run(&self, run: &str) -> RunStore {
        let mut runs = match self.runs.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        runs.entry(run.to_string())
            .or_insert_with(|| RunStore::new(self.conn.clone(), run))
            .clone()
    }
}

impl RunStore {
    /// The stored record of one round of a unit, if any.
    pub async fn stored(
        &self,
        unit: &UnitKey,
        round: u32,
    ) -> Result<Option<ResultRecord>, StoreError> {
        let field = unit.round(round).to_string();
        let mut conn = self.conn.clone();
        let json: Option<String> = conn
            .hget(self.key("results"), &field)
            .await
            .map_err(redis_err("read a stored round"))?;
        json.map(|j| {
            serde_json::from_str(&j).map_err(|e| StoreError::Corrupt {
                what: format!("result {field}"),
                detail: e.to_string(),
            })
        })
        .transpose()
    }
}

impl RecordStore for RedisRecords {
    async fn record_all(
        &self,
        run: &str,
        records: &[ResultRecord],
        rounds: u32,
    ) -> Result<Vec<bool>, EngineError> {
        Ok(self.run(run).record_all(records, rounds).await?)
    }

    async fn stored(
        &self,
        run: &str,
        unit: &UnitKey,
        round: u32,
    ) -> Result<Option<ResultRecord>, EngineError> {
        Ok(self.run(run).stored(unit, round).await?)
    }

    async fn scan(
        &self,
        run: &str,
        each: impl FnMut(ResultRecord) + Send,
    ) -> Result<(), EngineError> {
        self.run(run).scan_records(each).await?;
        Ok(())
    }
}
