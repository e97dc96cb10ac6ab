//! `autoeval fleet gc` against a Redis of the test's own and the real
//! broker: a finished run and the keys left of an unregistered one go, a run
//! still going stays, and of two models' queues only the one no run going
//! uses is deleted; `--dry-run` removes nothing.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{binary, OwnRedis, AMQP};
use autoeval_proto::fleet::{run_key, Topology};
use autoeval_proto::{meta, ResultRecord, Verdict};
use autoeval_redis_store::RunStore;
use autoeval_run_settings::RunArgs;
use std::process::Command;

fn plan_using(model: &str) -> String {
    let mut args = RunArgs::default();
    args.plan.models = vec![model.parse().unwrap()];
    let settings = args.resolve(Default::default(), None).unwrap();
    serde_json::to_string(&settings.plan).unwrap()
}

fn gc(redis: &str, extra: &[&str]) -> String {
    let out = Command::new(binary("autoeval"))
        .args(["fleet", "gc", "--redis", redis, "--amqp", AMQP])
        .args(extra)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

#[test]
fn gc_removes_finished_runs_and_the_queues_no_run_going_uses() {
    let _turn = autoeval_e2e::turn(module_path!());
    let redis = OwnRedis::start();
    let url = redis.url();
    let pid = std::process::id();
    let used = format!("openai-compatible:gc-used-{pid}@http://127.0.0.1:9/v1");
    let unused = format!("openai-compatible:gc-unused-{pid}@http://127.0.0.1:9/v1");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let conn = rt.block_on(autoeval_redis_store::connect(&url)).unwrap();
    let broker = rt
        .block_on(autoeval_amqp::Broker::connect(
            AMQP,
            &Topology::default(),
            "gc-test",
        ))
        .unwrap();
    for model in [&used, &unused] {
        rt.block_on(broker.declare_translate(model)).unwrap();
    }
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    redis::cmd("SADD")
        .arg("autoeval:queued-models")
        .arg(&used)
        .arg(&unused)
        .query::<()>(&mut raw)
        .unwrap();
    let going = RunStore::new(conn.clone(), "gc-going");
    let finished = RunStore::new(conn.clone(), "gc-finished");
    rt.block_on(async {
        going
            .set_meta(&[(meta::PLAN, plan_using(&used))])
            .await
            .unwrap();
        finished
            .set_meta(&[(meta::PLAN, plan_using(&unused))])
            .await
            .unwrap();
        let round = ResultRecord {
            id: "x".into(),
            model: unused.clone(),
            round: 1,
            verdict: Verdict::Equivalent,
            ..ResultRecord::default()
        };
        finished.record_all(&[round], 1).await.unwrap();
        finished.finish(3600).await.unwrap();
    });
    // What a run whose registration expired first may leave behind.
    redis::cmd("HSET")
        .arg(run_key("gc-leftover", "tally"))
        .arg("a")
        .arg("1")
        .query::<()>(&mut raw)
        .unwrap();
    let keys = |store: &RunStore| rt.block_on(store.existing_keys()).unwrap().len();
    let leftover = RunStore::new(conn.clone(), "gc-leftover");
    let finished_keys = keys(&finished);
    assert!(
        finished_keys >= 4,
        "{finished_keys} keys of the finished run"
    );

    let said = gc(&url, &["--dry-run"]);
    assert!(
        said.contains("would remove 1 finished run, the keys left of 1 unregistered run, 1 queue;"),
        "{said}"
    );
    assert_eq!(keys(&finished), finished_keys, "a dry run removes nothing");
    assert_eq!(keys(&leftover), 1);
    assert!(rt
        .block_on(broker.depth(&Topology::default().translate_queue(&unused)))
        .unwrap()
        .is_some());

    let said = gc(&url, &[]);
    eprintln!("{said}");
    let unused_queue = rt
        .block_on(broker.depth(&Topology::default().translate_queue(&unused)))
        .unwrap();
    let used_queue = rt
        .block_on(broker.depth(&Topology::default().translate_queue(&used)))
        .unwrap();
    let going_meta = rt.block_on(going.meta()).unwrap();
    let _ = rt.block_on(broker.delete_queue(&Topology::default().translate_queue(&used)));
    let _ = rt.block_on(broker.delete_queue(&Topology::default().translate_queue(&unused)));
    assert!(said.contains("removed 1 finished run"), "{said}");
    assert_eq!(keys(&finished), 0, "the finished run is gone");
    assert_eq!(keys(&leftover), 0, "what was left of a run is gone");
    assert!(going_meta.contains_key(meta::PLAN), "the run going stays");
    assert_eq!(unused_queue, None, "the queue no run uses is deleted");
    assert!(used_queue.is_some(), "the queue of the run going stays");
    let models: Vec<String> = redis::cmd("SMEMBERS")
        .arg("autoeval:queued-models")
        .query(&mut raw)
        .unwrap();
    assert_eq!(models, vec![used.clone()]);
}

#[test]
fn the_set_of_models_served_expires_once_no_worker_stamps_it() {
    let _turn = autoeval_e2e::turn(module_path!());
    let redis = OwnRedis::start();
    let url = redis.url();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let conn = rt.block_on(autoeval_redis_store::connect(&url)).unwrap();
    let model = "openai-compatible:gc-served@http://127.0.0.1:9/v1".to_string();
    // Spawned inside the runtime, which drives it between the looks below.
    let _inside = rt.enter();
    let reporter = autoeval_redis_store::spawn_serving_reporter(conn.clone(), vec![model.clone()]);
    autoeval_e2e::fleet::wait_for(
        "the worker's model is served",
        std::time::Duration::from_secs(30),
        || {
            rt.block_on(autoeval_redis_store::served_models(&conn))
                .unwrap()
                .contains(&model)
        },
    );
    reporter.abort();
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let left_ms: i64 = redis::cmd("PTTL")
        .arg("autoeval:serving")
        .query(&mut raw)
        .unwrap();
    assert!(
        (1..=60_000).contains(&left_ms),
        "the served set expires within a minute of the last stamp: PTTL {left_ms}"
    );
}
