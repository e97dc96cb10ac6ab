//! Differential fuzzing against the public implementation: every answer of
//! `tests/reference-oracle/fuzz` (generated at the edges of the grammar,
//! `generate_answers.py`) was read and verified by the public code itself;
//! here each is read and verified as `--protocol reference` does (the
//! translate stage's reading, then the verify stage), and the verdicts are
//! compared. A difference fails the test unless it is one of the named,
//! intended ones of `docs/METRICS.md` (the public verdict wrong, the
//! public code out of time or memory, a quote it splits and joins again),
//! each with its reason; the table per dataset is printed.

use crate::common;

use autoeval_generate::DatasetKind;
use autoeval_prompts::{Family, PromptSet, Shots};
use autoeval_proto::wire::TaskItem;
use autoeval_proto::{ResultRecord, RoundTrip, TranslateTask, Verdict, VerifyTask};
use autoeval_verify_stage::{verify, VerifyStage};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn lines(file: &str) -> Vec<Value> {
    let path = format!(
        "{}/../../tests/reference-oracle/fuzz/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn dataset(name: &str) -> DatasetKind {
    match name {
        "plogic" => DatasetKind::Plogic,
        "ksat" => DatasetKind::Ksat,
        "fol" => DatasetKind::Fol,
        "fol_human" => DatasetKind::FolEnglish,
        "regex" => DatasetKind::Regex,
        other => panic!("unknown dataset {other}"),
    }
}

/// The round that answered `answer` to `phi0`, read and proved as
/// `--protocol reference` reads and proves it.
fn round(case: &Value, stage: &VerifyStage) -> ResultRecord {
    let text = |k: &str| case[k].as_str().unwrap().to_string();
    let (phi0, answer) = (text("phi0"), text("answer"));
    let kind = dataset(&text("dataset"));
    let reading = autoeval_translate::read_answer_as_reference(&answer, &phi0, Family::from(kind));
    let task = TranslateTask {
        item: TaskItem {
            id: text("id"),
            dataset: kind,
            batch: 0,
            complexity: 0,
            fs: phi0.clone(),
            metrics: Vec::new(),
        },
        alphabet: if kind == DatasetKind::Regex { "01" } else { "" }.into(),
        model: "fuzz".into(),
        prompt: Shots::ZeroShot,
        repeat: 0,
        round: 1,
        rounds: 1,
        input: phi0,
    };
    let translation = RoundTrip {
        raw_answer: Some(answer),
        strict: reading.clone(),
        lenient: reading,
        ..RoundTrip::default()
    };
    verify(VerifyTask { task, translation }, stage)
}

/// The public code's verdict as the tool names verdicts: an error is a
/// non-compliant answer; `None` when it ran out of time.
fn theirs(case: &Value) -> Option<Verdict> {
    match case["verdict"].as_str().unwrap() {
        "equivalent" => Some(Verdict::Equivalent),
        "not_equivalent" => Some(Verdict::NotEquivalent),
        "error" => Some(Verdict::NonCompliant),
        _ => None,
    }
}

/// Why a difference is intended, if it is one of the named ones.
fn intended(case: &Value, ours: &ResultRecord) -> Option<&'static str> {
    if theirs(case).is_none() {
        return Some("public_timeout: the public code ran out of its time on the case");
    }
    let exits: Vec<&str> = case["prover9_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| c["exit_reason"].as_str())
                .collect()
        })
        .unwrap_or_default();
    if exits.contains(&"max_megs") {
        return Some(
            "public_out_of_memory: the public prover ran out of its memory on the case (the \
             public code records an error), as it runs out of time on others",
        );
    }
    if ours.verdict == Verdict::NonCompliant
        && ours
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("is never closed"))
    {
        return Some(
            "quote_split_and_joined: the logic library splits a quoted text at an operator \
             (`\"a&b\"` is `\"a` and `b\"`) and the prover, reading the library's print, may \
             join the pieces into one symbol; the tool refuses the unclosed quote",
        );
    }
    let statuses: Vec<&str> = case["prover9_calls"]
        .as_array()
        .map(|calls| calls.iter().filter_map(|c| c["status"].as_str()).collect())
        .unwrap_or_default();
    let answer = case["answer"].as_str().unwrap_or("");
    if case["dataset"] == "regex" && autoeval_syntax::public::reg2dfa::clean(answer).contains('"') {
        return Some(
            "regex_quote_in_dot: a `\"` symbol makes the public automaton tool write a DOT file \
             (label=\"\"\") that its graph reader then misreads, so the public code errs or \
             compares a mangled graph",
        );
    }
    if ours.verdict == Verdict::Equivalent
        && theirs(case) == Some(Verdict::NotEquivalent)
        && statuses.iter().any(|s| s.contains("SEARCH FAILED"))
    {
        return Some(
            "prover_gave_up: the public prover's search failed on a true equivalence \
             (it counts that as not equivalent)",
        );
    }
    None
}

