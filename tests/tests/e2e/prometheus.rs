//! A real Prometheus scrapes the coordinator and every worker during a fleet
//! run; afterwards every query of the Grafana dashboard returns data, and
//! the counters agree with the run's results, recounted here from
//! `results.jsonl`. The shipped Prometheus configuration and alert rules
//! pass promtool.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{free_port, get_json, wait_for, Fleet, AMQP, ONE_AT_A_TIME, REDIS};
use autoeval_e2e::jsonl;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// Runs Debian's promtool (installed by `scripts/setup --tests`).
fn promtool(args: &[&str]) {
    autoeval_e2e::run_ok(Path::new("promtool"), args);
}

#[test]
fn the_shipped_prometheus_config_and_alert_rules_pass_promtool() {
    let _turn = autoeval_e2e::turn(module_path!());
    let dir = deploy().join("prometheus");
    promtool(&[
        "check",
        "config",
        dir.join("prometheus.yml").to_str().unwrap(),
    ]);
    promtool(&["check", "rules", dir.join("alerts.yml").to_str().unwrap()]);
}

/// A Prometheus server on a loopback port, stopped when dropped.
struct Prometheus {
    child: Child,
    url: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(dir: &Path, targets: &[(&str, Vec<String>)]) -> Prometheus {
        let mut config = String::from("global:\n  scrape_interval: 1s\nscrape_configs:\n");
        for (job, addrs) in targets {
            let list: Vec<String> = addrs.iter().map(|a| format!("\"{a}\"")).collect();
            config.push_str(&format!(
                "  - job_name: {job}\n    static_configs:\n      - targets: [{}]\n",
                list.join(", ")
            ));
        }
        let path = dir.join("prometheus.yml");
        std::fs::write(&path, config).unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect(
                "prometheus starts (scripts/setup --tests installs Debian's prometheus package)",
            );
        let url = format!("http://127.0.0.1:{port}");
        let ready = format!("{url}/-/ready");
        wait_for("Prometheus is ready", Duration::from_secs(60), || {
            reqwest::blocking::get(&ready).is_ok_and(|r| r.status().is_success())
        });
        Prometheus { child, url }
    }

    /// The result vector of an instant query.
    fn query(&self, promql: &str) -> Vec<serde_json::Value> {
        let url = reqwest::Url::parse_with_params(
            &format!("{}/api/v1/query", self.url),
            &[("query", promql)],
        )
        .unwrap();
        let v = get_json(url.as_str());
        assert_eq!(v["status"], "success", "{promql}: {v}");
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The single value of a query, if it has exactly one series.
    fn value(&self, promql: &str) -> Option<f64> {
        match &self.query(promql)[..] {
            [one] => one["value"][1].as_str()?.parse().ok(),
            _ => None,
        }
    }
}

fn address(health: &Option<String>) -> String {
    health
        .as_deref()
        .expect("a health address")
        .trim_start_matches("http://")
        .to_string()
}

#[test]
fn prometheus_scrapes_a_fleet_run_and_every_dashboard_query_returns_data() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("prometheus", &["--latency-ms", "50"]);
    fleet.start_worker(16);
    fleet.start_worker(16);
    fleet.start_verifier(1);
    let coordinator_addr = format!("127.0.0.1:{}", free_port());
    let prometheus = Prometheus::start(
        &fleet.dir,
        &[
            ("autoeval-coordinator", vec![coordinator_addr.clone()]),
            (
                "autoeval-worker",
                fleet.workers.iter().map(|w| address(&w.health)).collect(),
            ),
            (
                "autoeval-verifier",
                fleet.verifiers.iter().map(|v| address(&v.health)).collect(),
            ),
        ],
    );
    let out = fleet.out.to_string_lossy().into_owned();
    let run = fleet.run();
    let model = fleet.model.clone();
    // Long enough for a few scrapes in full flow; the coordinator keeps
    // serving its metrics after the end until told to stop.
    let mut coordinator = fleet.autoeval(&[
        "run",
        "--model",
        &model,
        "--prompt",
        "zero-shot",
        "--batches",
        "1",
        "--per-bucket",
        "6",
        "--seed",
        "11",
        "--quiet",
        "--out",
        &out,
        "--fleet",
        "--amqp",
        AMQP,
        "--redis",
        REDIS,
        "--health-addr",
        &coordinator_addr,
        "--linger-s",
        "600",
    ]);
    let results = fleet.out.join("results.jsonl");
    // The rounds are appended to results.jsonl as they arrive; the summary
    // is written once the run has ended, before the coordinator lingers.
    let summary = fleet.out.join("summary.json");
    wait_for(
        "the run's summary is written",
        Duration::from_secs(600),
        || {
            assert!(
                coordinator.try_wait().unwrap().is_none(),
                "the coordinator ended before lingering"
            );
            summary.exists()
        },
    );

