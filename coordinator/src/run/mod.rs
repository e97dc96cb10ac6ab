//! `autoeval run`: a whole evaluation on one machine. Items are generated,
//! translated by each model, proved, and each round is appended to
//! `results.jsonl` as it finishes; running the same command again resumes.
//! At the end come `summary.json`, `report.html` and a terminal summary.

pub mod config;
pub mod dry_run;
pub mod progress;
pub mod store;

use crate::check::prover_pool;
use anyhow::{bail, Context, Result};
use autoeval_engine::local::{run_local, Concurrency, StageTimes};
use autoeval_generate::DatasetKind;
use autoeval_llm_client::{DiskCache, ResponseCache};
use autoeval_models::{ModelSpec, PriceTable};
use autoeval_pipeline::{generate_items, initial_tasks, pending_tasks, VerifyStage};
use autoeval_prompts::{PromptSet, Shots};
use autoeval_proto::CopyPolicy;
use autoeval_translate::{Local, StageSettings, Translator};
use config::{Protocol, Resolved, RunConfig};
use progress::{Display, Progress};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::JsonlStore;

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
    fleet: crate::fleet::FleetArgs,
    /// A fleet run's caps.
    #[command(flatten)]
    budget: crate::fleet::BudgetArgs,
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

/// The settings with defaults filled in; an items file is read for its digest.
pub fn resolve_settings(config: RunConfig) -> Result<Resolved> {
    let digest = match &config.items {
        Some(path) => {
            use sha2::{Digest, Sha256};
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read the items file {}", path.display()))?;
            let d = Sha256::digest(&bytes);
            Some(d.iter().take(6).map(|b| format!("{b:02x}")).collect())
        }
        None => None,
    };
    config.resolve_with(digest)
}

/// The items of a file: JSONL items, or the reference implementation's JSON.
fn read_items(path: &Path) -> Result<Vec<autoeval_generate::Item>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the items file {}", path.display()))?;
    if text.trim_start().starts_with('{') && text.lines().count() > 0 {
        let first = text.lines().next().unwrap_or("");
        if let Ok(item) = serde_json::from_str::<autoeval_generate::Item>(first) {
            let mut items = vec![item];
            for (i, line) in text
                .lines()
                .enumerate()
                .skip(1)
                .filter(|(_, l)| !l.trim().is_empty())
            {
                items.push(serde_json::from_str(line).with_context(|| {
                    format!("{}: line {} is not an item", path.display(), i + 1)
                })?);
            }
            return Ok(items);
        }
    }
    let file = autoeval_generate::reference::read(&text).with_context(|| {
        format!(
            "{} is neither items JSONL nor a reference dataset",
            path.display()
        )
    })?;
    let kind = autoeval_generate::reference::detect_kind(&file);
    autoeval_generate::reference::import(&file, kind)
        .with_context(|| format!("in {}", path.display()))
}

/// The files of a run directory.
pub struct RunDir(pub PathBuf);

impl RunDir {
    /// `config.toml`: the resolved settings.
    pub fn config(&self) -> PathBuf {
        self.0.join("config.toml")
    }
    /// The run's settings as `config.toml` holds them, with an error that
    /// says when this is no run directory.
    pub fn read_config(&self) -> Result<RunConfig> {
        if !self.config().exists() {
            bail!(
                "{} is not a run directory (no config.toml)",
                self.0.display()
            );
        }
        RunConfig::read(&self.config())
    }
    /// `results.jsonl`: one line per recorded round.
    pub fn results(&self) -> PathBuf {
        self.0.join("results.jsonl")
    }
    /// `summary.json`.
    pub fn summary(&self) -> PathBuf {
        self.0.join("summary.json")
    }
    /// `report.html`.
    pub fn report(&self) -> PathBuf {
        self.0.join("report.html")
    }

    /// The records of the run, with an error that says when this is no run directory.
    pub fn records(&self) -> Result<Vec<autoeval_proto::ResultRecord>> {
        store::read_all(&self.results()).with_context(|| {
            format!(
                "{} is not a run directory (no results.jsonl)",
                self.0.display()
            )
        })
    }
}

/// A model spec as part of a file name, whole: the backend and model name,
/// the host and port of a server, and a short hash of any `?…` settings;
/// characters other than letters, digits, `.` and `-` become `-`.
/// `openai-compatible:llama3:8b@http://127.0.0.1:8000/v1` becomes
/// `openai-compatible-llama3-8b-127.0.0.1-8000`.
pub fn model_file_name(model: &str) -> String {
    let (base, settings) = match model.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (model, None),
    };
    let mut name = match base.parse::<ModelSpec>() {
        Ok(ModelSpec::OpenaiCompatible { model, base_url }) => {
            let at = host_port(&base_url);
            format!("openai-compatible-{model}-{at}")
        }
        _ => base.to_string(),
    };
    if let Some(q) = settings {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(q.as_bytes());
        name.push_str(&format!("-s{:02x}{:02x}", d[0], d[1]));
    }
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `host-port` of a URL such as `http://127.0.0.1:8000/v1` (the path dropped).
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    authority.replace(':', "-")
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
        return crate::fleet::execute(
            &RunDir(dir),
            &settings,
            display,
            &args.fleet,
            &args.budget,
            crate::fleet::Mode::Run,
        );
    }
    execute(&RunDir(dir), &settings, display)
}

