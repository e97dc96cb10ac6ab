//! Behaviour of the tolerant logic parser on what LLMs actually write.

use autoeval_syntax::{
    canonical, parse_formula, parse_formula_exact, print, Formula, Mode, Reason, Source, Style,
};

fn canon(text: &str) -> String {
    let f = parse_formula(text, Mode::Lenient)
        .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
        .value;
    print::formula(&canonical(&f), Style::Unicode)
}

#[test]
fn operator_spellings_agree() {
    let expected = "(p1 ∧ ¬p2 ∧ (p3 ∨ p4))";
    for text in [
        "p1 ∧ ¬p2 ∧ (p3 ∨ p4)",
        "p1 & ~p2 & (p3 | p4)",
        "p1 && !p2 && (p3 || p4)",
        "p1 and not p2 and (p3 or p4)",
        "p1 AND NOT p2 AND (p3 OR p4)",
        "p1 ∧ -p2 ∧ (p3 v p4)",
        r"p1 \land \neg p2 \land (p3 \lor p4)",
        r"p1 /\ ~p2 /\ (p3 \/ p4)",
        "((p1 ∧ ¬p2 ∧ (p3 ∨ p4)))",
        "  p1\n ∧ ¬ p2 ∧\t( p3 ∨ p4 )  ",
    ] {
        assert_eq!(canon(text), expected, "for {text:?}");
    }
}

#[test]
fn v_is_disjunction_only_as_a_whole_token() {
    assert_eq!(canon("alive v receive"), "(alive ∨ receive)");
    assert_eq!(canon("love(Vivian) v vv"), "(love(Vivian) ∨ vv)");
    let f = parse_formula_exact("vivid", Mode::Strict).unwrap();
    assert_eq!(f, Formula::prop("vivid"));
}

#[test]
fn names_are_case_sensitive() {
    let a = parse_formula_exact("P1 ∧ p1", Mode::Strict).unwrap();
    assert_eq!(
        a,
        Formula::And(vec![Formula::prop("P1"), Formula::prop("p1")])
    );
}

#[test]
fn quantifier_forms() {
    let expected = "∀ x1 x2.pred1(x1, x2)";
    for text in [
        "∀ x1 x2.pred1(x1, x2)",
        "∀x1 ∀x2. pred1(x1,x2)",
        "all x1 x2. pred1(x1, x2)",
        "forall x1: forall x2: pred1(x1, x2)",
        "∀x1,x2. pred1(x1, x2)",
        "∀x1 ∀x2 pred1(x1, x2)",
        r"\forall x1 x2. pred1(x1, x2)",
    ] {
        assert_eq!(canon(text), expected, "for {text:?}");
    }
    assert_eq!(canon("∃ x1 p1"), "∃ x1.p1");
    assert_eq!(canon("∃x1 (pred2(x1) ∧ p3)"), "∃ x1.(pred2(x1) ∧ p3)");
}

#[test]
fn quantifier_scope_runs_right() {
    assert_eq!(canon("∀x1. a(x1) ∧ b"), "∀ x1.(a(x1) ∧ b)");
    assert_eq!(canon("(∀x1. a(x1)) ∧ b"), "((∀ x1.a(x1)) ∧ b)");
}

#[test]
fn precedence_and_over_or() {
    assert_eq!(canon("a ∧ b ∨ c"), "((a ∧ b) ∨ c)");
    assert_eq!(canon("a ∨ b ∧ c"), "(a ∨ (b ∧ c))");
}

#[test]
fn prose_and_code_fences_are_looked_past() {
    let answer = "Here is the formula:\n```\n(p1 ∧ p2)\n```\nHope this helps.";
    let parsed = parse_formula(answer, Mode::Lenient).unwrap();
    assert_eq!(parsed.source, Source::CodeBlock);
    assert_eq!(canon(answer), "(p1 ∧ p2)");
    // Strict reading takes the answer as it is, less one code fence.
    assert!(parse_formula(answer, Mode::Strict).is_err());
    let fenced = parse_formula("\n```text\n(p1 ∧ p2)\n```  ", Mode::Strict).unwrap();
    assert_eq!(fenced.source, Source::CodeBlock);
    assert_eq!(canon("Formula: (p1 ∨ ¬p3)"), "(p1 ∨ ¬p3)");
    assert_eq!(canon("The answer is `p1 ∧ p2`."), "(p1 ∧ p2)");
    assert_eq!(
        canon("So the result is ¬(p1 ∧ p2), as required"),
        "¬(p1 ∧ p2)"
    );
}

#[test]
fn strict_mode_refuses_connectives_outside_the_prompt() {
    for text in [
        "p1 → p2",
        "p1 -> p2",
        "p1 ↔ p2",
        "p1 <-> p2",
        "p1 ⊕ p2",
        "p1 xor p2",
    ] {
        let err = parse_formula(text, Mode::Strict).unwrap_err();
        assert!(
            matches!(err.reason, Reason::OutsideVocabulary(_)),
            "{text}: {err}"
        );
        assert!(parse_formula(text, Mode::Lenient).is_ok(), "{text}");
    }
}

#[test]
fn refusals_say_why() {
    let cases = [
        ("", "no formula"),
        ("(p1 ∧ p2", "never closed"),
        ("p1 ∧ p2)", "no matching"),
        ("p1 ∧", "end of the answer"),
        ("pred1() ∧ p2", "no arguments"),
        ("x = y", "equality"),
        ("p1 ∧ ∧ p2", "expected a formula"),
        ("∀ . p1", "without a variable"),
    ];
    for (text, needle) in cases {
        let err = parse_formula(text, Mode::Lenient).unwrap_err();
        assert!(err.to_string().contains(needle), "{text:?} gave {err}");
    }
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let deep = format!("{}p1{}", "(".repeat(100_000), ")".repeat(100_000));
    let err = parse_formula(&deep, Mode::Lenient).unwrap_err();
    assert!(matches!(err.reason, Reason::TooDeep(_)), "{err}");
    let negs = format!("{}p1", "¬".repeat(100_000));
    assert!(matches!(
        parse_formula(&negs, Mode::Lenient).unwrap_err().reason,
        Reason::TooLong(..) | Reason::TooDeep(_)
    ));
    let arrows = "p1 → ".repeat(10_000) + "p1";
    assert!(parse_formula(&arrows, Mode::Lenient).is_err());
    let long = "p1 ∧ ".repeat(30_000) + "p1";
    assert!(parse_formula(&long, Mode::Lenient).is_ok());
    let unclosed = "(".repeat(100_000);
    assert!(parse_formula(&unclosed, Mode::Lenient).is_err());
}

#[test]
fn reference_style_prints_v_and_tight_arguments() {
    let f = parse_formula_exact("∀ x1.(pred1(x1, p2) ∨ ¬p3)", Mode::Strict).unwrap();
    assert_eq!(
        print::formula(&f, Style::Reference),
        "∀ x1.(pred1(x1,p2) v ¬p3)"
    );
    assert_eq!(
        print::formula(&f, Style::Ascii),
        "all x1.(pred1(x1, p2) | ~p3)"
    );
    let back = parse_formula_exact(&print::formula(&f, Style::Reference), Mode::Strict).unwrap();
    assert_eq!(back, f);
}
