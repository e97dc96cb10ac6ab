//! The wire contract: the messages that cross process boundaries, and the
//! schema version they carry.
//!
//! A check request is one JSON object with `kind`, `phi0` and `phi1` (and an
//! optional regex `alphabet`); every other field travels through untouched,
//! so callers can attach ids and metadata. The result is the same object
//! with `verdict`, `reason`, `counterexample`, `method` and `ms` added.

pub mod chains;
mod dataset;
pub mod fleet;
mod key;
pub mod meta;
mod record;
pub mod sentinel;
mod task;
pub mod tls;
pub mod wire;

pub use dataset::DatasetKind;
pub use key::{JudgeKey, NotAKey, RoundKey, UnitKey};
pub use record::{
    Closeness, JudgeRecord, JudgeTask, LenientReading, ResultRecord, Tokens, UnknownVerdict,
    Verdict, TRUNCATED,
};
pub use task::{
    CopyCheck, CopyPolicy, NextRound, Reading, RoundTrip, Shots, TranslateTask, UnknownShots,
    VerifyTask,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The prover's time limit per check when none is given, in milliseconds:
/// a run's, `check`'s and the stdio verifier's default, and what a
/// verifier fits its prefetch to.
pub const DEFAULT_CHECK_TIMEOUT_MS: u32 = 10_000;

/// The prover's resource limit per check (Z3's `rlimit`) when none is given.
pub const DEFAULT_CHECK_RLIMIT: u32 = 50_000_000;

/// How long, and how much, one check may prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProverLimits {
    /// Wall-clock limit the prover is asked to respect, in milliseconds.
    pub timeout_ms: u32,
    /// Z3's deterministic resource limit (`rlimit`); 0 means none.
    pub rlimit: u32,
}

impl Default for ProverLimits {
    fn default() -> ProverLimits {
        ProverLimits {
            timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
            rlimit: DEFAULT_CHECK_RLIMIT,
        }
    }
}

/// Version of the message and record layouts in this crate; a run
/// directory records the one it was made with (`schema-version`), and a
/// directory of another is refused rather than read half right.
pub const SCHEMA_VERSION: u32 = 1;

/// A request to check one pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckRequest {
    /// `ksat`, `plogic`, `fol` or `regex`.
    pub kind: String,
    /// The ground truth.
    pub phi0: String,
    /// The candidate.
    pub phi1: String,
    /// Regex alphabet symbols, e.g. `"01"`; the default is the digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alphabet: Option<String>,
    /// Every other field of the request, kept in order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why a line is not a check request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRequest {
    /// What is wrong, in words.
    pub reason: String,
    /// The request as far as it could be read.
    pub partial: Map<String, Value>,
}

impl CheckRequest {
    /// Reads one JSONL line.
    pub fn from_line(line: &str) -> Result<CheckRequest, BadRequest> {
        let value: Value = serde_json::from_str(line).map_err(|e| BadRequest {
            reason: format!("the line is not JSON: {e}"),
            partial: Map::from_iter([("input".to_string(), Value::String(line.to_string()))]),
        })?;
        let Value::Object(obj) = value else {
            return Err(BadRequest {
                reason: "the line is not a JSON object".into(),
                partial: Map::from_iter([("input".to_string(), Value::String(line.to_string()))]),
            });
        };
        serde_json::from_value(Value::Object(obj.clone())).map_err(|_| BadRequest {
            reason: "the line needs string fields \"kind\", \"phi0\" and \"phi1\"".into(),
            partial: obj,
        })
    }
}

/// The result of one check: the request's fields plus the verdict fields.
pub fn result_line(
    fields: Map<String, Value>,
    outcome: Map<String, Value>,
    ms: Option<f64>,
) -> Map<String, Value> {
    let mut out = fields;
    out.extend(outcome);
    if let Some(ms) = ms {
        out.insert("ms".into(), Value::from(ms));
    }
    out
}

/// The result for a line that is not a valid request: verdict `unknown` with the reason.
pub fn bad_request_line(bad: BadRequest) -> Map<String, Value> {
    let mut out = bad.partial;
    out.insert("verdict".into(), Value::String("unknown".into()));
    out.insert(
        "reason".into(),
        Value::String(format!("bad input line: {}", bad.reason)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_keep_their_other_fields_in_order() {
        let r = CheckRequest::from_line(
            r#"{"id": 7, "kind": "fol", "phi0": "a", "phi1": "b", "z": [1]}"#,
        )
        .unwrap();
        assert_eq!(r.kind, "fol");
        assert_eq!(r.extra.keys().collect::<Vec<_>>(), ["id", "z"]);
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(back["id"], 7);
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let e = CheckRequest::from_line("nope").unwrap_err();
        assert!(e.reason.contains("not JSON"));
        let e = CheckRequest::from_line(r#"{"kind": "fol"}"#).unwrap_err();
        assert!(e.reason.contains("phi0"));
        let line = bad_request_line(e);
        assert_eq!(line["verdict"], "unknown");
        assert_eq!(line["kind"], "fol");
    }
}
