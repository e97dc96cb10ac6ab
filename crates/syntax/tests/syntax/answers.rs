//! Reading answers: strict takes exactly one formula in the prompt's
//! notation; lenient finds it in prose and brackets; neither scores a piece
//! of an answer that offers more than one formula.

use autoeval_syntax::{canonical, parse_formula, print, Formula, Mode, Reason, Style};
use proptest::prelude::*;

/// Formulas of the benchmark's grammars, printed in the prompt's notation.
fn arb_formula() -> impl Strategy<Value = Formula> {
    let atom = prop_oneof![
        (1..13u8).prop_map(|i| Formula::prop(format!("p{i}"))),
        (
            1..9u8,
            prop::collection::vec(prop::sample::select(vec!["p1", "p7", "x1"]), 1..3)
        )
            .prop_map(|(i, args)| Formula::pred(format!("pred{i}"), &args)),
    ];
    atom.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(Formula::negate),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
            prop::collection::vec(inner, 2..4).prop_map(Formula::Or),
        ]
    })
    // A formula with at least one operator: a lone name in prose is a word.
    .prop_filter("compound", |f| !matches!(f, Formula::Atom { .. }))
}

fn text(f: &Formula) -> String {
    print::formula(&canonical(f), Style::Unicode)
}

fn read(answer: &str, mode: Mode) -> Result<String, Reason> {
    parse_formula(answer, mode)
        .map(|p| text(&p.value))
        .map_err(|e| e.reason)
}

const PROSE: [(&str, &str); 4] = [
    ("The formula is ", "."),
    ("Answer: ", ""),
    ("So the result is ", ", as required"),
    ("Here it is:\n```\n", "\n```\nHope this helps."),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_formula_alone_reads_the_same_in_both_modes(f in arb_formula()) {
        let t = text(&f);
        prop_assert_eq!(read(&t, Mode::Strict), Ok(t.clone()));
        prop_assert_eq!(read(&format!("```\n{t}\n```\n"), Mode::Strict), Ok(t.clone()));
        prop_assert_eq!(read(&t, Mode::Lenient), Ok(t));
    }

    #[test]
    fn a_formula_in_prose_is_found_leniently_and_refused_strictly(f in arb_formula(), i in 0..PROSE.len()) {
        let t = text(&f);
        let (before, after) = PROSE[i];
        let answer = format!("{before}{t}{after}");
        prop_assert_eq!(read(&answer, Mode::Lenient), Ok(t));
        prop_assert!(read(&answer, Mode::Strict).is_err());
    }

    #[test]
    fn a_formula_between_two_different_formulas_is_ambiguous(
        a in arb_formula(), b in arb_formula(), c in arb_formula(),
    ) {
        let (ta, tb, tc) = (text(&a), text(&b), text(&c));
        prop_assume!(ta != tb || tb != tc);
        let answer = format!("First {ta}, then {tb}, and finally {tc}.");
        prop_assert!(matches!(read(&answer, Mode::Lenient), Err(Reason::Ambiguous(_))), "{}", answer);
        let lines = format!("{ta}\n{tb}\n{tc}");
        prop_assert!(matches!(read(&lines, Mode::Lenient), Err(Reason::Ambiguous(_))), "{}", lines);
        prop_assert!(read(&lines, Mode::Strict).is_err());
    }

    #[test]
    fn a_formula_on_either_side_of_an_equals_sign_is_never_scored(a in arb_formula(), b in arb_formula()) {
        let (ta, tb) = (text(&a), text(&b));
        for answer in [format!("{ta} = {tb}"), format!("The answer: {ta} = {tb}"), format!("φ = {ta}")] {
            prop_assert!(read(&answer, Mode::Lenient).is_err(), "{}", answer);
            prop_assert!(read(&answer, Mode::Strict).is_err(), "{}", answer);
        }
        let equation = format!("Thus {ta} = {tb} holds");
        prop_assert!(matches!(read(&equation, Mode::Lenient), Err(Reason::Ambiguous(_))), "{}", equation);
    }

    #[test]
    fn the_same_formula_repeated_is_one_answer(f in arb_formula()) {
        let t = text(&f);
        let answer = format!("The formula is {t}.\n\nFinal answer:\n```\n{t}\n```");
        prop_assert_eq!(read(&answer, Mode::Lenient), Ok(t.clone()));
        prop_assert!(read(&answer, Mode::Strict).is_err());
    }

    #[test]
    fn brackets_group_leniently_only(f in arb_formula()) {
        let t = text(&f);
        let squared = t.replacen('(', "[", 1);
        // Replace the matching close of the first '(' to keep the brackets paired.
        let squared = pair_first_bracket(&squared, '[', ']');
        if squared != t {
            prop_assert_eq!(read(&squared, Mode::Lenient), Ok(t.clone()));
            prop_assert!(read(&squared, Mode::Strict).is_err());
            let curly = squared.replace('[', "{").replace(']', "}");
            prop_assert_eq!(read(&curly, Mode::Lenient), Ok(t));
        }
    }
}

