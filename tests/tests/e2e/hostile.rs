//! A hostile model server: replies of 5 MB (and, in the HTTP client's own
//! tests, a 429 whose Retry-After is 1e20 seconds). The worker neither
//! panics nor stalls: the run completes, the replies are read whole (the
//! model's limit allows them), the English kept and checked for copying,
//! the answer refused by the reader's own bound, and the worker's
//! `/healthz` answers within 100 ms throughout.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{Fleet, AMQP, ONE_AT_A_TIME};
use autoeval_proto::{ResultRecord, Verdict};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes of filler before every answer.
const PAD: usize = 5_000_000;

#[test]
fn replies_of_5_mb_neither_panic_nor_stall_the_worker() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pad = PAD.to_string();
    let mut fleet = Fleet::new("hostile", &["--pad-reply-bytes", &pad]);
    fleet.model = format!("{}?max-reply-bytes=8000000", fleet.model);
    fleet.start_worker(4);
    fleet.start_verifier(1);
    let items = fleet.dir.join("items.jsonl");
    let generated = fleet.autoeval_output(&[
        "generate",
        "--dataset",
        "plogic",
        "--batches",
        "1",
        "--per-bucket",
        "1",
        "--quiet",
        "--out",
        items.to_str().unwrap(),
    ]);
    assert!(generated.status.success());
    let two = fleet.dir.join("two.jsonl");
    let text = std::fs::read_to_string(&items).unwrap();
    let lines: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&two, format!("{}\n", lines.join("\n"))).unwrap();

    // The worker's health, asked every 20 ms while the run goes on.
    let healthz = format!("{}/healthz", fleet.workers[0].health.as_ref().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let prober = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let client = reqwest::blocking::Client::new();
            let mut times = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let asked = Instant::now();
                let answered = client
                    .get(&healthz)
                    .send()
                    .is_ok_and(|r| r.status().is_success());
                times.push((asked.elapsed(), answered));
                std::thread::sleep(Duration::from_millis(20));
            }
            times
        })
    };
    let out = fleet.out.to_string_lossy().into_owned();
    let redis = fleet.redis.clone();
    let run = fleet.autoeval_output(&[
        "run",
        "--items",
        two.to_str().unwrap(),
        "--model",
        &fleet.model,
        "--prompt",
        "zero-shot",
        "--rounds",
        "1",
        "--quiet",
        "--out",
        &out,
        "--fleet",
        "--amqp",
        AMQP,
        "--redis",
        &redis,
    ]);
    stop.store(true, Ordering::SeqCst);
    let times = prober.join().unwrap();
    assert!(
        run.status.success(),
        "the run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        fleet.workers[0].child.try_wait().unwrap().is_none(),
        "the worker died"
    );
    let text = std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap();
    let records: Vec<ResultRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    for r in &records {
        let english = r.english.as_deref().unwrap_or_default();
        assert!(
            english.len() >= PAD,
            "the English kept is {} bytes",
            english.len()
        );
        // The answer is past what the reader accepts: non-compliant, saying why.
        let reason = r.reason.as_deref().unwrap_or_default();
        assert_eq!(r.verdict, Verdict::NonCompliant, "{reason}");
        assert!(reason.contains("bytes long"), "{reason}");
    }
    let slowest = times.iter().map(|(t, _)| *t).max().unwrap();
    let mut sorted: Vec<Duration> = times.iter().map(|(t, _)| *t).collect();
    sorted.sort();
    eprintln!(
        "{} health checks over the run: median {:?}, slowest {slowest:?}",
        times.len(),
        sorted[sorted.len() / 2]
    );
    let slow: Vec<String> = times
        .iter()
        .filter(|(t, _)| *t > Duration::from_millis(20))
        .map(|(t, _)| format!("{t:.0?}"))
        .collect();
    eprintln!("health checks over 20 ms: {slow:?}");
    assert!(times.len() >= 20, "{} health checks", times.len());
    assert!(times.iter().all(|(_, ok)| *ok), "a health check failed");
    assert!(
        slowest < Duration::from_millis(100),
        "a health check took {slowest:?}"
    );
}
