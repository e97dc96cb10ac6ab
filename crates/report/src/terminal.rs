//! The run's summary as a terminal table.

use crate::{pairwise, pct};
use autoeval_metrics::summary::Summary;
use autoeval_proto::Verdict;
use std::fmt::Write;

/// A terminal table: one line per dataset, model, prompt style and round.
/// `n` is the denominator of the rates beside it: the verdict counts from
/// `equiv` to `stop` add up to it; `api` and `verr` stand outside it;
/// `cut` is the share of the rounds answered that the token cap cut.
/// Below it, each model that reported thinking: its thinking tokens and
/// what they cost.
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
        "{:<12} {:<w$} {:<9} {:>2} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>5} {:>5} {:>5} {:>8} {:>6} {:>8} {:>8} {:>8}",
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
        "cut",
        "A3",
        "A2 len",
        "A3 len"
    );
    for g in &summary.groups {
        let c = &g.counts;
        let _ = writeln!(
            out,
            "{:<12} {:<w$} {:<9} {:>2} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>5} {:>5} {:>5} {:>8} {:>6} {:>8} {:>8} {:>8}",
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
            pct(g.truncated_share()),
            pct(g.accuracy),
            pct(g.lenient_compliance),
            pct(g.lenient_accuracy),
        );
    }
    if summary.broken_chains > 0 {
        let _ = writeln!(
            out,
            "warning: {} {} a round missing before a later one recorded: {} not whole (resume the run to redo {})",
            summary.broken_chains,
            if summary.broken_chains == 1 { "unit has" } else { "units have" },
            if summary.broken_chains == 1 { "its chain is" } else { "their chains are" },
            if summary.broken_chains == 1 { "it" } else { "them" }
        );
    }
    for m in by_model(summary).iter().filter(|m| m.reasoning_tokens > 0) {
        let cost = m
            .reasoning_cost
            .map_or(String::new(), |c| format!(", ${c:.4}"));
        let _ = writeln!(
            out,
            "thinking: {} spent {} of its {} output tokens thinking ({}{cost})",
            m.model,
            m.reasoning_tokens,
            m.completion_tokens,
            pct(Some(
                m.reasoning_tokens as f64 / m.completion_tokens.max(1) as f64
            )),
        );
    }
    out.push_str(&pairwise::terminal(summary));
    out
}

/// The share of a model's answers cut at the token cap past which its
/// scores say more about the cap than about the model.
pub const TRUNCATION_ADVICE_SHARE: f64 = 0.05;

/// One line for each model whose answers the token cap cut more often than
/// [`TRUNCATION_ADVICE_SHARE`]: the model, the share, and the setting to raise.
pub fn truncation_advice(summary: &Summary) -> Vec<String> {
    by_model(summary)
        .iter()
        .filter_map(|m| {
            let share = m.truncated as f64 / m.answered.max(1) as f64;
            (m.answered > 0 && share > TRUNCATION_ADVICE_SHARE).then(|| {
                let thinking = if m.reasoning_tokens > 0 {
                    format!(
                        "; {} of its output tokens were thinking, so a lower reasoning-effort or thinking-budget also helps",
                        pct(Some(m.reasoning_tokens as f64 / m.completion_tokens.max(1) as f64))
                    )
                } else {
                    String::new()
                };
                format!(
                    "warning: the token cap cut {} of {}'s answers ({} of {}), which counts them non-compliant: raise its max-tokens (`?max-tokens=N` after the spec, or `max-tokens = N` in its [model.\"SPEC\"] table){thinking}",
                    pct(Some(share)),
                    m.model,
                    m.truncated,
                    m.answered,
                )
            })
        })
        .collect()
}

/// One model's sums over its groups.
struct ModelSums {
    model: String,
    answered: usize,
    truncated: usize,
    completion_tokens: u64,
    reasoning_tokens: u64,
    reasoning_cost: Option<f64>,
}

/// Each model's sums, in the order the summary names them.
fn by_model(summary: &Summary) -> Vec<ModelSums> {
    let mut out: Vec<ModelSums> = Vec::new();
    for g in &summary.groups {
        let at = match out.iter().position(|m| m.model == g.key.model) {
            Some(i) => i,
            None => {
                out.push(ModelSums {
                    model: g.key.model.clone(),
                    answered: 0,
                    truncated: 0,
                    completion_tokens: 0,
                    reasoning_tokens: 0,
                    reasoning_cost: None,
                });
                out.len() - 1
            }
        };
        let m = &mut out[at];
        m.answered += g.counts.measured().saturating_sub(g.counts.stopped);
        m.truncated += g.truncated;
        m.completion_tokens += g.completion_tokens;
        m.reasoning_tokens += g.reasoning_tokens;
        if let Some(c) = g.reasoning_cost {
            m.reasoning_cost = Some(m.reasoning_cost.unwrap_or(0.0) + c);
        }
    }
    out
}
