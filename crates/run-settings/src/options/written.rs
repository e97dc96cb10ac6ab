//! What a run writes beside `results.jsonl` once it ends.

use serde::{Deserialize, Serialize};

/// What the run writes beside its records.
#[derive(Clone, Debug, Default, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct WrittenArgs {
    /// Write the results zstd-compressed (`results.jsonl.zst`) once the run
    /// ends; every command reads them either way.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = false, value_name = "BOOL")]
    pub compress: bool,
    /// Write the results as Parquet too, `results.parquet` beside
    /// `results.jsonl`, once the run ends (the file `autoeval export
    /// --format parquet` writes).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value_t = false, value_name = "BOOL")]
    pub parquet: bool,
}