/// Exit status of a run that finished with rounds that tell nothing about
/// the model (API failures, verifier errors): they are worth redoing.
pub const EXIT_INCOMPLETE: u8 = 3;

/// A run that finished, but with rounds to redo.
#[derive(Debug)]
pub struct Incomplete {
    /// Rounds that ended in an API failure or a verifier error.
    pub failed: usize,
    /// The run directory.
    pub dir: PathBuf,
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rounds ended in an API failure or a verifier error and are not counted; once the cause is fixed, redo them with: autoeval rerun {} --failed",
            self.failed,
            self.dir.display()
        )
    }
}

impl std::error::Error for Incomplete {}

/// The run's items, read or generated, with the complexity values a dataset could not fill.
pub(crate) fn load_items(
    settings: &Resolved,
) -> Result<(
    Vec<autoeval_generate::Item>,
    Vec<autoeval_pipeline::BatchShortfall>,
)> {
    match &settings.items {
        Some(path) => {
            let wanted = &settings.plan.datasets;
            let items: Vec<_> = read_items(path)?
                .into_iter()
                .filter(|i| wanted.contains(&i.dataset))
                .collect();
            if items.is_empty() {
                anyhow::bail!(
                    "{} holds no items of the datasets asked for",
                    path.display()
                );
            }
            Ok((items, Vec::new()))
        }
        None => Ok(generate_items(&settings.plan)?),
    }
}

/// How progress is shown: bars on a terminal, log lines every `log_every` seconds otherwise.
pub fn progress_display(quiet: bool, plain: bool, log_every: u64) -> Display {
    Display::choose(quiet, plain, Duration::from_secs(log_every.max(1)))
}

/// Refuses to mix two different plans in one directory; records the settings otherwise.
pub(crate) fn claim_dir(dir: &RunDir, settings: &Resolved) -> Result<()> {
    std::fs::create_dir_all(&dir.0)
        .with_context(|| format!("cannot create the run directory {}", dir.0.display()))?;
    if dir.config().exists() {
        let before = resolve_settings(RunConfig::read(&dir.config())?)?;
        if before.plan != settings.plan {
            anyhow::bail!(
                "{} holds a run with other settings (datasets, models, prompts, batches, per-bucket, rounds, repeats or seed); \
                 use another --out, or repeat that run's settings (its config.toml) to resume it",
                dir.0.display()
            );
        }
    }
    let text = toml::to_string(&settings.to_config()).context("cannot encode the settings")?;
    std::fs::write(dir.config(), text)
        .with_context(|| format!("cannot write {}", dir.config().display()))
}

/// What the stages need of these settings, in the form workers on other machines receive.
pub fn stage_settings(s: &Resolved) -> Result<StageSettings> {
    let mut template_overrides = Vec::new();
    if let Some(tdir) = &s.templates {
        for entry in std::fs::read_dir(tdir)
            .with_context(|| format!("cannot read the templates directory {}", tdir.display()))?
        {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "txt") {
                let name = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                template_overrides.push((name, text));
            }
        }
    }
    let mut models = BTreeMap::new();
    for m in &s.plan.models {
        models.insert(m.clone(), s.model_settings(m)?.1);
    }
    let stage = StageSettings {
        prompt_set: s.plan.prompt_set,
        template_overrides,
        copy_policy: s.copy_policy,
        timeout_ms: u32::try_from(s.timeout_ms).unwrap_or(u32::MAX),
        max_attempts: s.max_attempts,
        models,
        prices: price_table(s.prices.as_deref())?,
    };
    if let Some(tdir) = &s.templates {
        stage
            .templates()
            .with_context(|| format!("in the templates of {}", tdir.display()))?;
    }
    Ok(stage)
}

/// The stages for these settings: backends and prompts, and the verifier.
fn build_stages(dir: &RunDir, s: &Resolved) -> Result<(Translator, VerifyStage)> {
    let cache_dir = s.cache.clone().unwrap_or_else(|| dir.0.join("cache"));
    let cache: Arc<dyn ResponseCache> =
        Arc::new(DiskCache::new(&cache_dir).with_context(|| {
            format!("cannot create the response cache {}", cache_dir.display())
        })?);
    let local = Local {
        concurrency: None,
        cache: Some(cache),
        secrets_file: s.secrets.clone(),
        observer: None,
        // One schedule per model for the whole run: its limits and any 429 are the run's.
        gate: Some(Arc::new(autoeval_llm_client::LocalGate::default())),
    };
    let settings = stage_settings(s)?;
    let translator = settings.translator(&s.plan.models, &local)?;
    let verifier = VerifyStage {
        settings: autoeval_pipeline::VerifySettings {
            prompt_set: settings.prompt_set,
            template_overrides: settings.template_overrides.clone(),
            copy_policy: settings.copy_policy,
            timeout_ms: settings.timeout_ms,
        }
        .verifier(),
        prover: Arc::new(prover_pool(s.verifiers)?),
        copy_policy: settings.copy_policy,
        prompt_set: translator.templates.set_id().to_string(),
    };
    Ok((translator, verifier))
}

