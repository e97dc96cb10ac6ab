//! `autoeval judge DIR --judge MODEL`: metric A4 as App. L runs it. A model
//! is asked whether φ0 ≡ φ1 for one source model's round-1 answers
//! (GPT-4o's in the paper), zero-shot unless asked: every pair the verifier
//! decided, and the non-compliant ones (Fig. 20's "incompliant"), each with
//! the source model's answer as it wrote it. Its answers are scored against
//! the formal verdicts and appended to `DIR/judge-<model>-<style>.jsonl` as
//! they come, so a stopped judge run resumes where it was.

use anyhow::{Context, Result};
use autoeval_engine::local::judge_local;
use autoeval_run_dir::{judge_file, latest_judgements, rewrite_judgements, JudgeFile, RunDir};

use autoeval_llm_client::{DiskCache, ResponseCache};
use autoeval_metrics::judge::{confusion_by_complexity, Confusion};
use autoeval_models::{Model, ModelSettings, PriceTable};
use autoeval_prompts::{PromptSet, Templates};
use autoeval_proto::{JudgeRecord, JudgeTask, ResultRecord, Verdict};
use autoeval_report::pct;
use autoeval_run_settings::Resolved;
use autoeval_translate::judge::Judging;
use autoeval_translate::{build_backend, Local};
use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Judge prompt style on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum StyleArg {
    /// Explanation first, then `[Answer] yes|no`.
    Cot,
    /// Only `[Answer] yes|no`.
    Yesno,
}

/// Settings of `autoeval judge`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory.
    dir: PathBuf,
    /// The judge model (same specs as `run --model`).
    #[arg(long)]
    judge: Model,
    /// Ask for reasoning first (cot) or a bare answer (yesno).
    #[arg(long, value_enum, default_value = "cot")]
    prompt: StyleArg,
    /// The model whose answers are judged [default: the run's first model].
    #[arg(long)]
    source_model: Option<String>,
    /// The prompt style of the answers judged.
    #[arg(long, default_value = "zero-shot")]
    source_prompt: String,
    /// The round of the answers judged.
    #[arg(long, default_value_t = 1)]
    source_round: u32,
    /// Judge only pairs of this complexity or less (operators; generation
    /// level for regular expressions) [default: 20, Fig. 20's range, for a
    /// run under a protocol; every complexity otherwise].
    #[arg(long, value_name = "N", conflicts_with = "all_complexities")]
    max_complexity: Option<u32>,
    /// Judge pairs of every complexity, also under a protocol.
    #[arg(long)]
    all_complexities: bool,
    /// Judge calls in flight at once.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// API keys.
    #[command(flatten)]
    keys: autoeval_run_settings::SecretsArgs,
    /// How progress is shown.
    #[command(flatten)]
    output: crate::app::output::OutputArgs,
    /// Ask through the fleet: LLM workers serving the judge model answer,
    /// and the judgements are kept in the fleet's Redis with the run.
    #[command(flatten)]
    fleet: autoeval_fleet_coordinator::FleetArgs,
}

fn style_name(s: StyleArg) -> &'static str {
    match s {
        StyleArg::Cot => "cot",
        StyleArg::Yesno => "yesno",
    }
}

