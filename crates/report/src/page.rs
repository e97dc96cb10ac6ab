//! The whole report page: its style, its settings and tables, and one
//! section of charts per dataset.

use crate::charts::{few_shot_gain, fig, judge_f1, other_metrics, score_series};
use crate::svg::{self, escape, LineChart};
use crate::{examples, pairwise, tables, ReportInput};
use autoeval_metrics::summary::Group;
use autoeval_proto::Verdict;
use std::fmt::Write;

/// The page's CSS, inline so that the page opens offline.
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

/// One dataset's section: its charts, then accuracy by its other metrics.
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
    if let Some(chart) = crate::breaking::chart(input, &groups, rounds, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    if let Some(chart) = few_shot_gain(input, &groups, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    if let Some(chart) = judge_f1(input, dataset, axis) {
        out.push_str(&fig(&chart));
    }
    out.push_str("</div>");
    out.push_str(r#"<p class="note">Each point pools all batches and repeats at one complexity; hover over it for its n. Shaded bands are 95% Wilson confidence intervals of those shares (the spread across batches is in summary.json). Colours are models, dashes prompt styles (solid zero-shot, dashed few-shot).</p>"#);
    crate::breaking::table(out, &groups, rounds);
    other_metrics(out, input, dataset);
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
    if input.summary.broken_chains > 0 {
        let _ = write!(
            out,
            r#"<p class="note"><b>{} unit(s) have a round missing before a later one recorded</b>: their chains are not whole, so the round curves and the chains' scores below count rounds that translated an answer the run no longer holds. Resume the run to redo them from the missing round.</p>"#,
            input.summary.broken_chains
        );
    }
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
        r##"</p><p class="setting">Prompt set: <b>{}</b>. Parsing: <b>strict</b> (the paper's: exactly one formula in the prompt's notation) is the headline; <b>lenient</b> (formula found in prose, other notations) is shown beside it. Sections: {}<a href="#leaderboard">leaderboard</a> · "##,
        if sets.is_empty() {
            "–".to_string()
        } else {
            escape(&sets.join(", "))
        },
        if input.decided.is_some() {
            r##"<a href="#decided">decided</a> · "##
        } else {
            ""
        }
    );
    for d in &datasets {
        let _ = write!(out, r##"<a href="#{0}">{0}</a> · "##, escape(d));
    }
    out.push_str(r##"<a href="#outcomes">outcomes</a> · <a href="#closeness">closeness of misses</a> · <a href="#cost">cost</a> · <a href="#examples">examples</a></p>"##);
    if let Some(decisions) = input.decided {
        crate::decided::html(&mut out, decisions);
    }
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
