//! `autoeval export DIR --format reference|csv|inspect|parquet`: a run's
//! results in the reference implementation's verified-dataset layout (one
//! JSON file per dataset, model and prompt style, round 1), as one CSV row
//! per round, as Inspect evaluation logs ([`inspect`]), or as Parquet with a
//! dataset card ([`crate::app::parquet`]).

mod inspect;

use anyhow::{Context, Result};
use autoeval_generate::{reference, DatasetConfig, DatasetKind, Item, Metrics};
use autoeval_proto::{ResultRecord, Verdict};
use autoeval_run_dir::RunDir;
use autoeval_run_settings::recorded_model_file_name;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Export layouts.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// The reference implementation's verified files (items with fs, llm_fs, verification).
    Reference,
    /// One CSV row per recorded round, with every column of the Parquet export.
    Csv,
    /// Inspect evaluation logs (`.eval`), one per dataset, model and prompt style.
    Inspect,
    /// One Parquet row per recorded round, with a dataset card (README.md).
    Parquet,
}

/// Settings of `autoeval export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory (with --fleet, where to write the run read from Redis).
    dir: PathBuf,
    /// Layout.
    #[arg(long, value_enum)]
    format: Format,
    /// Where to write: a directory for reference, inspect and parquet, a file for csv [default: DIR/export, DIR/results.csv, DIR/inspect, DIR/parquet].
    #[arg(long)]
    out: Option<PathBuf>,
    /// A fleet run: read it from Redis.
    #[command(flatten)]
    fleet: autoeval_fleet_coordinator::ReadArgs,
}

fn item_of(r: &ResultRecord) -> Result<Item> {
    let dataset: DatasetKind = r.dataset.parse().map_err(anyhow::Error::msg)?;
    let metrics: Metrics = serde_json::from_value(Value::Object(r.metrics.clone()))
        .with_context(|| format!("the metrics of {} do not read back", r.id))?;
    let index =
        r.id.rsplit('-')
            .next()
            .and_then(|i| i.parse().ok())
            .unwrap_or(0);
    Ok(Item {
        id: r.id.clone(),
        dataset,
        batch: r.batch,
        index,
        fs: r.phi0.clone(),
        metrics,
    })
}

fn reference_files(
    records: &[ResultRecord],
    out: &std::path::Path,
    seed: u64,
    per_bucket: usize,
) -> Result<usize> {
    let mut groups: BTreeMap<(String, String, String), Vec<&ResultRecord>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.round == 1 && r.repeat == 0) {
        groups
            .entry((r.dataset.clone(), r.model.clone(), r.prompt.clone()))
            .or_default()
            .push(r);
    }
    for ((dataset, model, prompt), rs) in &groups {
        let items: Vec<Item> = rs.iter().map(|r| item_of(r)).collect::<Result<_>>()?;
        let kind = items[0].dataset;
        let cfg = DatasetConfig {
            seed,
            per_bucket,
            ..DatasetConfig::table1(kind)
        };
        let mut file = reference::export(&items, &cfg);
        if let Some(data) = file["data"].as_array_mut() {
            for (entry, r) in data.iter_mut().zip(rs) {
                let has_error = match r.verdict {
                    Verdict::Equivalent | Verdict::NotEquivalent => Value::Null,
                    _ => json!(r.reason.clone().unwrap_or_else(|| r.verdict.name().into())),
                };
                let is_equivalent = match r.verdict {
                    Verdict::Equivalent => json!(true),
                    Verdict::NotEquivalent => json!(false),
                    _ => Value::Null,
                };
                entry["nl"] = json!(r.english);
                entry["llm_fs"] = json!(r.phi1.clone().or_else(|| r.raw_answer.clone()));
                entry["verification"] = json!({
                    "has_error": has_error,
                    "is_equivalent": is_equivalent,
                    "verdict": r.verdict.name(),
                    "time_ms": r.verify_ms,
                });
            }
        }
        file["verified"] = json!(true);
        file["info"]["model"] = json!(model);
        file["info"]["prompt"] = json!(prompt);
        let dir = out.join(dataset);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(format!(
            "{}-{}.json",
            recorded_model_file_name(model),
            prompt
        ));
        std::fs::write(&path, serde_json::to_string_pretty(&file)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}: {} items", path.display(), rs.len());
    }
    Ok(groups.len())
}

fn csv_file(records: &[ResultRecord], path: &std::path::Path) -> Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let rows = autoeval_export::csv::write_csv(records, std::io::BufWriter::new(file))
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("{}: {rows} rows", path.display());
    Ok(())
}

/// Runs `autoeval export`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    if args.fleet.fleet {
        autoeval_fleet_coordinator::pull(&dir, &args.fleet)?;
    }
    match args.format {
        Format::Reference => {
            // A run's plan names them; a run imported without settings
            // takes the paper's (seed 0, 50 per complexity value).
            let plan = dir.settings().ok().map(|s| s.plan);
            let seed = plan.as_ref().map_or(0, |p| p.seed);
            let per_bucket = plan.as_ref().map_or(50, |p| p.per_bucket);
            let out = args.out.unwrap_or_else(|| dir.0.join("export"));
            reference_files(&dir.records()?, &out, seed, per_bucket)?;
        }
        Format::Csv => csv_file(
            &dir.records()?,
            &args.out.unwrap_or_else(|| dir.0.join("results.csv")),
        )?,
        // Streamed: a log is written a sample at a time.
        Format::Inspect => {
            inspect::write_logs(&dir, &args.out.unwrap_or_else(|| dir.0.join("inspect")))?;
        }
        Format::Parquet => {
            crate::app::parquet::write_dataset(
                &dir,
                &args.out.unwrap_or_else(|| dir.0.join("parquet")),
            )?;
        }
    }
    Ok(())
}
