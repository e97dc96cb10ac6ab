//! `autoeval run`: a whole evaluation on one machine. Items are generated,
//! translated by each model, proved, and each round is appended to
//! `results.jsonl` as it finishes; running the same command again resumes.
//! At the end come `summary.json`, `report.html` and a terminal summary.

pub mod dry_run;

use crate::app::run::{execute, on_fleet, progress_display};
use anyhow::{bail, Result};
use autoeval_generate::DatasetKind;

use autoeval_prompts::{PromptSet, Shots};
use autoeval_proto::CopyPolicy;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::{load_items, resolve as resolve_settings, Protocol, RunConfig};

use std::path::{Path, PathBuf};

/// Prompt style on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum PromptArg {
    /// No examples.
    ZeroShot,
    /// Two worked examples (App. F).
    FewShot,
}

impl From<PromptArg> for Shots {
    fn from(p: PromptArg) -> Shots {
        match p {
            PromptArg::ZeroShot => Shots::ZeroShot,
            PromptArg::FewShot => Shots::FewShot,
        }
    }
}

/// Copy-check policy on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum CopyArg {
    /// Flag the round; the verdict stands.
    Flag,
    /// Count the round as non-compliant.
    Fail,
}

/// Settings of `autoeval run`. Flags override the config file, which overrides the defaults.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Dataset type (repeat for several): ksat, plogic, fol, fol-english, regex [default: all five].
    #[arg(long = "dataset", value_parser = parse_kind)]
    datasets: Vec<DatasetKind>,
    /// Model (repeat for several): reference, reference-noisy:RATE, reference-chatty:RATE,
    /// openai:MODEL, anthropic:MODEL, openai-compatible:MODEL@URL; settings may follow a `?`:
    /// 'openai:o3-mini?reasoning=true&max_tokens=4000', 'openai-compatible:m@URL?top_p=0.9'
    /// (temperature, max_tokens, seed, reasoning, system, concurrency, request_timeout_s;
    /// other keys are sent as request-body fields) [default: reference and reference-noisy:0.1].
    #[arg(long = "model")]
    models: Vec<String>,
    /// Prompt style (repeat for both) [default: zero-shot and few-shot].
    #[arg(long = "prompt", value_enum)]
    prompts: Vec<PromptArg>,
    /// Items per complexity value in each batch [default: 4].
    #[arg(long)]
    per_bucket: Option<usize>,
    /// Batches per dataset; the report's bands span them [default: 3].
    #[arg(long)]
    batches: Option<u64>,
    /// Rounds n of (A∘I)^n; a round runs only if the one before kept the meaning [default: 1].
    #[arg(long)]
    rounds: Option<u32>,
    /// Times each item is asked of each model in each style [default: 1].
    #[arg(long)]
    repeats: Option<u32>,
    /// Seed of the generated datasets [default: 0].
    #[arg(long)]
    seed: Option<u64>,
    /// Round trips in flight at once [default: 32].
    #[arg(long)]
    concurrency: Option<usize>,
    /// Verifier threads and prover processes [default: the number of cores].
    #[arg(long)]
    verifiers: Option<usize>,
    /// Prover time limit per check in milliseconds [default: 10000].
    #[arg(long)]
    timeout_ms: Option<u64>,
    /// Model request time limit in seconds [default: 120].
    #[arg(long)]
    request_timeout_s: Option<u64>,
    /// Attempts per model call, the first included [default: 6].
    #[arg(long)]
    max_attempts: Option<u32>,
    /// Sampling temperature [default: 0.1].
    #[arg(long)]
    temperature: Option<f64>,
    /// Most tokens per reply [default: 1024].
    #[arg(long)]
    max_tokens: Option<u32>,
    /// When the English copies the formula: flag it, or count the round as non-compliant [default: flag].
    #[arg(long, value_enum)]
    copy_policy: Option<CopyArg>,
    /// Directory of NAME.txt prompt templates replacing built-in ones.
    #[arg(long)]
    templates: Option<PathBuf>,
    /// JSON price table {"model": {"input": USD/Mtok, "output": USD/Mtok}} extending the built-in one.
    #[arg(long)]
    prices: Option<PathBuf>,
    /// JSON file of API keys ({"OPENAI_API_KEY": "…"}), read after the environment.
    #[arg(long)]
    secrets: Option<PathBuf>,
    /// Response cache directory, shared between runs if you like [default: DIR/cache].
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Prompt set: paper (App. F's prompts) or extended (every name of φ0 in both prompts,
    /// English predicate meanings, the regex alphabet) [default: paper].
    #[arg(long, value_parser = |s: &str| s.parse::<PromptSet>())]
    prompt_set: Option<PromptSet>,
    /// Take the defaults of a published protocol. paper: the five datasets at Table 1
    /// settings, 50 items per complexity value, 10 batches, zero-shot, Pass@1, the paper's
    /// prompts, strict parsing as the headline (flags still override).
    #[arg(long, value_enum)]
    protocol: Option<Protocol>,
    /// Evaluate the items of a file instead of generated ones: this project's JSONL
    /// (`autoeval generate`) or the reference implementation's dataset JSON.
    #[arg(long)]
    items: Option<PathBuf>,
    /// TOML file with any of the settings above (keys are the flag names: per-bucket = 5),
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
    /// Print nothing but where the report is.
    #[arg(long, short)]
    quiet: bool,
    /// Log lines instead of bars, even on a terminal.
    #[arg(long)]
    plain: bool,
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

fn parse_kind(s: &str) -> Result<DatasetKind, String> {
    s.parse()
}

fn some_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

impl Args {
    fn as_config(&self) -> RunConfig {
        RunConfig {
            datasets: some_vec(self.datasets.clone()),
            models: some_vec(self.models.clone()),
            prompts: some_vec(self.prompts.iter().map(|&p| p.into()).collect()),
            per_bucket: self.per_bucket,
            batches: self.batches,
            rounds: self.rounds,
            repeats: self.repeats,
            seed: self.seed,
            concurrency: self.concurrency,
            verifiers: self.verifiers,
            timeout_ms: self.timeout_ms,
            request_timeout_s: self.request_timeout_s,
            max_attempts: self.max_attempts,
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            copy_policy: self.copy_policy.map(|c| match c {
                CopyArg::Flag => CopyPolicy::Flag,
                CopyArg::Fail => CopyPolicy::Fail,
            }),
            templates: self.templates.clone(),
            prices: self.prices.clone(),
            secrets: self.secrets.clone(),
            cache: self.cache.clone(),
            prompt_set: self.prompt_set,
            protocol: self.protocol,
            items: self.items.clone(),
            model: None,
        }
    }
}

/// Runs `autoeval run`.
pub fn run(args: Args) -> Result<()> {
    let mut config = RunConfig::default();
    if let Some(path) = &args.config {
        config = RunConfig::read(path)?;
    }
    let settings = resolve_settings(config.overridden_by(args.as_config()))?;
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => Path::new("runs").join(settings.default_dir_name()),
    };
    if args.dry_run {
        let items = load_items(&settings)?.0;
        print!("{}", dry_run::plan(&settings, &items)?);
        return Ok(());
    }
    if args.budget.capped() && !args.fleet.fleet {
        bail!("--budget-usd and --budget-tokens cap fleet runs (their workers share the spending in Redis); add --fleet, or run without a cap");
    }
    let display = progress_display(args.quiet, args.plain, args.log_every);
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
    execute(&RunDir(dir), &settings, display)
}
