//! A run's records in the formats other tools read, written to any
//! `Write` the caller opens (this crate opens no file):
//!
//! * [`inspect`]: evaluation logs of UK AISI's Inspect, one per (dataset,
//!   model, prompt style), one sample per work unit, which `inspect view`,
//!   `read_eval_log` and `samples_df` read;
//! * [`parquet`]: the records as one Parquet file, one row per round, with
//!   a dataset card ([`card`]), which pandas, polars, DuckDB and `datasets` read;
//! * [`csv`]: the same rows and columns as CSV;
//! * [`judgements`]: a run's judgements (metric A4) as a second Parquet
//!   file beside the rounds'.

pub mod card;
pub mod csv;
pub mod inspect;
pub mod judgements;
pub mod parquet;
