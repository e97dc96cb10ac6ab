//! The perturbations of 003 §3.1, which measure how a metric responds to
//! one kind of error: each changes a ground-truth formula in one way, and
//! applies only where the formula has what it changes.

use autoeval_syntax::{Formula, Quantifier};
use std::collections::{BTreeSet, HashMap};

/// One kind of change to a formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Perturbation {
    /// ∀ ↔ ∃ everywhere (op-Quant).
    QuantifierSwap,
    /// Every atom negated, or its negation removed (op-Neg).
    NegationFlip,
    /// ∧ ↔ ∨ everywhere (op-AndOr).
    AndOrSwap,
    /// Every operator dropped, the atoms joined by ∨ (t-Operator).
    TextMinusOperator,
    /// Predicates renamed A, B, … and objects c1, c2, … (t-Variable).
    TextMinusVariable,
}

impl Perturbation {
    /// All five, in 003's order.
    pub const ALL: [Perturbation; 5] = [
        Perturbation::QuantifierSwap,
        Perturbation::NegationFlip,
        Perturbation::AndOrSwap,
        Perturbation::TextMinusOperator,
        Perturbation::TextMinusVariable,
    ];

    /// 003's short name.
    pub fn name(self) -> &'static str {
        match self {
            Perturbation::QuantifierSwap => "op-quant",
            Perturbation::NegationFlip => "op-negation",
            Perturbation::AndOrSwap => "op-and-or",
            Perturbation::TextMinusOperator => "t-operator",
            Perturbation::TextMinusVariable => "t-variable",
        }
    }

    /// `f` changed this way, or `None` when the change does not apply (no
    /// quantifier to swap, no operator to drop, …) or changes nothing.
    pub fn apply(self, f: &Formula) -> Option<Formula> {
        let changed = match self {
            Perturbation::QuantifierSwap => swap_quantifiers(f),
            Perturbation::NegationFlip => flip_negations(f),
            Perturbation::AndOrSwap => swap_and_or(f),
            Perturbation::TextMinusOperator => {
                let mut atoms = Vec::new();
                collect_atoms(f, &mut atoms);
                match atoms.len() {
                    0 => return None,
                    1 => atoms.remove(0),
                    _ => Formula::Or(atoms),
                }
            }
            Perturbation::TextMinusVariable => rename_text(f),
        };
        (changed != *f).then_some(changed)
    }
}

/// `f` with `g` applied to each direct subformula.
fn map_children(f: &Formula, g: &mut impl FnMut(&Formula) -> Formula) -> Formula {
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => f.clone(),
        Formula::Not(a) => Formula::Not(Box::new(g(a))),
        Formula::Group(a) => Formula::Group(Box::new(g(a))),
        Formula::And(xs) => Formula::And(xs.iter().map(&mut *g).collect()),
        Formula::Or(xs) => Formula::Or(xs.iter().map(&mut *g).collect()),
        Formula::Implies(a, b) => Formula::Implies(Box::new(g(a)), Box::new(g(b))),
        Formula::Iff(a, b) => Formula::Iff(Box::new(g(a)), Box::new(g(b))),
        Formula::Xor(a, b) => Formula::Xor(Box::new(g(a)), Box::new(g(b))),
        Formula::Quant { q, vars, body } => Formula::Quant {
            q: *q,
            vars: vars.clone(),
            body: Box::new(g(body)),
        },
    }
}

fn swap_quantifiers(f: &Formula) -> Formula {
    match map_children(f, &mut swap_quantifiers) {
        Formula::Quant { q, vars, body } => Formula::Quant {
            q: match q {
                Quantifier::Forall => Quantifier::Exists,
                Quantifier::Exists => Quantifier::Forall,
            },
            vars,
            body,
        },
        other => other,
    }
}

fn swap_and_or(f: &Formula) -> Formula {
    match map_children(f, &mut swap_and_or) {
        Formula::And(xs) => Formula::Or(xs),
        Formula::Or(xs) => Formula::And(xs),
        other => other,
    }
}

/// An atom, possibly in brackets.
fn is_atom(f: &Formula) -> bool {
    match f {
        Formula::Atom { .. } => true,
        Formula::Group(g) => is_atom(g),
        _ => false,
    }
}

/// Every negated atom loses its negation; every other atom gains one.
fn flip_negations(f: &Formula) -> Formula {
    match f {
        Formula::Not(g) if is_atom(g) => (**g).clone(),
        Formula::Atom { .. } => Formula::Not(Box::new(f.clone())),
        _ => map_children(f, &mut flip_negations),
    }
}

