//! Equations and function terms, which answers read the public way may use:
//! the verifier's verdicts on generated pairs that use them agree with a
//! second encoding written from the syntax tree (SMT-LIB text), every
//! counterexample it reports is checked to tell the two formulas apart in
//! the finite model it names, and laws of equality hold as properties.

use crate::common;

use autoeval_generate::rng::Rng;
use autoeval_syntax::{Formula, Quantifier, Term};
use autoeval_verify::{check_formulas, InProcessZ3, Settings, Verdict};
use common::*;
use proptest::prelude::*;

fn name(n: &str) -> Term {
    Term::Name(n.to_string())
}

fn apply(f: &str, args: Vec<Term>) -> Term {
    Term::apply(f, args)
}

/// A random term over constants `a`–`c`, the variables in `scope`, and
/// the functions `f/1` and `g/2`.
fn term(rng: &mut Rng, scope: &[String], depth: u32) -> Term {
    let leaf = |rng: &mut Rng| {
        if !scope.is_empty() && rng.below(2) == 0 {
            Term::Name(rng.pick(scope).clone())
        } else {
            const CONSTANTS: [&str; 3] = ["a", "b", "c"];
            name(CONSTANTS[rng.below(CONSTANTS.len())])
        }
    };
    match (depth, rng.below(4)) {
        (0, _) | (_, 0 | 1) => leaf(rng),
        (_, 2) => apply("f", vec![term(rng, scope, depth - 1)]),
        _ => apply(
            "g",
            vec![term(rng, scope, depth - 1), term(rng, scope, depth - 1)],
        ),
    }
}

/// A random formula with equations, `P/1`, `R/2`, connectives and
/// quantifiers over `x` and `y`.
fn formula(rng: &mut Rng, scope: &mut Vec<String>, depth: u32) -> Formula {
    let choice = if depth == 0 {
        rng.below(3)
    } else {
        rng.below(8)
    };
    match choice {
        0 => Formula::Equal(term(rng, scope, 2), term(rng, scope, 2)),
        1 => Formula::Atom {
            name: "P".into(),
            args: vec![term(rng, scope, 2)],
        },
        2 => Formula::Atom {
            name: "R".into(),
            args: vec![term(rng, scope, 1), term(rng, scope, 1)],
        },
        3 => formula(rng, scope, depth - 1).negate(),
        4 => Formula::And(vec![
            formula(rng, scope, depth - 1),
            formula(rng, scope, depth - 1),
        ]),
        5 => Formula::Or(vec![
            formula(rng, scope, depth - 1),
            formula(rng, scope, depth - 1),
        ]),
        6 => Formula::Implies(
            Box::new(formula(rng, scope, depth - 1)),
            Box::new(formula(rng, scope, depth - 1)),
        ),
        _ => {
            let v = if scope.contains(&"x".to_string()) {
                "y"
            } else {
                "x"
            }
            .to_string();
            scope.push(v.clone());
            let body = formula(rng, scope, depth - 1);
            scope.pop();
            Formula::Quant {
                q: if rng.below(2) == 0 {
                    Quantifier::Forall
                } else {
                    Quantifier::Exists
                },
                vars: vec![v],
                body: Box::new(body),
            }
        }
    }
}

/// `f` with every equation's sides swapped (equivalent).
fn symmetric(f: &Formula) -> Formula {
    match f {
        Formula::Equal(a, b) => Formula::Equal(b.clone(), a.clone()),
        Formula::Not(x) => symmetric(x).negate(),
        Formula::Group(x) => symmetric(x).group(),
        Formula::And(xs) => Formula::And(xs.iter().map(symmetric).collect()),
        Formula::Or(xs) => Formula::Or(xs.iter().map(symmetric).collect()),
        Formula::Implies(a, b) => Formula::Implies(Box::new(symmetric(a)), Box::new(symmetric(b))),
        Formula::Iff(a, b) => Formula::Iff(Box::new(symmetric(a)), Box::new(symmetric(b))),
        Formula::Xor(a, b) => Formula::Xor(Box::new(symmetric(a)), Box::new(symmetric(b))),
        Formula::Quant { q, vars, body } => Formula::Quant {
            q: *q,
            vars: vars.clone(),
            body: Box::new(symmetric(body)),
        },
        atom @ Formula::Atom { .. } => atom.clone(),
    }
}

/// `f` with the first constant `from` outside any binder's reach replaced
/// by `to` (changes the meaning, or not, depending on `f`).
fn substitute(f: &Formula, from: &str, to: &Term) -> Formula {
    let t = |x: &Term| substitute_term(x, from, to);
    match f {
        Formula::Equal(a, b) => Formula::Equal(t(a), t(b)),
        Formula::Atom { name, args } => Formula::Atom {
            name: name.clone(),
            args: args.iter().map(t).collect(),
        },
        Formula::Not(x) => substitute(x, from, to).negate(),
        Formula::Group(x) => substitute(x, from, to).group(),
        Formula::And(xs) => Formula::And(xs.iter().map(|x| substitute(x, from, to)).collect()),
        Formula::Or(xs) => Formula::Or(xs.iter().map(|x| substitute(x, from, to)).collect()),
        Formula::Implies(a, b) => Formula::Implies(
            Box::new(substitute(a, from, to)),
            Box::new(substitute(b, from, to)),
        ),
        Formula::Iff(a, b) => Formula::Iff(
            Box::new(substitute(a, from, to)),
            Box::new(substitute(b, from, to)),
        ),
        Formula::Xor(a, b) => Formula::Xor(
            Box::new(substitute(a, from, to)),
            Box::new(substitute(b, from, to)),
        ),
        Formula::Quant { q, vars, body } => Formula::Quant {
            q: *q,
            vars: vars.clone(),
            body: Box::new(substitute(body, from, to)),
        },
    }
}

