//! The progress line of a fleet run names what the run waits on: here, a
//! stage whose tasks nobody takes, until a worker comes.

use autoeval_e2e::fleet::{Fleet, AMQP, REDIS};
use std::io::{BufRead, BufReader};
use std::time::Duration;

#[test]
fn a_stage_nobody_serves_is_named_in_the_progress_line_until_a_worker_comes() {
    let mut fleet = Fleet::new("unserved", &[]);
    // A worker declares the model's queue and goes: its tasks will wait there.
    fleet.start_worker(4);
    fleet.workers.pop().expect("the worker").kill9();
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let mut coordinator = fleet.autoeval(&[
        "run",
        "--model",
        &fleet.model,
        "--dataset",
        "ksat",
        "--per-bucket",
        "1",
        "--batches",
        "1",
        "--prompt",
        "zero-shot",
        "--plain",
        "--log-every",
        "1",
        "--worker-wait-s",
        "0",
        "--out",
        &out,
        "--fleet",
        "--amqp",
        AMQP,
        "--redis",
        REDIS,
    ]);
    let stderr = coordinator.stderr.take().expect("its stderr");
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let fix = format!("start `autoeval-worker --model '{}'`", fleet.model);
    let named = loop {
        let line = said
            .recv_timeout(Duration::from_secs(120))
            .expect("a progress line naming the stage nobody serves");
        if line.starts_with("run: ") && line.contains(&fix) {
            break line;
        }
    };
    eprintln!("{named}");
    assert!(named.starts_with("run: 0 translated"), "{named}");
    assert!(
        named.contains("waiting: ") && named.contains("nothing takes them"),
        "{named}"
    );

    fleet.start_worker(4);
    let ended = coordinator.wait().expect("the run ends");
    let rest: Vec<String> = said.try_iter().collect();
    assert!(ended.success(), "{}", rest.join("\n"));
}
