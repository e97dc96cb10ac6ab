//! The reference model's round trip is exact on every dataset type, through
//! the benchmark's own prompts, and its English copies no formula syntax.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_prompts::{copy_check, Family, Shots, Templates};
use autoeval_reference_model::{answer, autoformalize, informalize, read};
use autoeval_verify::{check, InProcessZ3, Kind, Settings, Verdict};

fn items(kind: DatasetKind, n: usize) -> Vec<String> {
    let cfg = DatasetConfig {
        seed: 11,
        ..DatasetConfig::table1(kind)
    };
    (0..3)
        .flat_map(|b| generate_batch(&cfg, b).unwrap().items)
        .map(|i| i.fs)
        .take(n)
        .collect()
}

#[test]
fn two_thousand_items_of_each_dataset_round_trip_exactly() {
    let templates = Templates::builtin();
    let sigma = ['0', '1'];
    for kind in DatasetKind::ALL {
        let family = Family::of_dataset(kind.name()).unwrap();
        let check_kind: Kind = kind.check_kind().parse().unwrap();
        let items = items(kind, 2000);
        assert_eq!(items.len(), 2000, "{kind:?}");
        let mut equivalent = 0;
        for phi0 in &items {
            let shots = if equivalent % 2 == 0 {
                Shots::ZeroShot
            } else {
                Shots::FewShot
            };
            let i = templates.informalize(family, phi0, shots, &sigma).unwrap();
            let english = answer(&i.text, None);
            let copy = copy_check(phi0, &english);
            assert!(!copy.copied, "{phi0}: {english} copies {copy:?}");
            let a = templates
                .autoformalize(family, phi0, &english, shots, &sigma)
                .unwrap();
            let phi1 = answer(&a.text, None);
            let o = check(check_kind, phi0, &phi1, &Settings::default(), &InProcessZ3);
            assert_eq!(
                o.verdict,
                Verdict::Equivalent,
                "{phi0} -> {english} -> {phi1}: {o:?}"
            );
            equivalent += 1;
        }
        eprintln!(
            "{}: {equivalent}/2000 compliant and equivalent",
            kind.name()
        );
    }
}

#[test]
fn non_logic_quantifier_lists_and_lenient_connectives_round_trip() {
    for text in [
        "∀ x1 x2.(pred1(x1) → ∃ x3.pred2(x2, x3))",
        "(p1 ↔ p2) ⊕ ¬p3",
    ] {
        let english = informalize(text, false).unwrap();
        let back = autoformalize(&english, false).unwrap();
        let o = check(Kind::Fol, text, &back, &Settings::default(), &InProcessZ3);
        assert_eq!(
            o.verdict,
            Verdict::Equivalent,
            "{text} -> {english} -> {back}"
        );
    }
    let english = informalize("(0|1)+0?", true).unwrap();
    assert_eq!(autoformalize(&english, true).unwrap(), "(0|1)+0?");
}

#[test]
fn english_that_is_not_controlled_is_refused_with_the_place() {
    let err =
        read::read_formula("all of the following 2 statements hold: proposition p1").unwrap_err();
    assert_eq!(err.found, "");
    let err = read::read_formula("Both p1 and p2 hold.").unwrap_err();
    assert_eq!(err.at, 0);
    let deep = "it is not the case that ".repeat(10_000) + "proposition p1";
    assert!(read::read_formula(&deep).is_err());
    assert!(answer("Tell me a joke", None).starts_with("I cannot answer this"));
}

/// Whether an injection happens to keep the meaning (e.g. swapping ∧ for ∨
/// in `p1 ∧ p1`): `Some(true)` when proved equivalent, `None` when undecided.
fn preserves_meaning(phi0: &str, injected: &str, kind: Kind) -> Option<bool> {
    let settings = Settings {
        limits: autoeval_verify::ProverLimits {
            timeout_ms: 5_000,
            rlimit: 50_000_000,
        },
        ..Settings::default()
    };
    match check(kind, phi0, injected, &settings, &InProcessZ3).verdict {
        Verdict::Equivalent => Some(true),
        Verdict::NotEquivalent | Verdict::NonCompliant => Some(false),
        _ => None,
    }
}

