//! Verdicts on hand-picked pairs, including the reference's known pitfalls.

use autoeval_verify::{check, Counterexample, InProcessZ3, Kind, Method, Settings, Verdict};

fn verdict(kind: Kind, a: &str, b: &str) -> (Verdict, Method) {
    let o = check(kind, a, b, &Settings::default(), &InProcessZ3);
    (o.verdict, o.method)
}

#[test]
fn propositional_equivalences() {
    use Verdict::*;
    let cases = [
        ("(p1 ∧ p2)", "p2 & p1", Equivalent),
        ("¬(p1 ∧ p2)", "¬p1 ∨ ¬p2", Equivalent),
        ("¬¬p1", "p1", Equivalent),
        ("(p1 ∨ p2)", "(p1 ∧ p2)", NotEquivalent),
        ("p1", "P1", NotEquivalent),
        ("(alive ∨ receive)", "alive v receive", Equivalent),
        ("(p1 ∨ ¬p1)", "(p2 ∨ ¬p2)", Equivalent),
    ];
    for (a, b, want) in cases {
        assert_eq!(verdict(Kind::Plogic, a, b).0, want, "{a} vs {b}");
    }
}

#[test]
fn counterexample_assignment_distinguishes() {
    let o = check(
        Kind::Plogic,
        "(p1 ∨ p2)",
        "(p1 ∧ p2)",
        &Settings::default(),
        &InProcessZ3,
    );
    let Some(Counterexample::Assignment { assignment }) = o.counterexample else {
        panic!("expected an assignment, got {o:?}");
    };
    assert_ne!(assignment["p1"], assignment["p2"]);
}

#[test]
fn first_order_through_z3() {
    use Verdict::*;
    let cases = [
        ("∀ x1.pred1(x1)", "∀ x2.pred1(x2)", Equivalent),
        ("∀ x1.pred1(x1)", "∃ x1.pred1(x1)", NotEquivalent),
        ("∀ x1.pred1(p1)", "∃ x1.pred1(p1)", Equivalent),
        (
            "∀ x1.∃ x2.pred2(x1, x2)",
            "∃ x2.∀ x1.pred2(x1, x2)",
            NotEquivalent,
        ),
        (
            "∃ x1.∀ x2.pred2(x1, x2)",
            "∃ x1.∀ x2.pred2(x1, x2) ∧ ∀ x3.∃ x4.pred2(x4, x3)",
            Equivalent,
        ),
        (
            "∀ x1.(pred1(x1) ∧ pred2(x1))",
            "∀ x1.pred1(x1) ∧ ∀ x2.pred2(x2)",
            Equivalent,
        ),
        ("∃ x1.¬pred5(p7)", "∃ p7.¬pred5(p7)", NotEquivalent),
        (
            "∀ x1.(pred1(x1) ∨ pred2(x1))",
            "∀ x1.pred1(x1) ∨ ∀ x1.pred2(x1)",
            NotEquivalent,
        ),
    ];
    for (a, b, want) in cases {
        let (v, _) = verdict(Kind::Fol, a, b);
        assert_eq!(v, want, "{a} vs {b}");
    }
}

#[test]
fn first_order_counterexample_is_a_checked_model() {
    let o = check(
        Kind::Fol,
        "∀ x1.pred1(x1)",
        "∃ x1.pred1(x1)",
        &Settings::default(),
        &InProcessZ3,
    );
    assert_eq!(o.method, Method::Z3);
    match o.counterexample {
        Some(Counterexample::Model {
            domain, true_atoms, ..
        }) => {
            assert!(domain.len() >= 2, "{domain:?}");
            assert!(!true_atoms.is_empty());
        }
        other => panic!("expected a finite model, got {other:?}"),
    }
}

#[test]
fn regex_pitfalls() {
    use Verdict::*;
    let cases = [
        ("0*", "1*", NotEquivalent),
        ("(00)*", "0(00)*", NotEquivalent),
        ("(0*)*", "0*", Equivalent),
        ("(01*)", "01*", Equivalent),
        ("0*0*", "0*", Equivalent),
        ("(0*1*)*", "(1*0*)*", Equivalent),
        ("10*1", "1(0)*1", Equivalent),
        ("01", "10", NotEquivalent),
    ];
    for (a, b, want) in cases {
        assert_eq!(verdict(Kind::Regex, a, b).0, want, "{a} vs {b}");
    }
    let o = check(
        Kind::Regex,
        "(00)*",
        "0(00)*",
        &Settings::default(),
        &InProcessZ3,
    );
    assert_eq!(
        o.counterexample,
        Some(Counterexample::Word {
            word: String::new(),
            accepted_by: "phi0".into()
        })
    );
}

#[test]
fn unparseable_answers_are_non_compliant_with_a_reason() {
    let o = check(
        Kind::Plogic,
        "(p1 ∧ p2)",
        "(p1 ∧ p2",
        &Settings::default(),
        &InProcessZ3,
    );
    assert_eq!(o.verdict, Verdict::NonCompliant);
    assert!(o.reason.unwrap().contains("never closed"));
    let o = check(
        Kind::Regex,
        "01*",
        "0+1",
        &Settings {
            mode: autoeval_syntax::Mode::Strict,
            ..Settings::default()
        },
        &InProcessZ3,
    );
    assert_eq!(o.verdict, Verdict::NonCompliant);
}
