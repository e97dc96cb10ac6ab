//! Frames between the pool and a prover process: a little-endian u32 length
//! then a bincode body.

use autoeval_syntax::Formula;
use autoeval_verify::Outcome;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// What a prover process writes once it is ready to serve checks (its
/// memory limit in place): a process that ends before it could not run a
/// check at all, where one that ends after it ended during a check.
pub const READY: &[u8] = b"autoeval-prover ready\n";

/// Waits for [`READY`].
pub fn read_ready(r: &mut impl Read) -> io::Result<()> {
    let mut got = Vec::with_capacity(READY.len());
    r.take(READY.len() as u64).read_to_end(&mut got)?;
    if got == READY {
        Ok(())
    } else if READY.starts_with(&got) {
        Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "it ended before it said it was ready",
        ))
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the program is not a prover: it began with {:?}",
                String::from_utf8_lossy(&got)
            ),
        ))
    }
}

/// Largest frame either side accepts.
const MAX_FRAME: usize = 64 << 20;

/// One check for a prover process.
#[derive(Serialize, Deserialize)]
pub struct Request {
    /// The ground truth.
    pub phi0: Formula,
    /// The candidate.
    pub phi1: Formula,
    /// Z3's budgets.
    pub limits: autoeval_verify::ProverLimits,
}

/// The answer to a [`Request`]. The outcome travels as JSON because its
/// optional fields and untagged counterexample need a self-describing format.
#[derive(Serialize, Deserialize)]
pub struct Response {
    outcome_json: String,
}

impl Response {
    /// Wraps an outcome.
    pub fn new(outcome: &Outcome) -> Response {
        Response {
            outcome_json: serde_json::to_string(outcome).unwrap_or_default(),
        }
    }

    /// The outcome, or why it could not be read.
    pub fn outcome(&self) -> io::Result<Outcome> {
        serde_json::from_str(&self.outcome_json)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// Writes one frame.
pub fn write_frame<T: Serialize>(w: &mut impl Write, value: &T) -> io::Result<()> {
    let body = bincode::serde::encode_to_vec(value, bincode::config::standard())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    w.write_all(&(body.len() as u32).to_le_bytes())?;
    w.write_all(&body)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub fn read_frame<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes"),
        ));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    let (value, _) = bincode::serde::decode_from_slice(&body, bincode::config::standard())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(Some(value))
}
