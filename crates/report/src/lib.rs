//! The report of a run, as a self-contained HTML page (inline SVG and CSS,
//! nothing fetched, opens offline) and as a terminal summary. Pure
//! functions from records to text: the command line writes the files.

pub mod svg;

use autoeval_metrics::judge::{confusion_by_complexity, Confusion};
use autoeval_metrics::summary::{accuracy_by_metric, Group, Summary};
use autoeval_proto::{JudgeRecord, ResultRecord, Verdict};
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
    /// The highest complexity counted (App. K.4).
    pub max_complexity: u32,
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
    /// The run's records.
    pub records: &'a [ResultRecord],
    /// Their summary.
    pub summary: &'a Summary,
    /// A4 judgements of the run's pairs, if any were asked.
    pub judgements: &'a [JudgeRecord],
    /// A1 per dataset, if another benchmark's scores were given.
    pub correlations: Vec<CorrelationInput>,
    /// Failing examples shown per dataset.
    pub examples_per_dataset: usize,
}

/// A share as a percentage with one decimal, or `–` when undefined.
pub fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1}%", 100.0 * v))
}

/// A score of a row and its spread band.
type RowScore = fn(&autoeval_metrics::summary::Row) -> (Option<f64>, Option<(f64, f64)>);

fn series_name(g: &Group, rounds: bool) -> String {
    if rounds {
        format!("{} · {} · round {}", g.key.model, g.key.prompt, g.key.round)
    } else {
        format!("{} · {}", g.key.model, g.key.prompt)
    }
}

