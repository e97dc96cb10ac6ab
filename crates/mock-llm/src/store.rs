//! The files and batches the server holds, whichever API made them.

use crate::wire::Wire;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Instant, SystemTime};

/// One request of a batch.
pub(crate) struct Request {
    pub(crate) custom_id: String,
    /// The model asked, from the body or, where the API names it in the path, from there.
    pub(crate) model: String,
    pub(crate) body: Value,
}

/// What a batch was made of, beside its requests.
#[derive(Clone, Debug, Default)]
pub(crate) struct Origin {
    /// The uploaded file its requests came in (a file batch's).
    pub(crate) input_file_id: Option<String>,
    /// The endpoint its requests go to (a file batch's).
    pub(crate) endpoint: Option<String>,
    /// The name its maker gave it.
    pub(crate) display_name: Option<String>,
    /// The model it asks, where the batch (not each request) names it.
    pub(crate) model: Option<String>,
}

/// One batch, until its results are read.
pub(crate) struct Batch {
    pub(crate) wire: &'static dyn Wire,
    pub(crate) made: Instant,
    /// Its place in the order batches were made.
    pub(crate) order: u64,
    pub(crate) created_at: u64,
    /// What it was made of, beside its requests.
    pub(crate) origin: Origin,
    pub(crate) requests: Vec<Request>,
    /// Set once the batch ended: its result lines, the output and error
    /// files' ids (OpenAI), and its counts.
    pub(crate) ended: Option<Ended>,
    /// Whether this batch expires (its window closes with half its requests done).
    pub(crate) expires: bool,
}

pub(crate) struct Ended {
    pub(crate) status: &'static str,
    pub(crate) output: Vec<String>,
    pub(crate) errors: Vec<String>,
    pub(crate) output_file_id: Option<String>,
    pub(crate) error_file_id: Option<String>,
    pub(crate) succeeded: u64,
    pub(crate) errored: u64,
    pub(crate) expired: u64,
    pub(crate) ended_at: u64,
}

/// Files and batches the server holds.
#[derive(Default)]
pub(crate) struct Store {
    pub(crate) files: HashMap<String, Vec<u8>>,
    pub(crate) batches: HashMap<String, Batch>,
    /// Every custom_id ever submitted, with the times it was (per model).
    pub(crate) submitted: HashMap<String, u64>,
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
