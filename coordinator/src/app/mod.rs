//! What the commands share, so that no command imports another: the
//! one-machine run and its end, the report, provers, item generation and
//! the Parquet file.

pub mod a1;
pub mod decided;
pub mod fleet;
pub mod items;
pub mod one_machine;
pub mod output;
pub mod parquet;
pub mod provers;
pub mod report;
pub mod run;
