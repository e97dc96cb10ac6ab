//! Breaking complexity: each group's accuracy (A3) fitted against
//! complexity by a logistic curve, drawn with its band, and the complexity
//! at which the curve falls through 50%, with its interval.

use crate::charts::series_name;
use crate::svg::{escape, LineChart, Series};
use crate::{pct, ReportInput};
use autoeval_metrics::breaking::{Crossing, LogisticFit, NoFit, Tally};
use autoeval_metrics::summary::Group;
use autoeval_proto::Verdict;
use std::fmt::Write;

/// The confidence of the band and of the crossing's interval.
const CONFIDENCE: f64 = 0.95;

/// Points drawn along each fitted curve.
const STEPS: usize = 40;

/// A group's A3 rounds at each complexity.
fn tallies(group: &Group) -> Vec<Tally> {
    group
        .rows
        .iter()
        .map(|r| Tally {
            complexity: f64::from(r.complexity),
            successes: r.counts.get(Verdict::Equivalent),
            trials: r.counts.measured(),
        })
        .collect()
}

/// The complexities a group's rows span.
fn span(group: &Group) -> Option<(f64, f64)> {
    let lo = group.rows.iter().map(|r| r.complexity).min()?;
    let hi = group.rows.iter().map(|r| r.complexity).max()?;
    Some((f64::from(lo), f64::from(hi)))
}

/// The fitted curves of `groups` with their 95% bands, when any fits.
pub(crate) fn chart(
    input: &ReportInput,
    groups: &[&Group],
    rounds: bool,
    dataset: &str,
    axis: &str,
) -> Option<LineChart> {
    let mut series = Vec::new();
    for g in groups {
        let (Ok(fit), Some((lo, hi))) = (LogisticFit::fit(&tallies(g)), span(g)) else {
            continue;
        };
        let mut s = Series {
            name: series_name(g, rounds),
            colour: input.colour_of(&g.key.model),
            dash: crate::charts::dash_of(&g.key.prompt, g.key.round),
            ..Series::default()
        };
        for step in 0..=STEPS {
            let x = lo + (hi - lo) * step as f64 / STEPS as f64;
            let (low, high) = fit.band(x, CONFIDENCE);
            s.points.push((x, fit.at(x)));
            s.band.push((x, low, high));
            s.tips.push(format!(
                "complexity {x:.1}: fitted {} [95% band {}, {}]",
                pct(Some(fit.at(x))),
                pct(Some(low)),
                pct(Some(high))
            ));
        }
        series.push(s);
    }
    (!series.is_empty()).then(|| LineChart {
        title: format!("{dataset}: accuracy (A3), logistic fit"),
        x_label: axis.into(),
        y_label: "fitted share of rounds equivalent".into(),
        y_range: (0.0, 1.0),
        band_label: Some("95% pointwise band of the fit (fixed-time)".into()),
        series,
    })
}

/// What a group's fit says of the 50% crossing, as a table cell.
fn crossing_cell(fit: &Result<LogisticFit, NoFit>, span: Option<(f64, f64)>) -> String {
    let fit = match fit {
        Ok(fit) => fit,
        Err(why) => return format!("no fit: {why}"),
    };
    let inside = |x: f64| span.is_some_and(|(lo, hi)| lo <= x && x <= hi);
    match fit.crossing(CONFIDENCE) {
        None => "flat fit: no crossing".into(),
        Some(Crossing::Unbounded { at }) if inside(at) => {
            format!("{at:.1}, interval unbounded (the slope is not told apart from flat)")
        }
        Some(Crossing::Unbounded { .. }) => {
            "none in reach: the slope is not told apart from flat".into()
        }
        Some(Crossing::Bounded { at, low, high }) => format!(
            "<b>{at:.1}</b> [{low:.1}, {high:.1}]{}",
            if inside(at) {
                ""
            } else {
                " (beyond the complexities run)"
            }
        ),
    }
}

/// The table of each group's crossing, under the dataset's charts.
pub(crate) fn table(out: &mut String, groups: &[&Group], rounds: bool) {
    out.push_str(r#"<table><tr><th class="l">model · prompt</th><th>rounds</th><th>slope (log-odds per step)</th><th class="l">complexity at 50% accuracy [95% CI]</th></tr>"#);
    for g in groups {
        let tallies = tallies(g);
        let fit = LogisticFit::fit(&tallies);
        let slope = fit.as_ref().map_or("—".to_string(), |f| {
            let se = f.covariance.2.sqrt();
            format!("{:+.3} ± {:.3}", f.slope, 1.96 * se)
        });
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td>{}</td><td>{slope}</td><td class="l">{}</td></tr>"#,
            escape(&series_name(g, rounds)),
            tallies.iter().map(|t| t.trials).sum::<usize>(),
            crossing_cell(&fit, span(g)),
        );
    }
    out.push_str("</table>");
    out.push_str(r#"<p class="note">Breaking complexity: accuracy fitted against complexity by logistic regression on the rounds at each complexity (maximum likelihood); the complexity at which the fitted accuracy is 50%, with Fieller's 95% interval for it. These intervals and the fit's band are <b>fixed-time</b>: valid for the records as they stand, not at every look at a run as it goes (docs/METRICS.md).</p>"#);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds at complexities 1..=10 whose accuracy falls through 50% at 6.
    fn falling(n: usize) -> Vec<Tally> {
        (1..=10)
            .map(|c| Tally {
                complexity: f64::from(c),
                successes: (n as f64 / (1.0 + (0.8 * (f64::from(c) - 6.0)).exp())).round() as usize,
                trials: n,
            })
            .collect()
    }

    #[test]
    fn a_cell_gives_the_crossing_with_its_interval_or_says_why_there_is_none() {
        let cell = crossing_cell(&LogisticFit::fit(&falling(1000)), Some((1.0, 10.0)));
        assert!(cell.starts_with("<b>6.0</b> ["), "{cell}");
        assert!(!cell.contains("beyond"), "{cell}");
        let beyond = crossing_cell(&LogisticFit::fit(&falling(1000)), Some((1.0, 4.0)));
        assert!(
            beyond.ends_with("(beyond the complexities run)"),
            "{beyond}"
        );
        let all = vec![
            Tally {
                complexity: 1.0,
                successes: 5,
                trials: 5,
            },
            Tally {
                complexity: 2.0,
                successes: 5,
                trials: 5,
            },
        ];
        assert_eq!(
            crossing_cell(&LogisticFit::fit(&all), Some((1.0, 2.0))),
            "no fit: every round succeeded"
        );
    }
}