#[test]
fn noisy_accuracy_matches_the_injected_rate() {
    use autoeval_reference_model::{answer_noisy, noise};
    let templates = Templates::builtin();
    let sigma = ['0', '1'];
    let rate = 0.2;
    for kind in DatasetKind::ALL {
        let family = Family::of_dataset(kind.name()).unwrap();
        let check_kind: Kind = kind.check_kind().parse().unwrap();
        let items = items(kind, 2000);
        let (mut equivalent, mut preserving, mut injected) = (0usize, 0usize, 0usize);
        for phi0 in &items {
            let regex = kind == DatasetKind::Regex;
            if let Some(inj) = noise::injection(phi0, regex, rate) {
                injected += 1;
                if preserves_meaning(phi0, &inj.formula, check_kind) == Some(true) {
                    preserving += 1;
                }
            }
            let i = templates
                .informalize(family, phi0, Shots::ZeroShot, &sigma)
                .unwrap();
            let english = answer_noisy(&i.text, rate, None);
            let a = templates
                .autoformalize(family, phi0, &english, Shots::ZeroShot, &sigma)
                .unwrap();
            let phi1 = answer_noisy(&a.text, rate, None);
            if check(check_kind, phi0, &phi1, &Settings::default(), &InProcessZ3).verdict
                == Verdict::Equivalent
            {
                equivalent += 1;
            }
        }
        let n = items.len() as f64;
        let measured = equivalent as f64 / n;
        let expected = 1.0 - rate + preserving as f64 / n;
        eprintln!(
            "{}: measured {:.3}, expected {:.3} ({injected} injected, {preserving} kept the meaning)",
            kind.name(),
            measured,
            expected
        );
        assert!(
            (measured - expected).abs() <= 0.03,
            "{kind:?}: {measured} vs {expected}"
        );
    }
}

#[test]
fn the_reference_judge_answers_the_a4_question() {
    use autoeval_prompts::{parse_judgement, JudgeStyle, Judgement};
    let t = Templates::builtin();
    let yes = t.judge(
        Family::FirstOrder,
        "∀ x1.pred1(x1)",
        "∀ x2.pred1(x2)",
        JudgeStyle::Cot,
    );
    let judge: autoeval_reference_model::Judge = std::sync::Arc::new(autoeval_verify::equivalent);
    assert_eq!(
        parse_judgement(&answer(&yes.text, Some(&judge))),
        Judgement::Yes
    );
    let no = t.judge(Family::Regex, "(00)*", "0(00)*", JudgeStyle::Yesno);
    assert_eq!(
        parse_judgement(&answer(&no.text, Some(&judge))),
        Judgement::No
    );
    // Without a judge the model says it cannot answer, which reads as no answer.
    assert_eq!(
        parse_judgement(&answer(&no.text, None)),
        Judgement::Unparseable
    );
    // The public implementation's judge prompt puts each formula on its
    // tag's line; the second may run over several lines.
    let r = Templates::of_set(autoeval_prompts::PromptSet::Reference);
    let cases = [
        (
            Family::Propositional,
            "(p1 ∧ ¬p2)",
            "¬p2 ∧ p1",
            Judgement::Yes,
        ),
        (
            Family::Propositional,
            "(p1 ∨ p2)",
            "p1 ∧\np2",
            Judgement::No,
        ),
        (
            Family::FirstOrder,
            "∀ x1.(pred1(x1) ∨ pred2(x1))",
            "∀ x2.(pred2(x2) ∨ pred1(x2))",
            Judgement::Yes,
        ),
        (Family::Regex, "(00)*", "(00)*", Judgement::Yes),
        (Family::Regex, "(00)*", "0(00)*", Judgement::No),
    ];
    for (family, phi0, phi1, want) in cases {
        let q = r.judge(family, phi0, phi1, JudgeStyle::Cot);
        assert!(q.text.contains("[Formula 2] "), "{}", q.text);
        assert_eq!(
            parse_judgement(&answer(&q.text, Some(&judge))),
            want,
            "{phi0} vs {phi1}"
        );
    }
}
