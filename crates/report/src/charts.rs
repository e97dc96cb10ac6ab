//! The page's charts: A2 and A3 by complexity with their confidence bands,
//! few-shot's gain, A4's F1, and accuracy against φ0's other metrics.

use crate::svg::{escape, LineChart, Series};
use crate::{pct, ByMetric, ReportInput};
use autoeval_metrics::judge::confusion_by_complexity;
use autoeval_metrics::summary::{wilson_interval, Counts, Group, Row};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The dash of a series: prompt styles (and later rounds) differ by dash.
pub(crate) fn dash_of(prompt: &str, round: u32) -> usize {
    usize::from(prompt == "few-shot") + 2 * (round.saturating_sub(1) as usize)
}

/// A score of a row: its numerator and denominator.
type RowScore = fn(&Row) -> (usize, usize);

/// A group's name in a legend: its model and prompt style, and its round when there are several.
pub(crate) fn series_name(g: &Group, rounds: bool) -> String {
    if rounds {
        format!("{} · {} · round {}", g.key.model, g.key.prompt, g.key.round)
    } else {
        format!("{} · {}", g.key.model, g.key.prompt)
    }
}

/// A chart in its frame.
pub(crate) fn fig(chart: &LineChart) -> String {
    format!(r#"<div class="fig">{}</div>"#, chart.render())
}

/// A score of each group as a series by complexity, with its 95% Wilson band.
pub(crate) fn score_series(
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

/// Fig. 16: few-shot minus zero-shot accuracy, per model (round 1).
pub(crate) fn few_shot_gain(
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
pub(crate) fn judge_f1(input: &ReportInput, dataset: &str, axis: &str) -> Option<LineChart> {
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
pub(crate) fn other_metrics(out: &mut String, input: &ReportInput, dataset: &str) {
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
