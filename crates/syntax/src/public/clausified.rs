//! How the public prover decides an answer in which a quantifier binds a
//! name that stands as a formula (`∀ p3.(p1 ∧ ¬p3 ∧ ¬p12)`), found by
//! running it on generated probes (`tests/reference-oracle/fuzz`, rule
//! `bound_proposition`).
//!
//! The prover clausifies `φ0 ↔ φ1` denied. Where such a quantifier is
//! universal in effect (`∀` in a positive place, `∃` in a negative one),
//! the bound name becomes a variable standing as an atom; where it is
//! existential in effect, a Skolem symbol standing as an atom, which is a
//! new proposition (or a new predicate of the individual variables in
//! scope). The prover's predicate elimination then resolves every variable
//! atom against every other, since they all unify, as if all of them were
//! one proposition. So the public verdict is "equivalent" exactly when
//! `φ1⁺ → φ0` and `φ0 → φ1⁻` both hold, where `φ1⁺` and `φ1⁻` are φ1 as
//! the prover takes it in a positive and in a negative place ([`Sides`]).
//! (A variable atom of each sign in one clause makes the elimination run
//! forever; the public code then runs out of time and gives no verdict,
//! or out of memory and records an error.)

use crate::{Formula, Quantifier, Term};

/// The one proposition every variable atom stands for. No name read from
/// an answer can be it: the prover's reading refuses a character beyond
/// ASCII outside quotes.
pub const VARIABLE_ATOM: &str = "x′";

/// φ1 as the prover takes it on each side of `φ0 ↔ φ1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sides {
    /// φ1 where it is assumed (`φ1 → φ0`).
    pub positive: Formula,
    /// φ1 where it is denied (`φ0 → φ1`).
    pub negative: Formula,
}

/// φ1's two sides when a quantifier of φ1 binds a name that stands as a
/// formula; `None` when none does (φ1 then means what it says).
pub fn sides(phi1: &Formula) -> Option<Sides> {
    if !binds_a_proposition(phi1) {
        return None;
    }
    let mut reader = Reader::default();
    Some(Sides {
        positive: reader.read(phi1, true),
        negative: reader.read(phi1, false),
    })
}

/// True when some quantifier of `f` binds a name that stands as a formula
/// in its scope.
fn binds_a_proposition(f: &Formula) -> bool {
    match f {
        Formula::Quant { vars, body, .. } => {
            vars.iter().any(|v| stands_as_formula(body, v)) || binds_a_proposition(body)
        }
        Formula::Atom { .. } | Formula::Equal(..) => false,
        Formula::Not(x) | Formula::Group(x) => binds_a_proposition(x),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().any(binds_a_proposition),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            binds_a_proposition(a) || binds_a_proposition(b)
        }
    }
}

/// True when `name` stands as a formula in `f`, outside any quantifier
/// that binds it again.
fn stands_as_formula(f: &Formula, name: &str) -> bool {
    match f {
        Formula::Atom { name: n, args } => args.is_empty() && n == name,
        Formula::Equal(..) => false,
        Formula::Quant { vars, body, .. } => {
            !vars.iter().any(|v| v == name) && stands_as_formula(body, name)
        }
        Formula::Not(x) | Formula::Group(x) => stands_as_formula(x, name),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().any(|x| stands_as_formula(x, name)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            stands_as_formula(a, name) || stands_as_formula(b, name)
        }
    }
}

/// What a bound name stands for in the formula being read.
#[derive(Clone, Debug)]
enum Binding {
    /// An individual variable: the quantifier stays.
    Individual,
    /// A name standing as a formula: this atom replaces it.
    Atom(Formula),
}

/// Reads φ1 as the prover clausifies it; `skolems` numbers the new
/// propositions, so that each quantifier on each side gets its own.
#[derive(Default)]
struct Reader {
    skolems: usize,
    scope: Vec<(String, Binding)>,
}

impl Reader {
    /// `f` as the prover takes it in a positive (`true`) or negative place.
    fn read(&mut self, f: &Formula, positive: bool) -> Formula {
        match f {
            Formula::Atom { name, args } if args.is_empty() => {
                match self.scope.iter().rev().find(|(n, _)| n == name) {
                    Some((_, Binding::Atom(atom))) => atom.clone(),
                    _ => f.clone(),
                }
            }
            Formula::Atom { .. } | Formula::Equal(..) => f.clone(),
            Formula::Not(x) => Formula::Not(Box::new(self.read(x, !positive))),
            Formula::Group(x) => Formula::Group(Box::new(self.read(x, positive))),
            Formula::And(xs) => Formula::And(xs.iter().map(|x| self.read(x, positive)).collect()),
            Formula::Or(xs) => Formula::Or(xs.iter().map(|x| self.read(x, positive)).collect()),
            Formula::Implies(a, b) => Formula::Implies(
                Box::new(self.read(a, !positive)),
                Box::new(self.read(b, positive)),
            ),
            Formula::Iff(a, b) => self.biconditional(a, b, positive),
            Formula::Xor(a, b) => Formula::Not(Box::new(self.biconditional(a, b, !positive))),
            Formula::Quant { q, vars, body } => self.quantified(*q, vars, body, positive),
        }
    }

