//! The pairwise comparisons of each dataset: by how much one arm beats
//! another on the same items, how sure the run is, and whether the
//! difference survives Holm's adjustment over all pairs.

use crate::svg::escape;
use autoeval_metrics::compare::{Comparison, Metric, Reading};
use autoeval_metrics::summary::Summary;
use std::fmt::Write;

/// Round 1, strict reading, of `metric` on `dataset`: the comparisons shown.
fn shown<'a>(
    summary: &'a Summary,
    dataset: &'a str,
    metric: Metric,
) -> impl Iterator<Item = &'a Comparison> {
    summary.comparisons.iter().filter(move |c| {
        c.dataset == dataset && c.round == 1 && c.reading == Reading::Strict && c.metric == metric
    })
}

/// A signed difference in percentage points.
fn points(x: f64) -> String {
    format!("{:+.1}", 100.0 * x).replace('-', "−")
}

/// A difference with its interval, in percentage points.
pub fn difference_text(c: &Comparison) -> String {
    let d = &c.overall;
    match (d.low, d.high) {
        (Some(lo), Some(hi)) => {
            format!("{} [{}, {}]", points(d.difference), points(lo), points(hi))
        }
        _ => points(d.difference),
    }
}

/// An arm's name.
fn arm(model: &str, prompt: &str) -> String {
    format!("{model} ({prompt})")
}

/// A p-value to four decimals, or below a floor.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

/// One comparison's cells, as both tables show them: A, B, items, A − B
/// with its interval, A better, B better, p, Holm p, separated.
fn cells(c: &Comparison) -> [String; 9] {
    [
        arm(&c.a.model, &c.a.prompt),
        arm(&c.b.model, &c.b.prompt),
        c.overall.items.to_string(),
        difference_text(c),
        c.overall.a_better.to_string(),
        c.overall.b_better.to_string(),
        p_text(c.overall.p_value),
        p_text(c.adjusted_p),
        if c.separated { "yes" } else { "no" }.to_string(),
    ]
}

/// The pairwise tables of the report, one per dataset.
pub fn html(out: &mut String, summary: &Summary, datasets: &[String]) {
    out.push_str(r#"<h2 id="pairwise">Pairwise comparisons</h2><p class="note">Round 1, strict reading. Each pair of models (and prompt styles) on the items both answered: A minus B in percentage points with its 95% interval (normal, from the items' differences, so repeats of an item count once), the items on which each did better, the exact two-sided sign test on those items (McNemar's exact test when there is one repeat), and that p-value after Holm's adjustment over every pair of the dataset. "separated": the adjusted p is below 0.05.</p>"#);
    for d in datasets {
        for metric in [Metric::A3, Metric::A2] {
            let rows: Vec<&Comparison> = shown(summary, d, metric).collect();
            if rows.is_empty() {
                continue;
            }
            let name = match metric {
                Metric::A3 => "A3 accuracy",
                Metric::A2 => "A2 compliance",
            };
            let _ = write!(
                out,
                r#"<h3>{} — {name}</h3><table class="pairs"><tr><th class="l">A</th><th class="l">B</th><th>items</th><th>A − B, pp [95% CI]</th><th>A better</th><th>B better</th><th>p</th><th>Holm p</th><th>separated</th></tr>"#,
                escape(d)
            );
            for c in rows {
                let [a, b, rest @ ..] = cells(c);
                let _ = write!(
                    out,
                    r#"<tr><td class="l">{}</td><td class="l">{}</td>"#,
                    escape(&a),
                    escape(&b)
                );
                for cell in rest {
                    let _ = write!(out, "<td>{}</td>", escape(&cell));
                }
                out.push_str("</tr>");
            }
            out.push_str("</table>");
        }
    }
}

/// The same A3 comparisons for a terminal.
pub fn terminal(summary: &Summary) -> String {
    let mut out = String::new();
    let rows: Vec<&Comparison> = summary
        .comparisons
        .iter()
        .filter(|c| c.round == 1 && c.reading == Reading::Strict && c.metric == Metric::A3)
        // Two models in one style, or two styles of one model; the report has every pair.
        .filter(|c| c.a.prompt == c.b.prompt || c.a.model == c.b.model)
        .collect();
    if rows.is_empty() {
        return out;
    }
    let width =
        |f: fn(&Comparison) -> String| rows.iter().map(|c| f(c).chars().count()).max().unwrap_or(1);
    let (wa, wb) = (
        width(|c| arm(&c.a.model, &c.a.prompt)),
        width(|c| arm(&c.b.model, &c.b.prompt)),
    );
    let _ = writeln!(
        out,
        "\npairwise A3, round 1, strict (A − B on the items both answered; Holm-adjusted p over every pair, all in the report):"
    );
    let _ = writeln!(
        out,
        "{:<12} {:<wa$} {:<wb$} {:>6} {:>26} {:>5} {:>5} {:>9} {:>9}  separated",
        "dataset", "A", "B", "items", "A − B pp [95% CI]", "A>B", "B>A", "p", "Holm p"
    );
    for c in rows {
        let [a, b, items, diff, a_better, b_better, p, holm, separated] = cells(c);
        let _ = writeln!(
            out,
            "{:<12} {a:<wa$} {b:<wb$} {items:>6} {diff:>26} {a_better:>5} {b_better:>5} {p:>9} {holm:>9}  {separated}",
            c.dataset,
        );
    }
    out
}
