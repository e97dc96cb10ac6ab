//! A first-order check's outcome is a function of its pair: the same on
//! every run, whichever checks ran before it in the same thread.

use crate::common;

use autoeval_generate::DatasetKind;
use autoeval_syntax::Formula;
use autoeval_verify::{
    check, check_formulas, InProcessZ3, Kind, Method, ProverLimits, Settings, Verdict,
};
use common::*;

/// A wall-clock limit far beyond the resource limit, so that the resource
/// limit, which counts work rather than time, is what can stop a check.
fn work_bound() -> Settings {
    Settings {
        limits: ProverLimits {
            timeout_ms: 120_000,
            ..Settings::default().limits
        },
        ..Settings::default()
    }
}

/// Two pairs met in runs, each decided by one of Z3's two solvers and left
/// undecided by the other: both verdicts are reached.
#[test]
fn a_pair_either_of_the_provers_solvers_decides_is_decided() {
    let cases = [
        // fol-english, seed 7, item 882, and a noisy model's answer: Z3's
        // one-shot solver spends its resource limit on it ("canceled").
        (
            "∀ x1 x2.∃ x3.∀ x4.¬(¬okay(x2, Lloyd) ∨ (¬amerce(Michelle, Michelle) ∧ permit(Lloyd, Florencio) ∧ ((¬¬permit(Aric, Lloyd) ∧ ¬sober(Magali) ∧ ¬interrogate(x3, Dustin) ∧ pet(Magali)) ∨ permit(Magali, Michelle) ∨ ¬cloister(x4) ∨ ((¬lobby(x1, Myrtice) ∨ ¬lobby(Florencio, Dustin)) ∧ ¬sober(Jazmyne) ∧ sober(Adrien)) ∨ (((¬permit(Adrien, Florencio) ∧ ¬pet(x3)) ∨ ¬cloister(Dustin) ∨ ¬¬lobby(Myrtice, Aric) ∨ ¬¬¬sober(x3)) ∧ okay(Magali, x2) ∧ ¬sober(x2) ∧ sober(Jazmyne) ∧ ¬lobby(x4, Aric) ∧ ¬¬pet(Dustin) ∧ lobby(Verna, Adrien)))))",
            "∀ x1 x2.∃ x3.∀ x4.¬(¬okay(x2, Lloyd) ∨ (¬amerce(Michelle, Michelle) ∧ permit(Lloyd, Florencio) ∧ ((permit(Aric, Lloyd) ∧ ¬sober(Magali) ∧ ¬interrogate(x3, Dustin) ∧ pet(Magali)) ∨ permit(Magali, Michelle) ∨ ¬cloister(x4) ∨ ((¬lobby(x1, Myrtice) ∨ ¬lobby(Florencio, Dustin)) ∧ sober(Jazmyne) ∧ sober(Adrien)) ∨ (((¬permit(Adrien, Florencio) ∧ ¬pet(x3)) ∨ ¬cloister(Dustin) ∨ lobby(Myrtice, Aric) ∨ ¬sober(x3)) ∧ okay(Magali, x2) ∧ ¬sober(x2) ∧ sober(Jazmyne) ∧ ¬lobby(x4, Aric) ∧ pet(Dustin) ∧ lobby(Verna, Adrien)))))",
        ),
        // A near miss (one constant renamed): Z3's incremental solver gives
        // up on it ("unknown").
        (
            "∀ x1.∃ x2.((¬yodel(Kailyn, x2) ∧ (combat(Antwan) ∨ ¬combat(Marquis) ∨ (¬cackle(x1, Zaria) ∧ ¬(combat(x1) ∧ partner(x2))))) ∨ (((¬yodel(Antwan, Rowan) ∧ ¬partner(x1) ∧ cackle(Marquis, Isabell) ∧ feed(x2, Marquis)) ∨ ¬cackle(Eulah, Isabell)) ∧ yodel(Antwan, Darrin)) ∨ partner(Kailyn))",
            "∀ x1.∃ x2.((¬yodel(Kailyn, x2) ∧ (combat(Antwan) ∨ ¬combat(Marquis) ∨ (¬cackle(x1, Zaria) ∧ ¬(combat(x1) ∧ partner(x2))))) ∨ (((¬yodel(Antwan, Rowan) ∧ ¬partner(x1) ∧ cackle(Marquis, IsabellX) ∧ feed(x2, Marquis)) ∨ ¬cackle(Eulah, Isabell)) ∧ yodel(Antwan, Darrin)) ∨ partner(Kailyn))",
        ),
    ];
    for (a, b) in cases {
        let o = check(Kind::Fol, a, b, &work_bound(), &InProcessZ3);
        assert_eq!(o.verdict, Verdict::NotEquivalent, "{a} vs {b}: {o:?}");
        assert!(o.counterexample.is_some(), "{o:?}");
    }
}

/// Pairs that reach Z3 (neither truth tables nor normal forms decide them):
/// near misses and rewrites of generated first-order formulas.
fn prover_pairs() -> Vec<(Formula, Formula)> {
    let mut texts = items(DatasetKind::Fol, 2, 2);
    texts.extend(items(DatasetKind::FolEnglish, 2, 2));
    logic_pairs(&texts, 11)
        .into_iter()
        .map(|(a, b, _)| (a, b))
        .filter(|(a, b)| check_formulas(a, b, &work_bound(), &InProcessZ3).method == Method::Z3)
        .collect()
}

#[test]
fn a_checks_outcome_is_the_same_whichever_checks_ran_before_it() {
    let pairs = prover_pairs();
    assert!(pairs.len() >= 40, "only {} pairs reach Z3", pairs.len());
    let outcomes = |order: Vec<usize>| {
        let pairs = &pairs;
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut out = vec![None; pairs.len()];
                for i in order {
                    let (a, b) = &pairs[i];
                    out[i] = Some(check_formulas(a, b, &work_bound(), &InProcessZ3));
                }
                out
            })
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    };
    eprintln!("{} pairs reach Z3", pairs.len());
    let forward = outcomes((0..pairs.len()).collect());
    let backward = outcomes((0..pairs.len()).rev().collect());
    let differ: Vec<_> = (0..pairs.len())
        .filter(|&i| forward[i] != backward[i])
        .map(|i| (&pairs[i].0, &pairs[i].1, &forward[i], &backward[i]))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} outcomes depend on the checks before them: {:?}",
        differ.len(),
        pairs.len(),
        &differ[..differ.len().min(3)]
    );
}
