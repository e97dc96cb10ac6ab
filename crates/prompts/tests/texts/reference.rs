//! The `reference` prompt set renders the public implementation's prompts
//! byte for byte: each golden file was produced by running that
//! implementation's prompt code on the same item (tests/golden/reference).

use autoeval_prompts::{Family, JudgeStyle, PromptSet, Shots, Templates};

/// (dataset, family, φ0, reply to I, reply to A).
const ITEMS: [(&str, Family, &str, &str, &str); 5] = [
    (
        "ksat",
        Family::Propositional,
        "((p11 v p3 v p7) ∧ (¬p8 v ¬p8 v p10) ∧ (p4 v ¬p3 v p9))",
        "The formula is a conjunction of three clauses, all of which must hold. The first clause: p11 is true, or p3 is true, or p7 is true. The second clause: p8 is false, or p8 is false, or p10 is true. The third clause: p4 is true, or p3 is false, or p9 is true.",
        "((p11 v p3 v p7) ∧ (¬p8 v ¬p8 v p10) ∧ (p4 v ¬p3 v p9))",
    ),
    (
        "plogic",
        Family::Propositional,
        "((¬((¬p7 v ¬p6) ∧ ¬p3) ∧ p6) v (¬¬p11 ∧ ¬p1))",
        "Either of two situations holds. In the first, p6 is true and it is not the case that both (p7 is false or p6 is false) and p3 is false. In the second, it is not the case that p11 is false, and p1 is false.",
        "(¬((¬p7 v ¬p6) ∧ ¬p3) ∧ p6) v (¬¬p11 ∧ ¬p1)",
    ),
    (
        "fol",
        Family::FirstOrder,
        "∀ x1 x2.((¬pred1(x1) v ¬pred1(p9) v ¬pred8(p5,p12)) ∧ pred5(p7,x2))",
        "For all x1 and x2, two things hold: first, pred1 does not hold for x1, or pred1 does not hold for p9, or pred8 does not hold between p5 and p12; second, pred5 holds between p7 and x2.",
        "∀ x1 x2.((¬pred1(x1) v ¬pred1(p9) v ¬pred8(p5,p12)) ∧ pred5(p7,x2))",
    ),
    (
        "fol_human",
        Family::FirstOrderEnglish,
        "∀ x1.∃ x2.¬((¬issue(dillan,keifer) v ¬grunt(x2,x2)) ∧ ¬issue(keifer,jalen))",
        "For every x1 there is an x2 such that it is not the case that both of the following hold: dillan does not issue keifer or x2 does not grunt x2; and keifer does not issue jalen.",
        "∀ x1.∃ x2.¬((¬issue(dillan,keifer) v ¬grunt(x2,x2)) ∧ ¬issue(keifer,jalen))",
    ),
    (
        "regex",
        Family::Regex,
        "((0*01))*0*0",
        "The regex matches strings made of any number (including none) of repetitions of a block, where each block is any number of '0's followed by '0' and then '1'; after these repetitions come any number of '0's and then a final '0'.",
        "(0*01)*0*0",
    ),
];

