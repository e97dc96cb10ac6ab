//! `autoeval import`: read the reference implementation's dataset JSON into JSONL items.

use anyhow::{Context, Result};
use autoeval_generate::{reference, DatasetKind};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Settings of `autoeval import`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A dataset or verified file written by the reference implementation.
    file: PathBuf,
    /// Dataset type; guessed from the file when absent (ksat files read as plogic).
    #[arg(long, value_enum)]
    dataset: Option<DatasetKind>,
    /// Where to write the items (JSONL).
    #[arg(long)]
    out: PathBuf,
}

/// Runs `autoeval import`.
pub fn run(args: Args) -> Result<()> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let file = reference::read(&text).with_context(|| format!("in {}", args.file.display()))?;
    let kind = args
        .dataset
        .unwrap_or_else(|| reference::detect_kind(&file));
    let items =
        reference::import(&file, kind).with_context(|| format!("in {}", args.file.display()))?;
    let mut out = BufWriter::new(
        std::fs::File::create(&args.out)
            .with_context(|| format!("cannot create {}", args.out.display()))?,
    );
    for item in &items {
        serde_json::to_writer(&mut out, item)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    eprintln!(
        "{}: {} {} items -> {}",
        args.file.display(),
        items.len(),
        kind.name(),
        args.out.display()
    );
    Ok(())
}
