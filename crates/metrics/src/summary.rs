//! Metrics A2 (compliance) and A3 (accuracy) from result records, per
//! dataset, model, prompt style, round and complexity, with the spread
//! across batches and repeats, and the accounting of tokens, cost and time.
//!
//! Every denominator is defined once, here, and written out in
//! docs/METRICS.md. At round r a unit counts from round 1 on: asked at r, or
//! stopped before r (an earlier round was not equivalent), which is a
//! failure at r. API failures and verifier errors tell nothing about a
//! model: a unit whose round k ended in one leaves the denominators of
//! round k and of every later round, and is counted apart. Timeouts
//! (including a prover out of memory) and unknowns stay in.

use crate::compare::{Metric, Reading};
use autoeval_proto::{ResultRecord, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many rounds ended in each verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Records by verdict name.
    pub verdicts: BTreeMap<Verdict, usize>,
    /// Units that stopped before this round (an earlier round was not
    /// equivalent): in the denominators, a failure at this round.
    #[serde(default)]
    pub stopped: usize,
}

impl Counts {
    /// Adds one record's verdict.
    pub fn add(&mut self, v: Verdict) {
        *self.verdicts.entry(v).or_default() += 1;
    }

    /// Records with verdict `v`.
    pub fn get(&self, v: Verdict) -> usize {
        self.verdicts.get(&v).copied().unwrap_or(0)
    }

    /// Adds another count's verdicts and stopped units to this one.
    pub fn merge(&mut self, other: &Counts) {
        for (v, n) in &other.verdicts {
            *self.verdicts.entry(*v).or_default() += n;
        }
        self.stopped += other.stopped;
    }

    /// Records of every verdict.
    pub fn total(&self) -> usize {
        self.verdicts.values().sum()
    }

    /// The denominator of A2 and A3: rounds that say something about the
    /// model (all but API failures and verifier errors), plus stopped units.
    pub fn measured(&self) -> usize {
        let infrastructure: usize = Verdict::ALL
            .iter()
            .filter(|v| v.is_infrastructure_failure())
            .map(|&v| self.get(v))
            .sum();
        self.total() - infrastructure + self.stopped
    }

    /// A2: share of measured rounds whose answer parsed.
    pub fn compliance(&self) -> Option<f64> {
        ratio(self.compliant(), self.measured())
    }

    /// A3: share of measured rounds proved equivalent.
    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.get(Verdict::Equivalent), self.measured())
    }
}

fn ratio(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Which records a group holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GroupKey {
    /// Dataset name.
    pub dataset: String,
    /// Model spec.
    pub model: String,
    /// Prompt style.
    pub prompt: String,
    /// Round.
    pub round: u32,
}

/// Low and high of a score across batches and repeats.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Band {
    /// Lowest.
    pub low: f64,
    /// Highest.
    pub high: f64,
}

/// Percentiles of a quantity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

/// One complexity value of a group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The complexity value.
    pub complexity: u32,
    /// Verdict counts.
    pub counts: Counts,
    /// A2.
    pub compliance: Option<f64>,
    /// A3.
    pub accuracy: Option<f64>,
    /// Spread of A2 across batches and repeats.
    pub compliance_band: Option<Band>,
    /// Spread of A3 across batches and repeats.
    pub accuracy_band: Option<Band>,
    /// A2 with answers read leniently.
    pub lenient_compliance: Option<f64>,
    /// A3 with answers read leniently.
    pub lenient_accuracy: Option<f64>,
}

