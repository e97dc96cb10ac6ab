//! Messages on the broker: a fixed header (schema version, message kind,
//! run) in front of a bincode body. A reader checks the version before it
//! decodes anything else, so a message of another schema is refused with
//! that reason instead of being misread.

use crate::DatasetKind;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Version of the broker message layout; bump it on any change to a body type.
/// Version 2: translate and verify bodies are bundles (`Vec`) of tasks.
/// Version 3: a round trip says whether its usage is estimated.
/// Version 4: a round trip's tokens count thinking apart, its cost what thinking cost.
pub const WIRE_VERSION: u32 = 4;

/// What a message asks for; the body type follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MessageKind {
    /// Translate formulas there and back (I then A): a bundle of tasks.
    Translate,
    /// Prove translated answers against their φ0: a bundle of tasks.
    Verify,
    /// Ask a model whether two formulas are equivalent (A4).
    Judge,
    /// One round's result.
    Result,
}

impl MessageKind {
    /// The name in logs, headers and `status`.
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Translate => "translate",
            MessageKind::Verify => "verify",
            MessageKind::Judge => "judge",
            MessageKind::Result => "result",
        }
    }
}

/// What precedes every body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// What the body is.
    pub kind: MessageKind,
    /// The run the message belongs to.
    pub run: String,
}

/// Why a message cannot be acted on; each is kept as a dead letter with this reason.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// Fewer bytes than a version number.
    #[error("undecodable message: {0} bytes, too short for a schema version")]
    Truncated(usize),
    /// Written by another version of this software.
    #[error("message of schema version {found}; this build reads version {WIRE_VERSION}")]
    Version {
        /// The version the message carries.
        found: u32,
    },
    /// The header or body does not decode as the kind it claims.
    #[error("undecodable message: {0}")]
    Decode(String),
    /// A body of another kind than the queue carries.
    #[error("a {found} message where a {expected} message was expected")]
    Kind {
        /// What the header says.
        found: &'static str,
        /// What the reader takes.
        expected: &'static str,
    },
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// The bytes of one message: version, header, body.
pub fn encode<T: Serialize>(header: &Header, body: &T) -> Result<Vec<u8>, WireError> {
    let mut out = WIRE_VERSION.to_le_bytes().to_vec();
    append(header, &mut out)?;
    append(body, &mut out)?;
    Ok(out)
}

fn append<T: Serialize>(value: &T, out: &mut Vec<u8>) -> Result<(), WireError> {
    let bytes = bincode::serde::encode_to_vec(value, config())
        .map_err(|e| WireError::Decode(format!("cannot encode: {e}")))?;
    out.extend_from_slice(&bytes);
    Ok(())
}

/// The version and header of a message, and the rest of its bytes.
pub fn decode_header(bytes: &[u8]) -> Result<(Header, &[u8]), WireError> {
    let Some((version, rest)) = bytes.split_first_chunk::<4>() else {
        return Err(WireError::Truncated(bytes.len()));
    };
    let found = u32::from_le_bytes(*version);
    // Versions count up from 1; a huge one means these are not our bytes at all.
    if found > 0xffff {
        return Err(WireError::Decode(format!(
            "not a message of this fleet (it starts with {:02x?})",
            version
        )));
    }
    if found != WIRE_VERSION {
        return Err(WireError::Version { found });
    }
    let (header, used): (Header, usize) = bincode::serde::decode_from_slice(rest, config())
        .map_err(|e| WireError::Decode(format!("header: {e}")))?;
    Ok((header, &rest[used..]))
}

/// A whole message whose header must say `expected`.
pub fn decode<T: DeserializeOwned>(
    bytes: &[u8],
    expected: MessageKind,
) -> Result<(Header, T), WireError> {
    let (header, rest) = decode_header(bytes)?;
    if header.kind != expected {
        return Err(WireError::Kind {
            found: header.kind.name(),
            expected: expected.name(),
        });
    }
    let (body, used): (T, usize) = bincode::serde::decode_from_slice(rest, config())
        .map_err(|e| WireError::Decode(format!("{} body: {e}", expected.name())))?;
    if used != rest.len() {
        return Err(WireError::Decode(format!(
            "{} body: {} bytes left over",
            expected.name(),
            rest.len() - used
        )));
    }
    Ok((header, body))
}