/// A table of confusion counts and scores, one line per complexity and a total per dataset.
fn print_table(records: &[JudgeRecord]) {
    let header = [
        "dataset",
        "complexity",
        "pos",
        "neg",
        "inc",
        "TP",
        "FP",
        "TN",
        "FN",
        "IP",
        "IN",
        "inc-yes",
        "cover",
        "prec",
        "recall",
        "TNR",
        "F1",
        "F1-strict",
    ];
    let line = |cells: &[String]| {
        println!(
            "{:<12} {:>10} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>4} {:>4} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7],
            cells[8], cells[9], cells[10], cells[11], cells[12], cells[13], cells[14], cells[15],
            cells[16], cells[17]
        )
    };
    line(&header.map(String::from));
    for ((dataset, _, _), rows) in confusion_by_complexity(records) {
        let mut total = Confusion::default();
        let row = |label: String, c: &Confusion| {
            line(&[
                dataset.clone(),
                label,
                c.positives().to_string(),
                c.negatives().to_string(),
                c.non_compliant_pairs().to_string(),
                c.tp.to_string(),
                c.fp.to_string(),
                c.tn.to_string(),
                c.fn_.to_string(),
                c.unanswered_positive.to_string(),
                c.unanswered_negative.to_string(),
                c.non_compliant_yes.to_string(),
                pct(c.coverage()),
                pct(c.precision()),
                pct(c.recall()),
                pct(c.tnr()),
                pct(c.f1()),
                pct(c.f1_unanswered_wrong()),
            ])
        };
        for (complexity, c) in &rows {
            row(complexity.to_string(), c);
            total.merge(c);
        }
        row("all".into(), &total);
    }
}

/// The complexity range Fig. 20 judges: 20 operators, or depth 20.
const FIG_20_MAX_COMPLEXITY: u32 = 20;

/// Whose answers are judged: one model's, in one prompt style and round,
/// up to a complexity.
struct Source {
    model: String,
    prompt: String,
    round: u32,
    max_complexity: Option<u32>,
}

impl Source {
    /// The source the flags name, the run's first model by default.
    fn of(args: &Args, run: Option<&Resolved>, records: &[ResultRecord]) -> Result<Source> {
        let model = match (&args.source_model, run) {
            (Some(m), _) => m.clone(),
            (None, Some(s)) if !s.plan.models.is_empty() => s.plan.models[0].to_string(),
            _ => records
                .first()
                .map(|r| r.model.clone())
                .context("the run has no records to judge")?,
        };
        let protocol = run.and_then(|s| s.protocol);
        let max_complexity = match (args.max_complexity, args.all_complexities) {
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => protocol.map(|_| FIG_20_MAX_COMPLEXITY),
        };
        Ok(Source {
            model,
            prompt: args.source_prompt.clone(),
            round: args.source_round,
            max_complexity,
        })
    }

    /// The range judged, in words.
    fn range(&self) -> String {
        match self.max_complexity {
            Some(FIG_20_MAX_COMPLEXITY) => format!(
                "complexity up to {FIG_20_MAX_COMPLEXITY} (Fig. 20's range; --all-complexities for every pair)"
            ),
            Some(n) => format!("complexity up to {n}"),
            None => "every complexity".to_string(),
        }
    }

    /// The A4 question for record `r` when it is one of this source's answers
    /// with a label: decided by the verifier, or non-compliant. The judge
    /// sees the answer as the model wrote it, as the public implementation
    /// passed it.
    fn pair(&self, r: &ResultRecord, judge: &str, style: &str) -> Option<JudgeRecord> {
        if r.model != self.model || r.prompt != self.prompt || r.round != self.round {
            return None;
        }
        if self.max_complexity.is_some_and(|n| r.complexity > n) {
            return None;
        }
        if !matches!(
            r.verdict,
            Verdict::Equivalent | Verdict::NotEquivalent | Verdict::NonCompliant
        ) {
            return None;
        }
        let answer = r.raw_answer.clone().or_else(|| r.phi1.clone())?;
        Some(JudgeRecord::from(JudgeTask {
            id: r.id.clone(),
            dataset: r.dataset.clone(),
            complexity: r.complexity,
            model: r.model.clone(),
            prompt: r.prompt.clone(),
            round: r.round,
            repeat: r.repeat,
            judge: judge.to_string(),
            style: style.into(),
            phi0: r.phi0.clone(),
            phi1: answer,
            equivalent: r.verdict == Verdict::Equivalent,
            non_compliant: r.verdict == Verdict::NonCompliant,
        }))
    }
}

