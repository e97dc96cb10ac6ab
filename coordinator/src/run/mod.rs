//! `autoeval run`: a whole evaluation on one machine. Items are generated,
//! translated by each model, proved, and each round is appended to
//! `results.jsonl` as it finishes; running the same command again resumes.
//! At the end come `summary.json`, `report.html` and a terminal summary.

pub mod dry_run;
pub mod power;

use crate::app::fleet::on_fleet;
use crate::app::one_machine::execute;
use anyhow::{bail, Result};

use autoeval_run_dir::RunDir;
use autoeval_run_dir::{load_items, resolve as resolve_settings};
use autoeval_run_settings::options::file_as_flags;
use autoeval_run_settings::{ModelTables, RunArgs};

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Settings of `autoeval run`. Flags override the config file, which overrides the defaults.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The run's settings.
    #[command(flatten)]
    settings: RunArgs,
    /// TOML file with any of this command's flags and per-model [model."SPEC"] tables.
    #[arg(long, long_help = config_help())]
    config: Option<PathBuf>,
    /// Run directory [default: runs/<models>-<hash of the plan>, so the same command resumes].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the plan (units, requests, estimated tokens and cost per model)
    /// and stop before anything is sent.
    #[arg(long)]
    dry_run: bool,
    /// With --dry-run: the accuracy both models of a comparison are assumed
    /// to score near, for the power figures.
    #[arg(long, default_value_t = 0.5, value_parser = share)]
    baseline: f64,
    /// With --dry-run: a difference in accuracy to plan for (0.03 is three
    /// points); the plan proposes the items per complexity value it needs.
    #[arg(long, value_parser = share)]
    detect: Option<f64>,
    /// How progress is shown.
    #[command(flatten)]
    output: crate::app::output::OutputArgs,
    /// Seconds between log lines when not drawing bars.
    #[arg(long, default_value_t = 10)]
    log_every: u64,
    /// Where the fleet is, when the run goes to one.
    #[command(flatten)]
    fleet: autoeval_fleet_coordinator::FleetArgs,
    /// A fleet run's caps.
    #[command(flatten)]
    budget: autoeval_fleet_coordinator::BudgetArgs,
}

/// A share strictly between 0 and 1.
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(format!(
            "{text} is not a share between 0 and 1 (0.03 is three points)"
        )),
    }
}

/// Flags a config file gives together: given on the command line, any of
/// them replaces the file's all together (caps and no caps alike).
const TOGETHER: [&[&str]; 1] = [&["budget_usd", "budget_tokens", "no_budget"]];

/// The command line `argv` (`autoeval run …`) with the keys of the config
/// file `--config` names read in as flags before its own, each left out
/// where the command line gave that flag; and the file's per-model tables.
/// The parser then reads the file's values as it reads flags.
pub fn with_config_file(
    argv: Vec<OsString>,
    run: &clap::Command,
    matches: &clap::ArgMatches,
) -> Result<(Vec<OsString>, ModelTables)> {
    let Some(path) = matches.get_one::<PathBuf>("config") else {
        return Ok((argv, ModelTables::new()));
    };
    let file = autoeval_run_dir::read_config_file(path)?;
    let given = |id: &str| {
        file_as_flags::given(matches, id)
            || TOGETHER.iter().any(|ids| {
                ids.contains(&id) && ids.iter().any(|i| file_as_flags::given(matches, i))
            })
    };
    let tokens = file_as_flags::tokens(&file.flags, run, path, given)?;
    // The file's values alone first, so that an error names the file.
    if let Err(e) = run
        .clone()
        .no_binary_name(true)
        .try_get_matches_from(tokens.iter())
    {
        bail!(
            "{} is not a valid run config: {}",
            path.display(),
            autoeval_models::one_line(&e)
        );
    }
    let mut layered: Vec<OsString> = argv.iter().take(2).cloned().collect();
    layered.extend(tokens.into_iter().map(OsString::from));
    layered.extend(argv.into_iter().skip(2));
    Ok((layered, file.models))
}

/// Runs `autoeval run` with the config file's per-model `tables`;
/// `matches` tell which flags the command line gave.
pub fn run(args: Args, tables: ModelTables, matches: Option<&clap::ArgMatches>) -> Result<()> {
    let settings = resolve_settings(args.settings.clone(), tables)?;
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => Path::new("runs").join(settings.default_dir_name()),
    };
    warn_unmatched_prices(&settings);
    // A plan and a cost cap are priced where this machine sends each model.
    let settings = if args.fleet.fleet {
        settings
    } else {
        crate::app::run::with_this_machines_addresses(&settings)
    };
    if args.dry_run {
        let items = load_items(&settings)?.0;
        print!("{}", dry_run::plan(&settings, &items)?);
        let ask = power::Ask {
            baseline: args.baseline,
            detect: args.detect,
        };
        print!("{}", power::lines(&settings, &items, ask));
        print!("{}", power::decided_lines(&settings, &items, ask));
        return Ok(());
    }
    if args.detect.is_some() {
        bail!("--detect plans a run's size: add --dry-run");
    }
    let baseline_given = matches.is_some_and(|m| {
        matches!(
            m.value_source("baseline"),
            Some(clap::parser::ValueSource::CommandLine)
        )
    });
    if baseline_given {
        bail!("--baseline sets the power figures of a plan: add --dry-run");
    }
    let display = args.output.display(args.log_every);
    if args.fleet.fleet {
        return on_fleet(
            &RunDir(dir),
            &settings,
            display,
            &args.fleet,
            &args.budget,
            autoeval_fleet_coordinator::Mode::Run,
        );
    }
    let dir = RunDir(dir);
    let caps = args.budget.applied_to(dir.caps()?);
    if caps.usd.is_some() {
        autoeval_fleet_coordinator::refuse_unpriced(&settings)?;
    }
    execute(&dir, &settings, display, caps)
}

/// Warns of each entry of the run's price file that prices none of its
/// models: a misspelt key would otherwise leave a model unpriced in silence.
fn warn_unmatched_prices(settings: &autoeval_run_settings::Resolved) {
    let Some(path) = &settings.files.prices else {
        return;
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return; // reading it again fails with its own message
    };
    let specs: Vec<_> = settings
        .plan
        .models
        .iter()
        .map(|m| m.spec().clone())
        .collect();
    let unmatched = autoeval_models::PriceTable::unmatched(&text, &specs);
    if !unmatched.is_empty() {
        eprintln!(
            "warning: {} prices no model of this run: {} (a key is a model spec as written, e.g. {}, or a model's name, e.g. NAME)",
            path.display(),
            unmatched.join(", "),
            autoeval_models::provider::served_form("NAME")
        );
    }
}

/// The help of `--config`, its per-model keys from the one list.
fn config_help() -> String {
    format!(
        "TOML file with any of this command's flags (keys are the long flag names: per-bucket = 5, \
         model = [\"reference\"], fleet = true, budget-usd = 2.5; a flag given here wins), and \
         per-model settings as [model.\"SPEC\"] tables ({}, extra = {{ top_p = 0.9 }})",
        autoeval_models::MODEL_KEYS.join(", ")
    )
}
