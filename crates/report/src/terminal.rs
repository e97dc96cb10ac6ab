//! The run's summary as a terminal table.

use crate::{pairwise, pct};
use autoeval_metrics::summary::Summary;
use autoeval_proto::Verdict;
use std::fmt::Write;

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
