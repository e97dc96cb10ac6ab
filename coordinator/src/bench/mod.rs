//! The benchmark commands, apart from the product's: each measures one part
//! in release mode and prints medians and ratios measured side by side.

pub mod campaign;
pub mod closeness;
pub mod fleet;
pub mod llm;
pub mod procs;
pub mod prover;