    /// `a ↔ b`: each side appears once in each sign, as the prover expands
    /// it (`(a → b) ∧ (b → a)` where it is assumed, `(a ∨ b) ∧ (¬a ∨ ¬b)`
    /// under its denial).
    fn biconditional(&mut self, a: &Formula, b: &Formula, positive: bool) -> Formula {
        let imp = |x: Formula, y: Formula| Formula::Implies(Box::new(x), Box::new(y));
        let not = |x: Formula| Formula::Not(Box::new(x));
        if positive {
            let (a_neg, b_pos) = (self.read(a, false), self.read(b, true));
            let (b_neg, a_pos) = (self.read(b, false), self.read(a, true));
            Formula::And(vec![imp(a_neg, b_pos), imp(b_neg, a_pos)])
        } else {
            let (a_pos, b_pos) = (self.read(a, true), self.read(b, true));
            let (a_neg, b_neg) = (self.read(a, false), self.read(b, false));
            not(Formula::And(vec![
                Formula::Or(vec![a_pos, b_pos]),
                Formula::Or(vec![not(a_neg), not(b_neg)]),
            ]))
        }
    }

    /// A quantifier over `vars` (outermost first): an individual variable
    /// keeps it, a name standing as a formula becomes the variable atom or
    /// a Skolem atom and the quantifier goes.
    fn quantified(
        &mut self,
        q: Quantifier,
        vars: &[String],
        body: &Formula,
        positive: bool,
    ) -> Formula {
        let Some((v, rest)) = vars.split_first() else {
            return self.read(body, positive);
        };
        // The name stands as a formula in this quantifier's scope unless a
        // later variable of the same list binds it again.
        if rest.contains(v) || !stands_as_formula(body, v) {
            self.scope.push((v.clone(), Binding::Individual));
            let body = self.quantified(q, rest, body, positive);
            self.scope.pop();
            return Formula::Quant {
                q,
                vars: vec![v.clone()],
                body: Box::new(body),
            };
        }
        let universal = (q == Quantifier::Forall) == positive;
        let atom = if universal {
            Formula::prop(VARIABLE_ATOM)
        } else {
            self.skolems += 1;
            let individuals = self
                .scope
                .iter()
                .filter(|(_, b)| matches!(b, Binding::Individual))
                .map(|(n, _)| Term::Name(n.clone()))
                .collect();
            Formula::Atom {
                name: format!("{v}′{}", self.skolems),
                args: individuals,
            }
        };
        self.scope.push((v.clone(), Binding::Atom(atom)));
        let body = self.quantified(q, rest, body, positive);
        self.scope.pop();
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::public::parse_formula;

    fn read(text: &str) -> Formula {
        parse_formula(text).unwrap()
    }

    #[test]
    fn a_formula_without_a_bound_proposition_has_no_sides() {
        assert_eq!(sides(&read("all x.(pred1(x) -> p1)")), None);
        assert_eq!(sides(&read("p1 & p2")), None);
    }

    #[test]
    fn a_universal_binding_is_the_variable_atom_where_assumed_and_a_skolem_atom_where_denied() {
        let s = sides(&read("all p3.(p1 & -p3)")).unwrap();
        let positive = Formula::And(vec![
            Formula::prop("p1"),
            Formula::Not(Box::new(Formula::prop(VARIABLE_ATOM))),
        ]);
        assert_eq!(s.positive, positive);
        let negative = Formula::And(vec![
            Formula::prop("p1"),
            Formula::Not(Box::new(Formula::prop("p3′1"))),
        ]);
        assert_eq!(s.negative, negative);
    }

    #[test]
    fn an_existential_binding_under_an_individual_variable_is_a_predicate_of_it() {
        let s = sides(&read("all x1.exists p5.(p5 & pred1(x1))")).unwrap();
        let Formula::Quant { body, .. } = &s.positive else {
            panic!("{:?}", s.positive)
        };
        let Formula::And(parts) = &**body else {
            panic!("{body:?}")
        };
        assert_eq!(
            parts[0],
            Formula::Atom {
                name: "p5′1".into(),
                args: vec![Term::Name("x1".into())],
            }
        );
    }

    #[test]
    fn an_inner_quantifier_binding_the_name_again_shadows_it() {
        let s = sides(&read("all p3.(p3 & exists p3.pred1(p3))")).unwrap();
        let Formula::And(parts) = &s.positive else {
            panic!("{:?}", s.positive)
        };
        assert_eq!(parts[0], Formula::prop(VARIABLE_ATOM));
        assert!(matches!(parts[1], Formula::Quant { .. }), "{:?}", parts[1]);
    }
}