/// Everything reported for one (dataset, model, prompt style, round).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Which records.
    #[serde(flatten)]
    pub key: GroupKey,
    /// Verdict counts over all complexities.
    pub counts: Counts,
    /// A2 over all complexities.
    pub compliance: Option<f64>,
    /// A3 over all complexities.
    pub accuracy: Option<f64>,
    /// Verdict counts with answers read leniently.
    pub lenient_counts: Counts,
    /// A2 with answers read leniently.
    pub lenient_compliance: Option<f64>,
    /// A3 with answers read leniently.
    pub lenient_accuracy: Option<f64>,
    /// Rounds whose English copied the formula.
    pub copied: usize,
    /// Rounds cut at the token cap (non-compliant, reason `truncated`).
    #[serde(default)]
    pub truncated: usize,
    /// Rounds the public implementation would have decided otherwise
    /// (`--protocol reference`, regular expressions): its check's mistakes.
    #[serde(default)]
    pub reference_disagrees: usize,
    /// By complexity value.
    pub rows: Vec<Row>,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens, thinking included.
    pub completion_tokens: u64,
    /// Of the completion tokens, those spent thinking.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// USD, when the cost of every round is known.
    pub cost: Option<f64>,
    /// Of the cost, what thinking cost (USD), over the rounds that reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_cost: Option<f64>,
    /// Model-call time per round (ms).
    pub latency_ms: Percentiles,
    /// Verifier time per round (ms).
    pub verify_ms: Percentiles,
}

impl Group {
    /// Of the rounds answered (not stopped before they ran), the share cut
    /// at the token cap; `None` when none was answered.
    pub fn truncated_share(&self) -> Option<f64> {
        let answered = self.counts.measured().saturating_sub(self.counts.stopped);
        (answered > 0).then(|| self.truncated as f64 / answered as f64)
    }
}

/// All groups of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Result records read.
    pub records: usize,
    /// Groups in dataset, model, prompt, round order.
    pub groups: Vec<Group>,
    /// Every pair of arms compared on the items both answered.
    #[serde(default)]
    pub comparisons: Vec<crate::compare::Comparison>,
    /// Each arm's A2 and A3 with intervals clustered by item.
    #[serde(default)]
    pub clustered: Vec<crate::compare::ClusteredScores>,
    /// Units whose chain has a gap: a round missing while a later one is
    /// recorded. Their rounds after the gap are counted as recorded, but a
    /// run ends only with none.
    #[serde(default)]
    pub broken_chains: usize,
}

