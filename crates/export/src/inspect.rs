//! Inspect evaluation logs in its `.eval` layout: a zip of JSON members,
//! `samples/{id}_epoch_{n}.json` per sample, the samples' summaries in
//! chunks under `_journal/summaries/`, and `header.json` (the eval's spec,
//! plan, results and stats) written last. Inspect keeps one log per task
//! and model: here one per (dataset, model, prompt style), a sample per work
//! unit (an item asked of the model), a repeat as Inspect's epoch.
//!
//! A sample's messages are the calls as sent and answered, round after
//! round; its scores are, per round r, the strict verdict (`verdict_rN`),
//! the lenient one (`lenient_rN`) and the values A2 and A3 count
//! (`a2_rN`, `a3_rN`: 1 or 0, absent where the round leaves the
//! denominators). The log's results are the run summary's A2 and A3 with
//! the same denominators.
//!
//! Where the run was judged (`autoeval judge`), a judged round's sample
//! also has a score per judge and style, `a4_rN_STYLE:JUDGE`, whose value is
//! the judgement's cell of metric A4's confusion matrix (`tp`, `fp`, `tn`,
//! `fn`, `unanswered_positive` … `api_failure`), its answer the judgement
//! and its explanation the judge's reply; and the log's results have, per
//! judge, style and round, A4 as the report has it: F1, precision, recall,
//! TNR and coverage over the log's judged pairs.

mod sample;

use autoeval_metrics::judge::Confusion;
use autoeval_metrics::summary::{Group, Summary};
use autoeval_prompts::Templates;
use autoeval_proto::{JudgeRecord, ResultRecord, RoundKey};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::{Seek, Write};

use sample::inspect_model;

/// The log format version written (Inspect's `EvalLog.version`).
pub const LOG_VERSION: u32 = 2;

/// Summaries per journal member: a log is written without holding more
/// than this many samples' summaries.
const SUMMARIES_PER_CHUNK: usize = 1_000;

/// Why a log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The zip container refused a member.
    #[error("cannot write the log: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// The output refused the bytes.
    #[error("cannot write the log: {0}")]
    Io(#[from] std::io::Error),
    /// A member did not serialize.
    #[error("cannot serialize a log member: {0}")]
    Json(#[from] serde_json::Error),
}

/// Which log a record belongs to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogKey {
    /// Dataset name.
    pub dataset: String,
    /// Model spec.
    pub model: String,
    /// Prompt style.
    pub prompt: String,
}

impl LogKey {
    /// The log `r` belongs to.
    pub fn of(r: &ResultRecord) -> LogKey {
        LogKey {
            dataset: r.dataset.clone(),
            model: r.model.clone(),
            prompt: r.prompt.clone(),
        }
    }

    /// The log's file name, `{dataset}_{model}_{prompt}.eval`, the model
    /// written as `model_name` (a file-name form of its spec), and every
    /// character a file name cannot safely hold written as `-`.
    pub fn file_name(&self, model_name: &str) -> String {
        let safe = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') {
                        c
                    } else {
                        '-'
                    }
                })
                .collect()
        };
        format!(
            "{}_{}_{}.eval",
            safe(&self.dataset),
            safe(model_name),
            safe(&self.prompt)
        )
    }
}

/// What a log says of the run beside its records.
pub struct RunInfo<'a> {
    /// The run's name (the log's run id).
    pub run: &'a str,
    /// When the run's logs were written, RFC 3339.
    pub created: &'a str,
    /// Rounds of (A∘I) a unit was asked at most.
    pub rounds: u32,
    /// Repeats of each unit (Inspect's epochs).
    pub repeats: u32,
    /// The prompts as the run built them, to give the calls as sent.
    pub templates: &'a Templates,
    /// The regex alphabet of each dataset, by name.
    pub alphabets: &'a BTreeMap<String, Vec<char>>,
    /// This tool's version, as the log's package list names it.
    pub version: &'a str,
    /// The run's summary: A2 and A3 with its denominators.
    pub summary: &'a Summary,
    /// The judgements of each judged round, of every judge and style.
    pub judgements: &'a BTreeMap<RoundKey, Vec<JudgeRecord>>,
}

/// The name of a judgement's score: `a4_rN_STYLE:JUDGE`.
pub fn judge_score_name(j: &JudgeRecord) -> String {
    format!("a4_r{}_{}:{}", j.task.round, j.task.style, j.task.judge)
}

/// One log being written: samples go out as they are added.
pub struct LogWriter<W: Write + Seek> {
    zip: zip::ZipWriter<W>,
    key: LogKey,
    pending: Vec<Value>,
    chunks: usize,
    samples: usize,
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl<W: Write + Seek> LogWriter<W> {
    /// A log of `key`'s records, written to `out`.
    pub fn new(out: W, key: LogKey) -> LogWriter<W> {
        LogWriter {
            zip: zip::ZipWriter::new(out),
            key,
            pending: Vec::new(),
            chunks: 0,
            samples: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
        }
    }

    /// Adds one unit's sample: `unit` holds its records, rounds in order.
    pub fn add(&mut self, unit: &[ResultRecord], info: &RunInfo) -> Result<(), ExportError> {
        let Some(first) = unit.first() else {
            return Ok(());
        };
        let (sample, summary) = sample::sample(unit, info);
        let name = format!("samples/{}_epoch_{}.json", first.id, first.repeat + 1);
        self.member(&name, &sample)?;
        for r in unit {
            self.prompt_tokens += r.usage.prompt_tokens;
            self.completion_tokens += r.usage.completion_tokens;
        }
        self.samples += 1;
        self.pending.push(summary);
        if self.pending.len() >= SUMMARIES_PER_CHUNK {
            self.flush_summaries()?;
        }
        Ok(())
    }

    /// Writes the summaries held so far as one journal member.
    fn flush_summaries(&mut self) -> Result<(), ExportError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.chunks += 1;
        let chunk = Value::Array(std::mem::take(&mut self.pending));
        self.member(&format!("_journal/summaries/{}.json", self.chunks), &chunk)
    }

