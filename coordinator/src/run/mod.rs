//! `autoeval run`: a whole evaluation on one machine. Items are generated,
//! translated by each model, proved, and each round is appended to
//! `results.jsonl` as it finishes; running the same command again resumes.
//! At the end come `summary.json`, `report.html` and a terminal summary.

pub mod dry_run;
pub mod power;

use crate::app::run::{execute, on_fleet};
use anyhow::{bail, Result};

use autoeval_run_dir::RunDir;
use autoeval_run_dir::{load_items, read_config_with, resolve as resolve_settings};
use autoeval_run_settings::RunConfig;

use std::convert::identity;
use std::path::{Path, PathBuf};

/// Settings of `autoeval run`. Flags override the config file, which overrides the defaults.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// The run's settings; each overrides the config file's.
    #[command(flatten)]
    settings: RunConfig,
    /// TOML file with any of this command's flags (keys are the long flag names: per-bucket = 5,
    /// model = ["reference"], fleet = true, budget-usd = 2.5; a flag given here wins),
    /// and per-model settings as [model."SPEC"] tables (temperature, max-tokens, seed,
    /// reasoning, system, concurrency, request-timeout-s, requests-per-minute, tokens-per-minute, extra = { top_p = 0.9 }).
    #[arg(long)]
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

/// Declares the flags of `autoeval run` that are not the run's settings,
/// as the config file may also give them, each once: its key as the file
/// spells it (and an old spelling), its type, and the field of [`Args`] it
/// fills (wrapped in `Some` for an optional field). Caps are read apart:
/// given on the command line, they replace the file's all together.
macro_rules! command_keys {
    (
        taken { $($name:literal $(| $alias:literal)? $key:ident: $ty:ty => $($field:ident).+, $wrap:expr;)* }
        caps { $($cap_name:literal $cap:ident: $cap_ty:ty;)* }
    ) => {
        /// The command's own keys a config file gave.
        #[derive(serde::Deserialize, Default)]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        struct CommandKeys {
            $($(#[serde(alias = $alias)])? $key: Option<$ty>,)*
            $($cap: Option<$cap_ty>,)*
        }

        /// The keys of [`CommandKeys`] as the file spells them.
        const COMMAND_KEYS: &[&str] = &[$($name, $($alias,)?)* $($cap_name,)*];

        impl Args {
            /// Takes each of the file's keys (but the caps) whose flag `given` does not name.
            fn take_keys(&mut self, file: &CommandKeys, given: impl Fn(&str) -> bool) {
                $(if let Some(value) = file.$key.clone() {
                    if !given(stringify!($key)) {
                        self.$($field).+ = $wrap(value);
                    }
                })*
            }
        }
    };
}

command_keys! {
    taken {
        "out" out: PathBuf => out, Some;
        "dry-run" dry_run: bool => dry_run, identity;
        "baseline" baseline: f64 => baseline, identity;
        "detect" detect: f64 => detect, Some;
        "quiet" quiet: bool => output.quiet, identity;
        "plain" plain: bool => output.plain, identity;
        "log-every" log_every: u64 => log_every, identity;
        "fleet" fleet: bool => fleet.fleet, identity;
        "amqp" amqp: String => fleet.broker.amqp, identity;
        "redis" redis: String => fleet.store.redis, identity;
        "worker-wait-s" worker_wait_s: u64 => fleet.worker_wait_s, identity;
        "health-addr" | "metrics-addr" health_addr: String => fleet.health_addr, Some;
        "linger-s" linger_s: u64 => fleet.linger_s, identity;
        "keep-s" keep_s: u64 => fleet.keep_s, identity;
    }
    caps {
        "budget-usd" budget_usd: f64;
        "budget-tokens" budget_tokens: u64;
        "no-budget" no_budget: bool;
    }
}

impl Args {
    /// Takes each of the file's command keys whose flag was not given.
    fn complete_from(&mut self, file: CommandKeys, matches: Option<&clap::ArgMatches>) {
        use clap::parser::ValueSource;
        let given = |id: &str| {
            matches.is_some_and(|m| {
                matches!(
                    m.value_source(id),
                    Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                )
            })
        };
        self.take_keys(&file, given);
        // Caps given on the command line replace the file's caps and its
        // no-budget alike, and the other way round.
        if !(given("budget_usd") || given("budget_tokens") || given("no_budget")) {
            self.budget.budget_usd = file.budget_usd;
            self.budget.budget_tokens = file.budget_tokens;
            self.budget.no_budget = file.no_budget.unwrap_or(false);
        }
    }
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

/// Runs `autoeval run`; `matches` tell which flags the command line gave.
pub fn run(mut args: Args, matches: Option<&clap::ArgMatches>) -> Result<()> {
    let mut config = RunConfig::default();
    if let Some(path) = args.config.clone() {
        let (file, own) = read_config_with::<CommandKeys>(&path, COMMAND_KEYS)?;
        config = file;
        args.complete_from(own, matches);
        if args.budget.no_budget && args.budget.capped() {
            bail!(
                "{} gives both a budget and no-budget = true; keep one",
                path.display()
            );
        }
    }
    // A config file's values have not passed the flags' parser.
    for value in [Some(args.baseline), args.detect].into_iter().flatten() {
        share(&value.to_string()).map_err(anyhow::Error::msg)?;
    }
    let settings = resolve_settings(config.overridden_by(args.settings.clone()))?;
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => Path::new("runs").join(settings.default_dir_name()),
    };
    warn_unmatched_prices(&settings);
    if args.dry_run {
        let items = load_items(&settings)?.0;
        print!("{}", dry_run::plan(&settings, &items)?);
        let ask = power::Ask {
            baseline: args.baseline,
            detect: args.detect,
        };
        print!("{}", power::lines(&settings, &items, ask));
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
    let Some(path) = &settings.prices else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_of_run_is_a_key_of_its_config_file() {
        let command = <Args as clap::Args>::augment_args(clap::Command::new("run"));
        let settings: Vec<String> = RunConfig::keys().into_iter().map(|(k, _)| k).collect();
        let mut missing = Vec::new();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let known = long == "config"
                || settings.iter().any(|k| k == long)
                || COMMAND_KEYS.contains(&long);
            if !known {
                missing.push(long.to_string());
            }
        }
        assert!(
            missing.is_empty(),
            "flags of run that the config file cannot give: {missing:?}"
        );
        // Each key of the file is a flag (or an old spelling of one).
        for key in COMMAND_KEYS {
            assert!(
                command.get_arguments().any(|a| a.get_long() == Some(key)
                    || a.get_all_aliases().is_some_and(|al| al.contains(key))),
                "{key} is no flag of run"
            );
        }
    }
}
