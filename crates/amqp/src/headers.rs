//! What a message carries besides its body: its run and units, and the
//! reason a dead letter was refused, written and read as AMQP headers.

use autoeval_proto::fleet::{REASON_HEADER, RUN_HEADER, UNITS_HEADER};
use lapin::types::{AMQPValue, FieldArray, FieldTable, LongString, ShortString};

/// What every message carries besides its body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// The run.
    pub run: String,
    /// The unit and round of each task in the message, `<unit>#<round>`.
    pub units: Vec<String>,
}

impl Meta {
    /// Meta of a message of `run` carrying one task.
    pub fn one(run: &str, unit: impl Into<String>) -> Meta {
        Meta {
            run: run.to_string(),
            units: vec![unit.into()],
        }
    }
}

pub(crate) fn headers(meta: &Meta, reason: Option<&str>) -> FieldTable {
    let mut h = FieldTable::default();
    let text = |s: &str| AMQPValue::LongString(LongString::from(s));
    h.insert(RUN_HEADER.into(), text(&meta.run));
    let units: Vec<AMQPValue> = meta.units.iter().map(|u| text(u)).collect();
    h.insert(
        UNITS_HEADER.into(),
        AMQPValue::FieldArray(FieldArray::from(units)),
    );
    if let Some(r) = reason {
        h.insert(REASON_HEADER.into(), text(r));
    }
    h
}

/// A header's text, when it is a string.
pub(crate) fn header_text(table: &FieldTable, name: &str) -> Option<String> {
    match table.inner().get(&ShortString::from(name))? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The strings of an array header; a lone string counts as an array of one.
pub(crate) fn header_texts(table: &FieldTable, name: &str) -> Vec<String> {
    let text = |v: &AMQPValue| match v {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.to_string()),
        _ => None,
    };
    match table.inner().get(&ShortString::from(name)) {
        Some(AMQPValue::FieldArray(a)) => a.as_slice().iter().filter_map(text).collect(),
        Some(v) => text(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// A header's number, whatever integer type the broker chose.
pub(crate) fn header_number(table: &FieldTable, name: &str) -> Option<i64> {
    match table.inner().get(&ShortString::from(name))? {
        AMQPValue::LongLongInt(n) => Some(*n),
        AMQPValue::LongInt(n) => Some(i64::from(*n)),
        AMQPValue::LongUInt(n) => Some(i64::from(*n)),
        AMQPValue::ShortInt(n) => Some(i64::from(*n)),
        AMQPValue::ShortUInt(n) => Some(i64::from(*n)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_headers_read_back_as_written() {
        let meta = Meta {
            run: "r".into(),
            units: vec!["a|m|zero-shot|0#1".into(), "b|m|zero-shot|0#2".into()],
        };
        let table = headers(&meta, Some("why"));
        assert_eq!(header_texts(&table, UNITS_HEADER), meta.units);
        assert_eq!(header_text(&table, RUN_HEADER).as_deref(), Some("r"));
        assert_eq!(header_text(&table, REASON_HEADER).as_deref(), Some("why"));
        // A sender that wrote one unit as a plain string is read too.
        let mut single = FieldTable::default();
        single.insert(
            UNITS_HEADER.into(),
            AMQPValue::LongString(LongString::from("u#1")),
        );
        assert_eq!(header_texts(&single, UNITS_HEADER), vec!["u#1".to_string()]);
        assert!(header_texts(&FieldTable::default(), UNITS_HEADER).is_empty());
    }
}