/// A value of an item's metric, kept as the kind it is so records print it the same.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum MetricValue {
    /// A count.
    Count(u64),
    /// A ratio.
    Ratio(f64),
}

/// The item a task is about, in a form every encoding carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskItem {
    /// Item id, `{dataset}-{seed}-{batch}-{index}`.
    pub id: String,
    /// Its dataset.
    pub dataset: DatasetKind,
    /// Batch number.
    pub batch: u64,
    /// The value of the dataset's complexity metric.
    pub complexity: u32,
    /// φ0.
    pub fs: String,
    /// The item's metrics by name, in the order the generator lists them.
    pub metrics: Vec<(String, MetricValue)>,
}

impl TaskItem {
    /// The metrics as the JSON object a result record carries.
    pub fn metrics_json(&self) -> serde_json::Map<String, serde_json::Value> {
        self.metrics
            .iter()
            .map(|(name, v)| {
                let value = match *v {
                    MetricValue::Count(n) => serde_json::Value::from(n),
                    MetricValue::Ratio(x) => serde_json::Value::from(x),
                };
                (name.clone(), value)
            })
            .collect()
    }

    /// Metrics read from a JSON object; other values than numbers are left out.
    pub fn metrics_from_json(
        map: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<(String, MetricValue)> {
        map.iter()
            .filter_map(|(k, v)| {
                let value = match v.as_u64() {
                    Some(n) => MetricValue::Count(n),
                    None => MetricValue::Ratio(v.as_f64()?),
                };
                Some((k.clone(), value))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> TaskItem {
        TaskItem {
            id: "plogic-0-0-3".into(),
            dataset: DatasetKind::Plogic,
            batch: 0,
            complexity: 4,
            fs: "(p1 ∧ ¬p2)".into(),
            metrics: vec![
                ("depth".into(), MetricValue::Count(3)),
                ("density".into(), MetricValue::Ratio(0.5)),
            ],
        }
    }

    fn header(kind: MessageKind) -> Header {
        Header {
            kind,
            run: "r1".into(),
        }
    }

    #[test]
    fn a_message_reads_back_as_written() {
        let bytes = encode(&header(MessageKind::Translate), &item()).unwrap();
        let (h, body): (Header, TaskItem) = decode(&bytes, MessageKind::Translate).unwrap();
        assert_eq!(h, header(MessageKind::Translate));
        assert_eq!(body, item());
        let json = body.metrics_json();
        assert_eq!(json["depth"], serde_json::json!(3));
        assert_eq!(json["density"], serde_json::json!(0.5));
        assert_eq!(TaskItem::metrics_from_json(&json), item().metrics);
    }

    #[test]
    fn other_versions_kinds_and_garbage_are_refused_with_their_reason() {
        let mut bytes = encode(&header(MessageKind::Translate), &item()).unwrap();
        assert_eq!(
            decode::<TaskItem>(&bytes, MessageKind::Verify).unwrap_err(),
            WireError::Kind {
                found: "translate",
                expected: "verify"
            }
        );
        bytes[..4].copy_from_slice(&7u32.to_le_bytes());
        let e = decode::<TaskItem>(&bytes, MessageKind::Translate).unwrap_err();
        assert_eq!(e, WireError::Version { found: 7 });
        assert!(e.to_string().contains("schema version 7"));
        assert_eq!(
            decode::<TaskItem>(b"ab", MessageKind::Translate).unwrap_err(),
            WireError::Truncated(2)
        );
        assert!(matches!(
            decode::<TaskItem>(b"\xff\xfe not a message", MessageKind::Translate),
            Err(WireError::Decode(_))
        ));
        let mut garbage = WIRE_VERSION.to_le_bytes().to_vec();
        garbage.extend_from_slice(&[0xff; 9]);
        assert!(matches!(
            decode::<TaskItem>(&garbage, MessageKind::Translate),
            Err(WireError::Decode(_))
        ));
    }
}
