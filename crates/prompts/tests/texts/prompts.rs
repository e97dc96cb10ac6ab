//! Prompts as the paper shows them, templates users replace, judge answers, copy checks.

use autoeval_prompts::*;

const SIGMA: [char; 2] = ['0', '1'];

/// The transcription of App. F's prompt `n` (tests/golden/promptN.txt).
fn golden(n: u32) -> String {
    let path = format!("{}/tests/golden/prompt{n}.txt", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn paper() -> Templates {
    Templates::of_set(PromptSet::Paper)
}

#[test]
fn prompt_2_few_shot_first_order_informalization() {
    let p = paper()
        .informalize(
            Family::FirstOrder,
            "∀x1 pred3(p5, x1)",
            Shots::FewShot,
            &SIGMA,
        )
        .unwrap();
    assert_eq!(p.text, golden(2));
    assert!(p.template.starts_with("informalize-logic@"));
}

#[test]
fn prompt_3_few_shot_first_order_autoformalization() {
    let description =
        "For all objects labeled x1, the predicate pred3 holds true with parameters p5 and x1.";
    let p = paper()
        .autoformalize(
            Family::FirstOrder,
            "∀x1 pred3(p5, x1)",
            description,
            Shots::FewShot,
            &SIGMA,
        )
        .unwrap();
    assert_eq!(p.text, golden(3));
}

#[test]
fn prompt_4_few_shot_regex_informalization() {
    let p = paper()
        .informalize(Family::Regex, "0", Shots::FewShot, &SIGMA)
        .unwrap();
    assert_eq!(p.text, golden(4));
}

#[test]
fn prompt_5_few_shot_regex_autoformalization() {
    let description = "The regex matches strings that start with the digit '0'.";
    let p = paper()
        .autoformalize(Family::Regex, "0", description, Shots::FewShot, &SIGMA)
        .unwrap();
    assert_eq!(p.text, golden(5));
}

#[test]
fn prompt_6_zero_shot_propositional_informalization() {
    let p = paper()
        .informalize(
            Family::Propositional,
            "(p5 ∨ ¬p12 ∨ ¬p4)",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert_eq!(p.text, golden(6));
}

#[test]
fn prompt_7_zero_shot_propositional_autoformalization() {
    let description = "A disjunctive statement involving three propositions: p5, the negation of p12, and the negation of p4.";
    let p = paper()
        .autoformalize(
            Family::Propositional,
            "(p5 ∨ ¬p12 ∨ ¬p4)",
            description,
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert_eq!(p.text, golden(7));
}

#[test]
fn prompt_8_first_order_verification() {
    let p = paper().judge(
        Family::FirstOrder,
        "∃x1. ¬pred5(p7)",
        "∃p7. ¬pred5(p7)",
        JudgeStyle::Cot,
    );
    assert_eq!(p.text, golden(8));
}

#[test]
fn the_paper_set_is_the_default_and_names_itself() {
    assert_eq!(Templates::builtin().set_id(), paper().set_id());
    assert!(paper().set_id().starts_with("paper@"));
    assert!(Templates::of_set(PromptSet::Extended)
        .set_id()
        .starts_with("extended@"));
    let custom = paper()
        .with_overrides([(
            "judge-yesno".to_string(),
            "{formula1} {formula2}".to_string(),
        )])
        .unwrap();
    assert!(custom.set_id().starts_with("paper+custom@"));
    // English FOL: the paper gives A the predicates and their arity, nothing more.
    let a = paper()
        .autoformalize(
            Family::FirstOrderEnglish,
            "admire(Alice, Bob) ∧ cry(Bob)",
            "Alice admires Bob, who cries.",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(
        a.text
            .contains("The parameterized predicates are: admire(?p0, ?p1), cry(?p0)"),
        "{}",
        a.text
    );
    assert!(
        !a.text.contains("Alice, Bob") && !a.text.contains("means"),
        "{}",
        a.text
    );
    let synthetic = paper()
        .autoformalize(
            Family::FirstOrder,
            "pred1(p2)",
            "d",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(!synthetic.text.contains("are:"), "{}", synthetic.text);
}

#[test]
fn the_extended_set_lists_every_name_meanings_and_the_alphabet() {
    let t = Templates::of_set(PromptSet::Extended);
    let p = t
        .informalize(
            Family::FirstOrder,
            "∀ x1.pred3(p5, x1)",
            Shots::FewShot,
            &SIGMA,
        )
        .unwrap();
    assert!(p.text.contains("The objects are: p5\n"));
    assert!(p
        .text
        .contains("The parameterized predicates are: pred3(?p0, ?p1)"));
    assert!(p.text.contains("The free variables are: x1"));
    let a = t
        .autoformalize(
            Family::FirstOrder,
            "∀ x1.pred3(p5, x1)",
            "For all x1, pred3 holds for p5 and x1.",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(a.text.contains("The objects are: p5"));
    assert!(
        !a.text.contains("free variables are"),
        "A must not be told the variables"
    );
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
    let i = t
        .informalize(Family::Regex, "(1*)0*", Shots::FewShot, &SIGMA)
        .unwrap();
    assert!(i.text.contains("The symbols are: 0, 1"));
    let r = t
        .autoformalize(Family::Regex, "(1*)0*", "Ones.", Shots::ZeroShot, &SIGMA)
        .unwrap();
    assert!(r.text.contains("The symbols are: 0, 1"));
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
}

#[test]
fn judge_answers_are_read_as_the_public_implementation_reads_them() {
    use Judgement::*;
    // As the public implementation reads them: after the last "answer",
    // exactly one of "yes" and "no" found as a substring.
    let cases = [
        ("They differ in scope. [Answer] no", No),
        ("[Answer] yes", Yes),
        ("[Answer] The answer is no", No),
        ("Answer: they are not equivalent", No),
        ("[Answer] yes, there is no difference", Unparseable),
        ("yes", Unparseable),
        ("No.", Unparseable),
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

#[test]
fn a_predicate_atom_named_in_the_english_is_not_a_copy_but_an_operator_beside_it_is() {
    let f = "∀ x1.(pred3(p5, x1) ∨ ¬pred1(x1))";
    // The vocabulary names predicates by their atoms; saying one is allowed.
    let named = copy_check(
        f,
        "For every x1, pred3(p5, x1) holds or pred1(x1) does not.",
    );
    assert!(!named.copied, "{named:?}");
    // A fragment that carries an operator is still a copy.
    let copied = copy_check(f, "For every x1, pred3(p5,x1)∨¬pred1(x1) is what it says");
    assert!(copied.copied, "{copied:?}");
    assert!(
        copied
            .fragment
            .as_deref()
            .is_some_and(|f| f.contains("pred3(p5,x1)∨")),
        "{copied:?}"
    );
}

#[test]
fn placeholders_in_an_english_answer_reach_the_autoformalization_prompt_literally() {
    let description =
        "pred3 holds of p5 and x1; see {vocabulary} and {examples} and {description}.";
    let p = paper()
        .autoformalize(
            Family::FirstOrder,
            "∀x1 pred3(p5, x1)",
            description,
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert!(p.text.contains(description), "{}", p.text);
    // The template's own placeholders were each filled once, and none of the answer's.
    let fresh = paper()
        .autoformalize(
            Family::FirstOrder,
            "∀x1 pred3(p5, x1)",
            "pred3 holds of p5 and x1.",
            Shots::ZeroShot,
            &SIGMA,
        )
        .unwrap();
    assert_eq!(
        p.text.len() - description.len(),
        fresh.text.len() - "pred3 holds of p5 and x1.".len()
    );
}

#[test]
fn a_judge_answer_whose_letters_change_length_when_lowercased_is_read_where_its_marker_is() {
    use autoeval_prompts::{parse_judgement, Judgement};
    // 'İ' is two bytes and lowercases to three: offsets found in a
    // lowercased copy do not fall where they would in the answer.
    for prefix in ["", "İ", "İİ", "İİİİİİİ", "ẞİ İstanbul"] {
        assert_eq!(
            parse_judgement(&format!("{prefix} [Answer] yes")),
            Judgement::Yes,
            "{prefix:?}"
        );
        assert_eq!(
            parse_judgement(&format!("{prefix} [ANSWER] no.")),
            Judgement::No,
            "{prefix:?}"
        );
    }
}