/// A terminal table: one line per dataset, model, prompt style and round.
pub fn terminal_summary(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<24} {:<9} {:>2} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>5} {:>5} {:>8} {:>8} {:>8} {:>8}",
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
        "api",
        "verr",
        "A2",
        "A3",
        "A2 len",
        "A3 len"
    );
    for g in &summary.groups {
        let c = &g.counts;
        let mut model = g.key.model.clone();
        if model.chars().count() > 24 {
            model = model.chars().take(23).collect::<String>() + "…";
        }
        let _ = writeln!(
            out,
            "{:<12} {:<24} {:<9} {:>2} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>5} {:>5} {:>8} {:>8} {:>8} {:>8}",
            g.key.dataset,
            model,
            g.key.prompt,
            g.key.round,
            c.total(),
            c.get(Verdict::Equivalent),
            c.get(Verdict::NotEquivalent),
            c.get(Verdict::Unknown),
            c.get(Verdict::Timeout),
            c.get(Verdict::NonCompliant),
            c.get(Verdict::ApiFailure),
            c.get(Verdict::VerifierError),
            pct(g.compliance),
            pct(g.accuracy),
            pct(g.lenient_compliance),
            pct(g.lenient_accuracy),
        );
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\
h3{font-size:15px}table{border-collapse:collapse;font-size:12px;margin:8px 0}\
td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}th{background:#f3f3f3}\
td.l,th.l{text-align:left}.figs{display:flex;flex-wrap:wrap;gap:12px}\
.fig{border:1px solid #eee;padding:4px}\
pre{white-space:pre-wrap;word-break:break-all;background:#f7f7f7;padding:6px;font-size:12px;margin:2px 0}\
.ex{border:1px solid #ddd;padding:8px;margin:8px 0}.note{color:#555;font-size:12px}";

fn fig(chart: &LineChart) -> String {
    format!(r#"<div class="fig">{}</div>"#, chart.render())
}

fn score_series(groups: &[&Group], rounds: bool, score: RowScore) -> Vec<Series> {
    groups
        .iter()
        .map(|g| {
            let mut s = Series {
                name: series_name(g, rounds),
                ..Series::default()
            };
            for row in &g.rows {
                let (value, band) = score(row);
                if let Some(v) = value {
                    s.points.push((row.complexity as f64, v));
                    if let Some((lo, hi)) = band {
                        s.band.push((row.complexity as f64, lo, hi));
                    }
                }
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
        "complexity (depth)"
    } else {
        "complexity (operators)"
    };
    let _ = write!(out, "<h2 id=\"{0}\">{0}</h2>", escape(dataset));
    out.push_str(r#"<div class="figs">"#);
    out.push_str(&fig(&LineChart {
        title: format!("{dataset}: syntactic compliance (A2)"),
        x_label: axis.into(),
        y_range: (0.0, 1.0),
        series: score_series(&groups, rounds, |r| {
            (r.compliance, r.compliance_band.map(|b| (b.low, b.high)))
        }),
    }));
    out.push_str(&fig(&LineChart {
        title: format!("{dataset}: accuracy (A3)"),
        x_label: axis.into(),
        y_range: (0.0, 1.0),
        series: score_series(&groups, rounds, |r| {
            (r.accuracy, r.accuracy_band.map(|b| (b.low, b.high)))
        }),
    }));
    if let Some(chart) = few_shot_gain(&groups, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    if let Some(chart) = judge_f1(input.judgements, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    out.push_str("</div>");
    out.push_str(r#"<p class="note">Lines are over all batches and repeats; shaded bands span the lowest to highest score of a single batch and repeat.</p>"#);
    other_metrics(out, input.records, dataset);
}

/// Fig. 16: few-shot minus zero-shot accuracy, per model (round 1).
fn few_shot_gain(groups: &[&Group], dataset: &str, axis: &str) -> Option<LineChart> {
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
        let zero_by: BTreeMap<u32, Option<f64>> = zero
            .rows
            .iter()
            .map(|r| (r.complexity, r.accuracy))
            .collect();
        let points = few
            .rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.complexity as f64,
                    r.accuracy? - (*zero_by.get(&r.complexity)?)?,
                ))
            })
            .collect();
        series.push(Series {
            name: model.to_string(),
            points,
            band: Vec::new(),
        });
    }
    (!series.is_empty()).then(|| LineChart {
        title: format!("{dataset}: few-shot − zero-shot accuracy"),
        x_label: axis.into(),
        y_range: (-1.0, 1.0),
        series,
    })
}

/// Fig. 5 bottom row: the judges' F1 by complexity.
fn judge_f1(judgements: &[JudgeRecord], dataset: &str, axis: &str) -> Option<LineChart> {
    let by = confusion_by_complexity(judgements);
    let series: Vec<Series> = by
        .iter()
        .filter(|((d, _, _), _)| d == dataset)
        .map(|((_, judge, style), rows)| Series {
            name: format!("judge {judge} ({style})"),
            points: rows
                .iter()
                .filter_map(|(c, conf)| Some((*c as f64, conf.f1()?)))
                .collect(),
            band: Vec::new(),
        })
        .collect();
    (!series.is_empty()).then(|| LineChart {
        title: format!("{dataset}: LLM judge F1 (A4)"),
        x_label: axis.into(),
        y_range: (0.0, 1.0),
        series,
    })
}

/// App. I: accuracy against other metrics of φ0, round 1.
fn other_metrics(out: &mut String, records: &[ResultRecord], dataset: &str) {
    let metrics: &[(&str, &str)] = if dataset == "regex" {
        &[
            ("num_nodes", "DFA states"),
            ("num_edges", "DFA edges"),
            ("num_stars", "Kleene stars"),
        ]
    } else {
        &[
            ("depth", "parse-tree depth"),
            ("num_and", "∧ count"),
            ("num_or", "∨ count"),
            ("num_not", "¬ count"),
            ("num_quantifiers", "quantified variables"),
        ]
    };
    let mut by_series: BTreeMap<String, Vec<&ResultRecord>> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.dataset == dataset && r.round == 1)
    {
        by_series
            .entry(format!("{} · {}", r.model, r.prompt))
            .or_default()
            .push(r);
    }
    let mut figs = String::new();
    for (metric, label) in metrics {
        let series: Vec<Series> = by_series
            .iter()
            .map(|(name, rs)| Series {
                name: name.clone(),
                points: accuracy_by_metric(rs, metric)
                    .iter()
                    .filter_map(|(x, c)| Some((*x as f64, c.accuracy()?)))
                    .collect(),
                band: Vec::new(),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if !series.is_empty() {
            figs.push_str(&fig(&LineChart {
                title: format!("{dataset}: accuracy by {label}"),
                x_label: label.to_string(),
                y_range: (0.0, 1.0),
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

fn outcome_table(out: &mut String, summary: &Summary) {
    out.push_str(r#"<h2 id="outcomes">Outcomes</h2><table><tr><th class="l">dataset</th><th class="l">model</th><th class="l">prompt</th><th>round</th>"#);
    for v in Verdict::ALL {
        let _ = write!(out, "<th>{}</th>", v.name());
    }
    out.push_str("<th>stopped</th><th>copied</th><th>A2 compliance (strict)</th><th>A3 accuracy (strict)</th><th>A2 lenient</th><th>A3 lenient</th></tr>");
    for g in &summary.groups {
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td class="l">{}</td><td>{}</td>"#,
            escape(&g.key.dataset),
            escape(&g.key.model),
            escape(&g.key.prompt),
            g.key.round
        );
        for v in Verdict::ALL {
            let _ = write!(out, "<td>{}</td>", g.counts.get(v));
        }
        let _ = write!(
            out,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            g.counts.stopped,
            g.copied,
            pct(g.compliance),
            pct(g.accuracy),
            pct(g.lenient_compliance),
            pct(g.lenient_accuracy)
        );
    }
    out.push_str(r#"</table><p class="note">Counts are of the strict reading. API failures and verifier errors are left out of both denominators; timeouts and unknowns stay in them. "stopped": units whose earlier round was not equivalent, so this round was not run.</p>"#);
}

fn cost_table(out: &mut String, summary: &Summary) {
    out.push_str(r#"<h2 id="cost">Tokens, cost and time</h2><table><tr><th class="l">model</th><th class="l">prompt</th><th>rounds</th><th>prompt tokens</th><th>completion tokens</th><th>cost (USD)</th><th>latency p50 ms</th><th>p90</th><th>p99</th><th>verify p50 ms</th><th>p99</th><th>max</th></tr>"#);
    let mut by: BTreeMap<(String, String), Vec<&Group>> = BTreeMap::new();
    for g in &summary.groups {
        by.entry((g.key.model.clone(), g.key.prompt.clone()))
            .or_default()
            .push(g);
    }
    for ((model, prompt), gs) in by {
        let worst = |f: fn(&Group) -> f64| gs.iter().map(|g| f(g)).fold(0.0, f64::max);
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td></tr>"#,
            escape(&model),
            escape(&prompt),
            gs.iter().map(|g| g.counts.total()).sum::<usize>(),
            gs.iter().map(|g| g.prompt_tokens).sum::<u64>(),
            gs.iter().map(|g| g.completion_tokens).sum::<u64>(),
            gs.iter().map(|g| g.cost).sum::<f64>(),
            worst(|g| g.latency_ms.p50),
            worst(|g| g.latency_ms.p90),
            worst(|g| g.latency_ms.p99),
            worst(|g| g.verify_ms.p50),
            worst(|g| g.verify_ms.p99),
            worst(|g| g.verify_ms.max),
        );
    }
    out.push_str(r#"</table><p class="note">Percentiles are the highest of the per-dataset percentiles.</p>"#);
}

fn judge_table(out: &mut String, judgements: &[JudgeRecord]) {
    if judgements.is_empty() {
        return;
    }
    out.push_str(r#"<h2 id="a4">LLM as equivalence judge (A4)</h2><table><tr><th class="l">dataset</th><th class="l">judge</th><th class="l">style</th><th>TP</th><th>FP</th><th>TN</th><th>FN</th><th>unparseable</th><th>API failures</th><th>precision</th><th>recall</th><th>TNR</th><th>F1</th></tr>"#);
    for ((dataset, judge, style), rows) in confusion_by_complexity(judgements) {
        let mut c = Confusion::default();
        for r in rows.values() {
            c.merge(r);
        }
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            escape(&dataset),
            escape(&judge),
            escape(&style),
            c.tp,
            c.fp,
            c.tn,
            c.fn_,
            c.unparseable,
            c.api_failures,
            pct(c.precision()),
            pct(c.recall()),
            pct(c.tnr()),
            pct(c.f1())
        );
    }
    out.push_str("</table>");
}

/// Failing rounds to show for a dataset: wrong answers first, then non-compliant ones.
pub fn failing_examples<'a>(
    records: &'a [ResultRecord],
    dataset: &str,
    n: usize,
) -> Vec<&'a ResultRecord> {
    let order = [
        Verdict::NotEquivalent,
        Verdict::NonCompliant,
        Verdict::Timeout,
        Verdict::Unknown,
    ];
    let mut out = Vec::new();
    for v in order {
        out.extend(
            records
                .iter()
                .filter(|r| r.dataset == dataset && r.verdict == v)
                .take(n - out.len().min(n)),
        );
    }
    out.truncate(n);
    out
}

fn examples(out: &mut String, input: &ReportInput, datasets: &[String]) {
    out.push_str(r#"<h2 id="examples">Failing examples</h2>"#);
    for d in datasets {
        let shown = failing_examples(input.records, d, input.examples_per_dataset);
        let _ = write!(out, "<h3>{}</h3>", escape(d));
        if shown.is_empty() {
            out.push_str(r#"<p class="note">No failing rounds.</p>"#);
        }
        for r in shown {
            let _ = write!(
                out,
                r#"<div class="ex"><b>{}</b> · {} · {} · round {} · <b>{}</b><br>φ0<pre>{}</pre>English<pre>{}</pre>φ{}<pre>{}</pre>"#,
                escape(&r.id),
                escape(&r.model),
                escape(&r.prompt),
                r.round,
                r.verdict.name(),
                escape(&r.phi0),
                escape(r.english.as_deref().unwrap_or("–")),
                r.round,
                escape(r.phi1.as_deref().or(r.raw_answer.as_deref()).unwrap_or("–")),
            );
            if let Some(why) = &r.reason {
                let _ = write!(out, "why<pre>{}</pre>", escape(why));
            }
            if let Some(c) = &r.counterexample {
                let _ = write!(out, "counterexample<pre>{}</pre>", escape(&c.to_string()));
            }
            out.push_str("</div>");
        }
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
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{0}</title><style>{STYLE}</style></head><body><h1>{0}</h1><p>{1} result records over {2} datasets."#,
        escape(&input.title),
        input.summary.records,
        datasets.len()
    );
    let sets: BTreeSet<&str> = input
        .records
        .iter()
        .map(|r| r.prompt_set.as_str())
        .filter(|s| !s.is_empty())
        .collect();
    let sets: Vec<&str> = sets.into_iter().collect();
    let _ = write!(
        out,
        r#"</p><p class="setting">Prompt set: <b>{}</b>. Parsing: <b>strict</b> (the paper's: exactly one formula in the prompt's notation) is the headline; <b>lenient</b> (formula found in prose, other notations) is shown beside it. Sections: "#,
        if sets.is_empty() {
            "–".to_string()
        } else {
            escape(&sets.join(", "))
        }
    );
    for d in &datasets {
        let _ = write!(out, r##"<a href="#{0}">{0}</a> · "##, escape(d));
    }
    out.push_str(r##"<a href="#outcomes">outcomes</a> · <a href="#cost">cost</a> · <a href="#examples">examples</a></p>"##);
    for d in &datasets {
        dataset_section(&mut out, input, d, rounds);
    }
    outcome_table(&mut out, input.summary);
    cost_table(&mut out, input.summary);
    judge_table(&mut out, input.judgements);
    for c in &input.correlations {
        let _ = write!(
            out,
            r#"<h2 id="a1-{2}">Correlation with {} (A1): {}</h2><p>Our score: zero-shot, round-1 accuracy on {} with complexity ≤ {} (App. K.4). Pearson ρ = {:.3}, p = {:.2e}{}; {} models.</p><div class="fig">{}</div>"#,
            escape(&c.other_name),
            escape(&c.dataset),
            escape(&c.dataset),
            c.max_complexity,
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
    examples(&mut out, input, &datasets);
    out.push_str("</body></html>\n");
    out
}
