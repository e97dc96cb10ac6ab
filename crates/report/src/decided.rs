//! The report's panel of a run `--until decided`: what it decided, after
//! how many units, beside the plan's, each figure with its anytime-valid
//! interval drawn as a bar.

use crate::svg::escape;
use autoeval_sequential::Decisions;
use std::fmt::Write;

/// A bar of `[lower, upper]` on a scale from `low` to `high`, the estimate marked.
fn bar(lower: f64, estimate: f64, upper: f64, low: f64, high: f64) -> String {
    let at = |x: f64| 2.0 + 196.0 * ((x - low) / (high - low)).clamp(0.0, 1.0);
    format!(
        r##"<svg width="200" height="14" role="img"><line x1="{:.1}" y1="7" x2="{:.1}" y2="7" stroke="#4477aa" stroke-width="4"/><circle cx="{:.1}" cy="7" r="3" fill="#222"/>{}</svg>"##,
        at(lower),
        at(upper),
        at(estimate),
        if low < 0.0 {
            format!(
                r##"<line x1="{0:.1}" y1="0" x2="{0:.1}" y2="14" stroke="#999"/>"##,
                at(0.0)
            )
        } else {
            String::new()
        }
    )
}

/// The panel, when the run was one `--until decided`.
pub fn html(out: &mut String, decisions: &Decisions) {
    let share = 100.0 * decisions.units as f64 / decisions.plan_units.max(1) as f64;
    let _ = write!(
        out,
        r#"<h2 id="decided">Decided with fewer calls</h2><p>{} after {} wave{}: <b>{} of the plan's {} units ({share:.1}%)</b>. Asked: {}. The intervals of this panel are <b>anytime-valid</b> confidence sequences for <b>the plan's own figures</b> (each figure's mean over the plan's items), valid at every wave at once (docs/METRICS.md); every other interval of this report is <b>fixed-time</b> and speaks of the models beyond these items, computed as if the items drawn had been fixed in advance. A question marked <i>spent</i> was decided only because every item was drawn: its figure is the full plan's, exact for these items, and the pairwise table's test says whether it holds beyond them.</p>{}{}"#,
        if decisions.all_decided {
            "Everything asked was decided"
        } else {
            "Not everything asked was decided before the plan was spent"
        },
        decisions.waves,
        if decisions.waves == 1 { "" } else { "s" },
        decisions.units,
        decisions.plan_units,
        escape(&decisions.design.line()),
        best(decisions),
        decisions.spend.as_ref().map_or(String::new(), |s| format!(
            "<p>Paid: {}; the full plan's figures are each model's rate per unit times its plan.</p>",
            escape(&s.line())
        ))
    );
    out.push_str(r#"<table><tr><th class="l">dataset</th><th class="l">question</th><th>estimate</th><th>interval</th><th class="l"></th><th>decided after</th></tr>"#);
    for d in decisions.quantities.iter().filter(|d| d.asked) {
        let (question, low) = match &d.versus {
            None => (format!("{} of {}", d.what, escape(&d.model)), 0.0),
            Some(v) => (
                format!(
                    "{} {} {}",
                    escape(&d.model),
                    escape(d.order.as_deref().unwrap_or("?")),
                    escape(v)
                ),
                -1.0,
            ),
        };
        // Counts and fixed words only: nothing in it to escape.
        let when = d
            .when("<i>spent</i>")
            .unwrap_or_else(|| "undecided".to_string());
        // A level is a share, a difference signed.
        let pp = |x: f64| {
            if low < 0.0 {
                format!("{:+.1}", 100.0 * x)
            } else {
                format!("{:.1}", 100.0 * x)
            }
        };
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{question}</td><td>{}</td><td>[{}, {}]</td><td class="l">{}</td><td>{when}</td></tr>"#,
            escape(&d.dataset),
            pp(d.estimate),
            pp(d.interval.lower),
            pp(d.interval.upper),
            bar(d.interval.lower, d.estimate, d.interval.upper, low, 1.0),
        );
    }
    out.push_str(r#"</table><p class="note">Levels in %, differences of A3 in percentage points (the bar's tick is 0). A question stays decided once decided; its interval keeps narrowing while its models answer other questions' waves.</p>"#);
}

/// The best model of each dataset, under `--decide best`.
fn best(decisions: &Decisions) -> String {
    if decisions.best.is_empty() {
        return String::new();
    }
    let named: Vec<String> = decisions
        .best
        .iter()
        .map(|b| {
            format!(
                "{}: <b>{}</b>",
                escape(&b.dataset),
                escape(b.model.as_deref().unwrap_or("undecided"))
            )
        })
        .collect();
    format!("<p>Best by A3: {}.</p>", named.join("; "))
}
