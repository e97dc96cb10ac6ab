//! A worker calls only what it was given: a translate task and a judge
//! question naming an endpoint the worker was not started with are
//! dead-lettered with the reason, and that endpoint never sees a connection.

use autoeval_amqp::Meta;
use autoeval_e2e::fleet::{wait_for, Fleet, AMQP, REDIS};
use autoeval_proto::fleet::{judge_key, translate_key};
use autoeval_proto::wire::{encode, Header, MessageKind, TaskItem};
use autoeval_proto::{DatasetKind, JudgeTask, Shots, TranslateTask};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A loopback port that counts the connections made to it.
fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its address").port();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(conn);
        }
    });
    (port, count)
}

#[test]
fn tasks_naming_an_endpoint_the_worker_was_not_given_are_dead_lettered_unsent() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("admission", &[]);
    let (port, connections) = counting_listener();
    let elsewhere = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    fleet.start_worker(2);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    // The run names both models, so its settings in Redis hold the other
    // endpoint too: the worker must still not call it.
    let mut args = fleet.small_run(&fleet.model, "plogic", &out);
    args.extend(["--model", &elsewhere, "--quiet", "--worker-wait-s", "0"]);
    args.extend(fleet.on_fleet());
    let registered = fleet.autoeval_output(&args);
    assert_eq!(
        registered.status.code(),
        Some(1),
        "the other model's units have no worker: {}",
        String::from_utf8_lossy(&registered.stderr)
    );
    let run = fleet.run();

    // Into the queues of the model the worker serves, tasks naming the other endpoint.
    let translate = TranslateTask {
        item: TaskItem {
            id: "plogic-9-0-0".into(),
            dataset: DatasetKind::Plogic,
            batch: 9,
            complexity: 1,
            fs: "(p1 ∧ p2)".into(),
            metrics: Vec::new(),
        },
        alphabet: String::new(),
        model: elsewhere.clone(),
        prompt: Shots::ZeroShot,
        repeat: 0,
        round: 1,
        rounds: 1,
        input: "(p1 ∧ p2)".into(),
    };
    let question = JudgeTask {
        id: "plogic-9-0-1".into(),
        dataset: "plogic".into(),
        complexity: 1,
        model: fleet.model.clone(),
        prompt: "zero-shot".into(),
        round: 1,
        repeat: 0,
        judge: elsewhere.clone(),
        style: "yesno".into(),
        phi0: "(p1 ∧ p2)".into(),
        phi1: "(p2 ∧ p1)".into(),
        equivalent: true,
        non_compliant: false,
    };
    let header = |kind| Header {
        kind,
        run: run.clone(),
    };
    let broker = fleet.broker();
    fleet.block_on(async {
        let body = encode(&header(MessageKind::Translate), &vec![translate.clone()]).unwrap();
        let meta = Meta::one(&run, translate.round_key().to_string());
        broker
            .publish(&translate_key(&fleet.model), &body, &meta)
            .await
            .expect("the translate task is published");
        let body = encode(&header(MessageKind::Judge), &vec![question]).unwrap();
        let meta = Meta::one(&run, "plogic-9-0-1|x".to_string());
        broker
            .publish(&judge_key(&fleet.model), &body, &meta)
            .await
            .expect("the question is published");
    });

    let not_given = |what: &str| format!("this worker was not given {what} {elsewhere}");
    let mut reasons = Vec::new();
    wait_for("both dead-lettered", Duration::from_secs(60), || {
        reasons = fleet
            .block_on(broker.dead_letters(usize::MAX))
            .expect("the dead letters")
            .into_iter()
            .filter(|d| d.run == run)
            .map(|d| d.reason)
            .collect();
        reasons.iter().any(|r| r.contains(&not_given("model")))
            && reasons.iter().any(|r| r.contains(&not_given("judge")))
    });
    for r in reasons.iter().filter(|r| r.contains("not given")) {
        eprintln!("dead-lettered: {r}");
    }
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the endpoint the worker was not given saw a connection"
    );
}

#[test]
fn a_fleet_run_whose_settings_would_steer_a_worker_is_refused_before_anything_is_sent() {
    let _turn = autoeval_e2e::turn(module_path!());
    let fleet = Fleet::new("admission-bounds", &[]);
    let config = fleet.dir.join("run.toml");
    // An extra body field that would change which model is asked, and so what is paid for.
    std::fs::write(
        &config,
        format!(
            "models = [{:?}]\n[model.{:?}]\nextra = {{ model = \"another-model\" }}\n",
            fleet.model, fleet.model
        ),
    )
    .unwrap();
    let out = fleet.out.to_string_lossy().into_owned();
    let refused = fleet.autoeval_output(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--fleet",
        "--out",
        &out,
        "--amqp",
        AMQP,
        "--redis",
        REDIS,
        "--quiet",
    ]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(
        said.contains("the extra request field \"model\" is not one a fleet run may set"),
        "{said}"
    );
    let written: Vec<String> = std::fs::read_dir(&fleet.out)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    // The fixture named the run beforehand; the refused run wrote nothing.
    assert_eq!(written, ["run-id"], "nothing was written");
}
