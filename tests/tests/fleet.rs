//! The fleet end to end: the coordinator, LLM workers and verifier workers
//! as separate processes against the real RabbitMQ and Redis, with the mock
//! server as the model.

use autoeval_e2e::fleet::{Fleet, AMQP, ONE_AT_A_TIME, REDIS};
use autoeval_e2e::jsonl;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Output;

/// One batch of 30 items per complexity value: over 5,000 units over the
/// five datasets, each formula distinct, so each prompt belongs to one unit.
/// The prover's wall-clock limit is generous so that its resource limit,
/// which counts work rather than time, decides what is undecided: the
/// verdicts are then a function of the input, not of how busy the machine is.
const PLAN: [&str; 10] = [
    "--timeout-ms",
    "120000",
    "--prompt",
    "zero-shot",
    "--batches",
    "1",
    "--per-bucket",
    "30",
    "--seed",
    "7",
];

fn run_args<'a>(fleet: &'a Fleet, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--model", &fleet.model, "--quiet", "--out", out];
    args.extend_from_slice(&PLAN);
    args.extend_from_slice(extra);
    args
}

fn fleet_flags() -> Vec<&'static str> {
    vec!["--fleet", "--amqp", AMQP, "--redis", REDIS]
}

fn succeeded(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

type Key = (String, String, String, u64, u64);

/// Verdict and φ1 of each (unit, round) of a results file.
fn outcomes(dir: &Path) -> BTreeMap<Key, (String, Option<String>)> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results.jsonl");
    let mut out = BTreeMap::new();
    for r in jsonl(&text) {
        let key = (
            r["id"].as_str().unwrap().to_string(),
            r["model"].as_str().unwrap().to_string(),
            r["prompt"].as_str().unwrap().to_string(),
            r["repeat"].as_u64().unwrap(),
            r["round"].as_u64().unwrap(),
        );
        let value = (
            r["verdict"].as_str().unwrap().to_string(),
            r["phi1"].as_str().map(String::from),
        );
        assert!(out.insert(key, value).is_none(), "a round recorded twice");
    }
    out
}

#[test]
fn a_fleet_run_gives_the_verdicts_of_the_one_machine_run_unit_by_unit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("fleet-e2e", &["--model", "reference-noisy:0.2"]);
    for _ in 0..2 {
        fleet.start_worker(16);
        fleet.start_verifier(1);
    }
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = run_args(&fleet, &out, &[]);
    args.extend(fleet_flags());
    succeeded(&fleet.autoeval_output(&args), "the fleet run");
    let local = fleet.dir.join("one-machine").to_string_lossy().into_owned();
    succeeded(
        &fleet.autoeval_output(&run_args(&fleet, &local, &[])),
        "the one-machine run",
    );
    let (a, b) = (outcomes(&fleet.out), outcomes(Path::new(&local)));
    let units = a.keys().filter(|k| k.4 == 1).count();
    let by_dataset = a.keys().fold(HashMap::<&str, usize>::new(), |mut m, k| {
        *m.entry(k.0.split('-').next().unwrap()).or_default() += 1;
        m
    });
    eprintln!("{units} units, rounds by dataset {by_dataset:?}");
    assert!(units >= 5000, "{units} units");
    assert_eq!(
        by_dataset.len(),
        4,
        "ksat, plogic, fol (and fol-english), regex"
    );
    let wrong = a.iter().filter(|(_, (v, _))| v != "equivalent").count();
    assert!(
        wrong > 100,
        "the noisy model makes mistakes to compare: {wrong}"
    );
    assert_eq!(a.len(), b.len());
    let differ: Vec<_> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, v)| (k, v, b.get(k)))
        .collect();
    assert!(
        differ.is_empty(),
        "{} rounds differ (fleet, one machine): {:?}",
        differ.len(),
        &differ[..differ.len().min(5)]
    );
    // Every process reported ready and stops cleanly on SIGTERM.
    for p in fleet.workers.iter_mut().chain(fleet.verifiers.iter_mut()) {
        assert!(p.terminate().success());
    }
}