/// Runs `autoeval judge`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    let records = dir.records()?;
    let run_settings = dir.settings().ok();
    let (settings, prompt_set) = judge_settings(&args.judge, run_settings.as_ref())?;
    let prices = autoeval_run_dir::price_table(
        run_settings
            .as_ref()
            .and_then(|r| r.files.prices.as_deref()),
    )?;
    let style = style_name(args.prompt);
    let path = judge_file(&dir, &args.judge, style);
    let recorded = std::fs::read_to_string(&path).unwrap_or_default();
    let existing = latest_judgements(&recorded);
    let key = |id: &str, model: &str, prompt: &str, round: u32, repeat: u32| {
        format!("{id}\u{1}{model}\u{1}{prompt}\u{1}{round}\u{1}{repeat}")
    };
    let done: HashSet<String> = existing
        .iter()
        .filter(|j| j.api_failure.is_none())
        .map(|j| {
            key(
                &j.task.id,
                &j.task.model,
                &j.task.prompt,
                j.task.round,
                j.task.repeat,
            )
        })
        .collect();
    let source = Source::of(&args, run_settings.as_ref(), &records)?;
    let pairs: Vec<JudgeRecord> = records
        .iter()
        .filter_map(|r| source.pair(r, args.judge.as_str(), style))
        .collect();
    let todo: Vec<JudgeRecord> = pairs
        .iter()
        .filter(|j| {
            let t = &j.task;
            !done.contains(&key(&t.id, &t.model, &t.prompt, t.round, t.repeat))
        })
        .cloned()
        .collect();
    if pairs.is_empty() {
        anyhow::bail!(
            "{} has no answers of {} ({}, round {}) to judge; name another with --source-model, --source-prompt or --source-round",
            dir.0.display(),
            source.model,
            source.prompt,
            source.round
        );
    }
    // Answered judgements stay as they are; failed calls are asked again and
    // their new answers appended, never rewriting what was recorded.
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // A line torn by a killed run is ended first, so it cannot swallow the next one.
    if !recorded.is_empty() && !recorded.ends_with('\n') {
        writeln!(file)?;
    }
    if !args.output.quiet {
        let count = |f: fn(&JudgeTask) -> bool| pairs.iter().filter(|j| f(&j.task)).count();
        eprintln!(
            "judge: the answers of {} ({}, round {}), {}, asked with the {} prompt set: {} pairs, {} equivalent, {} not, {} non-compliant",
            source.model,
            source.prompt,
            source.round,
            source.range(),
            prompt_set.name(),
            pairs.len(),
            count(|t| !t.non_compliant && t.equivalent),
            count(|t| !t.non_compliant && !t.equivalent),
            count(|t| t.non_compliant),
        );
        eprintln!(
            "judge: {} pairs already judged, {} to ask {}",
            pairs.len() - todo.len(),
            todo.len(),
            args.judge
        );
    }
    if args.fleet.fleet {
        drop(file);
        let asked = on_fleet(&args, &dir, settings, prompt_set, style, todo)?;
        // What the file held first, then the fleet's: the first answer of a pair stands.
        let merged = latest_judgements(&(recorded.clone() + &asked));
        rewrite_judgements(&path, &merged)?;
        return finish(&dir, &path, &source, args.output.quiet);
    }
    let judge = Judge {
        settings: &settings,
        prices,
        prompt_set,
    };
    here(&args, &dir, judge, todo, file, &path)?;
    finish(&dir, &path, &source, args.output.quiet)
}

/// Asks the fleet's workers the pairs `todo`: every judgement the run's
/// Redis holds for this judge, as JSON lines.
fn on_fleet(
    args: &Args,
    dir: &RunDir,
    settings: ModelSettings,
    prompt_set: PromptSet,
    style: &str,
    todo: Vec<JudgeRecord>,
) -> Result<String> {
    let display = args.output.display(10);
    let asked =
        autoeval_fleet_coordinator::judge::ask_all(autoeval_fleet_coordinator::judge::Ask {
            dir,
            judge: &args.judge,
            settings,
            prompt_set,
            style,
            todo,
            fleet: &args.fleet,
            display,
        })?;
    let mut lines = String::new();
    for j in &asked {
        lines.push_str(&serde_json::to_string(j)?);
        lines.push('\n');
    }
    Ok(lines)
}