    fn member(&mut self, name: &str, value: &Value) -> Result<(), ExportError> {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Zstd)
            .large_file(false);
        self.zip.start_file(name, options)?;
        serde_json::to_writer(&mut self.zip, value)?;
        Ok(())
    }

    /// Writes the header (spec, plan, results, stats) and closes the log.
    pub fn finish(mut self, info: &RunInfo) -> Result<W, ExportError> {
        self.flush_summaries()?;
        let spec = self.spec(info);
        let plan = json!({
            "name": "plan",
            "steps": [
                {"solver": "autoeval/informalize", "params": {}},
                {"solver": "autoeval/autoformalize", "params": {}}
            ],
            "config": {}
        });
        self.member(
            "_journal/start.json",
            &json!({"version": LOG_VERSION, "eval": spec, "plan": plan}),
        )?;
        let model = inspect_model(&self.key.model);
        let header = json!({
            "version": LOG_VERSION,
            "status": "success",
            "eval": spec,
            "plan": plan,
            "results": self.results(info),
            "stats": {
                "started_at": info.created,
                "completed_at": info.created,
                "model_usage": {model: {
                    "input_tokens": self.prompt_tokens,
                    "output_tokens": self.completion_tokens,
                    "total_tokens": self.prompt_tokens + self.completion_tokens,
                }},
            },
        });
        self.member("header.json", &header)?;
        Ok(self.zip.finish()?)
    }

    /// The eval's spec: the task is the dataset, its argument the prompt style.
    fn spec(&self, info: &RunInfo) -> Value {
        let id = format!(
            "{:016x}",
            fnv1a(&[
                info.run,
                &self.key.dataset,
                &self.key.model,
                &self.key.prompt
            ])
        );
        json!({
            "eval_id": id,
            "run_id": info.run,
            "created": info.created,
            "task": format!("autoeval/{}", self.key.dataset),
            "task_id": id,
            "task_version": 0,
            "task_attribs": {},
            "task_args": {"prompt": self.key.prompt},
            "dataset": {"name": self.key.dataset, "samples": self.samples},
            "model": inspect_model(&self.key.model),
            "model_generate_config": {},
            "model_args": {},
            "config": {"epochs": info.repeats},
            "packages": {"autoeval": info.version},
            "metadata": {
                "model_spec": self.key.model,
                "prompt_set": info.templates.set_id(),
                "rounds": info.rounds,
            },
        })
    }

    /// A2 and A3 per round, strict and lenient, as the run's summary has
    /// them: each a score whose `mean` is the summary's value and whose
    /// `scored_samples` is its denominator.
    fn results(&self, info: &RunInfo) -> Value {
        let mut scores = Vec::new();
        let groups = info.summary.groups.iter().filter(|g| {
            g.key.dataset == self.key.dataset
                && g.key.model == self.key.model
                && g.key.prompt == self.key.prompt
        });
        for g in groups {
            let values: [(&str, Option<f64>); 4] = [
                ("a2", g.compliance),
                ("a3", g.accuracy),
                ("lenient_a2", g.lenient_compliance),
                ("lenient_a3", g.lenient_accuracy),
            ];
            for (metric, value) in values {
                scores.push(score(metric, g, value));
            }
        }
        scores.extend(self.judge_results(info));
        json!({
            "total_samples": self.samples,
            "completed_samples": self.samples,
            "scores": scores,
        })
    }

    /// A4 per judge, style and round over this log's judged pairs.
    fn judge_results(&self, info: &RunInfo) -> Vec<Value> {
        let mut matrices: BTreeMap<String, Confusion> = BTreeMap::new();
        let of_this_log = info.judgements.values().flatten().filter(|j| {
            j.task.dataset == self.key.dataset
                && j.task.model == self.key.model
                && j.task.prompt == self.key.prompt
        });
        for j in of_this_log {
            matrices.entry(judge_score_name(j)).or_default().add(j);
        }
        matrices
            .into_iter()
            .map(|(name, c)| {
                let mut metrics = Map::new();
                let values = [
                    ("f1", c.f1()),
                    ("precision", c.precision()),
                    ("recall", c.recall()),
                    ("tnr", c.tnr()),
                    ("coverage", c.coverage()),
                ];
                for (metric, value) in values {
                    if let Some(v) = value {
                        metrics.insert(metric.into(), json!({"name": metric, "value": v}));
                    }
                }
                json!({
                    "name": name,
                    "scorer": name,
                    "scored_samples": c.scored(),
                    "metrics": metrics,
                })
            })
            .collect()
    }
}

/// One result score: `metric` of round `g.key.round`.
fn score(metric: &str, g: &Group, value: Option<f64>) -> Value {
    let name = format!("{metric}_r{}", g.key.round);
    let mut metrics = Map::new();
    if let Some(v) = value {
        metrics.insert("mean".into(), json!({"name": "mean", "value": v}));
    }
    json!({
        "name": name,
        "scorer": name,
        "scored_samples": g.counts.measured(),
        "metrics": metrics,
    })
}

/// FNV-1a over the parts, a stable id for a log of a run.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}
