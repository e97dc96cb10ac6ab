//! The batch journal of a one-machine run: `batches.jsonl` in the run
//! directory, one line per batch submitted (its provider id and the calls
//! its requests stand for, synced before anyone waits for it) and one per
//! batch ended (each request's outcome). A resumed run replays it, so that
//! it polls what was submitted and never submits a recorded request again.

use autoeval_models::{
    BatchEnd, BatchJournal, BatchOutcome, BatchRecord, BatchStatus, CacheFuture, CallState,
    JournalBook, JournalUnavailable,
};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One line of the journal.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    /// A batch was submitted.
    Submitted(BatchRecord),
    /// A batch ended.
    Ended {
        model: String,
        id: String,
        end: BatchEnd,
        outcomes: Vec<(String, u32, BatchOutcome)>,
    },
}

/// The journal file and what it holds.
pub struct BatchFile {
    path: PathBuf,
    book: Mutex<JournalBook>,
    file: Mutex<std::fs::File>,
}

impl BatchFile {
    /// The journal at `path`, its lines replayed; created when missing. A
    /// last line cut short by a crash is dropped (its batch was not yet
    /// waited for, so the calls it held are submitted again).
    pub fn open(path: &Path) -> std::io::Result<BatchFile> {
        let mut book = JournalBook::default();
        if let Ok(file) = std::fs::File::open(path) {
            for line in std::io::BufReader::new(file).lines() {
                let line = line?;
                match serde_json::from_str::<Line>(&line) {
                    Ok(Line::Submitted(record)) => book.submitted(record),
                    Ok(Line::Ended {
                        model,
                        id,
                        end,
                        outcomes,
                    }) => book.ended(&model, &id, &end, &outcomes),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "a line of the batch journal is unreadable; skipped");
                    }
                }
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(BatchFile {
            path: path.to_path_buf(),
            book: Mutex::new(book),
            file: Mutex::new(file),
        })
    }

    /// Its batches by state, for the progress display.
    pub fn counts(&self) -> autoeval_models::BatchCounts {
        autoeval_models::BatchCounts::of(&self.book().batches())
    }

    fn book(&self) -> std::sync::MutexGuard<'_, JournalBook> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `line` and syncs it to the disk.
    fn append(&self, line: &Line) -> Result<(), JournalUnavailable> {
        let mut text = serde_json::to_vec(line).map_err(|e| JournalUnavailable(e.to_string()))?;
        text.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(&text)
            .and_then(|()| file.sync_data())
            .map_err(|e| JournalUnavailable(format!("cannot write {}: {e}", self.path.display())))
    }
}

impl BatchJournal for BatchFile {
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
        let written = self.append(&Line::Submitted(record.clone()));
        if written.is_ok() {
            self.book().submitted(record.clone());
        }
        Box::pin(async move { written })
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
        let written = self.append(&Line::Ended {
            model: model.to_string(),
            id: id.to_string(),
            end: end.clone(),
            outcomes: outcomes.to_vec(),
        });
        if written.is_ok() {
            self.book().ended(model, id, end, outcomes);
        }
        Box::pin(async move { written })
    }

    fn batches(&self) -> CacheFuture<'_, Result<Vec<BatchStatus>, JournalUnavailable>> {
        let all = self.book().batches();
        Box::pin(async move { Ok(all) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_models::{BatchCall, CachedReply, Sample, Stage};

    fn call(n: u32) -> BatchCall {
        BatchCall {
            custom_id: format!("c{n}"),
            sample: Sample {
                unit: format!("u{n}"),
                round: 1,
                stage: Stage::Informalize,
            },
            attempt: 1,
        }
    }

    #[tokio::test]
    async fn a_reopened_journal_knows_what_was_submitted_and_what_ended() {
        let dir = std::env::temp_dir().join(format!("autoeval-batchfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("batches.jsonl");
        let _ = std::fs::remove_file(&path);
        let j = BatchFile::open(&path).unwrap();
        let record = |id: &str, calls: Vec<BatchCall>| BatchRecord {
            id: id.into(),
            provider: "openai".into(),
            model: "m".into(),
            submitted_at: 1,
            calls,
            estimated_cost: Some(0.5),
            estimated_tokens: 40,
        };
        j.submitted(&record("b1", vec![call(1), call(2)]))
            .await
            .unwrap();
        j.submitted(&record("b2", vec![call(3)])).await.unwrap();
        let answered = BatchOutcome::Answered(CachedReply {
            text: "p".into(),
            prompt_tokens: 3,
            completion_tokens: 1,
            reasoning_tokens: 0,
            too_long: false,
            finish_reason: Some(autoeval_models::Finish::Complete),
        });
        let failed = BatchOutcome::Failed {
            message: "expired".into(),
            status: None,
        };
        let end = BatchEnd {
            status: "expired".into(),
            succeeded: 1,
            expired: 1,
            ..BatchEnd::default()
        };
        j.ended(
            "m",
            "b1",
            &end,
            &[("c1".into(), 1, answered.clone()), ("c2".into(), 1, failed)],
        )
        .await
        .unwrap();
        drop(j);
        // A line cut short by a crash is skipped.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"submitted\": {\"id\"")
            .unwrap();
        let j = BatchFile::open(&path).unwrap();
        assert_eq!(
            j.state("m", "c1").await.unwrap(),
            CallState::Ended {
                attempt: 1,
                outcome: answered
            }
        );
        assert!(matches!(
            j.state("m", "c2").await.unwrap(),
            CallState::Ended {
                outcome: BatchOutcome::Failed { .. },
                ..
            }
        ));
        assert_eq!(
            j.state("m", "c3").await.unwrap(),
            CallState::Submitted {
                batch: "b2".into(),
                attempt: 1
            }
        );
        assert_eq!(j.state("m", "c4").await.unwrap(), CallState::New);
        assert_eq!(j.state("other", "c1").await.unwrap(), CallState::New);
        let batches = j.batches().await.unwrap();
        assert_eq!(batches.len(), 2);
        assert_eq!(j.record("m", "b2").await.unwrap().unwrap().calls.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
