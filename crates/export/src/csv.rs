//! The records as CSV: one row per round with every column of the Parquet
//! export ([`crate::parquet::Row`]), in its order, free text quoted as CSV
//! quotes it (a cell may hold commas, quotes and line breaks).

use crate::parquet::Row;
use autoeval_proto::ResultRecord;
use std::io::Write;

/// Writes a header and one row per record to `out`; gives the rows written.
pub fn write_csv<'a, W: Write>(
    records: impl IntoIterator<Item = &'a ResultRecord>,
    out: W,
) -> Result<usize, csv::Error> {
    let mut writer = csv::Writer::from_writer(out);
    let mut rows = 0;
    for r in records {
        writer.serialize(Row::from(r))?;
        rows += 1;
    }
    if rows == 0 {
        // With no row to serialize, the header is written from the column list.
        writer.write_record(crate::parquet::COLUMNS.iter().map(|(name, _, _)| *name))?;
    }
    writer.flush()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_has_every_parquet_column_in_order_and_reads_back() {
        let mut r = ResultRecord {
            id: "plogic-0-0-1".into(),
            dataset: "plogic".into(),
            model: "reference".into(),
            verdict: autoeval_proto::Verdict::Equivalent,
            phi0: "p1 & p2".into(),
            ..ResultRecord::default()
        };
        r.raw_answer = Some("p1, \"and\"\np2".into());
        let mut out = Vec::new();
        assert_eq!(write_csv([&r, &r], &mut out).unwrap(), 2);
        let mut reader = csv::Reader::from_reader(out.as_slice());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        let columns: Vec<&str> = crate::parquet::COLUMNS.iter().map(|c| c.0).collect();
        assert_eq!(header, columns);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let at = |name| columns.iter().position(|c| *c == name).unwrap();
        assert_eq!(&rows[0][at("raw_answer")], "p1, \"and\"\np2");
        assert_eq!(
            &rows[0][at("cost")],
            "",
            "an unknown cost is empty, never 0"
        );
        assert_eq!(&rows[0][at("lenient_verdict")], "equivalent");
        let mut empty = Vec::new();
        assert_eq!(write_csv([], &mut empty).unwrap(), 0);
        let text = String::from_utf8(empty).unwrap();
        assert_eq!(text.trim_end(), columns.join(","));
    }
}