/// `text` with the `)` that closes its first `open` turned into `close`.
fn pair_first_bracket(text: &str, open: char, close: char) -> String {
    let Some(start) = text.find(open) else {
        return text.to_string();
    };
    let mut depth = 0;
    let mut out = String::with_capacity(text.len());
    let mut done = false;
    for (i, c) in text.char_indices() {
        if !done && i > start {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    out.push(close);
                    done = true;
                    continue;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

#[test]
fn examples_of_each_rule() {
    assert_eq!(
        read("[p1 ∧ p2] ∨ p3", Mode::Lenient),
        Ok("((p1 ∧ p2) ∨ p3)".into())
    );
    assert_eq!(
        read("{p1 ∨ p2} ∧ ¬p3", Mode::Lenient),
        Ok("((p1 ∨ p2) ∧ ¬p3)".into())
    );
    // Mismatched brackets are not quietly paired.
    assert!(read("[p1 ∧ p2) ∨ p3", Mode::Lenient).is_err());
    for answer in [
        "(p1 ∧ p2) = (p1 ∧ p2 ∧ p3)",
        "It could be (p1 ∧ p2) or (p1 ∨ p2).",
        "φ0 = (p1 ∧ p2), so φ1 = (p2 ∧ p3)",
    ] {
        assert!(
            matches!(read(answer, Mode::Lenient), Err(Reason::Ambiguous(_))),
            "{answer}"
        );
    }
    // The prompt's notation only, strictly: ∀/all and ∃/exists, ∧ ∨ ¬.
    assert_eq!(
        read("all x1. pred1(x1) ∧ p2", Mode::Strict),
        Ok("∀ x1.(pred1(x1) ∧ p2)".into())
    );
    assert_eq!(
        read("exists x1 x2. pred2(x1, x2)", Mode::Strict),
        Ok("∃ x1 x2.pred2(x1, x2)".into())
    );
    for (answer, found) in [
        ("p1 & p2", "&"),
        ("p1 or p2", "or"),
        ("~p1", "~"),
        (r"p1 \land p2", r"\land"),
    ] {
        match read(answer, Mode::Strict) {
            Err(Reason::Notation(f, _)) => assert_eq!(f, found),
            other => panic!("{answer}: {other:?}"),
        }
        assert!(read(answer, Mode::Lenient).is_ok(), "{answer}");
    }
    // English operator words in the surrounding prose stay prose.
    assert_eq!(
        read("The answer is (p1 ∨ p2) and nothing else.", Mode::Lenient),
        Ok("(p1 ∨ p2)".into())
    );
}

#[test]
fn a_formula_in_the_prose_and_another_on_its_own_line_is_ambiguous() {
    for answer in [
        "The formula is p1 ∧ p2.\n\np1 ∨ p2",
        "So the answer, p1 ∧ p2, follows.\n```\np1 ∨ p2\n```",
        "p1 ∨ p2\n\nIn words: it is p1 ∧ p2.",
        // An atom named in the prose is a formula as much as a compound one.
        "The formula is p4, and predicates are:\n¬p4",
        "The answer is pred1(x1).\n\n∀ x1.pred1(x1)",
        "φ1 = p2\n(p2 ∧ p3)",
    ] {
        let read = autoeval_syntax::parse_formula(answer, autoeval_syntax::Mode::Lenient);
        assert!(
            read.as_ref()
                .is_err_and(|e| e.to_string().contains("two different formulas")),
            "{answer:?} read as {read:?}"
        );
    }
}

#[test]
fn an_atom_in_prose_that_explains_or_repeats_the_formula_is_no_second_formula() {
    for (answer, want) in [
        // The same atom named and displayed.
        ("The formula is p4:\n\np4", "p4"),
        // An atom explained, not offered.
        ("Here p1 means it rains.\n(p1 ∧ p2)", "(p1 ∧ p2)"),
        // A word after "is" is prose.
        ("The answer is below.\n(p1 ∨ p2)", "(p1 ∨ p2)"),
        // An atom inside the announced formula.
        ("The formula is p4 ∧ p5.", "(p4 ∧ p5)"),
    ] {
        assert_eq!(read(answer, Mode::Lenient), Ok(want.into()), "{answer:?}");
    }
}
