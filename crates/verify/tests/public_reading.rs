//! `--protocol reference` reads answers as the public implementation does:
//! held to the oracle's corpus (`tests/reference-oracle/answers`), the
//! public code's own reading and verdict of 634 answers (21 of them a real
//! small model's), run unmodified.
//!
//! Compliance must agree on every logic answer, and where both read the
//! answer, the formula read must be the one the public code printed as its
//! reading (its structure: precedence and scope). Verdicts must agree
//! wherever the public prover answered, except where it was wrong: there
//! the tool keeps its own sound verdict and the case is counted apart as a
//! reference disagreement, with its reason read off the oracle's record of
//! the prover's run (a search that gave up on a true equivalence).
//!
//! Regular expressions are not held to the corpus yet: the public code
//! reads any character as a symbol and compares minimal automata by their
//! shape alone, and the tool keeps its own reading of them
//! (docs/METRICS.md names the difference).

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_syntax::{canonical, public, Formula};
use autoeval_verify::{check_names_folded, InProcessZ3, Settings, Verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn corpus() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference-oracle/answers/corpus.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Our reading under the reference protocol: the formula read and its
/// verdict, or why the answer is non-compliant.
fn ours(case: &Value) -> Result<(Formula, Verdict), String> {
    let text = |k: &str| case[k].as_str().unwrap().to_string();
    let settings = Settings::default();
    let phi0 = public::parse_formula(&text("phi0")).unwrap();
    let phi1 = public::read_formula(&text("answer")).map_err(|e| e.to_string())?;
    if let Some(why) = public::clash(&phi0, &phi1) {
        return Err(why);
    }
    let verdict = check_names_folded(&phi0, &phi1, &settings, &InProcessZ3).verdict;
    Ok((phi1, verdict))
}

/// The formula the public code read, from its own printing of it.
fn theirs(case: &Value) -> Formula {
    let printed = case["extracted"].as_str().unwrap();
    canonical(&public::parse_formula(printed).unwrap())
}

/// Why the public verdict was wrong, read off the oracle's record, if it
/// was: the prover's search gave up while our sound verifier proves the
/// very formula the public code read equivalent to φ0.
fn public_mistake(case: &Value, read: &Formula, ours: Verdict) -> Option<&'static str> {
    let statuses: Vec<&str> = case["prover9_calls"]
        .as_array()
        .map(|calls| calls.iter().filter_map(|c| c["status"].as_str()).collect())
        .unwrap_or_default();
    let gave_up = statuses.iter().any(|s| s.contains("SEARCH FAILED"));
    (ours == Verdict::Equivalent && gave_up && canonical(read) == theirs(case))
        .then_some("the public prover gave up (SEARCH FAILED) on a true equivalence")
}

