//! The records as one Parquet file, streamed a row group at a time: for
//! `autoeval export DIR --format parquet` and for `--parquet` at the end of
//! a run.

use anyhow::{Context, Result};
use autoeval_export::card::{dataset_card, Card};
use autoeval_export::parquet::ParquetWriter;
use autoeval_run_dir::RunDir;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// The Parquet file's name, in the export directory and in a run's.
pub const FILE: &str = "results.parquet";
/// The judgements' Parquet file's name, in the export directory.
pub const JUDGEMENTS_FILE: &str = "judgements.parquet";

/// Writes the records of `dir` to `path`; gives how many rows.
pub fn write_file(dir: &RunDir, path: &Path) -> Result<usize> {
    dir.require_results()?;
    let cannot = || format!("cannot write {}", path.display());
    let file = File::create(path).with_context(cannot)?;
    let mut writer = ParquetWriter::new(BufWriter::new(file)).with_context(cannot)?;
    let mut failed = None;
    autoeval_run_dir::for_each_record(&dir.results(), |r| {
        if failed.is_none() {
            failed = writer.add(&r).err();
        }
    })?;
    if let Some(e) = failed {
        return Err(anyhow::Error::from(e).context(cannot()));
    }
    writer.finish().with_context(cannot)
}

/// Writes the records of `dir` into the directory `out` as `results.parquet`
/// with its dataset card, `README.md`.
pub fn write_dataset(dir: &RunDir, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join(FILE);
    let rows = write_file(dir, &path)?;
    let judged = write_judgements(dir, &out.join(JUDGEMENTS_FILE))?;
    let settings = std::fs::read_to_string(dir.config()).unwrap_or_default();
    let run = autoeval_run_dir::run_name(dir)?;
    let card = dataset_card(&Card {
        run: &run,
        file: FILE,
        rows,
        settings: &settings,
        judgements: judged.map(|n| (JUDGEMENTS_FILE, n)),
    });
    let readme = out.join("README.md");
    std::fs::write(&readme, card).with_context(|| format!("cannot write {}", readme.display()))?;
    let judged = judged.map_or(String::new(), |n| format!("; {JUDGEMENTS_FILE}: {n} rows"));
    println!(
        "{}: {rows} rows{judged}; {}",
        path.display(),
        readme.display()
    );
    Ok(())
}

/// Writes the judgements of `dir`, if it was judged, to `path`; gives how many.
fn write_judgements(dir: &RunDir, path: &Path) -> Result<Option<usize>> {
    let judgements = dir.judgements()?;
    if judgements.is_empty() {
        return Ok(None);
    }
    let cannot = || format!("cannot write {}", path.display());
    let file = File::create(path).with_context(cannot)?;
    let rows = autoeval_export::judgements::write_judgements(&judgements, BufWriter::new(file))
        .with_context(cannot)?;
    Ok(Some(rows))
}
