//! Where result records go. One machine appends them to a JSONL file; the
//! fleet keeps them in Redis. Both answer the same two questions.

use autoeval_proto::ResultRecord;
use std::sync::Mutex;
use thiserror::Error;

/// A store that cannot read or write.
#[derive(Debug, Error)]
#[error("result store: {0}")]
pub struct StoreError(pub String);

/// Durable, append-only storage of result records.
pub trait ResultStore: Send + Sync {
    /// Every record stored so far, each (unit, round) once.
    fn load(&self) -> Result<Vec<ResultRecord>, StoreError>;
    /// Stores one record unless its (unit, round) is stored already (a
    /// task done twice counts once); true when it was new. Once this
    /// returns, a crash does not lose it.
    fn append(&self, record: &ResultRecord) -> Result<bool, StoreError>;
}

/// Records kept in memory, for library users and tests that need no file.
#[derive(Default)]
pub struct MemoryStore {
    records: Mutex<Vec<ResultRecord>>,
}

impl ResultStore for MemoryStore {
    fn load(&self) -> Result<Vec<ResultRecord>, StoreError> {
        Ok(self
            .records
            .lock()
            .map_err(|e| StoreError(e.to_string()))?
            .clone())
    }

    fn append(&self, record: &ResultRecord) -> Result<bool, StoreError> {
        let mut records = self.records.lock().map_err(|e| StoreError(e.to_string()))?;
        let key = (record.unit(), record.round);
        if records.iter().any(|r| (r.unit(), r.round) == key) {
            return Ok(false);
        }
        records.push(record.clone());
        Ok(true)
    }
}