fn substitute_term(x: &Term, from: &str, to: &Term) -> Term {
    match x {
        Term::Name(n) if n == from => to.clone(),
        Term::Name(_) => x.clone(),
        Term::Apply(app) => Term::apply(
            app.function.clone(),
            app.args
                .iter()
                .map(|a| substitute_term(a, from, to))
                .collect(),
        ),
    }
}

/// The generated pairs: each formula against an equivalent rewrite (its
/// equations turned around, or its constant `a` replaced by `b` under the
/// assumption `a = b`) and against a near miss (`a` replaced by `f(a)`).
fn pairs(count: usize) -> Vec<(Formula, Formula, Option<bool>)> {
    let mut rng = Rng::new(52, "equality-pairs", 0);
    let mut out = Vec::new();
    while out.len() < count {
        let f = formula(&mut rng, &mut Vec::new(), 3);
        if !uses_new_vocabulary(&f) {
            continue;
        }
        out.push((f.clone(), symmetric(&f), Some(true)));
        let same = Formula::Equal(name("a"), name("b"));
        out.push((
            Formula::And(vec![same.clone(), f.clone()]),
            Formula::And(vec![same, substitute(&f, "a", &name("b"))]),
            Some(true),
        ));
        out.push((
            f.clone(),
            substitute(&f, "a", &apply("f", vec![name("a")])),
            None,
        ));
    }
    out
}

/// Uses of an equation or a function term in `f`.
fn uses_new_vocabulary(f: &Formula) -> bool {
    let mut uses = false;
    f.visit(&mut |n| match n {
        Formula::Equal(..) => uses = true,
        Formula::Atom { args, .. } => uses |= args.iter().any(|a| a.as_name().is_none()),
        _ => {}
    });
    uses
}

#[test]
fn verdicts_with_equations_and_function_terms_match_a_second_encoding() {
    let (mut compared, mut models, mut equivalent) = (0, 0, 0);
    for (a, b, known) in pairs(600) {
        assert!(uses_new_vocabulary(&a) || uses_new_vocabulary(&b));
        let o = check_formulas(&a, &b, &Settings::default(), &InProcessZ3);
        let Some(truth) = z3_text_equivalent(&a, &b) else {
            continue;
        };
        if let Some(want) = known {
            assert_eq!(truth, want, "the rewrite of {a} is not what it claims: {b}");
        }
        compared += 1;
        match o.verdict {
            Verdict::Equivalent => {
                assert!(truth, "{a} vs {b}: the second encoding says not equivalent");
                equivalent += 1;
            }
            Verdict::NotEquivalent => {
                assert!(!truth, "{a} vs {b}: the second encoding says equivalent");
                if let Some(apart) = model_tells_apart(&a, &b, &o.counterexample) {
                    assert!(apart, "{a} vs {b}: the model does not tell them apart");
                    models += 1;
                }
            }
            // Undecided is sound: first-order logic with equality is
            // undecidable, and the limits are the prover's.
            Verdict::Timeout | Verdict::Unknown => {}
            other => panic!("{a} vs {b}: {other:?} {:?}", o.reason),
        }
    }
    eprintln!(
        "equality and terms: {compared} pairs agree with the SMT-LIB encoding \
         ({equivalent} equivalent); {models} finite models checked"
    );
    assert!(compared >= 500, "only {compared} pairs compared");
    assert!(models >= 60, "only {models} counterexamples checked");
}

fn is_equivalent(a: &Formula, b: &Formula) -> Verdict {
    check_formulas(a, b, &Settings::default(), &InProcessZ3).verdict
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Equal things may be put for each other: under `s = t`, a formula
    /// about `s` means the same as the formula about `t`.
    #[test]
    fn equals_may_be_substituted(seed in 0u64..1_000_000) {
        let mut rng = Rng::new(seed, "substitution", 0);
        let f = formula(&mut rng, &mut Vec::new(), 2);
        let t = term(&mut rng, &[], 2);
        let same = Formula::Equal(name("a"), t.clone());
        let left = Formula::And(vec![same.clone(), f.clone()]);
        let right = Formula::And(vec![same, substitute(&f, "a", &t)]);
        prop_assert_ne!(is_equivalent(&left, &right), Verdict::NotEquivalent);
    }

    /// Equality is reflexive and symmetric, and functions respect it.
    #[test]
    fn equality_is_a_congruence(seed in 0u64..1_000_000) {
        let mut rng = Rng::new(seed, "congruence", 0);
        let (s, t) = (term(&mut rng, &[], 2), term(&mut rng, &[], 2));
        let p = |x: &Term| Formula::Atom { name: "P".into(), args: vec![x.clone()] };
        let tautology = Formula::Or(vec![p(&s), p(&s).negate()]);
        prop_assert_eq!(is_equivalent(&Formula::Equal(s.clone(), s.clone()), &tautology), Verdict::Equivalent);
        prop_assert_eq!(
            is_equivalent(&Formula::Equal(s.clone(), t.clone()), &Formula::Equal(t.clone(), s.clone())),
            Verdict::Equivalent
        );
        let congruent = Formula::Implies(
            Box::new(Formula::Equal(s.clone(), t.clone())),
            Box::new(Formula::Equal(apply("f", vec![s.clone()]), apply("f", vec![t.clone()]))),
        );
        prop_assert_eq!(is_equivalent(&congruent, &tautology), Verdict::Equivalent);
        // Distinct terms need not be equal: unless they are one term, the
        // equation is no tautology.
        if s != t {
            prop_assert_eq!(is_equivalent(&Formula::Equal(s, t), &tautology), Verdict::NotEquivalent);
        }
    }
}
