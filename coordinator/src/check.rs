//! `autoeval check`: verdicts for a file of formula pairs, in parallel, in input order.

use anyhow::{Context, Result};
use autoeval_solver_pool::SolverPool;
use autoeval_syntax::Mode;
use autoeval_verify::{check, Kind, Outcome, Prover, ProverLimits, Settings};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

/// Settings of `autoeval check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSONL file of pairs: {"kind": "ksat"|"plogic"|"fol"|"regex", "phi0": …, "phi1": …}; other fields are kept.
    #[arg(long)]
    pairs: PathBuf,
    /// Prover time limit per check, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u32,
    /// Prover resource limit per check (Z3 rlimit); 0 for none.
    #[arg(long, default_value_t = 50_000_000)]
    rlimit: u32,
    /// Strict refuses →, ↔, ⊕ (and |, +, ? in regexes), which the prompts do not offer.
    #[arg(long, value_enum, default_value_t = ParseMode::Lenient)]
    mode: ParseMode,
    /// Where to write the results; standard output when absent.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Parallel checks; all cores when absent.
    #[arg(long)]
    jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(long)]
    quiet: bool,
}

/// The parser mode, as a command-line value.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ParseMode {
    /// Only the prompt's vocabulary.
    Strict,
    /// Also implication, biconditional and exclusive or.
    Lenient,
}

impl From<ParseMode> for Mode {
    fn from(m: ParseMode) -> Mode {
        match m {
            ParseMode::Strict => Mode::Strict,
            ParseMode::Lenient => Mode::Lenient,
        }
    }
}

/// A pool of prover processes running this executable's hidden `prover-child` command.
pub fn prover_pool(size: usize) -> Result<SolverPool> {
    let program =
        std::env::current_exe().context("cannot find this executable to start provers")?;
    Ok(SolverPool::new(autoeval_solver_pool::PoolConfig {
        program,
        args: vec!["prover-child".into()],
        size,
        grace: std::time::Duration::from_millis(500),
    }))
}

/// Checks one input line; a bad line becomes an `unknown` result saying what is wrong.
pub fn check_line(line: &str, settings: &Settings, prover: &dyn Prover) -> Map<String, Value> {
    let started = Instant::now();
    let mut obj = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(obj)) => obj,
        Ok(_) => return bad_line(Map::new(), "the line is not a JSON object"),
        Err(e) => {
            let mut m = Map::new();
            m.insert("input".into(), Value::String(line.to_string()));
            return bad_line(m, &format!("the line is not JSON: {e}"));
        }
    };
    let field = |name: &str| obj.get(name).and_then(Value::as_str).map(str::to_string);
    let (Some(kind), Some(phi0), Some(phi1)) = (field("kind"), field("phi0"), field("phi1")) else {
        return bad_line(
            obj,
            "the line needs string fields \"kind\", \"phi0\" and \"phi1\"",
        );
    };
    let kind: Kind = match kind.parse() {
        Ok(k) => k,
        Err(e) => return bad_line(obj, &e),
    };
    let mut local;
    let settings = match obj.get("alphabet").and_then(Value::as_str) {
        Some(alphabet) => {
            local = settings.clone();
            local.alphabet = alphabet
                .chars()
                .filter(|c| !c.is_whitespace() && *c != ',')
                .collect();
            &local
        }
        None => settings,
    };
    let outcome = check(kind, &phi0, &phi1, settings, prover);
    write_outcome(&mut obj, &outcome);
    obj.insert(
        "ms".into(),
        Value::from(started.elapsed().as_secs_f64() * 1e3),
    );
    obj
}

fn bad_line(mut obj: Map<String, Value>, reason: &str) -> Map<String, Value> {
    obj.insert("verdict".into(), Value::String("unknown".into()));
    obj.insert(
        "reason".into(),
        Value::String(format!("bad input line: {reason}")),
    );
    obj
}

/// Adds `verdict`, `reason`, `counterexample` and `method` to `obj`.
pub fn write_outcome(obj: &mut Map<String, Value>, outcome: &Outcome) {
    if let Ok(Value::Object(fields)) = serde_json::to_value(outcome) {
        obj.extend(fields);
    }
}

/// Runs `autoeval check`.
pub fn run(args: Args) -> Result<()> {
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?;
    let pool = prover_pool(jobs)?;
    let settings = Settings {
        mode: args.mode.into(),
        limits: ProverLimits {
            timeout_ms: args.timeout_ms,
            rlimit: args.rlimit,
        },
        ..Settings::default()
    };
    let input = std::fs::File::open(&args.pairs)
        .with_context(|| format!("cannot open the pairs file {}", args.pairs.display()))?;
    let out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    let progress = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {pos} pairs checked ({per_sec}) {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        )
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut lines = BufReader::new(input).lines();
    // Chunks keep results streaming in input order while all cores work.
    const CHUNK: usize = 512;
    loop {
        let chunk: Vec<String> = lines
            .by_ref()
            .take(CHUNK)
            .collect::<Result<_, _>>()
            .with_context(|| format!("cannot read {}", args.pairs.display()))?;
        if chunk.is_empty() {
            break;
        }
        let results: Vec<Map<String, Value>> = threads.install(|| {
            chunk
                .par_iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| check_line(l, &settings, &pool))
                .collect()
        });
        for r in results {
            let verdict = r
                .get("verdict")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            *counts.entry(verdict.to_string()).or_default() += 1;
            serde_json::to_writer(&mut out, &r)?;
            out.write_all(b"\n")?;
            progress.inc(1);
        }
        out.flush()?;
    }
    progress.finish_and_clear();
    if !args.quiet {
        let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!(
            "checked {} pairs: {}",
            counts.values().sum::<usize>(),
            summary.join(", ")
        );
    }
    Ok(())
}