    // What the counters must say, recounted from the results file.
    let records = jsonl(&std::fs::read_to_string(&results).unwrap());
    let rounds = records.len() as f64;
    let units = records.iter().filter(|r| r["round"] == 1).count() as f64;
    let mut by_verdict: BTreeMap<String, f64> = BTreeMap::new();
    for r in &records {
        *by_verdict
            .entry(r["verdict"].as_str().unwrap().to_string())
            .or_default() += 1.0;
    }
    let tokens = |kind: &str| -> f64 {
        records
            .iter()
            .filter(|r| r["cached"] != true)
            .map(|r| r["usage"][kind].as_u64().unwrap_or(0) as f64)
            .sum()
    };
    let (prompt_tokens, completion_tokens) = (tokens("prompt_tokens"), tokens("completion_tokens"));
    assert!(prompt_tokens > 0.0 && completion_tokens > 0.0);
    eprintln!("{units} units, {rounds} rounds {by_verdict:?}, tokens {prompt_tokens} + {completion_tokens}");

    let sel = format!("run=\"{run}\"");
    let agrees = |promql: &str, expected: f64| {
        let mut last = None;
        wait_for(
            &format!("Prometheus says {promql} = {expected} (last: {last:?})"),
            Duration::from_secs(120),
            || {
                last = prometheus.value(promql);
                last == Some(expected)
            },
        );
    };
    agrees(&format!("autoeval_run_units{{{sel}}}"), units);
    agrees(&format!("autoeval_run_units_done{{{sel}}}"), units);
    agrees(&format!("sum(autoeval_run_rounds{{{sel}}})"), rounds);
    for (verdict, n) in &by_verdict {
        agrees(
            &format!("sum(autoeval_run_rounds{{{sel},verdict=\"{verdict}\"}})"),
            *n,
        );
    }
    // Each round was verified and acknowledged once, and each translated
    // once by a worker (no fault in this run: nothing was delivered twice).
    agrees(
        "sum(autoeval_tasks_settled_total{stage=\"verify\",outcome=\"acked\"})",
        rounds,
    );
    agrees(
        "sum(autoeval_tasks_settled_total{stage=\"translate\",outcome=\"acked\"})",
        rounds,
    );
    agrees(
        "sum(autoeval_llm_requests_total{outcome=\"ok\"})",
        2.0 * rounds,
    );
    agrees(
        "sum(autoeval_llm_tokens_total{kind=\"prompt\"})",
        prompt_tokens,
    );
    agrees(
        "sum(autoeval_llm_tokens_total{kind=\"completion\"})",
        completion_tokens,
    );
    agrees("count(up{job=~\"autoeval-.*\"} == 1)", 4.0);

    // Every query of every panel of the dashboard returns data.
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(deploy().join("grafana/dashboards/autoeval.json")).unwrap(),
    )
    .unwrap();
    // A rate needs two scrapes of a series: each query is given the time
    // for that, and fails only if it never returns data.
    let mut checked = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$run", &run)
                .replace("$__rate_interval", "10m");
            wait_for(
                &format!("data for the panel {}: {expr}", panel["title"]),
                Duration::from_secs(60),
                || !prometheus.query(&expr).is_empty(),
            );
            checked += 1;
        }
    }
    eprintln!("{checked} dashboard queries returned data");
    assert!(checked >= 20);

    // SIGTERM ends the lingering coordinator cleanly.
    let pid = coordinator.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = coordinator.wait().unwrap();
    assert!(status.success(), "{status}");
}
