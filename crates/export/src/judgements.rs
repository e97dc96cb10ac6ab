//! The judgements of a run (metric A4: a model asked whether φ1 means φ0)
//! as a second Parquet file beside the rounds', one row per judged pair
//! and judge, with the cell of A4's confusion matrix each falls in.

use autoeval_metrics::judge::Cell;
use autoeval_proto::JudgeRecord;
use parquet::file::writer::SerializedFileWriter;
use parquet::record::RecordWriter;
use parquet_derive::ParquetRecordWriter;
use std::io::Write;

/// One judgement as a row.
#[derive(Debug, ParquetRecordWriter)]
pub struct JudgeRow {
    /// Item id of the pair.
    pub id: String,
    /// Dataset name.
    pub dataset: String,
    /// Complexity of φ0.
    pub complexity: i64,
    /// The model that produced φ1.
    pub model: String,
    /// Prompt style that produced φ1.
    pub prompt: String,
    /// Round of φ1.
    pub round: i64,
    /// Repeat of φ1.
    pub repeat: i64,
    /// The judge model.
    pub judge: String,
    /// How the judge was asked.
    pub style: String,
    /// The ground truth.
    pub phi0: String,
    /// The candidate the judge saw.
    pub phi1: String,
    /// The formal verdict.
    pub equivalent: bool,
    /// φ1 was non-compliant.
    pub non_compliant: bool,
    /// `yes`, `no` or `unparseable`.
    pub judgement: Option<String>,
    /// The judge's reply.
    pub answer: Option<String>,
    /// Why the judge could not be asked.
    pub api_failure: Option<String>,
    /// The cell of A4's confusion matrix.
    pub cell: String,
}

impl From<&JudgeRecord> for JudgeRow {
    fn from(j: &JudgeRecord) -> JudgeRow {
        let t = &j.task;
        JudgeRow {
            id: t.id.clone(),
            dataset: t.dataset.clone(),
            complexity: i64::from(t.complexity),
            model: t.model.clone(),
            prompt: t.prompt.clone(),
            round: i64::from(t.round),
            repeat: i64::from(t.repeat),
            judge: t.judge.clone(),
            style: t.style.clone(),
            phi0: t.phi0.clone(),
            phi1: t.phi1.clone(),
            equivalent: t.equivalent,
            non_compliant: t.non_compliant,
            judgement: j.judgement.clone(),
            answer: j.answer.clone(),
            api_failure: j.api_failure.clone(),
            cell: Cell::of(j).name().to_string(),
        }
    }
}

/// Each column: its name, its Parquet type and what it holds, as the
/// dataset card lists them (a test holds this to [`JudgeRow`]'s schema).
pub const JUDGE_COLUMNS: [(&str, &str, &str); 17] = [
    ("id", "string", "item id of the judged pair"),
    ("dataset", "string", "dataset name"),
    ("complexity", "int64", "complexity value of φ0"),
    ("model", "string", "the model whose φ1 is judged"),
    ("prompt", "string", "the prompt style that produced φ1"),
    ("round", "int64", "round of φ1"),
    ("repeat", "int64", "repeat of φ1"),
    ("judge", "string", "the judge model's spec"),
    ("style", "string", "how the judge was asked: `cot` or `yesno`"),
    ("phi0", "string", "the ground truth"),
    ("phi1", "string", "the candidate as the judge saw it"),
    ("equivalent", "boolean", "the formal verdict: φ1 means φ0"),
    ("non_compliant", "boolean", "φ1 is not a well-formed formula (asked all the same, counted apart)"),
    ("judgement", "string, null", "`yes`, `no` or `unparseable`; null when the judge could not be asked"),
    ("answer", "string, null", "the judge's reply"),
    ("api_failure", "string, null", "why the judge could not be asked"),
    ("cell", "string", "the cell of A4's confusion matrix: `tp`, `fp`, `tn`, `fn`, `unanswered_positive`, `unanswered_negative`, `non_compliant_yes`, `non_compliant_no`, `non_compliant_unanswered` or `api_failure`"),
];

/// Writes `judgements` as one Parquet file to `out`, zstd-compressed;
/// gives the rows written.
pub fn write_judgements<W: Write + Send>(
    judgements: &[JudgeRecord],
    out: W,
) -> Result<usize, parquet::errors::ParquetError> {
    let rows: Vec<JudgeRow> = judgements.iter().map(JudgeRow::from).collect();
    let schema = rows.as_slice().schema()?;
    let mut file = SerializedFileWriter::new(out, schema, crate::parquet::writer_properties())?;
    let mut group = file.next_row_group()?;
    rows.as_slice().write_to_row_group(&mut group)?;
    group.close()?;
    file.close()?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judgement_columns_are_the_schema_in_its_order() {
        let empty: &[JudgeRow] = &[];
        let schema = empty.schema().unwrap();
        let names: Vec<&str> = schema.get_fields().iter().map(|f| f.name()).collect();
        let listed: Vec<&str> = JUDGE_COLUMNS.iter().map(|c| c.0).collect();
        assert_eq!(names, listed);
        for (field, (name, kind, _)) in schema.get_fields().iter().zip(JUDGE_COLUMNS) {
            assert_eq!(field.is_optional(), kind.ends_with(", null"), "{name}");
        }
    }
}
