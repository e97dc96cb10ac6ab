//! The metrics' defining properties over generated FOL formulas: a formula
//! scores 1 against itself on every metric, an equivalent rewrite keeps LE
//! at 1, and every perturbation lowers LE or Smatch++.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_closeness::perturb::Perturbation;
use autoeval_closeness::{closeness, logical_equivalence};
use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_syntax::{parse_formula_exact, print, Formula, Mode, Style};

fn formulas(kind: DatasetKind) -> Vec<Formula> {
    let cfg = DatasetConfig {
        per_bucket: 2,
        ..DatasetConfig::table1(kind)
    };
    (0..2)
        .flat_map(|b| generate_batch(&cfg, b).unwrap().items)
        .map(|item| parse_formula_exact(&item.fs, Mode::Lenient).unwrap())
        .collect()
}

/// An equivalent formula in other words: operands of ∧ and ∨ reversed,
/// implications written as disjunctions, and the whole doubly negated.
fn rewrite(f: &Formula) -> Formula {
    fn go(f: &Formula) -> Formula {
        match f {
            Formula::Atom { .. } | Formula::Equal(..) => f.clone(),
            Formula::Not(a) => Formula::Not(Box::new(go(a))),
            Formula::Group(a) => Formula::Group(Box::new(go(a))),
            Formula::And(xs) => Formula::And(xs.iter().rev().map(go).collect()),
            Formula::Or(xs) => Formula::Or(xs.iter().rev().map(go).collect()),
            Formula::Implies(a, b) => Formula::Or(vec![
                Formula::Not(Box::new(Formula::Group(Box::new(go(a))))),
                Formula::Group(Box::new(go(b))),
            ]),
            Formula::Iff(a, b) => Formula::Iff(Box::new(go(b)), Box::new(go(a))),
            Formula::Xor(a, b) => Formula::Xor(Box::new(go(b)), Box::new(go(a))),
            Formula::Quant { q, vars, body } => Formula::Quant {
                q: *q,
                vars: vars.clone(),
                body: Box::new(go(body)),
            },
        }
    }
    let inner = Formula::Group(Box::new(go(f)));
    Formula::Not(Box::new(Formula::Not(Box::new(inner))))
}

#[test]
fn identical_formulas_score_one_on_every_metric() {
    for f in formulas(DatasetKind::FolEnglish) {
        let text = print::formula(&f, Style::Unicode);
        let s = closeness(&text, &text);
        assert_eq!(
            (s.bleu, s.rouge_l, s.meteor, s.le, s.smatch),
            (1.0, 1.0, 1.0, Some(1.0), Some(1.0)),
            "{text}"
        );
    }
}

#[test]
fn an_equivalent_rewrite_scores_le_one() {
    let mut changed = 0;
    for kind in [DatasetKind::Fol, DatasetKind::FolEnglish] {
        for f in formulas(kind) {
            let g = rewrite(&f);
            changed += usize::from(g != f);
            assert_eq!(logical_equivalence(&f, &g), 1.0, "{f:?}");
        }
    }
    assert!(changed > 50, "only {changed} formulas were rewritten");
}

#[test]
fn every_perturbation_lowers_le_or_smatch() {
    let set = formulas(DatasetKind::FolEnglish);
    for p in Perturbation::ALL {
        let mut applied = 0;
        for f in &set {
            let Some(g) = p.apply(f) else { continue };
            applied += 1;
            let (a, b) = (
                print::formula(f, Style::Unicode),
                print::formula(&g, Style::Unicode),
            );
            let s = closeness(&a, &b);
            assert!(
                s.le.unwrap() < 1.0 || s.smatch.unwrap() < 1.0,
                "{} left {a} → {b} at LE 1 and Smatch++ 1",
                p.name()
            );
        }
        assert!(applied > 0, "{} never applied", p.name());
    }
}
