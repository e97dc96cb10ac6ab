//! The records as Parquet: one row per round, typed columns, zstd, written
//! a row group at a time, so memory holds one group whatever the run's size.
//! [`crate::card::dataset_card`] is the `README.md` that goes beside it.

use autoeval_proto::ResultRecord;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::record::RecordWriter;
use parquet_derive::ParquetRecordWriter;
use std::io::Write;
use std::sync::Arc;

/// Rows held before they are written as one row group.
const ROWS_PER_GROUP: usize = 8_192;

/// One round as a row, in Parquet and in CSV alike. Columns are in this
/// order; optional ones are null (in CSV, empty) where the record has
/// nothing (see the dataset card for each).
#[derive(Debug, ParquetRecordWriter, serde::Serialize)]
pub struct Row {
    /// Item id.
    pub id: String,
    /// Dataset name.
    pub dataset: String,
    /// Batch.
    pub batch: i64,
    /// The item's complexity value.
    pub complexity: i64,
    /// Model spec.
    pub model: String,
    /// Prompt style.
    pub prompt: String,
    /// Round of (A∘I), from 1.
    pub round: i64,
    /// Repeat, from 0.
    pub repeat: i64,
    /// Verdict of the strict reading (the headline).
    pub verdict: String,
    /// Verdict of the lenient reading.
    pub lenient_verdict: String,
    /// The ground truth φ0.
    pub phi0: String,
    /// What the round translated, from round 2 on.
    pub input: Option<String>,
    /// The model's English.
    pub english: Option<String>,
    /// The model's answer as it came.
    pub raw_answer: Option<String>,
    /// φ1 read strictly.
    pub phi1: Option<String>,
    /// φ1 read leniently.
    pub lenient_phi1: Option<String>,
    /// Why the round is not a verdict on equivalence.
    pub reason: Option<String>,
    /// The English copies the formula.
    pub copied: bool,
    /// The reply was cut at the token cap.
    pub truncated: bool,
    /// Why the model stopped, per call, comma-separated.
    pub finish_reasons: String,
    /// The counterexample, as JSON.
    pub counterexample: Option<String>,
    /// How the verdict was reached.
    pub method: Option<String>,
    /// Names were compared with their case.
    pub case_sensitive: bool,
    /// The public implementation's verdict where it differs (`--protocol reference`).
    pub reference_verdict: Option<String>,
    /// Verifier time, ms.
    pub verify_ms: f64,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Completion tokens, thinking included.
    pub completion_tokens: i64,
    /// Of them, tokens spent thinking.
    pub reasoning_tokens: i64,
    /// Of the cost, what thinking cost (USD).
    pub reasoning_cost: Option<f64>,
    /// USD, when known.
    pub cost: Option<f64>,
    /// Model-call time, ms.
    pub latency_ms: f64,
    /// Calls made, retries included.
    pub attempts: i64,
    /// Answered from the reply cache.
    pub cached: bool,
    /// Token counts were estimated.
    pub usage_estimated: bool,
    /// The prompt set, `name@version`.
    pub prompt_set: String,
    /// The templates used, comma-separated.
    pub templates: String,
    /// The item's metrics, as JSON.
    pub metrics: String,
}

impl From<&ResultRecord> for Row {
    fn from(r: &ResultRecord) -> Row {
        let lenient = r.lenient_reading();
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Row {
            id: r.id.clone(),
            dataset: r.dataset.clone(),
            batch: int(r.batch),
            complexity: i64::from(r.complexity),
            model: r.model.clone(),
            prompt: r.prompt.clone(),
            round: i64::from(r.round),
            repeat: i64::from(r.repeat),
            verdict: r.verdict.name().to_string(),
            lenient_verdict: lenient.verdict.name().to_string(),
            phi0: r.phi0.clone(),
            input: r.input.clone(),
            english: r.english.clone(),
            raw_answer: r.raw_answer.clone(),
            phi1: r.phi1.clone(),
            lenient_phi1: lenient.phi1,
            reason: r.reason.clone(),
            copied: r.copied,
            truncated: r.truncated(),
            finish_reasons: r.finish_reasons.join(","),
            counterexample: r.counterexample.as_ref().map(|c| c.to_string()),
            method: r.method.clone(),
            case_sensitive: r.case_sensitive,
            reference_verdict: r.reference_verdict.map(|v| v.name().to_string()),
            verify_ms: r.verify_ms,
            prompt_tokens: int(r.usage.prompt_tokens),
            completion_tokens: int(r.usage.completion_tokens),
            reasoning_tokens: int(r.usage.reasoning_tokens),
            reasoning_cost: r.reasoning_cost,
            cost: r.cost,
            latency_ms: r.latency_ms,
            attempts: i64::from(r.attempts),
            cached: r.cached,
            usage_estimated: r.usage_estimated,
            prompt_set: r.prompt_set.clone(),
            templates: r.templates.join(","),
            metrics: serde_json::Value::Object(r.metrics.clone()).to_string(),
        }
    }
}

