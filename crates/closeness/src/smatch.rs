//! Smatch++ (Opitz, 2023) for formulas, as 003 uses it: each formula
//! becomes a semantic graph ([`graph`]), the candidate's nodes are aligned
//! to the reference's so that most triples match ([`align`]), and the
//! score is the F1 of matched triples.

pub mod align;
pub mod graph;

use autoeval_syntax::Formula;
use graph::Graph;

/// Smatch++ of a candidate against its reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smatch {
    /// Matched triples over the candidate's.
    pub precision: f64,
    /// Matched triples over the reference's.
    pub recall: f64,
    /// Harmonic mean of the two.
    pub f1: f64,
    /// Whether the alignment search finished within its bound, so the
    /// alignment is optimal; otherwise the scores are lower bounds.
    pub optimal: bool,
}

/// Smatch++ of `candidate` against `reference`.
pub fn smatch(reference: &Formula, candidate: &Formula) -> Smatch {
    let (r, c) = (Graph::of(reference), Graph::of(candidate));
    let (matched, optimal) = align::best_match(&r, &c);
    let (matched, tr, tc) = (matched as f64, r.triples() as f64, c.triples() as f64);
    Smatch {
        precision: matched / tc,
        recall: matched / tr,
        f1: 2.0 * matched / (tr + tc),
        optimal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, Mode};

    fn f1(a: &str, b: &str) -> f64 {
        let p = |s: &str| parse_formula_exact(s, Mode::Lenient).unwrap();
        let s = smatch(&p(a), &p(b));
        assert!(s.optimal, "{a} / {b}");
        s.f1
    }

    #[test]
    fn hand_computed_values() {
        // One node each, labels differ: only the top triple matches, 1 of 2 + 2.
        assert_eq!(f1("p", "q"), 0.5);
        // and(p, q) against or(p, q): 6 triples each, all but the and/or instance match.
        assert_eq!(f1("p ∧ q", "p ∨ q"), 5.0 / 6.0);
        // not(p) has 4 triples, p has 2; one matches whichever way p aligns.
        assert_eq!(f1("¬p", "p"), 2.0 / 6.0);
        // 12 triples each; the two predicate labels differ, all else matches.
        assert_eq!(
            f1("∀x (Eel(x) → Fish(x))", "∀x (IsEel(x) → IsFish(x))"),
            10.0 / 12.0
        );
        // Operand order of ∧ does not matter; of → it does …
        assert_eq!(f1("A(a) ∧ B(b)", "B(b) ∧ A(a)"), 1.0);
        // … swapping antecedent and consequent loses the two role triples
        // of 10 (5 nodes, 4 edges, the top).
        assert_eq!(f1("A(a) → B(b)", "B(b) → A(a)"), 8.0 / 10.0);
        // Identical formulas match every triple.
        assert_eq!(
            f1("∃x ∀y (R(x, y) ∨ ¬S(y))", "∃x ∀y (R(x, y) ∨ ¬S(y))"),
            1.0
        );
    }

    #[test]
    fn a_large_formula_is_scored_within_the_bound() {
        let conj: Vec<String> = (0..30).map(|i| format!("P{i}(x, c{i})")).collect();
        let a = format!("∀x ({})", conj.join(" ∧ "));
        let b = format!("∃x ({})", conj.join(" ∨ "));
        let p = |s: &str| parse_formula_exact(s, Mode::Lenient).unwrap();
        let s = smatch(&p(&a), &p(&b));
        // 2 + 1 + 30 × 2 nodes, 2 + 30 + 60 edges, and the top: 156 triples;
        // all but the quantifier and connective labels match.
        assert!((s.f1 - 154.0 / 156.0).abs() < 1e-12, "{}", s.f1);
    }
}
