//! Prompts as the paper shows them, templates users replace, judge answers, copy checks.

use autoeval_prompts::*;

const SIGMA: [char; 2] = ['0', '1'];

#[test]
fn propositional_informalization_matches_prompt_6() {
    let p = Templates::builtin()
        .informalize(
            Family::Propositional,
            "(p5 ∨ ¬p12 ∨ ¬p4)",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(p.text.starts_with(
        "[TASK]\nYour task is to convert a propositional logic formula, appearing after [FORMULA]"
    ));
    assert!(p
        .text
        .contains("∨ represents disjunction\n∧ represents conjunction\n¬ represents negation"));
    assert!(p.text.contains("The propositions are: p5, p12, p4"));
    assert!(p.text.ends_with("[FORMULA]\n(p5 ∨ ¬p12 ∨ ¬p4)\n"));
    assert!(!p.text.contains("[EXAMPLE"));
    assert!(p.template.starts_with("informalize-logic@"));
}

#[test]
fn first_order_vocabulary_lists_objects_predicates_and_variables() {
    let t = Templates::builtin();
    let p = t
        .informalize(
            Family::FirstOrder,
            "∀ x1.pred3(p5, x1)",
            Shots::FewShot,
            &SIGMA,
        )
        .unwrap();
    assert!(p.text.contains("The objects are: p5"));
    assert!(p
        .text
        .contains("The parameterized predicates are: pred3(?p0, ?p1)"));
    assert!(p.text.contains("The free variables are: x1"));
    assert!(p
        .text
        .contains("[EXAMPLE 1]\n(¬p2 ∨ p1 ∨ ¬p2)\nDisjunctive"));
    assert!(p.text.contains("[EXAMPLE 2]"));
    let a = t
        .autoformalize(
            Family::FirstOrder,
            "∀ x1.pred3(p5, x1)",
            "For all x1, pred3 holds for p5 and x1.",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(a
        .text
        .starts_with("[VOCABULARY]\nUse ∨ to represent disjunction"));
    assert!(a.text.contains("(1) all x1 x2. (2) exists x4."));
    assert!(
        !a.text.contains("free variables are"),
        "A must not be told the variables"
    );
    assert!(a
        .text
        .ends_with("[NL DESCRIPTION]\nFor all x1, pred3 holds for p5 and x1.\n"));
    let e = t
        .informalize(
            Family::FirstOrderEnglish,
            "admire(Alice, Bob) ∧ cry(Bob)",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(
        e.text.contains("admire(?p0, ?p1) means ?p0 admires ?p1"),
        "{}",
        e.text
    );
    assert!(e.text.contains("cry(?p0) means ?p0 cries"));
    assert!(e.text.contains("The objects are: Alice, Bob"));
}

#[test]
fn regex_prompts_follow_prompts_4_and_5() {
    let t = Templates::builtin();
    let i = t
        .informalize(Family::Regex, "(1*)0*", Shots::FewShot, &SIGMA)
        .unwrap();
    assert!(i.text.contains("you can use *"));
    assert!(i.text.contains("The symbols are: 0, 1"));
    assert!(i
        .text
        .contains("[EXAMPLE 2]\n(01*)\nThe regex matches strings that begin with a '0'"));
    let a = t
        .autoformalize(
            Family::Regex,
            "(1*)0*",
            "Any number of ones.",
            Shots::FewShot,
            &SIGMA,
        )
        .unwrap();
    assert!(a
        .text
        .contains("Use * to represent zero or more duplications"));
    assert!(a
        .text
        .contains("[EXAMPLE 1]\nThe regex matches strings that starts with"));
}

#[test]
fn templates_can_be_replaced_and_their_version_follows() {
    let builtin = Templates::builtin();
    let custom = Templates::builtin()
        .with_overrides([(
            "judge-yesno".to_string(),
            "Same? {formula1} / {formula2} ({logic})".to_string(),
        )])
        .unwrap();
    let a = builtin.judge(Family::Propositional, "p1", "p2", JudgeStyle::Yesno);
    let b = custom.judge(Family::Propositional, "p1", "p2", JudgeStyle::Yesno);
    assert_eq!(b.text, "Same? p1 / p2 (propositional logic)");
    assert_ne!(a.template, b.template);
    let err = Templates::builtin()
        .with_overrides([("judge-cot".to_string(), "{formula3}".to_string())])
        .unwrap_err();
    assert!(err.to_string().contains("{formula3}"), "{err}");
    let err = Templates::builtin()
        .with_overrides([("judge".to_string(), String::new())])
        .unwrap_err();
    assert!(err.to_string().contains("judge-cot"), "{err}");
    let cot = builtin.judge(
        Family::FirstOrder,
        "∃ x1.¬pred5(p7)",
        "∃ p7.¬pred5(p7)",
        JudgeStyle::Cot,
    );
    assert!(cot
        .text
        .contains("[FORMULA 1]\n∃ x1.¬pred5(p7)\n\n[FORMULA 2]\n∃ p7.¬pred5(p7)"));
}

#[test]
fn judge_answers_last_marker_wins() {
    use Judgement::*;
    let cases = [
        ("They differ in scope. [Answer] no", No),
        ("[Answer] yes", Yes),
        ("yes", Yes),
        ("No.", No),
        (
            "At first I thought [Answer] no, but on reflection [Answer] Yes.",
            Yes,
        ),
        ("Answer: **Yes**", Yes),
        ("I do not know.", Unparseable),
        ("The formulas are not the same", Unparseable),
        ("[Answer] maybe", Unparseable),
        ("", Unparseable),
    ];
    for (text, want) in cases {
        assert_eq!(parse_judgement(text), want, "{text:?}");
    }
}

#[test]
fn copy_check_finds_symbols_fragments_and_verbatim_copies() {
    let f = "(p1 ∧ ¬(p2 ∨ p3))";
    assert!(copy_check(f, "The formula (p1 ∧ ¬(p2 ∨ p3)) holds.").copied);
    let c = copy_check(f, "p1 holds, and not p2 ∨ p3.");
    assert!(c.copied && c.symbols == ["∨"], "{c:?}");
    let c = copy_check(f, "It says p1 and also ¬(p2 or p3)");
    assert!(c.copied);
    let clean = copy_check(
        f,
        "Proposition p1 holds, and it is not the case that p2 or p3 holds. **Important**",
    );
    assert!(!clean.copied, "{clean:?}");
    let regex = copy_check("(01*)", "a zero followed by 1* ones");
    assert!(regex.copied && regex.symbols == ["*"]);
}