#[test]
fn the_reference_reading_agrees_with_the_public_code_on_the_fuzzing_corpus() {
    let answers = lines("answers.jsonl");
    let verdicts: BTreeMap<String, Value> = lines("verdicts.jsonl")
        .into_iter()
        .map(|v| (v["id"].as_str().unwrap().to_string(), v))
        .collect();
    let stage = common::stage_for(PromptSet::Reference);
    let outcomes: Vec<(String, String, &'static str, Option<String>)> = verdicts
        .par_iter()
        .map(|(id, case)| {
            let record = round(case, &stage);
            // For a regex the public verdict is its check's, which the
            // record carries where it is not the round's.
            let ours = record.reference_verdict.unwrap_or(record.verdict);
            let ds = case["dataset"].as_str().unwrap().to_string();
            let rule = case["category"].as_str().unwrap_or("").to_string();
            if Some(ours) == theirs(case) && record.reference_verdict.is_some() {
                let why = "regex_shape: the public check compares the two automata by shape \
                           alone (the record carries its verdict beside the language's)";
                (ds, rule, "intended", Some(why.to_string()))
            } else if Some(ours) == theirs(case) {
                (ds, rule, "agree", None)
            } else if let Some(why) = intended(case, &record) {
                (ds, rule, "intended", Some(why.to_string()))
            } else {
                let detail = format!(
                    "{id} [{}]: public {} ({}), ours {:?} ({}) answer {:?}",
                    case["category"].as_str().unwrap_or(""),
                    case["verdict"],
                    case["parse_error"]
                        .as_str()
                        .or(case["public_result"]["has_error"].as_str())
                        .unwrap_or("")
                        .chars()
                        .take(120)
                        .collect::<String>(),
                    record.verdict,
                    record.reason.as_deref().unwrap_or(""),
                    case["answer"]
                        .as_str()
                        .unwrap()
                        .chars()
                        .take(120)
                        .collect::<String>(),
                );
                (ds, rule, "unexplained", Some(detail))
            }
        })
        .collect();
    let mut table: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut rules: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    for (ds, rule, cell, detail) in outcomes {
        *table.entry((ds, cell)).or_default() += 1;
        *rules.entry((rule, cell)).or_default() += 1;
        match (cell, detail) {
            ("intended", Some(why)) => *reasons.entry(why).or_default() += 1,
            ("unexplained", Some(d)) => unexplained.push(d),
            _ => {}
        }
    }
    println!("dataset    agree intended unexplained");
    for ds in ["plogic", "ksat", "fol", "fol_human", "regex"] {
        let n = |c| table.get(&(ds.to_string(), c)).copied().unwrap_or(0);
        println!(
            "{ds:<10} {:>5} {:>8} {:>11}",
            n("agree"),
            n("intended"),
            n("unexplained")
        );
    }
    let names: std::collections::BTreeSet<&String> = rules.keys().map(|(r, _)| r).collect();
    println!("rule                     agree intended unexplained");
    for rule in names {
        let n = |c| rules.get(&(rule.clone(), c)).copied().unwrap_or(0);
        println!(
            "{rule:<24} {:>5} {:>8} {:>11}",
            n("agree"),
            n("intended"),
            n("unexplained")
        );
    }
    for (why, n) in &reasons {
        println!("intended ({n}): {why}");
    }
    for d in unexplained.iter().take(60) {
        println!("unexplained: {d}");
    }
    let missing: Vec<&str> = answers
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .filter(|id| !verdicts.contains_key(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "{} generated answers have no public verdict (first {:?})",
        missing.len(),
        missing.first()
    );
    assert!(
        unexplained.is_empty(),
        "{} answers read or decided unlike the public code",
        unexplained.len()
    );
}

#[test]
fn the_committed_answers_are_what_the_generator_writes() {
    let root = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(format!(
            "{root}/tests/reference-oracle/fuzz/generate_answers.py"
        ))
        .args(["--root", &root, "--seed", "0"])
        .env("PYTHONHASHSEED", "1")
        .output()
        .expect("python3 runs the generator");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed =
        std::fs::read(format!("{root}/tests/reference-oracle/fuzz/answers.jsonl")).unwrap();
    assert!(
        out.stdout == committed,
        "tests/reference-oracle/fuzz/answers.jsonl is not what generate_answers.py --seed 0 writes"
    );
}
