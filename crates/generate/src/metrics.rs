//! Per-item metrics, computed on the emitted formula (paper App. I and M).

use crate::DatasetKind;
use autoeval_automata::Dfa;
use autoeval_syntax::{Formula, Regex};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// Metrics of one item; logic and regex items fill different fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The generation level the item's leaf was found at (paper App. I:
    /// the level of Algorithm 1's tree; the public datasets' `depth`), the
    /// complexity of regular expressions.
    pub depth: u32,
    /// Height of the smallest parse tree of the item under its dataset's
    /// grammar (a balanced tree for chains of one connective).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// Operators as the paper counts them: ∧, ∨, and ¬ over a compound formula.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_operators: Option<u32>,
    /// Number of ∧ symbols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_and: Option<u32>,
    /// Number of ∨ symbols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_or: Option<u32>,
    /// Number of ¬ symbols, on atoms and on compound formulas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_not: Option<u32>,
    /// Distinct propositions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_propositions: Option<u32>,
    /// Distinct predicate names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_predicates: Option<u32>,
    /// Quantified variables (`∀ x1 x2.` counts two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_quantifiers: Option<u32>,
    /// Occurrences of propositions and predicate atoms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_atoms: Option<u32>,
    /// States of the minimal DFA, without its dead state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_nodes: Option<u32>,
    /// Transitions of the minimal DFA between those states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_edges: Option<u32>,
    /// `edges / (nodes · (nodes − 1))`, rounded to one decimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    /// Kleene stars in the expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_stars: Option<u32>,
}

/// Number of operators as the paper counts them.
pub fn num_operators(f: &Formula) -> u32 {
    let mut n = 0;
    f.visit(&mut |node| {
        n += match node {
            Formula::And(xs) | Formula::Or(xs) => xs.len() as u32 - 1,
            Formula::Not(x) => !matches!(x.ungrouped(), Formula::Atom { .. }) as u32,
            Formula::Implies(..) | Formula::Iff(..) | Formula::Xor(..) => 1,
            _ => 0,
        }
    });
    n
}

/// Height of the shallowest binary tree over subtrees of the given heights.
fn balanced(heights: impl Iterator<Item = u32>) -> u32 {
    let mut heap: BinaryHeap<Reverse<u32>> = heights.map(Reverse).collect();
    while heap.len() > 1 {
        let (Some(Reverse(a)), Some(Reverse(b))) = (heap.pop(), heap.pop()) else {
            break;
        };
        heap.push(Reverse(1 + a.max(b)));
    }
    heap.pop().map_or(0, |Reverse(h)| h)
}

/// Parse-tree height of a quantifier-free formula; a literal is one level.
/// `flat_or` treats a disjunction as one production (3-SAT clauses).
fn connective_depth(f: &Formula, flat_or: bool) -> u32 {
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => 1,
        Formula::Group(x) => connective_depth(x, flat_or),
        Formula::Not(x) if matches!(x.ungrouped(), Formula::Atom { .. }) => 1,
        Formula::Not(x) => 1 + connective_depth(x, flat_or),
        Formula::Or(xs) if flat_or => {
            1 + xs
                .iter()
                .map(|x| connective_depth(x, flat_or))
                .max()
                .unwrap_or(0)
        }
        Formula::And(xs) | Formula::Or(xs) => {
            balanced(xs.iter().map(|x| connective_depth(x, flat_or)))
        }
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            1 + connective_depth(a, flat_or).max(connective_depth(b, flat_or))
        }
        Formula::Quant { body, .. } => 1 + connective_depth(body, flat_or),
    }
}

/// Metrics of a logic formula of the given dataset kind; `depth`, which
/// the formula alone does not tell, is left 0 for the caller to set.
pub fn logic(f: &Formula, kind: DatasetKind) -> Metrics {
    let (mut and, mut or, mut not, mut atoms) = (0, 0, 0, 0);
    let mut props = BTreeSet::new();
    let mut preds = BTreeSet::new();
    f.visit(&mut |node| match node {
        Formula::And(xs) => and += xs.len() as u32 - 1,
        Formula::Or(xs) => or += xs.len() as u32 - 1,
        Formula::Not(_) => not += 1,
        Formula::Atom { name, args } => {
            atoms += 1;
            if args.is_empty() {
                props.insert(name.clone());
            } else {
                preds.insert(name.clone());
            }
        }
        _ => {}
    });
    // Prenex FOL: S → Q, one Q per quantified variable, Q → F, then the matrix.
    let mut matrix = f.ungrouped();
    let mut quantified = 0u32;
    while let Formula::Quant { vars, body, .. } = matrix {
        quantified += vars.len() as u32;
        matrix = body.ungrouped();
    }
    let mut all_quantified = 0u32;
    f.visit(&mut |node| {
        if let Formula::Quant { vars, .. } = node {
            all_quantified += vars.len() as u32;
        }
    });
    let height = match kind {
        DatasetKind::Ksat => connective_depth(f, true),
        DatasetKind::Fol | DatasetKind::FolEnglish => {
            2 + quantified + connective_depth(matrix, false)
        }
        _ => connective_depth(f, false),
    };
    let first_order = matches!(kind, DatasetKind::Fol | DatasetKind::FolEnglish);
    Metrics {
        height: Some(height),
        num_operators: Some(num_operators(f)),
        num_and: Some(and),
        num_or: Some(or),
        num_not: Some(not),
        num_propositions: Some(props.len() as u32),
        num_predicates: first_order.then_some(preds.len() as u32),
        num_quantifiers: first_order.then_some(all_quantified),
        num_atoms: Some(atoms),
        ..Metrics::default()
    }
}

/// Height of the parse tree of `r` under S → (S)K | S σ K | σ K; K → * | ε.
pub fn regex_height(r: &Regex) -> u32 {
    // One item of a concatenation, standing alone as an S.
    fn alone(r: &Regex) -> u32 {
        match r {
            Regex::Symbol(_) | Regex::Epsilon => 2,
            Regex::Star(x) | Regex::Plus(x) | Regex::Optional(x) => match &**x {
                Regex::Group(inner) => 1 + regex_height(inner),
                other => alone(other),
            },
            Regex::Group(inner) => 1 + regex_height(inner),
            Regex::Concat(_) | Regex::Union(_) => regex_height(r),
        }
    }
    match r {
        Regex::Concat(items) => {
            let Some((first, rest)) = items.split_first() else {
                return 2;
            };
            let mut h = alone(first);
            for item in rest {
                // S → S σ K adds a level over the prefix; K is a leaf level.
                let tail = match item {
                    Regex::Symbol(_) => 1,
                    Regex::Star(x) if matches!(**x, Regex::Symbol(_)) => 1,
                    other => alone(other),
                };
                h = 1 + h.max(tail);
            }
            h
        }
        Regex::Union(alts) => 1 + alts.iter().map(regex_height).max().unwrap_or(0),
        other => alone(other),
    }
}

/// Most DFA states built when measuring a generated regular expression.
const MAX_DFA_STATES: usize = 100_000;

/// Metrics of a regular expression over `alphabet`; `depth` is left 0 for
/// the caller to set.
pub fn regex(r: &Regex, alphabet: &[char]) -> Metrics {
    let shape = Dfa::from_regex(r, alphabet, MAX_DFA_STATES)
        .map(|d| d.minimize().shape())
        .ok();
    Metrics {
        height: Some(regex_height(r)),
        num_nodes: shape.map(|s| s.states as u32),
        num_edges: shape.map(|s| s.edges as u32),
        density: shape.map(|s| s.density),
        num_stars: Some(r.count_stars() as u32),
        ..Metrics::default()
    }
}
