//! A batch journal in memory: batches work, but a crash forgets them.

use autoeval_models::{
    BatchEnd, BatchJournal, BatchOutcome, BatchRecord, BatchStatus, CacheFuture, CallState,
    JournalBook, JournalUnavailable,
};
use std::sync::Mutex;

/// Keeps the journal in this process only: for judges and tests, never
/// for a run that should survive a crash.
#[derive(Default)]
pub struct MemoryJournal(Mutex<JournalBook>);

impl MemoryJournal {
    fn book(&self) -> std::sync::MutexGuard<'_, JournalBook> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl BatchJournal for MemoryJournal {
    fn state<'a>(
        &'a self,
        model: &'a str,
        custom_id: &'a str,
    ) -> CacheFuture<'a, Result<CallState, JournalUnavailable>> {
        let state = self.book().state(model, custom_id);
        Box::pin(async move { Ok(state) })
    }

    fn submitted<'a>(
        &'a self,
        record: &'a BatchRecord,
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>> {
        self.book().submitted(record.clone());
        Box::pin(async { Ok(()) })
    }

    fn record<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
    ) -> CacheFuture<'a, Result<Option<BatchRecord>, JournalUnavailable>> {
        let record = self.book().record(model, id);
        Box::pin(async move { Ok(record) })
    }

    fn ended<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
        end: &'a BatchEnd,
        outcomes: &'a [(String, u32, BatchOutcome)],
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>> {
        self.book().ended(model, id, end, outcomes);
        Box::pin(async { Ok(()) })
    }

    fn batches(&self) -> CacheFuture<'_, Result<Vec<BatchStatus>, JournalUnavailable>> {
        let all = self.book().batches();
        Box::pin(async move { Ok(all) })
    }
}
