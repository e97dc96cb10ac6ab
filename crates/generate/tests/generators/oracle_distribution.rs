//! The generated formulas are distributed per complexity value as the public
//! implementation's own datasets are: a two-sample test against the
//! reference oracle (`tests/reference-oracle/leaves/*.json`, ten seeds of the
//! public generator run unmodified) of nesting height and size.
//!
//! The unit of the test is a seed (here: a batch), because a seed's items
//! share the forms its expansion sampled and are not independent of each
//! other. Per complexity value and per seed we take the mean nesting height
//! and the mean size, so each side has ten independent numbers per value.
//!
//! * Per value, Welch's t of the ten against the ten is printed (with the
//!   means) for both metrics.
//! * The test's decision is per dataset and per metric: each seed's mean
//!   over the complexity values both sides have (10 to 38 operators for the
//!   logic datasets, depth 6 to 23 for regular expressions), which averages
//!   the per-value noise away; Welch's t of the ten against the ten must stay
//!   within |t| ≤ 4.0 (two-sided p ≈ 0.001 at 18 degrees of freedom; with
//!   ten such tests, a false alarm about once in a hundred runs of an
//!   unchanged generator, and since the generator is seeded, an unchanged
//!   generator gives the same t every run).
//! * Per complexity value too: at most 10% of the compared values may have
//!   |t| > 3.0 for height or for size (p ≈ 0.01 each).
//!
//! Nesting height and size are the oracle README's definitions: the
//! formula as a tree in which a run of one binary connective is one n-ary
//! node, each negation and each quantified variable a unary node and an atom
//! a leaf of height 0; size is the number of nodes. Regular expressions:
//! concatenation one n-ary node, `*` unary, a symbol a leaf.

use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_syntax::{parse_formula_exact, parse_regex_exact, Formula, Mode, Regex};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Seeds of the oracle.
const SAMPLES: u64 = 10;
/// Batches of ours: more than the oracle's seeds, so that the test's power
/// is limited by the oracle's ten seeds, not by ours.
const BATCHES: u64 = 40;
/// Largest |Welch t| of the per-seed means accepted as "the same distribution".
const LIMIT: f64 = 4.0;
/// A complexity value whose |Welch t| passes this, for height or for size,
/// is one where the two differ (two-sided p ≈ 0.01 at 10 to 18 degrees of
/// freedom; an unchanged generator gives about one in a hundred).
const BUCKET_LIMIT: f64 = 3.0;
/// Share of the compared complexity values allowed to differ.
const BUCKET_SHARE: f64 = 0.10;

/// Height and node count of one formula.
#[derive(Clone, Copy, Default)]
struct Shape {
    height: f64,
    nodes: f64,
}

fn formula_shape(f: &Formula) -> (u32, u32) {
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => (0, 1),
        Formula::Group(x) => formula_shape(x),
        Formula::Not(x) => {
            let (h, n) = formula_shape(x);
            (h + 1, n + 1)
        }
        Formula::Quant { vars, body, .. } => {
            let (h, n) = formula_shape(body);
            let k = vars.len() as u32;
            (h + k, n + k)
        }
        Formula::And(_) | Formula::Or(_) => {
            let mut operands = Vec::new();
            flatten(f, matches!(f, Formula::And(_)), &mut operands);
            let (mut h, mut n) = (0, 1);
            for x in operands {
                let (xh, xn) = formula_shape(x);
                h = h.max(xh);
                n += xn;
            }
            (h + 1, n)
        }
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            let (ah, an) = formula_shape(a);
            let (bh, bn) = formula_shape(b);
            (1 + ah.max(bh), 1 + an + bn)
        }
    }
}

/// The operands of a run of one connective, through parentheses.
fn flatten<'a>(f: &'a Formula, and: bool, out: &mut Vec<&'a Formula>) {
    match f {
        Formula::Group(x) => flatten(x, and, out),
        Formula::And(xs) if and => xs.iter().for_each(|x| flatten(x, and, out)),
        Formula::Or(xs) if !and => xs.iter().for_each(|x| flatten(x, and, out)),
        other => out.push(other),
    }
}