/// How every Parquet file of the project is written: zstd, and this
/// build's name as its writer.
pub(crate) fn writer_properties() -> Arc<WriterProperties> {
    Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_created_by(format!("autoeval {}", env!("CARGO_PKG_VERSION")))
            .build(),
    )
}

/// A Parquet file being written a row group at a time.
pub struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    rows: Vec<Row>,
    written: usize,
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A file of [`Row`]s written to `out`, zstd-compressed.
    pub fn new(out: W) -> Result<ParquetWriter<W>, parquet::errors::ParquetError> {
        let empty: &[Row] = &[];
        Ok(ParquetWriter {
            file: SerializedFileWriter::new(out, empty.schema()?, writer_properties())?,
            rows: Vec::with_capacity(ROWS_PER_GROUP),
            written: 0,
        })
    }

    /// Adds one round's row.
    pub fn add(&mut self, r: &ResultRecord) -> Result<(), parquet::errors::ParquetError> {
        self.rows.push(Row::from(r));
        if self.rows.len() >= ROWS_PER_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), parquet::errors::ParquetError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut group = self.file.next_row_group()?;
        self.rows.as_slice().write_to_row_group(&mut group)?;
        group.close()?;
        self.written += self.rows.len();
        self.rows.clear();
        Ok(())
    }

    /// Writes what is held and the file's footer; gives the rows written.
    pub fn finish(mut self) -> Result<usize, parquet::errors::ParquetError> {
        self.flush()?;
        self.file.close()?;
        Ok(self.written)
    }
}

/// Each column: its name, its Parquet type and what it holds, as the
/// dataset card lists them (a test holds this to [`Row`]'s schema).
pub const COLUMNS: [(&str, &str, &str); 37] = [
    ("id", "string", "item id, `{dataset}-{seed}-{batch}-{index}`"),
    ("dataset", "string", "`ksat`, `plogic`, `fol`, `fol-english` or `regex`"),
    ("batch", "int64", "batch of the item"),
    ("complexity", "int64", "the dataset's complexity value of φ0 (operators, or generation level for regex)"),
    ("model", "string", "model spec"),
    ("prompt", "string", "prompt style: `zero-shot` or `few-shot`"),
    ("round", "int64", "round r of (A∘I)^n, from 1"),
    ("repeat", "int64", "repeat of the unit, from 0"),
    ("verdict", "string", "strict reading's verdict (the headline): `equivalent`, `not_equivalent`, `unknown`, `timeout`, `non_compliant`, `api_failure`, `verifier_error`"),
    ("lenient_verdict", "string", "the same answer read leniently"),
    ("phi0", "string", "the ground truth φ0"),
    ("input", "string, null", "what this round translated, from round 2 on (round 1's is φ0)"),
    ("english", "string, null", "the model's English (informalization)"),
    ("raw_answer", "string, null", "the model's answer to the autoformalization, as it came"),
    ("phi1", "string, null", "φ1 as the strict reading read it"),
    ("lenient_phi1", "string, null", "φ1 as the lenient reading read it"),
    ("reason", "string, null", "why the round is no verdict on equivalence (non-compliance, API failure, timeout)"),
    ("copied", "boolean", "the English copies the formula"),
    ("truncated", "boolean", "the reply was cut at the token cap (non-compliant)"),
    ("finish_reasons", "string", "why the model stopped, per call answered, comma-separated"),
    ("counterexample", "string, null", "the verifier's counterexample, JSON"),
    ("method", "string, null", "how the verdict was reached (truth table, prover, automata, …)"),
    ("case_sensitive", "boolean", "names were compared with their case"),
    ("reference_verdict", "string, null", "under `--protocol reference`, the public implementation's verdict where it differs"),
    ("verify_ms", "double", "verifier time, ms"),
    ("prompt_tokens", "int64", "prompt tokens of the round's calls"),
    ("completion_tokens", "int64", "completion tokens of the round's calls, thinking included"),
    ("reasoning_tokens", "int64", "of the completion tokens, those the model spent thinking"),
    ("reasoning_cost", "double, null", "of the cost, what thinking cost in USD; null when not reported or not priced"),
    ("cost", "double, null", "USD, when the price of every call is known"),
    ("latency_ms", "double", "model-call time, ms"),
    ("attempts", "int64", "calls made, retries included"),
    ("cached", "boolean", "every call was answered from the reply cache"),
    ("usage_estimated", "boolean", "token counts were estimated, not reported"),
    ("prompt_set", "string", "the prompt set, `name@version`"),
    ("templates", "string", "the templates used, comma-separated"),
    ("metrics", "string", "the item's metrics (depth, height, operators, …), JSON"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_lists_every_column_of_the_schema_in_its_order() {
        let empty: &[Row] = &[];
        let schema = empty.schema().unwrap();
        let names: Vec<&str> = schema.get_fields().iter().map(|f| f.name()).collect();
        let listed: Vec<&str> = COLUMNS.iter().map(|c| c.0).collect();
        assert_eq!(names, listed);
        for (field, (name, kind, _)) in schema.get_fields().iter().zip(COLUMNS) {
            assert_eq!(field.is_optional(), kind.ends_with(", null"), "{name}");
        }
    }
}
