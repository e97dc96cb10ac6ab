//! The judge files of a run directory: one per judge and style, each
//! judgement a JSON line appended as it comes.

use crate::{model_file_name, replace_jsonl, RunDir, StoreError};
use autoeval_engine::{JudgementStore, StoreError as EngineError};
use autoeval_proto::{JudgeRecord, RoundKey};
use std::io::Write;
use std::sync::Mutex;

/// The judgements of a judge file, one per pair: an answer over an earlier
/// failed call, and the first answer when a pair was answered twice.
pub fn latest_judgements(text: &str) -> Vec<JudgeRecord> {
    let mut by_pair: std::collections::BTreeMap<RoundKey, JudgeRecord> =
        std::collections::BTreeMap::new();
    // A torn last line (a killed run) is not a judgement.
    for j in text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| serde_json::from_str::<JudgeRecord>(l).ok())
    {
        let key = j.task.unit().round(j.task.round);
        match by_pair.get(&key) {
            Some(kept) if kept.api_failure.is_none() => {}
            _ => {
                by_pair.insert(key, j);
            }
        }
    }
    by_pair.into_values().collect()
}

impl RunDir {
    /// The judgements of every judge file of the run (`judge-*.jsonl`), file by file.
    pub fn judgements(&self) -> crate::Result<Vec<JudgeRecord>> {
        let mut out = Vec::new();
        let entries = match std::fs::read_dir(&self.0) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(crate::io("read", &self.0)(e)),
        };
        let mut paths: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("judge-") && n.ends_with(".jsonl"))
            })
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).map_err(crate::io("read", &p))?;
            out.extend(latest_judgements(&text));
        }
        Ok(out)
    }
}

/// Where the judgements of `judge` asked in `style` are kept in a run directory.
pub fn judge_file(dir: &RunDir, judge: &autoeval_models::Model, style: &str) -> std::path::PathBuf {
    dir.0
        .join(format!("judge-{}-{style}.jsonl", model_file_name(judge)))
}

/// Replaces the judge file with `judgements`, whole.
pub fn rewrite_judgements(
    path: &std::path::Path,
    judgements: &[JudgeRecord],
) -> Result<(), StoreError> {
    replace_jsonl(path, judgements)
}

/// A judge file as the judge loop's store: each judgement appended as it comes.
pub struct JudgeFile(pub Mutex<std::fs::File>);

impl JudgementStore for JudgeFile {
    async fn record_judgement(
        &self,
        _run: &str,
        _judge: &autoeval_proto::JudgeKey,
        judgement: &JudgeRecord,
    ) -> Result<bool, EngineError> {
        let line =
            serde_json::to_string(judgement).map_err(|e| EngineError::fatal(e.to_string()))?;
        let mut file = self
            .0
            .lock()
            .map_err(|_| EngineError::fatal("the judge file's lock is poisoned"))?;
        writeln!(file, "{line}").map_err(|e| EngineError::fatal(e.to_string()))?;
        Ok(true)
    }
}