/// The shipped price table, extended with the user's file if one is given.
pub fn price_table(file: Option<&Path>) -> Result<PriceTable> {
    let prices = PriceTable::builtin();
    let Some(p) = file else {
        return Ok(prices);
    };
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("cannot read the price table {}", p.display()))?;
    prices.extended_with(&text).with_context(|| {
        format!(
            "{} is not a price table: {{\"model\": {{\"input\": USD per Mtok, \"output\": USD per Mtok}}}}",
            p.display()
        )
    })
}

/// Peak resident memory of this process in MiB, where the system tells.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Runs (or resumes) the run in `dir` to the end and writes its summary and report.
pub fn execute(dir: &RunDir, settings: &Resolved, display: Display) -> Result<()> {
    claim_dir(dir, settings)?;
    let t0 = Instant::now();
    let (items, short) = load_items(settings)?;
    let generate_s = t0.elapsed().as_secs_f64();
    tracing::info!(items = items.len(), shortfalls = short.len(), "generated");
    let store = Arc::new(JsonlStore::open(&dir.results())?);
    let recorded = store.load()?;
    let initial = initial_tasks(&settings.plan, &items);
    let units = initial.len();
    let pending = pending_tasks(initial, &recorded);
    if display != Display::Quiet {
        eprintln!(
            "run: {} items, {units} units ({} models × {} prompt styles × {} repeats); {} already done, {} to do; results in {}",
            items.len(),
            settings.plan.models.len(),
            settings.plan.prompts.len(),
            settings.plan.repeats,
            pending.finished_units,
            pending.tasks.len(),
            dir.results().display()
        );
    }
    let (translator, verifier) = build_stages(dir, settings)?;
    let translator = Arc::new(translator);
    let halted = {
        let translator = translator.clone();
        move || translator.halted()
    };
    let progress = Arc::new(Progress::new(pending.tasks.len(), display));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let times = runtime.block_on(run_local(
        &dir.0.display().to_string(),
        pending.tasks,
        translator,
        Arc::new(verifier),
        store.clone(),
        progress.clone(),
        Concurrency {
            translate: settings.concurrency,
            verify: settings.verifiers,
        },
    ));
    progress.finish();
    let times = times?;
    if let Some(why) = halted() {
        return Err(halted_error(&why, dir, false));
    }
    drop(store);
    finish(
        dir,
        settings,
        items.len(),
        units,
        generate_s,
        &times,
        display,
    )
}

/// Writes the summary and report of a run whose results are all in
/// `results.jsonl`, prints the terminal summary, and says whether rounds are
/// left to redo.
pub fn finish(
    dir: &RunDir,
    settings: &Resolved,
    items: usize,
    units: usize,
    generate_s: f64,
    times: &StageTimes,
    display: Display,
) -> Result<()> {
    let records = store::read_all(&dir.results())?;
    let summary = autoeval_metrics::summary::summarize(&records);
    let run_info = serde_json::json!({
        "schema_version": autoeval_proto::SCHEMA_VERSION,
        "settings": settings,
        "items": items,
        "units": units,
        "this_session": {
            "generate_s": generate_s,
            "stages": times,
            "rounds_per_s": times.records as f64 / times.wall_s.max(1e-9),
            "peak_memory_mib": peak_memory_mib(),
        },
        "summary": summary,
    });
    std::fs::write(dir.summary(), serde_json::to_string_pretty(&run_info)?)
        .with_context(|| format!("cannot write {}", dir.summary().display()))?;
    let report = crate::report::write(dir, &records, Vec::new())?;
    if display != Display::Quiet {
        eprintln!(
            "run: {} rounds recorded in {:.1} s ({}/s; busy s: generate {generate_s:.2}, translate {:.2}, verify {:.2}, record {:.2}); peak memory {}",
            times.records,
            times.wall_s,
            progress::rate(times.records as f64 / times.wall_s.max(1e-9)),
            times.translate_s,
            times.verify_s,
            times.record_s,
            peak_memory_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB")),
        );
        eprint!("{}", autoeval_report::terminal_summary(&summary));
    }
    println!("report: {}", report.display());
    let failed = records
        .iter()
        .filter(|r| r.verdict.is_infrastructure_failure())
        .count();
    if failed > 0 {
        return Err(Incomplete {
            failed,
            dir: dir.0.clone(),
        }
        .into());
    }
    Ok(())
}

/// How a run stops when a backend halted, on one machine or a fleet alike:
/// the cause in one line, and the command that finishes the run once it is fixed.
pub(crate) fn halted_error(why: &str, dir: &RunDir, fleet: bool) -> anyhow::Error {
    anyhow::anyhow!(
        "{why}. Nothing is lost: once this is fixed, `autoeval rerun {} --failed{}` redoes the calls that failed and runs those never sent",
        dir.0.display(),
        if fleet { " --fleet" } else { "" }
    )
}