/// The judge a command asks: its settings, the prices it is charged at,
/// and the prompt set.
struct Judge<'a> {
    settings: &'a ModelSettings,
    prices: PriceTable,
    prompt_set: PromptSet,
}

/// Asks `judge` the pairs `todo` on this machine, appending each judgement
/// to `file` (the judge file at `path`) as it comes.
fn here(
    args: &Args,
    dir: &RunDir,
    judge: Judge<'_>,
    todo: Vec<JudgeRecord>,
    file: std::fs::File,
    path: &std::path::Path,
) -> Result<()> {
    let Judge {
        settings,
        prices,
        prompt_set,
    } = judge;
    let cache: Arc<dyn ResponseCache> = Arc::new(DiskCache::new(dir.0.join("cache"))?);
    let settings = ModelSettings {
        concurrency: settings.concurrency.or(Some(args.concurrency)),
        ..settings.clone()
    };
    let local = Local {
        cache: Some(cache),
        secrets_file: args.keys.secrets.clone(),
        gate: Some(Arc::new(autoeval_llm_client::LocalGate::default())),
        base_urls: autoeval_llm_client::BaseUrls::from_env(),
        judge: Some(Arc::new(autoeval_verify::equivalent)),
        ..Local::default()
    };
    let backend = Arc::new(build_backend(&args.judge, &settings, &prices, &local)?);
    let judging = Arc::new(Judging {
        backend: backend.clone(),
        templates: Arc::new(Templates::of_set(prompt_set)),
    });
    let bar = args
        .output
        .bar(|| indicatif::ProgressBar::new(todo.len() as u64));
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let ticked = bar.clone();
    let judged = runtime.block_on(judge_local(
        &dir.0.display().to_string(),
        todo,
        judging,
        Arc::new(JudgeFile(Mutex::new(file))),
        args.concurrency,
        move || ticked.inc(1),
    ));
    bar.finish_and_clear();
    if let Some(e) = judged.failure {
        return Err(e).with_context(|| format!("cannot append to {}", path.display()));
    }
    if let Some(h) = backend.halt() {
        anyhow::bail!(
            "{}. The judgements made are kept: run the same command again once this is fixed",
            h.line(args.judge.as_str())
        );
    }
    Ok(())
}

/// The judge's settings and the prompt set it is asked with. Under a
/// protocol the run's resolution gives them, as to the run's own models
/// (the public implementation asked its judge as it asked for
/// translations); otherwise the spec's, with the tool's defaults.
fn judge_settings(judge: &Model, run: Option<&Resolved>) -> Result<(ModelSettings, PromptSet)> {
    match run {
        Some(run) if run.protocol.is_some() => {
            let (_, settings) = run.model_settings(judge);
            // How many calls at once is this command's (--concurrency)
            // unless the spec or the model's table says, not the run's.
            let own = judge.own_settings();
            let table = run.model.get(judge.as_str()).and_then(|t| t.concurrency);
            let settings = ModelSettings {
                concurrency: own.concurrency.or(table),
                ..settings
            };
            Ok((settings, run.plan.prompt_set))
        }
        _ => {
            let set = run.map_or(PromptSet::Paper, |r| r.plan.prompt_set);
            Ok((judge.own_settings().clone(), set))
        }
    }
}

/// Prints the confusion table of this source's judgements and writes the report.
fn finish(dir: &RunDir, path: &std::path::Path, source: &Source, quiet: bool) -> Result<()> {
    let all = latest_judgements(&std::fs::read_to_string(path)?);
    if !quiet {
        let mine: Vec<JudgeRecord> = all
            .into_iter()
            .filter(|j| {
                (j.task.model.as_str(), j.task.prompt.as_str(), j.task.round)
                    == (source.model.as_str(), source.prompt.as_str(), source.round)
            })
            .collect();
        print_table(&mine);
    }
    let report = crate::app::report::write(dir)?;
    println!("judgements: {}", path.display());
    println!("report: {}", report.display());
    Ok(())
}
