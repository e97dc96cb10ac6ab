//! The report's tables: the run's settings, the leaderboards, outcomes,
//! tokens and cost, and the judges' scores.

use crate::svg::{escape, PALETTE};
use crate::{pct, ReportInput};
use autoeval_metrics::judge::{confusion_by_complexity, Confusion};
use autoeval_metrics::summary::{leaderboard, Summary};
use autoeval_proto::{JudgeRecord, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A cost in USD, or "unknown" when a round's cost is not known.
pub fn usd(cost: Option<f64>) -> String {
    match cost {
        Some(0.0) => "0".into(),
        Some(c) if c < 1.0 => format!("{c:.4}"),
        Some(c) => format!("{c:.2}"),
        None => "unknown".into(),
    }
}

/// The run's settings, as the command line resolved them.
pub fn settings(out: &mut String, input: &ReportInput) {
    if input.settings.is_empty() {
        return;
    }
    out.push_str(r#"<table class="settings">"#);
    for (name, value) in &input.settings {
        let _ = write!(
            out,
            r#"<tr><th class="l">{}</th><td class="l">{}</td></tr>"#,
            escape(name),
            escape(value)
        );
    }
    out.push_str("</table>");
}

/// A 95% interval drawn on [`from`, 1], with the point estimate.
fn interval_bar(share: f64, (lo, hi): (f64, f64), from: f64, colour: &str) -> String {
    let x = |v: f64| 4.0 + (v - from) / (1.0 - from).max(1e-9) * 192.0;
    format!(
        r##"<svg class="ci" viewBox="0 0 200 14" width="200" height="14"><line x1="4" x2="196" y1="7" y2="7" stroke="#ddd"/><line x1="{:.1}" x2="{:.1}" y1="7" y2="7" stroke="{colour}" stroke-width="4"/><circle cx="{:.1}" cy="7" r="3.5" fill="#222"/></svg>"##,
        x(lo),
        x(hi),
        x(share)
    )
}

/// The leaderboard of each dataset: which model is better, by how much, how sure.
pub fn leaderboards(out: &mut String, input: &ReportInput, datasets: &[String]) {
    out.push_str(r#"<h2 id="leaderboard">Leaderboard</h2><p class="note">Round 1 of each model and prompt style, best accuracy first. Brackets and bars are 95% confidence intervals (Wilson score) over the n rounds measured. "=" before a rank marks a tie: the paired test on the same items cannot tell that line's A3 from the line above's after Holm's adjustment (see Pairwise comparisons). With repeats, "clustered by item" is the interval that counts each item once, which is the honest one; Wilson's treats repeats as independent. Parsing is strict (the paper's).</p>"#);
    for d in datasets {
        let board = leaderboard(input.summary, d);
        // The bars' scale starts at the lowest interval, rounded down to 10%,
        // so that narrow intervals near the top can still be told apart.
        let lowest = board
            .iter()
            .filter_map(|s| s.accuracy.map(|a| a.1 .0))
            .fold(1.0_f64, f64::min);
        let from = ((lowest * 10.0).floor() / 10.0).min(0.9);
        let _ = write!(
            out,
            r#"<h3>{}</h3><table class="board"><tr><th>#</th><th class="l">model</th><th class="l">prompt</th><th>n</th><th>A3 accuracy [95% CI]</th><th>clustered by item</th><th class="l">A3 and its interval, on {:.0}–100%</th><th>A2 compliance [95% CI]</th><th>tokens</th><th>cost USD</th><th>latency p50 ms</th><th>p90</th></tr>"#,
            escape(d),
            100.0 * from
        );
        for (rank, s) in board.iter().enumerate() {
            let with_ci = |x: Option<(f64, (f64, f64))>| match x {
                Some((v, (lo, hi))) => {
                    format!("{} [{}, {}]", pct(Some(v)), pct(Some(lo)), pct(Some(hi)))
                }
                None => "–".into(),
            };
            let colour = PALETTE[input.colour_of(&s.model) % PALETTE.len()];
            let bar = s
                .accuracy
                .map_or(String::new(), |(v, ci)| interval_bar(v, ci, from, colour));
            let _ = write!(
                out,
                r#"<tr><td>{}{}</td><td class="l"><span class="swatch" style="background:{colour}"></span>{}</td><td class="l">{}</td><td>{}</td><td><b>{}</b></td><td>{}</td><td class="l">{bar}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td></tr>"#,
                if s.tied_with_above { "=" } else { "" },
                rank + 1,
                escape(&s.model),
                escape(&s.prompt),
                s.n,
                with_ci(s.accuracy),
                s.accuracy_clustered.map_or("–".into(), |c| format!(
                    "{} [{}, {}]",
                    pct(Some(c.mean)),
                    pct(Some(c.low)),
                    pct(Some(c.high))
                )),
                with_ci(s.compliance),
                s.tokens,
                usd(s.cost),
                s.latency_ms.p50,
                s.latency_ms.p90,
            );
        }
        out.push_str("</table>");
    }
}

/// Counts of every outcome per dataset, model, prompt style and round.
pub fn outcomes(out: &mut String, summary: &Summary) {
    out.push_str(r#"<h2 id="outcomes">Outcomes</h2><table><tr><th class="l">dataset</th><th class="l">model</th><th class="l">prompt</th><th>round</th>"#);
    for v in Verdict::ALL {
        let _ = write!(out, "<th>{}</th>", v.name());
    }
    out.push_str("<th>stopped</th><th>n</th><th>copied</th><th>truncated</th><th>reference disagrees</th><th>A2 compliance (strict)</th><th>A3 accuracy (strict)</th><th>A2 lenient</th><th>A3 lenient</th></tr>");
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
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            g.counts.stopped,
            g.counts.measured(),
            g.copied,
            g.truncated,
            g.reference_disagrees,
            pct(g.compliance),
            pct(g.accuracy),
            pct(g.lenient_compliance),
            pct(g.lenient_accuracy)
        );
    }
    out.push_str(r#"</table><p class="note">Counts are of the strict reading. "n" is the denominator of A2 and A3: every verdict but API failures and verifier errors, plus "stopped", the units whose earlier round was not equivalent, so this round was not run. A unit whose round ended in an API failure or verifier error leaves that round's denominators and every later round's; timeouts (a prover out of time or memory) and unknowns stay in. "truncated": non-compliant answers cut at the token cap. "reference disagrees": under <code>--protocol reference</code>, regular-expression answers the public implementation's check would have decided otherwise (its verdict is in the record's <code>reference_verdict</code>). docs/METRICS.md defines each.</p>"#);
}

/// Tokens, cost and time per model and prompt style, over all datasets;
/// percentiles are computed from every record, not combined from datasets'.
pub fn cost(out: &mut String, rows: &BTreeMap<(String, String), crate::CostRow>) {
    out.push_str(r#"<h2 id="cost">Tokens, cost and time</h2><table><tr><th class="l">model</th><th class="l">prompt</th><th>rounds</th><th>prompt tokens</th><th>completion tokens</th><th>of them thinking</th><th>cost USD</th><th>of it thinking</th><th>latency p50 ms</th><th>p90</th><th>p99</th><th>verify p50 ms</th><th>p99</th><th>max</th></tr>"#);
    for ((model, prompt), row) in rows {
        let latency = row.latency.percentiles();
        let verify = row.verify.percentiles();
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td></tr>"#,
            escape(model),
            escape(prompt),
            row.rounds,
            row.prompt_tokens,
            row.completion_tokens,
            row.reasoning_tokens,
            usd(row.cost.value()),
            usd(row.reasoning_cost),
            latency.p50,
            latency.p90,
            latency.p99,
            verify.p50,
            verify.p99,
            verify.max,
        );
    }
    out.push_str(r#"</table><p class="note">Latency is the model calls of one round trip (I and A); a cost is "unknown" when the price table has no entry for the model; a reply without reported usage is costed by an estimate (four characters a token). "Of them thinking": the completion tokens a reasoning model spent thinking, as its provider reported them (billed as output), and what they cost.</p>"#);
}

/// A4: each judge's confusion counts and scores per dataset, with Fig. 20's
/// classes and the pairs judged.
pub fn judges(out: &mut String, judgements: &[JudgeRecord]) {
    if judgements.is_empty() {
        return;
    }
    out.push_str(r#"<h2 id="a4">LLM as equivalence judge (A4)</h2><table><tr><th class="l">dataset</th><th class="l">judge</th><th class="l">style</th><th class="l">pairs of</th><th>positive</th><th>negative</th><th>incompliant</th><th>TP</th><th>FP</th><th>TN</th><th>FN</th><th>IP</th><th>IN</th><th>incompliant: yes / no / unanswered</th><th>API failures</th><th>coverage</th><th>precision</th><th>recall</th><th>TNR</th><th>F1</th><th>F1, unanswered wrong</th></tr>"#);
    // One line per source of pairs: a judge asked about two models' answers
    // is scored on each apart.
    let source = |j: &JudgeRecord| {
        format!(
            "{} · {} · round {}",
            j.task.model, j.task.prompt, j.task.round
        )
    };
    let sources: std::collections::BTreeSet<String> = judgements.iter().map(source).collect();
    for pairs_of in sources {
        let of_source: Vec<JudgeRecord> = judgements
            .iter()
            .filter(|j| source(j) == pairs_of)
            .cloned()
            .collect();
        for ((dataset, judge, style), rows) in confusion_by_complexity(&of_source) {
            let mut c = Confusion::default();
            for r in rows.values() {
                c.merge(r);
            }
            let _ = write!(
                out,
                r#"<tr><td class="l">{}</td><td class="l">{}</td><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                escape(&dataset),
                escape(&judge),
                escape(&style),
                escape(&pairs_of),
                c.positives(),
                c.negatives(),
                c.non_compliant_pairs(),
                c.tp,
                c.fp,
                c.tn,
                c.fn_,
                c.unanswered_positive,
                c.unanswered_negative,
                c.non_compliant_yes,
                c.non_compliant_no,
                c.non_compliant_unanswered,
                c.api_failures,
                pct(c.coverage()),
                pct(c.precision()),
                pct(c.recall()),
                pct(c.tnr()),
                pct(c.f1()),
                pct(c.f1_unanswered_wrong())
            );
        }
    }
    out.push_str(r#"</table><p class="note">As App. L and Fig. 20: positive and negative are compliant φ1 proved equivalent or not; incompliant φ1 are asked too and counted apart. IP and IN: answers with no yes or no, for positive and negative labels (Tables 19–20). Coverage: answered / asked. F1 is over the answered pairs; "F1, unanswered wrong" counts IP as false negatives and IN as false positives.</p>"#);
}

/// The closeness of the misses (paper 003) beside the binary accuracy: how
/// far compliant but non-equivalent answers were from φ0.
pub fn closeness(out: &mut String, rows: &[autoeval_metrics::closeness::Misses]) {
    if rows.is_empty() {
        return;
    }
    out.push_str(r#"<h2 id="closeness">How close the misses came</h2><table><tr><th class="l">dataset</th><th class="l">model</th><th>misses</th><th>LE median [IQR]</th><th>LE by fifths 0→1</th><th>Smatch++ median [IQR]</th><th>BLEU median [IQR]</th></tr>"#);
    let quartiles = |q: Option<autoeval_metrics::closeness::Quartiles>| {
        q.map_or("–".into(), |q| {
            format!("{:.2} [{:.2}, {:.2}]", q.median, q.q1, q.q3)
        })
    };
    for r in rows {
        let top = r.le_histogram.iter().copied().max().unwrap_or(0).max(1);
        let bars: String = r
            .le_histogram
            .iter()
            .map(|&k| {
                const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
                if k == 0 {
                    ' '
                } else {
                    LEVELS[(k * 7).div_ceil(top).min(7)]
                }
            })
            .collect();
        let title = r.le_histogram.map(|k| k.to_string()).join(", ");
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td class="spark" title="misses per fifth: {title}">{bars}</td><td>{}</td><td>{}</td></tr>"#,
            escape(&r.dataset),
            escape(&r.model),
            r.n,
            quartiles(r.le),
            quartiles(r.smatch),
            quartiles(r.bleu),
        );
    }
    out.push_str(r#"</table><p class="note">Round 1, strict reading: every compliant answer that is not equivalent to φ0, scored against φ0 with paper 003's metrics. LE is the share of truth-table rows on which the two agree under the best renaming of atoms (1: the same truth function up to names); Smatch++ compares the formulas as graphs; BLEU their tokens. BERTScore needs an encoder and is computed only by <code>autoeval closeness</code>. Regular expressions have no such scores.</p>"#);
}
