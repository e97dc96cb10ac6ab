//! Verdicts agree with independent ground truth on thousands of generated
//! pairs per kind: equivalent rewrites and near misses.

use crate::common;

use autoeval_generate::DatasetKind;
use autoeval_syntax::{print, Formula};
use autoeval_verify::{
    check, check_formulas, check_regex, Counterexample, InProcessZ3, Kind, Method, Prover,
    Settings, Verdict,
};
use common::*;
use std::collections::{BTreeSet, HashMap};

fn assignment_distinguishes(a: &Formula, b: &Formula, cex: &Option<Counterexample>) {
    let Some(Counterexample::Assignment { assignment }) = cex else {
        panic!("expected an assignment for {a} vs {b}, got {cex:?}");
    };
    let mut atoms = BTreeSet::new();
    propositions(a, &mut atoms);
    propositions(b, &mut atoms);
    let env: HashMap<String, bool> = atoms
        .into_iter()
        .map(|atom| {
            let key = atom.replace(',', ", ");
            let v = assignment
                .get(&atom)
                .or_else(|| assignment.get(&key))
                .copied()
                .unwrap_or(false);
            (atom, v)
        })
        .collect();
    assert_ne!(
        eval_pl(a, &env),
        eval_pl(b, &env),
        "{a} vs {b}: {assignment:?} does not distinguish"
    );
}

#[test]
fn propositional_verdicts_match_exhaustive_truth_tables() {
    let mut seen = 0;
    for kind in [DatasetKind::Plogic, DatasetKind::Ksat] {
        let items: Vec<String> = items(kind, 6, 5)
            .into_iter()
            .filter(|s| s.len() < 400)
            .collect();
        for (a, b, rewrite) in logic_pairs(&items, 1) {
            let truth = pl_equivalent(&a, &b);
            if rewrite {
                assert!(truth, "a rewrite changed the meaning: {a} vs {b}");
            }
            let o = check_formulas(&a, &b, &Settings::default(), &InProcessZ3);
            let want = if truth {
                Verdict::Equivalent
            } else {
                Verdict::NotEquivalent
            };
            assert_eq!(o.verdict, want, "{a} vs {b}");
            if !truth {
                assignment_distinguishes(&a, &b, &o.counterexample);
            }
            seen += 1;
        }
    }
    eprintln!("propositional: {seen} pairs agree with exhaustive truth tables");
    assert!(seen >= 2000, "only {seen} pairs");
}

#[test]
fn fast_paths_agree_with_z3() {
    let items: Vec<String> = items(DatasetKind::Plogic, 3, 2)
        .into_iter()
        .chain(items(DatasetKind::Fol, 3, 2))
        .collect();
    let mut by_method = HashMap::new();
    for (a, b, _) in logic_pairs(&items, 2) {
        let fast = check_formulas(&a, &b, &Settings::default(), &InProcessZ3);
        if fast.method == Method::Z3 {
            continue;
        }
        *by_method.entry(fast.method).or_insert(0) += 1;
        let z3 = InProcessZ3.prove(&a, &b, Settings::default().limits);
        assert_eq!(
            fast.verdict, z3.verdict,
            "{a} vs {b}: {:?} says {:?}, Z3 {:?}",
            fast.method, fast.verdict, z3.verdict
        );
    }
    assert!(
        by_method.get(&Method::TruthTable).copied().unwrap_or(0) > 100,
        "{by_method:?}"
    );
    assert!(
        by_method.get(&Method::Syntactic).copied().unwrap_or(0) > 20,
        "{by_method:?}"
    );
}

/// Checks one first-order pair against the SMT-LIB encoding; returns
/// (compared, checked a finite model).
fn first_order_pair(a: &Formula, b: &Formula, rewrite: bool) -> (bool, bool) {
    let o = check_formulas(a, b, &Settings::default(), &InProcessZ3);
    if rewrite {
        assert_eq!(o.verdict, Verdict::Equivalent, "rewrite {a} vs {b}: {o:?}");
    }
    let Some(truth) = z3_text_equivalent(a, b) else {
        return (false, false);
    };
    match o.verdict {
        Verdict::Equivalent => assert!(truth, "{a} vs {b}: second encoding says not equivalent"),
        Verdict::NotEquivalent => {
            assert!(!truth, "{a} vs {b}: second encoding says equivalent");
            if let Some(apart) = model_tells_apart(a, b, &o.counterexample) {
                assert!(apart, "{a} vs {b}: the model does not distinguish them");
                return (true, true);
            }
        }
        other => panic!("{a} vs {b}: {other:?} {:?}", o.reason),
    }
    (true, false)
}

