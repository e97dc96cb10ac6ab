//! Generating items.

use anyhow::Result;
use autoeval_generate::{generate_batch, Batch, DatasetConfig};
use indicatif::ProgressBar;
use rayon::prelude::*;

/// Generates every batch in parallel; batch streams are independent, so the
/// result does not depend on the number of threads.
pub fn generate_all(
    cfg: &DatasetConfig,
    batches: u64,
    progress: &ProgressBar,
) -> Result<Vec<Batch>> {
    cfg.validate()?;
    (0..batches)
        .into_par_iter()
        .map(|b| {
            let batch = generate_batch(cfg, b)?;
            progress.inc(1);
            Ok(batch)
        })
        .collect()
}