#[test]
fn the_reference_reading_agrees_with_the_public_code_on_the_oracle_corpus() {
    let mut table: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut disagrees = Vec::new();
    for case in corpus().into_iter().filter(|c| c["dataset"] != "regex") {
        let id = case["id"].as_str().unwrap().to_string();
        let dataset = case["dataset"].as_str().unwrap().to_string();
        let public = case["public_result"]["is_equivalent"].as_bool();
        let mine = ours(&case);
        let cell = match (public, &mine) {
            (None, Err(_)) => "non-compliant, both",
            (Some(_), Err(why)) => {
                wrong.push(format!("{id}: the public code read it, we refused: {why}"));
                "compliance differs"
            }
            (None, Ok((_, v))) => {
                wrong.push(format!(
                    "{id}: the public code refused it ({}), we read it: {v:?}",
                    case["public_result"]["has_error"]
                        .as_str()
                        .unwrap_or("?")
                        .chars()
                        .take(90)
                        .collect::<String>()
                ));
                "compliance differs"
            }
            (Some(p), Ok((read, v))) => {
                let v = *v;
                let agree = matches!(
                    (p, v),
                    (true, Verdict::Equivalent) | (false, Verdict::NotEquivalent)
                );
                // Not only the verdict: the very formula the public code read.
                if canonical(read) != theirs(&case) {
                    wrong.push(format!(
                        "{id}: we read another formula than the public code"
                    ));
                    "formula differs"
                } else if agree {
                    "same verdict"
                } else if let Some(why) = public_mistake(&case, read, v) {
                    disagrees.push(format!("{id}: {why}"));
                    "reference_disagrees"
                } else {
                    wrong.push(format!("{id}: public {p}, ours {v:?}"));
                    "verdict differs"
                }
            }
        };
        *table.entry((dataset, cell)).or_default() += 1;
    }
    println!("dataset | outcome | answers");
    for ((dataset, cell), n) in &table {
        println!("{dataset} | {cell} | {n}");
    }
    println!("reference_disagrees ({}):", disagrees.len());
    for d in &disagrees {
        println!("  {d}");
    }
    assert!(
        wrong.is_empty(),
        "{} answers read otherwise than the public code reads them:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Why the public regex verdict differs from the languages' own, for a case
/// where it does.
fn regex_mistake(phi0: &str, answer: &str, public: bool) -> String {
    let symbols = |s: &str| -> std::collections::BTreeSet<char> {
        public::reg2dfa::clean(s)
            .chars()
            .filter(|c| !matches!(c, '*' | '|' | '(' | ')'))
            .collect()
    };
    let extra: String = symbols(answer).difference(&symbols(phi0)).collect();
    if !extra.is_empty() {
        format!("the answer reads symbols φ0 has not ({extra:?}), which the public check does not look at")
    } else if public {
        "the public check compares the automata without their symbols or start state".into()
    } else {
        "the public minimisation keeps states that cannot accept, so equal languages differ in shape"
            .into()
    }
}

/// Regular expressions: the public verdict (`public::reg2dfa::shape_equal`,
/// held to the corpus in the syntax crate's tests) against the languages of
/// the same readings (`language_equal`), which must agree with this tool's
/// verifier wherever the answer is an expression over the item's alphabet.
/// Every case where the public verdict is not the languages' is listed
/// with its reason.
#[test]
fn regex_answers_decided_by_their_languages_and_where_the_public_check_was_wrong() {
    let mut disagrees = Vec::new();
    let (mut cross_checked, mut wrong) = (0, Vec::new());
    for case in corpus().into_iter().filter(|c| c["dataset"] == "regex") {
        let text = |k: &str| case[k].as_str().unwrap().to_string();
        let (phi0, answer) = (text("phi0"), text("answer"));
        let Ok(language) = public::reg2dfa::language_equal(&phi0, &answer) else {
            continue;
        };
        // Independently: this tool's verifier on the same expression.
        let cleaned = public::reg2dfa::clean(&answer);
        if let Ok(r) =
            autoeval_syntax::parse_regex_exact(&cleaned, autoeval_syntax::Mode::Strict, &['0', '1'])
        {
            let printed = autoeval_syntax::print::regex(&r);
            let verdict =
                autoeval_verify::check_regex(&phi0, &printed, &Settings::default()).verdict;
            cross_checked += 1;
            if (verdict == Verdict::Equivalent) != language {
                wrong.push(format!(
                    "{}: languages {language}, verifier {verdict:?}",
                    text("id")
                ));
            }
        }
        let public = public::reg2dfa::shape_equal(&phi0, &answer).unwrap();
        if public != language {
            disagrees.push(format!(
                "{}: public {public}, languages {language}: {}",
                text("id"),
                regex_mistake(&phi0, &answer, public)
            ));
        }
    }
    println!("{cross_checked} regex answers cross-checked with the verifier");
    println!("reference_disagrees ({}):", disagrees.len());
    for d in &disagrees {
        println!("  {d}");
    }
    assert!(cross_checked > 40, "{cross_checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