#[test]
fn first_order_verdicts_match_a_second_encoding() {
    let mut pairs = Vec::new();
    for kind in [DatasetKind::Fol, DatasetKind::FolEnglish] {
        let items: Vec<String> = items(kind, 5, 4)
            .into_iter()
            .filter(|s| s.len() < 600)
            .collect();
        pairs.extend(logic_pairs(&items, 3));
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = pairs.len().div_ceil(threads);
    let (seen, models) = std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter().fold((0, 0), |(n, m), (a, b, rw)| {
                        let (compared, model) = first_order_pair(a, b, *rw);
                        (n + compared as usize, m + model as usize)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold((0, 0), |(n, m), (a, b)| (n + a, m + b))
    });
    eprintln!(
        "first-order: {seen} pairs agree with the SMT-LIB encoding; {models} finite models checked"
    );
    assert!(seen >= 2000, "only {seen} pairs");
    assert!(models >= 100, "only {models} checked finite models");
}

#[test]
fn regex_verdicts_match_enumeration_of_words() {
    let sigma = ['0', '1'];
    let all = words(&sigma, 9);
    let items = items(DatasetKind::Regex, 8, 4);
    let mut seen = 0;
    for (a, b, rewrite) in regex_pairs(&items, 4) {
        let (ta, tb) = (print::regex(&a), print::regex(&b));
        let o = check_regex(
            &ta,
            &tb,
            &Settings {
                alphabet: sigma.to_vec(),
                ..Settings::default()
            },
        );
        let differ = all.iter().find(|w| matches(&a, w) != matches(&b, w));
        if rewrite {
            assert_eq!(o.verdict, Verdict::Equivalent, "rewrite {ta} vs {tb}");
        }
        match (o.verdict, differ) {
            (Verdict::Equivalent, None) => {}
            (Verdict::NotEquivalent, first) => {
                let Some(Counterexample::Word { word, accepted_by }) = &o.counterexample else {
                    panic!("no word for {ta} vs {tb}");
                };
                let w: Vec<char> = word.chars().collect();
                assert_ne!(
                    matches(&a, &w),
                    matches(&b, &w),
                    "{ta} vs {tb}: {word:?} does not distinguish"
                );
                assert_eq!(accepted_by == "phi0", matches(&a, &w));
                if let Some(first) = first {
                    assert_eq!(
                        w.len(),
                        first.len(),
                        "{ta} vs {tb}: {word:?} is not a shortest word"
                    );
                }
            }
            (v, d) => panic!("{ta} vs {tb}: verdict {v:?} but enumeration found {d:?}"),
        }
        seen += 1;
    }
    eprintln!("regex: {seen} pairs agree with enumeration of all words up to length 9");
    assert!(seen >= 2000, "only {seen} pairs");
}

#[test]
fn reference_pitfalls_are_ruled_out() {
    let s = Settings::default();
    let v = |k, a: &str, b: &str| check(k, a, b, &s, &InProcessZ3).verdict;
    // Names compare without case, as the public implementation compares
    // them, unless two of φ0's names differ only in case.
    assert_eq!(v(Kind::Plogic, "p1", "P1"), Verdict::Equivalent);
    assert_eq!(
        v(Kind::Fol, "pred1(Alice)", "pred1(alice)"),
        Verdict::Equivalent
    );
    assert_eq!(
        v(Kind::Fol, "pred1(Alice) ∧ pred1(alice)", "pred1(alice)"),
        Verdict::NotEquivalent
    );
    // `v` is disjunction only as a token.
    assert_eq!(
        v(
            Kind::Fol,
            "(alive(Bob) ∨ receive(Vivian))",
            "alive(Bob) v receive(Vivian)"
        ),
        Verdict::Equivalent
    );
    assert_eq!(
        v(Kind::Plogic, "(vivid ∧ p1)", "vivid ∧ p1"),
        Verdict::Equivalent
    );
    // Transition symbols and start states matter, not only the automaton's shape.
    assert_eq!(v(Kind::Regex, "0*", "1*"), Verdict::NotEquivalent);
    assert_eq!(v(Kind::Regex, "(00)*", "0(00)*"), Verdict::NotEquivalent);
    // A vacuous quantifier over a nonempty domain is harmless.
    assert_eq!(
        v(Kind::Fol, "∀ x1.pred1(p1)", "∃ x1.pred1(p1)"),
        Verdict::Equivalent
    );
}
