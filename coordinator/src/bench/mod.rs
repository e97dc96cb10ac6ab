//! The benchmark commands, apart from the product's: each measures one part
//! in release mode and prints medians and ratios measured side by side.

pub mod campaign;
pub mod closeness;
pub mod decided;
pub mod fleet;
pub mod llm;
pub mod procs;
pub mod prover;
pub mod soak;

/// How often each measure is taken: the flag every benchmark shares.
#[derive(clap::Args, Debug)]
pub struct Times {
    /// Times each measure is taken; its median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..))]
    pub times: u16,
}