fn regex_shape(r: &Regex) -> (u32, u32) {
    match r {
        Regex::Symbol(_) | Regex::Epsilon => (0, 1),
        Regex::Group(x) => regex_shape(x),
        Regex::Star(x) | Regex::Plus(x) | Regex::Optional(x) => {
            let (h, n) = regex_shape(x);
            (h + 1, n + 1)
        }
        Regex::Concat(_) => {
            let mut operands = Vec::new();
            flatten_concat(r, &mut operands);
            if operands.len() == 1 {
                return regex_shape(operands[0]);
            }
            n_ary(operands.into_iter())
        }
        // No generated expression has one; an n-ary node of its alternatives.
        Regex::Union(alternatives) => n_ary(alternatives.iter()),
    }
}

/// Height and size of an n-ary node over `operands`.
fn n_ary<'a>(operands: impl Iterator<Item = &'a Regex>) -> (u32, u32) {
    let (mut h, mut n) = (0, 1);
    for x in operands {
        let (xh, xn) = regex_shape(x);
        h = h.max(xh);
        n += xn;
    }
    (h + 1, n)
}

fn flatten_concat<'a>(r: &'a Regex, out: &mut Vec<&'a Regex>) {
    match r {
        Regex::Group(x) => flatten_concat(x, out),
        Regex::Concat(xs) => xs.iter().for_each(|x| flatten_concat(x, out)),
        other => out.push(other),
    }
}

/// Per complexity value, one mean shape per seed.
type PerValue = BTreeMap<u32, Vec<Shape>>;

fn ours(kind: DatasetKind) -> PerValue {
    let mut out = PerValue::new();
    let cfg = DatasetConfig::algorithm1(kind);
    let alphabet = cfg.alphabet();
    for b in 0..BATCHES {
        let batch = generate_batch(&cfg, b).unwrap();
        let mut sums: BTreeMap<u32, (f64, f64, f64)> = BTreeMap::new();
        for item in &batch.items {
            let (h, n) = match kind {
                DatasetKind::Regex => {
                    regex_shape(&parse_regex_exact(&item.fs, Mode::Strict, &alphabet).unwrap())
                }
                _ => formula_shape(&parse_formula_exact(&item.fs, Mode::Strict).unwrap()),
            };
            let s = sums.entry(item.complexity()).or_default();
            s.0 += f64::from(h);
            s.1 += f64::from(n);
            s.2 += 1.0;
        }
        for (value, (h, n, k)) in sums {
            out.entry(value).or_default().push(Shape {
                height: h / k,
                nodes: n / k,
            });
        }
    }
    out
}

fn oracle_file(kind: DatasetKind) -> PathBuf {
    let name = match kind {
        DatasetKind::FolEnglish => "fol_human",
        other => other.name(),
    };
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/reference-oracle/leaves")
        .join(format!("{name}.json"))
}

