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
        ("p1", "P1", Equivalent),
        ("p1", "P2", NotEquivalent),
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

/// The pigeonhole principle for `n + 1` pigeons and `n` holes: unsatisfiable
/// and hard for resolution, with more atoms than a truth table takes.
fn pigeonhole(n: usize) -> String {
    let p = |i: usize, j: usize| format!("p{i}_{j}");
    let mut clauses = Vec::new();
    for i in 0..=n {
        clauses.push(format!(
            "({})",
            (0..n).map(|j| p(i, j)).collect::<Vec<_>>().join(" ∨ ")
        ));
    }
    for j in 0..n {
        for a in 0..=n {
            for b in a + 1..=n {
                clauses.push(format!("(¬{} ∨ ¬{})", p(a, j), p(b, j)));
            }
        }
    }
    clauses.join(" ∧ ")
}

#[test]
fn a_hard_check_ends_as_timeout_within_its_budgets() {
    use autoeval_verify::ProverLimits;
    let hard = pigeonhole(10);
    let contradiction = "(q ∧ ¬q)";
    let tight_time = Settings {
        limits: ProverLimits {
            timeout_ms: 200,
            rlimit: 0,
        },
        ..Settings::default()
    };
    let started = std::time::Instant::now();
    let o = check(
        Kind::Plogic,
        &hard,
        contradiction,
        &tight_time,
        &InProcessZ3,
    );
    assert_eq!(o.verdict, Verdict::Timeout, "{o:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let tight_resources = Settings {
        limits: ProverLimits {
            timeout_ms: 60_000,
            rlimit: 20_000,
        },
        ..Settings::default()
    };
    let o = check(
        Kind::Plogic,
        &hard,
        contradiction,
        &tight_resources,
        &InProcessZ3,
    );
    assert_eq!(o.verdict, Verdict::Timeout, "{o:?}");
    assert!(o.reason.is_some());
}

#[test]
fn names_compare_without_case_unless_two_of_phi0s_names_differ_only_in_case() {
    let settings = Settings::default();
    for mode in [
        autoeval_syntax::Mode::Strict,
        autoeval_syntax::Mode::Lenient,
    ] {
        let settings = Settings {
            mode,
            ..settings.clone()
        };
        let folded = check(
            Kind::Fol,
            "∀ x1.(Admire(x1, Richard) ∨ ¬Walk(Ann))",
            "∀ X1.(admire(X1, richard) ∨ ¬WALK(ann))",
            &settings,
            &InProcessZ3,
        );
        assert_eq!(folded.verdict, Verdict::Equivalent, "{mode:?}: {folded:?}");
        assert!(!folded.case_sensitive);
        let wrong = check(
            Kind::Fol,
            "Admire(Richard)",
            "admire(ann)",
            &settings,
            &InProcessZ3,
        );
        assert_eq!(wrong.verdict, Verdict::NotEquivalent, "{mode:?}");
        // φ0 has `P1` and `p1`: folding would merge two propositions.
        let exact = check(
            Kind::Plogic,
            "(P1 ∧ ¬p1)",
            "(p1 ∧ ¬p1)",
            &settings,
            &InProcessZ3,
        );
        assert_eq!(exact.verdict, Verdict::NotEquivalent, "{mode:?}");
        assert!(
            exact.case_sensitive,
            "the outcome says names kept their case"
        );
        let same = check(
            Kind::Plogic,
            "(P1 ∧ ¬p1)",
            "(¬p1 ∧ P1)",
            &settings,
            &InProcessZ3,
        );
        assert_eq!(same.verdict, Verdict::Equivalent, "{mode:?}");
    }
}
