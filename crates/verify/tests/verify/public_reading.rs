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
//! Regular expressions are read the public way too, and decided by their
//! languages; where the public check (minimal automata compared by shape
//! alone) decided otherwise, the run counts the case apart.

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

/// Regular expressions, read and decided as a run under `--protocol
/// reference` reads and decides them: the answer read the public way
/// (`public::read_regex`, printed with `public::reg2dfa::print` as the
/// round's φ1), refused exactly where the public code met an error, and
/// decided by the languages (`check_regex` with the public reading), which
/// must agree with an independent decision of them (`language_equal`, on
/// reg2dfa's own automata). Where the public verdict is not the languages',
/// the run's `public_regex_verdict` must name it: those cases are the
/// run's `reference_disagrees`, listed with their reasons.
#[test]
fn regex_answers_read_the_public_way_and_decided_by_their_languages() {
    let settings = Settings {
        public_regex_reading: true,
        ..Settings::default()
    };
    let mut table: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut disagrees, mut wrong) = (Vec::new(), Vec::new());
    for case in corpus().into_iter().filter(|c| c["dataset"] == "regex") {
        let text = |k: &str| case[k].as_str().unwrap().to_string();
        let (id, phi0, answer) = (text("id"), text("phi0"), text("answer"));
        let oracle = case["public_result"]["is_equivalent"].as_bool();
        let read = public::read_regex(&answer).map(|r| public::reg2dfa::print(&r));
        let cell = match (oracle, read) {
            (None, Err(_)) => "non-compliant, both",
            (None, Ok(phi1)) => {
                wrong.push(format!(
                    "{id}: the public code refused it, we read {phi1:?}"
                ));
                "compliance differs"
            }
            (Some(_), Err(why)) => {
                wrong.push(format!("{id}: the public code read it, we refused: {why}"));
                "compliance differs"
            }
            (Some(oracle), Ok(phi1)) => {
                let ours = autoeval_verify::check_regex(&phi0, &phi1, &settings).verdict;
                let language = public::reg2dfa::language_equal(&phi0, &answer).unwrap();
                if (ours == Verdict::Equivalent) != language {
                    wrong.push(format!("{id}: languages {language}, verifier {ours:?}"));
                }
                let oracle = if oracle {
                    Verdict::Equivalent
                } else {
                    Verdict::NotEquivalent
                };
                match autoeval_verify::public_regex_verdict(&phi0, &answer, ours) {
                    None if oracle == ours => "same verdict",
                    Some(public) if public == oracle => {
                        disagrees.push(format!(
                            "{id}: public {public:?}, ours {ours:?}: {}",
                            regex_mistake(&phi0, &answer, public == Verdict::Equivalent)
                        ));
                        "reference_disagrees"
                    }
                    other => {
                        wrong.push(format!(
                            "{id}: oracle {oracle:?}, ours {ours:?}, counted public {other:?}"
                        ));
                        "verdict differs"
                    }
                }
            }
        };
        *table.entry(cell).or_default() += 1;
    }
    println!("regex | outcome | answers");
    for (cell, n) in &table {
        println!("regex | {cell} | {n}");
    }
    println!("reference_disagrees ({}):", disagrees.len());
    for d in &disagrees {
        println!("  {d}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(table.values().sum::<usize>(), 81);
    assert!(table["reference_disagrees"] > 0 && table["same verdict"] > 40);
}