/// The oracle's per-seed means: of its items, or for regular expressions of
/// its leaves, because it holds regex items for one seed only (each cost the
/// public code a DFA construction) and its regex items are a uniform sample
/// of the leaves without replacement, which leaves the mean as it is.
fn oracle(kind: DatasetKind) -> PerValue {
    let text = std::fs::read_to_string(oracle_file(kind)).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    let source = match kind {
        DatasetKind::Regex => "leaves",
        _ => "final",
    };
    let mut out = PerValue::new();
    for seed in 0..SAMPLES {
        let Some(fin) = json["per_seed"][seed.to_string()][source].as_object() else {
            continue;
        };
        for (value, summary) in fin {
            out.entry(value.parse().unwrap()).or_default().push(Shape {
                height: summary["height_mean"].as_f64().unwrap(),
                nodes: summary["nodes_mean"].as_f64().unwrap(),
            });
        }
    }
    out
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Welch's t of `a` against `b`.
fn welch(a: &[f64], b: &[f64]) -> f64 {
    let var = |xs: &[f64]| {
        let m = mean(xs);
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)
    };
    let se = (var(a) / a.len() as f64 + var(b) / b.len() as f64).sqrt();
    if se == 0.0 {
        return if mean(a) == mean(b) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    (mean(a) - mean(b)) / se
}

/// The complexity values the decision averages over.
fn compared(kind: DatasetKind) -> std::ops::RangeInclusive<u32> {
    match kind {
        DatasetKind::Regex => 6..=23,
        _ => 10..=38,
    }
}

/// Prints the per-value table and returns Welch's t of the per-seed means
/// over the compared values, for height and for size.
/// The test's statistics for one dataset.
struct Comparison {
    /// Welch's t of the per-seed mean heights over the compared values.
    height: f64,
    /// The same for size.
    size: f64,
    /// Compared values whose height or size differ (|t| > BUCKET_LIMIT).
    differing: usize,
    /// Compared values.
    values: usize,
}

fn compare(kind: DatasetKind) -> Comparison {
    let (a, b) = (ours(kind), oracle(kind));
    println!(
        "\n{} (ours: {BATCHES} batches; oracle: {SAMPLES} seeds); complexity: {}",
        kind.name(),
        if kind == DatasetKind::Regex {
            "generation level"
        } else {
            "operators"
        }
    );
    println!("value | height ours | height oracle | t | size ours | size oracle | t");
    let pick = |v: &[Shape], f: fn(&Shape) -> f64| v.iter().map(f).collect::<Vec<f64>>();
    let height = |s: &Shape| s.height;
    let nodes = |s: &Shape| s.nodes;
    let (mut differing, mut values) = (0, 0);
    for (value, ours) in &a {
        let Some(theirs) = b.get(value) else { continue };
        if ours.len() < 2 || theirs.len() < 2 {
            continue;
        }
        let (ho, ht) = (pick(ours, height), pick(theirs, height));
        let (no, nt) = (pick(ours, nodes), pick(theirs, nodes));
        if compared(kind).contains(value) {
            values += 1;
            let far = |t: f64| t.abs() > BUCKET_LIMIT;
            differing += usize::from(far(welch(&ho, &ht)) || far(welch(&no, &nt)));
        }
        println!(
            "{value} | {:.3} | {:.3} | {:+.2} | {:.2} | {:.2} | {:+.2}",
            mean(&ho),
            mean(&ht),
            welch(&ho, &ht),
            mean(&no),
            mean(&nt),
            welch(&no, &nt)
        );
    }
    // Per seed: the mean over the compared values of that seed's means.
    let per_seed = |side: &PerValue, f: fn(&Shape) -> f64| -> Vec<f64> {
        let n = side.values().map(Vec::len).max().unwrap_or(0);
        (0..n)
            .map(|s| {
                let xs: Vec<f64> = compared(kind)
                    .filter(|v| a.contains_key(v) && b.contains_key(v))
                    .filter_map(|v| side[&v].get(s).map(f))
                    .collect();
                mean(&xs)
            })
            .collect()
    };
    let th = welch(&per_seed(&a, height), &per_seed(&b, height));
    let tn = welch(&per_seed(&a, nodes), &per_seed(&b, nodes));
    println!(
        "{}: values {:?}: height ours {:.3} oracle {:.3} t {th:+.2}; size ours {:.2} oracle {:.2} t {tn:+.2}",
        kind.name(),
        compared(kind),
        mean(&per_seed(&a, height)),
        mean(&per_seed(&b, height)),
        mean(&per_seed(&a, nodes)),
        mean(&per_seed(&b, nodes)),
    );
    println!(
        "{}: {differing} of {values} compared values differ (|t| > {BUCKET_LIMIT})",
        kind.name()
    );
    Comparison {
        height: th,
        size: tn,
        differing,
        values,
    }
}

fn check(kind: DatasetKind) {
    let c = compare(kind);
    assert!(
        c.height.abs() <= LIMIT && c.size.abs() <= LIMIT,
        "{}: the generated items are not distributed as the public generator's \
         (Welch t of per-seed mean height {:+.2}, of size {:+.2}; limit ±{LIMIT})",
        kind.name(),
        c.height,
        c.size
    );
    assert!(
        c.differing as f64 <= BUCKET_SHARE * c.values as f64,
        "{}: {} of {} complexity values differ from the public generator's (|t| > {BUCKET_LIMIT})",
        kind.name(),
        c.differing,
        c.values
    );
}

#[test]
fn propositional_items_are_distributed_as_the_public_generators() {
    check(DatasetKind::Plogic);
}

#[test]
fn ksat_items_are_distributed_as_the_public_generators() {
    check(DatasetKind::Ksat);
}

#[test]
fn first_order_items_are_distributed_as_the_public_generators() {
    check(DatasetKind::Fol);
}

#[test]
fn first_order_english_items_are_distributed_as_the_public_generators() {
    check(DatasetKind::FolEnglish);
}

#[test]
fn regex_items_are_distributed_as_the_public_generators() {
    check(DatasetKind::Regex);
}