fn golden(name: &str) -> String {
    let path = format!(
        "{}/tests/golden/reference/{name}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The first byte where two prompts differ, with some context, for a message.
fn first_difference(ours: &str, theirs: &str) -> String {
    let at = ours
        .bytes()
        .zip(theirs.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let around = |s: &str| {
        let bytes = &s.as_bytes()[at.saturating_sub(40)..(at + 40).min(s.len())];
        String::from_utf8_lossy(bytes).into_owned()
    };
    format!(
        "first difference at byte {at}:\n ours:   {:?}\n theirs: {:?}",
        around(ours),
        around(theirs)
    )
}

#[test]
fn the_reference_set_renders_the_public_implementations_prompts_byte_for_byte() {
    let t = Templates::of_set(PromptSet::Reference);
    let alphabet = ['0', '1'];
    let mut checked = 0;
    for (dataset, family, phi0, english, answer) in ITEMS {
        for (shots, suffix) in [(Shots::ZeroShot, ""), (Shots::FewShot, ".fewshot")] {
            let i = t.informalize(family, phi0, shots, &alphabet).unwrap();
            let want = golden(&format!("{dataset}-informalization{suffix}"));
            assert!(
                i.text == want,
                "{dataset} I{suffix}: {}",
                first_difference(&i.text, &want)
            );
            eprintln!(
                "{dataset}-informalization{suffix}: ours {} bytes, theirs {} bytes, {} bytes differ",
                i.text.len(),
                want.len(),
                i.text.bytes().zip(want.bytes()).filter(|(a, b)| a != b).count()
                    + i.text.len().abs_diff(want.len())
            );
            let a = t
                .autoformalize(family, phi0, english, shots, &alphabet)
                .unwrap();
            let want = golden(&format!("{dataset}-autoformalization{suffix}"));
            assert!(
                a.text == want,
                "{dataset} A{suffix}: {}",
                first_difference(&a.text, &want)
            );
            checked += 2;
        }
        let j = t.judge(family, phi0, answer, JudgeStyle::Cot);
        let want = golden(&format!("{dataset}-judge"));
        assert!(
            j.text == want,
            "{dataset} judge: {}",
            first_difference(&j.text, &want)
        );
        checked += 1;
    }
    assert_eq!(checked, 25);
}

#[test]
fn the_reference_set_prints_our_own_items_as_the_public_implementation_would() {
    // Our generator writes `∨` and `, `; the public implementation's
    // printer writes `v` and `,`, lowercases, and merges quantifiers.
    let t = Templates::of_set(PromptSet::Reference);
    let i = t
        .informalize(
            Family::FirstOrderEnglish,
            "∀ x1.∀ x2.(Admire(Richard, x1) ∨ ¬Walk(x2))",
            Shots::ZeroShot,
            &[],
        )
        .unwrap();
    assert!(
        i.text
            .ends_with("[FORMULA]\n∀ x1 x2.(admire(richard,x1) v ¬walk(x2))"),
        "{}",
        i.text
    );
    assert!(i.text.contains("The objects are: richard\n"), "{}", i.text);
    assert!(i
        .text
        .contains("The parameterized predicates are: admire(?p0,?p1), walk(?p0)\n"));
    assert!(t.set_id().starts_with("reference@"));
}

/// Every pair of the oracle's answer corpus whose φ0 is a dataset item,
/// asked of a judge: the public `generate_prompt()`'s output for it, run on
/// the public code (`tests/reference-oracle/judge/prompts.jsonl`), equals
/// ours byte for byte, with φ0 held as our generator holds it (parsed and
/// printed in our Unicode form) and φ1 the answer as the model wrote it.
/// (The corpus's hand-written φ0s use connectives no item has.)
#[test]
fn the_reference_judge_prompt_is_the_public_one_for_every_corpus_pair() {
    use autoeval_syntax::{canonical, parse_formula_exact, print, Mode, Style};
    let path = format!(
        "{}/../../tests/reference-oracle/judge/prompts.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t = Templates::of_set(PromptSet::Reference);
    let mut checked = 0;
    for line in text.lines() {
        let case: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        if !case["phi0_source"]
            .as_str()
            .is_some_and(|s| s.starts_with("seed-"))
        {
            continue;
        }
        let field = |k: &str| case[k].as_str().expect("a string field").to_string();
        let dataset = match field("dataset").as_str() {
            "fol_human" => "fol-english".to_string(),
            other => other.to_string(),
        };
        let family = Family::of_dataset(&dataset).expect("a known dataset");
        let phi0 = if family == Family::Regex {
            field("phi0")
        } else {
            let f = parse_formula_exact(&field("phi0"), Mode::Lenient).expect("φ0 parses");
            print::formula(&canonical(&f), Style::Unicode)
        };
        let ours = t
            .judge(family, &phi0, &field("answer"), JudgeStyle::Cot)
            .text;
        let theirs = field("prompt");
        assert!(
            ours == theirs,
            "{}: {}",
            field("id"),
            first_difference(&ours, &theirs)
        );
        checked += 1;
    }
    assert_eq!(checked, 473, "every pair of the corpus on a dataset item");
}
