//! The report of a run, as a self-contained HTML page (inline SVG and CSS,
//! nothing fetched, opens offline) and as a terminal summary. Pure
//! functions from records to text: the command line writes the files.

mod digest;
mod examples;
mod inputs;
mod pairwise;
pub mod svg;
mod tables;

pub use digest::{ByMetric, CostRow, RunDigest};
pub use examples::{counterexample_html, failing_examples, marked_pair};
pub use inputs::{parse_scores, ScoresError};
pub use tables::usd;

use autoeval_metrics::judge::confusion_by_complexity;
use autoeval_metrics::summary::{wilson_interval, Counts, Group, Row, Summary};
use autoeval_proto::{JudgeRecord, Verdict};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use svg::{escape, LineChart, Series};

/// A1 for the report: this run's per-model accuracy against another benchmark's scores.
#[derive(Clone, Debug)]
pub struct CorrelationInput {
    /// Name of the other benchmark.
    pub other_name: String,
    /// The dataset our scores come from.
    pub dataset: String,
    /// The highest complexity counted, and what chose it.
    pub cutoff: autoeval_metrics::Cutoff,
    /// (model, ours, other).
    pub points: Vec<(String, f64, f64)>,
    /// Pearson ρ.
    pub rho: f64,
    /// Its p-value.
    pub p_value: f64,
    /// Predictive power, when defined.
    pub predictive_power: Option<f64>,
}

/// Everything a report shows.
pub struct ReportInput<'a> {
    /// Page title.
    pub title: String,
    /// What the report needs of the run's records beyond their summary.
    pub digest: &'a RunDigest,
    /// Their summary.
    pub summary: &'a Summary,
    /// A4 judgements of the run's pairs, if any were asked.
    pub judgements: &'a [JudgeRecord],
    /// A1 per dataset, if another benchmark's scores were given.
    pub correlations: Vec<CorrelationInput>,
    /// Failing examples shown per dataset.
    pub examples_per_dataset: usize,
    /// The run's settings, as (name, value), shown at the top.
    pub settings: Vec<(String, String)>,
    /// The run's models in order: each keeps its colour in every chart.
    pub models: Vec<String>,
}

impl ReportInput<'_> {
    /// The colour index of `model`: its place among the run's models (or,
    /// for a model the settings do not name, among the records' models).
    pub fn colour_of(&self, model: &str) -> usize {
        if let Some(i) = self.models.iter().position(|m| m == model) {
            return i;
        }
        self.models.len()
            + self
                .digest
                .models
                .iter()
                .position(|m| m == model)
                .unwrap_or(0)
    }
}

/// The dash of a series: prompt styles (and later rounds) differ by dash.
fn dash_of(prompt: &str, round: u32) -> usize {
    usize::from(prompt == "few-shot") + 2 * (round.saturating_sub(1) as usize)
}

/// A share as a percentage with one decimal, or `–` when undefined.
pub fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1}%", 100.0 * v))
}

/// A score of a row: its numerator and denominator.
type RowScore = fn(&Row) -> (usize, usize);

fn series_name(g: &Group, rounds: bool) -> String {
    if rounds {
        format!("{} · {} · round {}", g.key.model, g.key.prompt, g.key.round)
    } else {
        format!("{} · {}", g.key.model, g.key.prompt)
    }
}

