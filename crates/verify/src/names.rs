//! Case folding of names: the public implementation lowercases both formulas
//! before proving, so `Admire(Richard)` and `admire(richard)` are one
//! formula there. Folding is safe only when φ0's names stay distinct.

use autoeval_syntax::{Formula, Term};
use std::collections::{BTreeMap, BTreeSet};

/// Every proposition, predicate, object and variable name of `f`.
fn names_of(f: &Formula) -> BTreeSet<&str> {
    let mut names = BTreeSet::new();
    collect(f, &mut names);
    names
}

fn collect<'a>(f: &'a Formula, names: &mut BTreeSet<&'a str>) {
    match f {
        Formula::Atom { name, args } => {
            names.insert(name);
            for a in args {
                a.visit_names(&mut |n| {
                    names.insert(n);
                });
            }
        }
        Formula::Equal(a, b) => {
            a.visit_names(&mut |n| {
                names.insert(n);
            });
            b.visit_names(&mut |n| {
                names.insert(n);
            });
        }
        Formula::Not(a) | Formula::Group(a) => collect(a, names),
        Formula::Quant { vars, body, .. } => {
            names.extend(vars.iter().map(String::as_str));
            collect(body, names);
        }
        Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| collect(x, names)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            collect(a, names);
            collect(b, names);
        }
    }
}

/// True when no two different names of `f` become one under case folding
/// (`Rich` beside `rich` would), so names may be compared without case.
pub fn fold_keeps_apart(f: &Formula) -> bool {
    let mut folded: BTreeMap<String, &str> = BTreeMap::new();
    names_of(f)
        .into_iter()
        .all(|name| match folded.insert(name.to_lowercase(), name) {
            None => true,
            Some(other) => other == name,
        })
}

/// `f` with every name lowercased.
pub fn folded(f: &Formula) -> Formula {
    let lower = |names: &[String]| names.iter().map(|n| n.to_lowercase()).collect();
    let term = |t: &Term| t.renamed(&|n: &str| n.to_lowercase());
    match f {
        Formula::Atom { name, args } => Formula::Atom {
            name: name.to_lowercase(),
            args: args.iter().map(term).collect(),
        },
        Formula::Equal(a, b) => Formula::Equal(term(a), term(b)),
        Formula::Not(a) => Formula::Not(Box::new(folded(a))),
        Formula::Group(a) => Formula::Group(Box::new(folded(a))),
        Formula::Quant { q, vars, body } => Formula::Quant {
            q: *q,
            vars: lower(vars),
            body: Box::new(folded(body)),
        },
        Formula::And(xs) => Formula::And(xs.iter().map(folded).collect()),
        Formula::Or(xs) => Formula::Or(xs.iter().map(folded).collect()),
        Formula::Implies(a, b) => Formula::Implies(Box::new(folded(a)), Box::new(folded(b))),
        Formula::Iff(a, b) => Formula::Iff(Box::new(folded(a)), Box::new(folded(b))),
        Formula::Xor(a, b) => Formula::Xor(Box::new(folded(a)), Box::new(folded(b))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, Mode};

    fn formula(text: &str) -> Formula {
        parse_formula_exact(text, Mode::Lenient).unwrap()
    }

    #[test]
    fn names_that_collide_under_folding_are_not_kept_apart() {
        assert!(fold_keeps_apart(&formula("Admire(Richard) ∧ Walk(Ann)")));
        assert!(fold_keeps_apart(&formula("∀ x1.(Admire(x1) ∨ Admire(x1))")));
        assert!(!fold_keeps_apart(&formula("P1 ∧ p1")));
        assert!(!fold_keeps_apart(&formula("Rich(rich)")));
    }

    #[test]
    fn folding_lowercases_every_name_and_keeps_the_shape() {
        assert_eq!(
            folded(&formula("∀ X1.(Admire(X1, Richard) ∧ ¬P2)")),
            formula("∀ x1.(admire(x1, richard) ∧ ¬p2)")
        );
    }
}
