//! The stages driven in process: every unit is recorded once per round, a
//! chain of rounds continues only while the meaning is kept, and resuming
//! from a partial store finishes exactly what is missing.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_engine::local::{run_local, Concurrency, MemoryStore, Observer};
use autoeval_engine::RecordStore;
use autoeval_generate::DatasetKind;
use autoeval_llm_client::{Backend, BackendOptions};
use autoeval_pipeline::{generate_items, initial_tasks, pending_tasks, RunPlan};
use autoeval_prompts::{Shots, Templates};
use autoeval_proto::{CopyPolicy, ResultRecord, Verdict};
use autoeval_translate::Translator;
use autoeval_verify::{InProcessZ3, Settings};
use autoeval_verify_stage::VerifyStage;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

struct Silent;
impl Observer for Silent {}

const RUN: &str = "test-run";

fn verifier() -> Arc<VerifyStage> {
    Arc::new(VerifyStage {
        settings: Settings::default(),
        prover: Arc::new(InProcessZ3),
        copy_policy: CopyPolicy::Flag,
        prompt_set: Templates::builtin().set_id().to_string(),
        as_reference: false,
    })
}

fn translator(model: &str, options: BackendOptions) -> Arc<Translator> {
    let backend = Backend::new(model.parse().unwrap(), options).unwrap();
    Arc::new(Translator {
        backends: BTreeMap::from([(model.to_string(), backend)]),
        templates: Templates::builtin(),
        task_deadline: None,
    })
}

/// Every record the store holds.
fn load(store: &MemoryStore) -> Vec<ResultRecord> {
    let mut all = Vec::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(store.scan(RUN, |r| all.push(r))).unwrap();
    all
}

fn plan(model: &str, rounds: u32) -> RunPlan {
    RunPlan {
        datasets: vec![DatasetKind::Plogic, DatasetKind::Regex],
        models: vec![model.parse().unwrap()],
        prompts: vec![Shots::ZeroShot],
        batches: 1,
        per_bucket: 1,
        rounds,
        repeats: 2,
        seed: 3,
        sampling: Default::default(),
        prompt_set: Default::default(),
        items_file: None,
    }
}

fn run(model: &str, rounds: u32, store: Arc<MemoryStore>) -> usize {
    let plan = plan(model, rounds);
    let (items, _) = generate_items(&plan).unwrap();
    let tasks = initial_tasks(&plan, &items);
    let units = tasks.len();
    let recorded = load(&store);
    let pending = pending_tasks(tasks, &recorded);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(run_local(
        RUN,
        pending.tasks,
        translator(model, BackendOptions::default()),
        verifier(),
        store,
        Arc::new(Silent),
        Concurrency {
            translate: 4,
            verify: 2,
        },
    ))
    .unwrap();
    units
}

#[test]
fn every_round_of_every_unit_is_recorded_once() {
    let store = Arc::new(MemoryStore::default());
    let units = run("reference", 3, store.clone());
    let records = load(&store);
    assert_eq!(records.len(), 3 * units);
    assert!(records.iter().all(|r| r.verdict == Verdict::Equivalent));
    let keys: HashSet<_> = records.iter().map(|r| (r.unit(), r.round)).collect();
    assert_eq!(keys.len(), records.len());
    // Round 2 translated what round 1 produced.
    let first: BTreeMap<_, _> = records
        .iter()
        .filter(|r| r.round == 1)
        .map(|r| (r.unit(), r))
        .collect();
    for r in records.iter().filter(|r| r.round == 2) {
        assert_eq!(Some(r.input()), first[&r.unit()].phi1.as_deref());
    }
}

#[test]
fn chains_stop_at_a_lost_meaning_and_resume_finishes_only_what_is_missing() {
    let model = "reference-noisy:0.5";
    let full = Arc::new(MemoryStore::default());
    run(model, 2, full.clone());
    let all = load(&full);
    let failed_in_round_one = all
        .iter()
        .filter(|r| r.round == 1 && r.verdict != Verdict::Equivalent)
        .count();
    assert!(failed_in_round_one > 0);
    let round_two = all.iter().filter(|r| r.round == 2).count();
    let units = all.iter().filter(|r| r.round == 1).count();
    assert_eq!(
        round_two,
        units - failed_in_round_one,
        "only kept meanings go on"
    );

    // Keep every other record of round one only, then resume.
    let partial = Arc::new(MemoryStore::default());
    let kept: Vec<ResultRecord> = all
        .iter()
        .filter(|r| r.round == 1)
        .step_by(2)
        .cloned()
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(partial.record_all(RUN, &kept, 2)).unwrap();
    run(model, 2, partial.clone());
    let resumed = load(&partial);
    assert_eq!(resumed.len(), all.len());
    let keys: HashSet<_> = resumed.iter().map(|r| (r.unit(), r.round)).collect();
    assert_eq!(keys.len(), resumed.len());
}

#[test]
fn a_backend_that_only_fails_stops_the_drive_and_leaves_the_rest_pending() {
    use autoeval_llm_client::FAIL_FAST_ATTEMPTS;
    use autoeval_models::RetryPolicy;
    // A port nothing listens on: every attempt is refused the same way.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let model = format!("openai-compatible:m@http://127.0.0.1:{port}/v1");
    let options = BackendOptions {
        concurrency: 1,
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        ..BackendOptions::default()
    };
    let translator = translator(&model, options);
    let plan = plan(&model, 1);
    let (items, _) = generate_items(&plan).unwrap();
    let tasks = initial_tasks(&plan, &items);
    let units = tasks.len();
    assert!(units > FAIL_FAST_ATTEMPTS as usize);
    let store = Arc::new(MemoryStore::default());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(run_local(
        RUN,
        tasks.clone(),
        translator.clone(),
        verifier(),
        store.clone(),
        Arc::new(Silent),
        Concurrency {
            translate: 1,
            verify: 1,
        },
    ))
    .unwrap();
    let why = translator
        .halted()
        .expect("the drive stopped because the backend halted");
    assert!(
        why.contains(&format!("connection refused to 127.0.0.1:{port}")),
        "{why}"
    );
    // Nothing ever reached a server: the call waited for the halt, and no
    // round is a failure; every unit stays pending.
    let records = load(&store);
    assert_eq!(records.len(), 0, "{records:?}");
    let pending = pending_tasks(tasks, &load(&store));
    assert_eq!(pending.tasks.len(), units);
}