fn collect_atoms(f: &Formula, out: &mut Vec<Formula>) {
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => out.push(f.clone()),
        Formula::Not(g) | Formula::Group(g) | Formula::Quant { body: g, .. } => {
            collect_atoms(g, out)
        }
        Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| collect_atoms(x, out)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            collect_atoms(a, out);
            collect_atoms(b, out);
        }
    }
}

/// The n-th generic predicate name: A, B, …, Z, A1, B1, …
fn generic_predicate(n: usize) -> String {
    let letter = char::from(b'A' + (n % 26) as u8);
    match n / 26 {
        0 => letter.to_string(),
        k => format!("{letter}{k}"),
    }
}

/// Predicates renamed A, B, … and objects c1, c2, … in order of first
/// appearance; bound variables keep their names.
fn rename_text(f: &Formula) -> Formula {
    fn walk(
        f: &Formula,
        bound: &mut Vec<String>,
        predicates: &mut HashMap<String, String>,
        objects: &mut HashMap<String, String>,
    ) -> Formula {
        match f {
            Formula::Atom { name, args } => {
                let n = predicates.len();
                let name = predicates
                    .entry(name.clone())
                    .or_insert_with(|| generic_predicate(n))
                    .clone();
                let args = args
                    .iter()
                    .map(|a| {
                        let a = a.text().into_owned();
                        if bound.contains(&a) {
                            a.into()
                        } else {
                            let n = objects.len();
                            objects
                                .entry(a)
                                .or_insert_with(|| format!("c{}", n + 1))
                                .clone()
                                .into()
                        }
                    })
                    .collect();
                Formula::Atom { name, args }
            }
            Formula::Quant { q, vars, body } => {
                let depth = bound.len();
                bound.extend(vars.iter().cloned());
                let body = walk(body, bound, predicates, objects);
                bound.truncate(depth);
                Formula::Quant {
                    q: *q,
                    vars: vars.clone(),
                    body: Box::new(body),
                }
            }
            _ => map_children(f, &mut |g| walk(g, bound, predicates, objects)),
        }
    }
    walk(f, &mut Vec::new(), &mut HashMap::new(), &mut HashMap::new())
}

/// The names a formula uses, for telling whether renaming changed anything.
pub fn names(f: &Formula) -> BTreeSet<String> {
    let mut atoms = Vec::new();
    collect_atoms(f, &mut atoms);
    atoms
        .iter()
        .flat_map(|a| match a {
            Formula::Atom { name, args } => std::iter::once(name.clone())
                .chain(args.iter().map(|a| a.text().into_owned()))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, print, Mode, Style};

    fn p(s: &str) -> Formula {
        parse_formula_exact(s, Mode::Lenient).unwrap()
    }

    fn applied(k: Perturbation, s: &str) -> Option<String> {
        k.apply(&p(s)).map(|f| print::formula(&f, Style::Unicode))
    }

    #[test]
    fn each_perturbation_as_in_003s_examples() {
        let f = "∀x (¬W(x, c) → A(x, c))";
        let show = |s: &str| print::formula(&p(s), Style::Unicode);
        assert_eq!(
            applied(Perturbation::QuantifierSwap, f),
            Some(show("∃x (¬W(x, c) → A(x, c))"))
        );
        assert_eq!(
            applied(Perturbation::NegationFlip, f),
            Some(show("∀x (W(x, c) → ¬A(x, c))"))
        );
        assert_eq!(
            applied(Perturbation::TextMinusOperator, f),
            Some(show("W(x, c) ∨ A(x, c)"))
        );
        assert_eq!(
            applied(
                Perturbation::TextMinusVariable,
                "∀x (¬WantToBeAddictedTo(x, caffeine) → AwareThatDrug(x, caffeine))"
            ),
            Some(show("∀x (¬A(x, c1) → B(x, c1))"))
        );
        assert_eq!(
            applied(Perturbation::AndOrSwap, "p ∧ (q ∨ r)"),
            Some(show("p ∨ (q ∧ r)"))
        );
    }

    #[test]
    fn a_perturbation_applies_only_where_the_formula_has_what_it_changes() {
        assert_eq!(applied(Perturbation::QuantifierSwap, "P(a) ∧ Q(b)"), None);
        assert_eq!(applied(Perturbation::AndOrSwap, "∀x (P(x) → Q(x))"), None);
        assert_eq!(applied(Perturbation::TextMinusOperator, "P(a)"), None);
        assert_eq!(applied(Perturbation::TextMinusVariable, "A(c1)"), None);
        assert!(names(&p("∀x P(x, a)")).contains("a"));
    }
}