fn band(parts: &BTreeMap<(u64, u32), Counts>, score: fn(&Counts) -> Option<f64>) -> Option<Band> {
    let scores: Vec<f64> = parts.values().filter_map(score).collect();
    if scores.len() < 2 {
        return None;
    }
    Some(Band {
        low: scores.iter().copied().fold(f64::INFINITY, f64::min),
        high: scores.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Groups `records` and computes every score.
pub fn summarize(records: &[ResultRecord]) -> Summary {
    let mut summarizer = Summarizer::new();
    for r in records {
        summarizer.add(r);
    }
    summarizer.finish()
}

/// Percentiles of a quantity in bounded memory: each value is kept to
/// three significant digits (to the microsecond below 2 ms), however many there are.
#[derive(Clone, Default)]
pub struct Distribution(Option<hdrhistogram::Histogram<u64>>);

impl Distribution {
    /// Adds one value in milliseconds.
    pub fn add(&mut self, ms: f64) {
        if self.0.is_none() {
            self.0 = hdrhistogram::Histogram::new(3).ok();
        }
        if let Some(h) = &mut self.0 {
            // Auto-resizing: every finite value fits.
            let _ = h.record((ms.max(0.0) * 1000.0).round() as u64);
        }
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Distribution) {
        let Some(theirs) = &other.0 else {
            return;
        };
        match &mut self.0 {
            Some(mine) => {
                let _ = mine.add(theirs);
            }
            None => self.0 = Some(theirs.clone()),
        }
    }

    /// Nearest-rank percentiles (zeros when empty).
    pub fn percentiles(&self) -> Percentiles {
        let Some(h) = self.0.as_ref().filter(|h| !h.is_empty()) else {
            return Percentiles::default();
        };
        let at = |q: f64| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1000.0;
        Percentiles {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

/// One complexity value's counts, its counts per (batch, repeat), and its lenient counts.
type Part = (Counts, BTreeMap<(u64, u32), Counts>, Counts);

/// One group's sums as records come in.
#[derive(Default)]
struct GroupSums {
    /// By complexity: counts, counts per (batch, repeat), lenient counts.
    parts: BTreeMap<u32, Part>,
    copied: usize,
    truncated: usize,
    reference_disagrees: usize,
    prompt_tokens: u64,
    completion_tokens: u64,
    reasoning_tokens: u64,
    cost: KnownCost,
    reasoning_cost: Option<f64>,
    latency: Distribution,
    verify: Distribution,
}

/// Where a unit's rounds are counted: its arm, complexity, batch and repeat.
type CellKey = (String, String, String, u32, u64, u32);

/// The units of one cell: how many were asked round 1, and how many ended
/// at each round in an API failure or verifier error (their chain ends there).
#[derive(Default)]
struct Cell {
    asked: usize,
    ended_by_infrastructure: BTreeMap<u32, usize>,
}

impl Cell {
    /// Units of the cell that stopped before `round`: asked, not answered
    /// at `round`, and not ended earlier by our infrastructure.
    fn stopped_before(&self, round: u32, answered: usize) -> usize {
        let gone: usize = self
            .ended_by_infrastructure
            .range(..round)
            .map(|(_, n)| n)
            .sum();
        self.asked.saturating_sub(answered + gone)
    }
}

/// A run's summary taken in a record at a time: every score is a sum or a
/// bounded distribution, so memory does not grow with the run's records.
#[derive(Default)]
pub struct Summarizer {
    records: usize,
    /// Units by cell, from their round-1 records and infrastructure failures.
    cells: BTreeMap<CellKey, Cell>,
    groups: BTreeMap<GroupKey, GroupSums>,
    paired: crate::compare::Paired,
    chains: autoeval_proto::chains::ChainCheck,
}

impl Summarizer {
    /// A summary of records whose plan is unknown.
    pub fn new() -> Summarizer {
        Summarizer::default()
    }

    /// A summary of a run whose items each have `units_per_item` units of at
    /// most `rounds` rounds: an item's outcomes are let go once it ends.
    pub fn for_plan(units_per_item: usize, rounds: u32) -> Summarizer {
        Summarizer {
            paired: crate::compare::Paired::for_plan(units_per_item, rounds),
            ..Summarizer::default()
        }
    }

    /// Takes in one record (each unit's round once).
    pub fn add(&mut self, r: &ResultRecord) {
        self.records += 1;
        self.chains.add(r);
        let cell = self
            .cells
            .entry((
                r.dataset.clone(),
                r.model.clone(),
                r.prompt.clone(),
                r.complexity,
                r.batch,
                r.repeat,
            ))
            .or_default();
        if r.round == 1 {
            cell.asked += 1;
        }
        if r.verdict.is_infrastructure_failure() {
            *cell.ended_by_infrastructure.entry(r.round).or_default() += 1;
        }
        let key = GroupKey {
            dataset: r.dataset.clone(),
            model: r.model.clone(),
            prompt: r.prompt.clone(),
            round: r.round,
        };
        let g = self.groups.entry(key).or_default();
        let (counts, spread, lenient) = g.parts.entry(r.complexity).or_default();
        counts.add(r.verdict);
        lenient.add(r.lenient_verdict());
        spread
            .entry((r.batch, r.repeat))
            .or_default()
            .add(r.verdict);
        g.copied += usize::from(r.copied);
        g.truncated += usize::from(r.truncated());
        g.reference_disagrees += usize::from(r.reference_verdict.is_some());
        g.prompt_tokens += r.usage.prompt_tokens;
        g.completion_tokens += r.usage.completion_tokens;
        g.reasoning_tokens += r.usage.reasoning_tokens;
        g.cost.add(r.cost);
        if let Some(c) = r.reasoning_cost {
            g.reasoning_cost = Some(g.reasoning_cost.unwrap_or(0.0) + c);
        }
        g.latency.add(r.latency_ms);
        g.verify.add(r.verify_ms);
        self.paired.add(r);
    }

    /// Every score of the records taken in.
    pub fn finish(self) -> Summary {
        let (comparisons, clustered) = self.paired.finish();
        let mut out = Summary {
            records: self.records,
            groups: Vec::new(),
            comparisons,
            clustered,
            broken_chains: self.chains.broken().len(),
        };
        for (key, mut sums) in self.groups {
            let mut total = Counts::default();
            let mut lenient_total = Counts::default();
            let mut rows = Vec::new();
            let arm = (key.dataset.clone(), key.model.clone(), key.prompt.clone());
            let cells = self.cells.range(
                (arm.0.clone(), arm.1.clone(), arm.2.clone(), 0, 0, 0)
                    ..=(arm.0, arm.1, arm.2, u32::MAX, u64::MAX, u32::MAX),
            );
            // Every cell asked round 1 has a place at this round, even one
            // whose units all stopped before it: each of its stopped units
            // is added to its row, its band's part, and the group's total.
            for ((.., complexity, batch, repeat), cell) in cells {
                let (counts, spread, _) = sums.parts.entry(*complexity).or_default();
                let part = spread.entry((*batch, *repeat)).or_default();
                let stopped = cell.stopped_before(key.round, part.total());
                part.stopped += stopped;
                counts.stopped += stopped;
            }
            for (complexity, (counts, spread, mut lenient)) in sums.parts {
                lenient.stopped = counts.stopped;
                total.merge(&counts);
                lenient_total.merge(&lenient);
                rows.push(Row {
                    complexity,
                    compliance: counts.compliance(),
                    accuracy: counts.accuracy(),
                    compliance_band: band(&spread, Counts::compliance),
                    accuracy_band: band(&spread, Counts::accuracy),
                    lenient_compliance: lenient.compliance(),
                    lenient_accuracy: lenient.accuracy(),
                    counts,
                });
            }
            out.groups.push(Group {
                compliance: total.compliance(),
                accuracy: total.accuracy(),
                lenient_compliance: lenient_total.compliance(),
                lenient_accuracy: lenient_total.accuracy(),
                lenient_counts: lenient_total,
                copied: sums.copied,
                truncated: sums.truncated,
                reference_disagrees: sums.reference_disagrees,
                prompt_tokens: sums.prompt_tokens,
                completion_tokens: sums.completion_tokens,
                reasoning_tokens: sums.reasoning_tokens,
                cost: sums.cost.value(),
                reasoning_cost: sums.reasoning_cost,
                latency_ms: sums.latency.percentiles(),
                verify_ms: sums.verify.percentiles(),
                counts: total,
                rows,
                key,
            });
        }
        out
    }
}

/// A cost in USD summed round by round, known only while every round's is
/// (a sum from +0, so that nothing prints as -0).
#[derive(Clone, Copy, Debug, Default)]
pub struct KnownCost {
    sum: f64,
    unpriced: bool,
}

impl KnownCost {
    /// Adds one round's cost; `None` when it has no price.
    pub fn add(&mut self, cost: Option<f64>) {
        match cost {
            Some(c) => self.sum += c,
            None => self.unpriced = true,
        }
    }

    /// The sum, when every round added had a price.
    pub fn value(&self) -> Option<f64> {
        (!self.unpriced).then_some(self.sum + 0.0)
    }
}

/// The 95% Wilson score interval of `successes` out of `n`: unlike the
/// normal approximation it stays within [0, 1] and is sound for small n
/// and for shares near 0 or 1.
pub fn wilson_interval(successes: usize, n: usize) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    let (k, n) = (successes as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// One line of a leaderboard: a model and prompt style on one dataset, round 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// Model spec.
    pub model: String,
    /// Prompt style.
    pub prompt: String,
    /// Rounds measured (the denominators of A2 and A3).
    pub n: usize,
    /// A2 and its 95% Wilson interval.
    pub compliance: Option<(f64, (f64, f64))>,
    /// A3 and its 95% Wilson interval.
    pub accuracy: Option<(f64, (f64, f64))>,
    /// Tokens, prompt plus completion.
    pub tokens: u64,
    /// USD, when known.
    pub cost: Option<f64>,
    /// Model-call time per round trip (ms).
    pub latency_ms: Percentiles,
    /// A3 with its interval clustered by item (repeats are not independent).
    #[serde(default)]
    pub accuracy_clustered: Option<crate::paired::Clustered>,
    /// True when the paired test cannot tell this line's A3 from the line
    /// above's (Holm-adjusted p at least 0.05): a tie in this run.
    #[serde(default)]
    pub tied_with_above: bool,
}

impl Counts {
    /// Compliant rounds (A2's numerator).
    pub fn compliant(&self) -> usize {
        Verdict::ALL
            .iter()
            .filter(|v| v.is_compliant())
            .map(|&v| self.get(v))
            .sum()
    }
}

/// The leaderboard of one dataset: round 1 of each model and prompt style,
/// best A3 first.
pub fn leaderboard(summary: &Summary, dataset: &str) -> Vec<Standing> {
    let mut out: Vec<Standing> = summary
        .groups
        .iter()
        .filter(|g| g.key.dataset == dataset && g.key.round == 1)
        .map(|g| {
            let n = g.counts.measured();
            let with_ci = |k: usize| {
                let (lo, hi) = wilson_interval(k, n)?;
                Some((k as f64 / n as f64, (lo, hi)))
            };
            Standing {
                model: g.key.model.clone(),
                prompt: g.key.prompt.clone(),
                n,
                compliance: with_ci(g.counts.compliant()),
                accuracy: with_ci(g.counts.get(Verdict::Equivalent)),
                tokens: g.prompt_tokens + g.completion_tokens,
                cost: g.cost,
                latency_ms: g.latency_ms,
                accuracy_clustered: summary
                    .clustered
                    .iter()
                    .find(|c| {
                        c.dataset == dataset
                            && c.round == 1
                            && c.reading == Reading::Strict
                            && c.arm.model == g.key.model
                            && c.arm.prompt == g.key.prompt
                    })
                    .and_then(|c| c.accuracy),
                tied_with_above: false,
            }
        })
        .collect();
    let a3 = |s: &Standing| s.accuracy.map_or(-1.0, |a| a.0);
    out.sort_by(|a, b| a3(b).total_cmp(&a3(a)).then_with(|| a.model.cmp(&b.model)));
    for i in 1..out.len() {
        let (above, here) = (&out[i - 1], &out[i]);
        let (above, here) = (standing_arm(above), standing_arm(here));
        let separated = summary.comparisons.iter().find(|c| {
            c.dataset == dataset
                && c.round == 1
                && c.reading == Reading::Strict
                && c.metric == Metric::A3
                && ((arm_of(&c.a), arm_of(&c.b)) == (above, here)
                    || (arm_of(&c.b), arm_of(&c.a)) == (above, here))
        });
        out[i].tied_with_above = separated.is_some_and(|c| !c.separated);
    }
    out
}

fn standing_arm(s: &Standing) -> (&str, &str) {
    (s.model.as_str(), s.prompt.as_str())
}

fn arm_of(arm: &crate::compare::Arm) -> (&str, &str) {
    (arm.model.as_str(), arm.prompt.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(complexity: u32, batch: u64, round: u32, verdict: Verdict) -> ResultRecord {
        ResultRecord {
            dataset: "plogic".into(),
            model: "m".into(),
            prompt: "zero-shot".into(),
            complexity,
            batch,
            round,
            verdict,
            ..ResultRecord::default()
        }
    }

    #[test]
    fn api_failures_leave_the_denominators_and_timeouts_stay() {
        let records = vec![
            rec(1, 0, 1, Verdict::Equivalent),
            rec(1, 0, 1, Verdict::Timeout),
            rec(1, 0, 1, Verdict::NonCompliant),
            rec(1, 0, 1, Verdict::ApiFailure),
        ];
        let s = summarize(&records);
        let g = &s.groups[0];
        assert_eq!(g.counts.measured(), 3);
        assert_eq!(g.accuracy, Some(1.0 / 3.0));
        assert_eq!(g.compliance, Some(2.0 / 3.0));
        assert_eq!(g.counts.get(Verdict::ApiFailure), 1);
    }

    #[test]
    fn bands_span_batches_and_later_rounds_count_stopped_units() {
        let records = vec![
            rec(2, 0, 1, Verdict::Equivalent),
            rec(2, 0, 1, Verdict::Equivalent),
            rec(2, 1, 1, Verdict::Equivalent),
            rec(2, 1, 1, Verdict::NotEquivalent),
            rec(2, 0, 2, Verdict::Equivalent),
            rec(2, 0, 2, Verdict::Equivalent),
            rec(2, 1, 2, Verdict::NotEquivalent),
        ];
        let s = summarize(&records);
        let row = &s.groups[0].rows[0];
        assert_eq!(row.accuracy, Some(0.75));
        let b = row.accuracy_band.unwrap();
        assert_eq!((b.low, b.high), (0.5, 1.0));
        let round2 = &s.groups[1];
        assert_eq!(round2.key.round, 2);
        assert_eq!(round2.counts.stopped, 1);
        assert_eq!(round2.accuracy, Some(0.5));
    }

    #[test]
    fn wilson_intervals_match_hand_computed_values() {
        // 8 of 10, z = 1.96: centre (0.8 + 0.19208) / 1.38415 = 0.71679,
        // half-width 1.41591 · √(0.016 + 0.0096040) = 0.22657.
        let (lo, hi) = wilson_interval(8, 10).unwrap();
        assert!(
            (lo - 0.4902).abs() < 1e-3 && (hi - 0.9433).abs() < 1e-3,
            "{lo} {hi}"
        );
        // 0 of 5: the interval starts at 0 and reaches z²/(n + z²) = 0.4345.
        let (lo, hi) = wilson_interval(0, 5).unwrap();
        assert!(lo == 0.0 && (hi - 0.4345).abs() < 1e-3, "{lo} {hi}");
        assert_eq!(wilson_interval(0, 0), None);
    }

    #[test]
    fn a_cost_is_known_only_when_every_rounds_is_and_never_negative_zero() {
        let sum = |costs: &[Option<f64>]| {
            let mut known = KnownCost::default();
            costs.iter().for_each(|c| known.add(*c));
            known.value()
        };
        assert_eq!(sum(&[Some(0.5), Some(0.5)]), Some(1.0));
        assert_eq!(sum(&[Some(0.5), None]), None);
        let empty = sum(&[]).unwrap();
        assert!(empty == 0.0 && empty.is_sign_positive());
        let negative_zero = sum(&[Some(-0.0)]).unwrap();
        assert!(negative_zero.is_sign_positive());
    }

    #[test]
    fn percentiles_are_nearest_rank_to_a_thousandth() {
        let mut d = Distribution::default();
        (1..=100).for_each(|ms| d.add(f64::from(ms)));
        let p = d.percentiles();
        // Nearest rank of 1..=100 ms: the 50th, 90th, 99th and 100th value.
        for (got, want) in [(p.p50, 50.0), (p.p90, 90.0), (p.p99, 99.0), (p.max, 100.0)] {
            assert!((got - want).abs() <= want * 1e-3, "{got} against {want}");
        }
        assert_eq!(
            Distribution::default().percentiles(),
            Percentiles::default()
        );
        // Merged, two halves give the whole's percentiles.
        let (mut low, mut high) = (Distribution::default(), Distribution::default());
        (1..=50).for_each(|ms| low.add(f64::from(ms)));
        (51..=100).for_each(|ms| high.add(f64::from(ms)));
        low.merge(&high);
        assert_eq!(low.percentiles(), p);
    }

    #[test]
    fn the_leaderboard_marks_a_tie_the_paired_test_cannot_break() {
        let mut records = Vec::new();
        for i in 0..40 {
            for (model, right) in [
                ("twin-a", i % 4 != 0),
                ("twin-b", i % 4 != 0),
                ("weak", false),
            ] {
                records.push(ResultRecord {
                    id: format!("i{i}"),
                    model: model.into(),
                    verdict: if right {
                        Verdict::Equivalent
                    } else {
                        Verdict::NotEquivalent
                    },
                    ..rec(1, 0, 1, Verdict::Equivalent)
                });
            }
        }
        let board = leaderboard(&summarize(&records), "plogic");
        let order: Vec<(&str, bool)> = board
            .iter()
            .map(|s| (s.model.as_str(), s.tied_with_above))
            .collect();
        // The twins answer alike: tied. The weak model is behind on 30 items and ahead on none.
        assert_eq!(
            order,
            vec![("twin-a", false), ("twin-b", true), ("weak", false)]
        );
        let clustered = board[0].accuracy_clustered.expect("clustered");
        assert_eq!((clustered.items, clustered.trials), (40, 40));
        assert_eq!(clustered.mean, 0.75);
    }
}