/// A terminal table: one line per dataset, model, prompt style and round.
/// `n` is the denominator of the rates beside it: the verdict counts from
/// `equiv` to `stop` add up to it; `api` and `verr` stand outside it.
pub fn terminal_summary(summary: &Summary) -> String {
    let mut out = String::new();
    // Model names in full, however long: cut, two could read alike.
    let w = summary
        .groups
        .iter()
        .map(|g| g.key.model.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let _ = writeln!(
        out,
        "{:<12} {:<w$} {:<9} {:>2} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>5} {:>5} {:>5} {:>8} {:>8} {:>8} {:>8}",
        "dataset",
        "model",
        "prompt",
        "r",
        "n",
        "equiv",
        "not_eq",
        "unkn",
        "tmout",
        "non_c",
        "stop",
        "api",
        "verr",
        "A2",
        "A3",
        "A2 len",
        "A3 len"
    );
    for g in &summary.groups {
        let c = &g.counts;
        let _ = writeln!(
            out,
            "{:<12} {:<w$} {:<9} {:>2} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>5} {:>5} {:>5} {:>8} {:>8} {:>8} {:>8}",
            g.key.dataset,
            g.key.model,
            g.key.prompt,
            g.key.round,
            c.measured(),
            c.get(Verdict::Equivalent),
            c.get(Verdict::NotEquivalent),
            c.get(Verdict::Unknown),
            c.get(Verdict::Timeout),
            c.get(Verdict::NonCompliant),
            c.stopped,
            c.get(Verdict::ApiFailure),
            c.get(Verdict::VerifierError),
            pct(g.compliance),
            pct(g.accuracy),
            pct(g.lenient_compliance),
            pct(g.lenient_accuracy),
        );
    }
    out.push_str(&pairwise::terminal(summary));
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:20px;color:#222}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\
h3{font-size:15px}table{border-collapse:collapse;font-size:12px;margin:8px 0}\
td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}th{background:#f3f3f3}\
td.l,th.l{text-align:left}.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:12px}\
.fig{border:1px solid #eee;padding:4px}.settings th{width:190px}\
.swatch{display:inline-block;width:10px;height:10px;margin-right:6px}\
mark{background:#ffd54f}table.pair{width:100%}table.pair td{width:50%;vertical-align:top}\
.cx{margin:4px 0}\
pre{white-space:pre-wrap;word-break:break-all;background:#f7f7f7;padding:6px;font-size:12px;margin:2px 0}\
.ex{border:1px solid #ddd;padding:8px;margin:8px 0}.note{color:#555;font-size:12px}";

fn fig(chart: &LineChart) -> String {
    format!(r#"<div class="fig">{}</div>"#, chart.render())
}

fn score_series(
    input: &ReportInput,
    groups: &[&Group],
    rounds: bool,
    score: RowScore,
) -> Vec<Series> {
    groups
        .iter()
        .map(|g| {
            let mut s = Series {
                name: series_name(g, rounds),
                colour: input.colour_of(&g.key.model),
                dash: dash_of(&g.key.prompt, g.key.round),
                ..Series::default()
            };
            for row in &g.rows {
                let (k, n) = score(row);
                let Some((lo, hi)) = wilson_interval(k, n) else {
                    continue;
                };
                let x = row.complexity as f64;
                let v = k as f64 / n as f64;
                s.points.push((x, v));
                s.band.push((x, lo, hi));
                s.tips.push(format!(
                    "complexity {}: {} of n = {} [95% CI {}, {}]",
                    row.complexity,
                    pct(Some(v)),
                    n,
                    pct(Some(lo)),
                    pct(Some(hi))
                ));
            }
            s
        })
        .collect()
}

fn dataset_section(out: &mut String, input: &ReportInput, dataset: &str, rounds: bool) {
    let groups: Vec<&Group> = input
        .summary
        .groups
        .iter()
        .filter(|g| g.key.dataset == dataset)
        .collect();
    let axis = if dataset == "regex" {
        "complexity (generation level)"
    } else {
        "complexity (operators)"
    };
    let _ = write!(out, "<h2 id=\"{0}\">{0}</h2>", escape(dataset));
    out.push_str(r#"<div class="figs">"#);
    let ci = Some("95% confidence interval (Wilson)".to_string());
    out.push_str(&fig(&LineChart {
        title: format!("{dataset}: syntactic compliance (A2)"),
        x_label: axis.into(),
        y_label: "share of rounds compliant".into(),
        y_range: (0.0, 1.0),
        band_label: ci.clone(),
        series: score_series(input, &groups, rounds, |r| {
            (r.counts.compliant(), r.counts.measured())
        }),
    }));
    out.push_str(&fig(&LineChart {
        title: format!("{dataset}: accuracy (A3)"),
        x_label: axis.into(),
        y_label: "share of rounds equivalent".into(),
        y_range: (0.0, 1.0),
        band_label: ci,
        series: score_series(input, &groups, rounds, |r| {
            (r.counts.get(Verdict::Equivalent), r.counts.measured())
        }),
    }));
    if let Some(chart) = few_shot_gain(input, &groups, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    if let Some(chart) = judge_f1(input, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    out.push_str("</div>");
    out.push_str(r#"<p class="note">Each point pools all batches and repeats at one complexity; hover over it for its n. Shaded bands are 95% Wilson confidence intervals of those shares (the spread across batches is in summary.json). Colours are models, dashes prompt styles (solid zero-shot, dashed few-shot).</p>"#);
    other_metrics(out, input, dataset);
}

/// Fig. 16: few-shot minus zero-shot accuracy, per model (round 1).
fn few_shot_gain(
    input: &ReportInput,
    groups: &[&Group],
    dataset: &str,
    axis: &str,
) -> Option<LineChart> {
    let mut series = Vec::new();
    let models: BTreeSet<&str> = groups.iter().map(|g| g.key.model.as_str()).collect();
    for model in models {
        let find = |p: &str| {
            groups
                .iter()
                .find(|g| g.key.model == model && g.key.prompt == p && g.key.round == 1)
        };
        let (Some(few), Some(zero)) = (find("few-shot"), find("zero-shot")) else {
            continue;
        };
        let zero_by: BTreeMap<u32, &Counts> = zero
            .rows
            .iter()
            .map(|r| (r.complexity, &r.counts))
            .collect();
        let mut s = Series {
            name: model.to_string(),
            colour: input.colour_of(model),
            ..Series::default()
        };
        for r in &few.rows {
            let Some(z) = zero_by.get(&r.complexity) else {
                continue;
            };
            let (Some(f), Some(zv)) = (r.counts.accuracy(), z.accuracy()) else {
                continue;
            };
            s.points.push((r.complexity as f64, f - zv));
            s.tips.push(format!(
                "complexity {}: {:+.1} points (few-shot n = {}, zero-shot n = {})",
                r.complexity,
                100.0 * (f - zv),
                r.counts.measured(),
                z.measured()
            ));
        }
        series.push(s);
    }
    (!series.is_empty()).then(|| LineChart {
        title: format!("{dataset}: few-shot − zero-shot accuracy"),
        x_label: axis.into(),
        y_label: "difference in accuracy".into(),
        y_range: (-1.0, 1.0),
        band_label: None,
        series,
    })
}

/// Fig. 5 bottom row: the judges' F1 by complexity.
fn judge_f1(input: &ReportInput, dataset: &str, axis: &str) -> Option<LineChart> {
    let by = confusion_by_complexity(input.judgements);
    let series: Vec<Series> = by
        .iter()
        .filter(|((d, _, _), _)| d == dataset)
        .map(|((_, judge, style), rows)| {
            let mut s = Series {
                name: format!("judge {judge} ({style})"),
                colour: input.colour_of(judge),
                dash: dash_of(style, 1),
                ..Series::default()
            };
            for (c, conf) in rows {
                if let Some(f1) = conf.f1() {
                    s.points.push((*c as f64, f1));
                    s.tips.push(format!(
                        "complexity {c}: F1 {} (TP {}, FP {}, TN {}, FN {})",
                        pct(Some(f1)),
                        conf.tp,
                        conf.fp,
                        conf.tn,
                        conf.fn_
                    ));
                }
            }
            s
        })
        .collect();
    (!series.is_empty()).then(|| LineChart {
        title: format!("{dataset}: LLM judge F1 (A4)"),
        x_label: axis.into(),
        y_label: "F1".into(),
        y_range: (0.0, 1.0),
        band_label: None,
        series,
    })
}

/// App. I: accuracy against other metrics of φ0, round 1.
fn other_metrics(out: &mut String, input: &ReportInput, dataset: &str) {
    let metrics: &[(&str, &str)] = if dataset == "regex" {
        &[
            ("height", "parse-tree height"),
            ("num_nodes", "DFA states"),
            ("num_edges", "DFA edges"),
            ("num_stars", "Kleene stars"),
        ]
    } else {
        &[
            ("depth", "generation level (depth)"),
            ("height", "parse-tree height"),
            ("num_and", "∧ count"),
            ("num_or", "∨ count"),
            ("num_not", "¬ count"),
            ("num_quantifiers", "quantified variables"),
        ]
    };
    let by_series: Vec<((&str, &str), &ByMetric)> = input
        .digest
        .by_metric
        .iter()
        .filter(|((d, _, _), _)| d == dataset)
        .map(|((_, model, prompt), by)| ((model.as_str(), prompt.as_str()), by))
        .collect();
    let mut figs = String::new();
    for (metric, label) in metrics {
        let series: Vec<Series> = by_series
            .iter()
            .map(|((model, prompt), by)| {
                let mut s = Series {
                    name: format!("{model} · {prompt}"),
                    colour: input.colour_of(model),
                    dash: dash_of(prompt, 1),
                    ..Series::default()
                };
                for (x, c) in by.get(*metric).into_iter().flatten() {
                    if let Some(a) = c.accuracy() {
                        s.points.push((*x as f64, a));
                        s.tips.push(format!(
                            "{label} {x}: {} of n = {}",
                            pct(Some(a)),
                            c.measured()
                        ));
                    }
                }
                s
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if !series.is_empty() {
            figs.push_str(&fig(&LineChart {
                title: format!("{dataset}: accuracy by {label}"),
                x_label: label.to_string(),
                y_label: "share of rounds equivalent".into(),
                y_range: (0.0, 1.0),
                band_label: None,
                series,
            }));
        }
    }
    if !figs.is_empty() {
        let _ = write!(
            out,
            "<h3>{} accuracy by other metrics (round 1)</h3>",
            escape(dataset)
        );
        let _ = write!(out, r#"<div class="figs">{figs}</div>"#);
    }
}

/// The whole report page.
pub fn html(input: &ReportInput) -> String {
    let datasets: Vec<String> = {
        let mut seen = Vec::new();
        for g in &input.summary.groups {
            if !seen.contains(&g.key.dataset) {
                seen.push(g.key.dataset.clone());
            }
        }
        seen
    };
    let rounds = input.summary.groups.iter().any(|g| g.key.round > 1);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{0}</title><style>{STYLE}</style></head><body><h1>{0}</h1>"#,
        escape(&input.title),
    );
    tables::settings(&mut out, input);
    let _ = write!(
        out,
        r#"<p>{} result records over {} datasets."#,
        input.summary.records,
        datasets.len()
    );
    let sets: Vec<&str> = input
        .digest
        .prompt_sets
        .iter()
        .map(String::as_str)
        .collect();
    let _ = write!(
        out,
        r##"</p><p class="setting">Prompt set: <b>{}</b>. Parsing: <b>strict</b> (the paper's: exactly one formula in the prompt's notation) is the headline; <b>lenient</b> (formula found in prose, other notations) is shown beside it. Sections: <a href="#leaderboard">leaderboard</a> · "##,
        if sets.is_empty() {
            "–".to_string()
        } else {
            escape(&sets.join(", "))
        }
    );
    for d in &datasets {
        let _ = write!(out, r##"<a href="#{0}">{0}</a> · "##, escape(d));
    }
    out.push_str(r##"<a href="#outcomes">outcomes</a> · <a href="#closeness">closeness of misses</a> · <a href="#cost">cost</a> · <a href="#examples">examples</a></p>"##);
    tables::leaderboards(&mut out, input, &datasets);
    pairwise::html(&mut out, input.summary, &datasets);
    for d in &datasets {
        dataset_section(&mut out, input, d, rounds);
    }
    tables::outcomes(&mut out, input.summary);
    tables::closeness(&mut out, &input.digest.misses());
    tables::cost(&mut out, &input.digest.cost);
    tables::judges(&mut out, input.judgements);
    for c in &input.correlations {
        let _ = write!(
            out,
            r#"<h2 id="a1-{2}">Correlation with {} (A1): {}</h2><p>Our score: zero-shot, round-1 accuracy on {} with complexity ≤ {} ({}). Pearson ρ = {:.3}, p = {:.2e}{}; {} models.</p><div class="fig">{}</div>"#,
            escape(&c.other_name),
            escape(&c.dataset),
            escape(&c.dataset),
            c.cutoff.max_complexity,
            escape(&c.cutoff.basis),
            c.rho,
            c.p_value,
            c.predictive_power
                .map_or(String::new(), |p| format!(", predictive power {p:.3}")),
            c.points.len(),
            svg::scatter(
                &format!("∀uto∃val vs {}", c.other_name),
                "∀uto∃val accuracy",
                &c.other_name,
                &c.points
            )
        );
    }
    examples::section(&mut out, input, &datasets);
    out.push_str("</body></html>\n");
    out
}
