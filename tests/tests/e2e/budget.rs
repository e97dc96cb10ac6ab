//! Budgets: a fleet run with a cost cap pauses at the cap, its workers set
//! its tasks aside, `status` says why, and `resume` with a raised cap
//! finishes it without paying for anything twice. What was paid is priced
//! here from the mock server's own record of the tokens it served.

use autoeval_e2e::fleet::{get_json, Fleet, AMQP, REDIS};
use autoeval_mock_llm::Arrival;

/// Dollars per token in this test's price table: $1,000 per million tokens.
const USD_PER_TOKEN: f64 = 1_000.0 / 1e6;
const WORKERS: usize = 2;
const CONCURRENCY: u16 = 4;
const CAP_USD: f64 = 20.0;

#[test]
fn a_run_pauses_at_its_cost_cap_and_resume_finishes_it_paying_for_nothing_twice() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("budget", &["--latency-ms", "20"]);
    let prices = fleet.dir.join("prices.json");
    std::fs::write(
        &prices,
        r#"{"reference": {"input": 1000.0, "output": 1000.0}}"#,
    )
    .unwrap();
    for _ in 0..WORKERS {
        fleet.start_worker(CONCURRENCY);
    }
    fleet.start_verifier(1);
    let (out, prices) = (
        fleet.out.to_string_lossy().into_owned(),
        prices.to_string_lossy().into_owned(),
    );
    let cap = CAP_USD.to_string();
    let base = ["--fleet", "--amqp", AMQP, "--redis", REDIS, "--quiet"];
    let mut args = vec![
        "run",
        "--model",
        &fleet.model,
        "--out",
        &out,
        "--prompt",
        "zero-shot",
        "--batches",
        "1",
        "--per-bucket",
        "1",
        "--seed",
        "5",
        "--prices",
        &prices,
        "--budget-usd",
        &cap,
    ];
    args.extend_from_slice(&base);
    let paused = fleet.autoeval_output(&args);
    let said = String::from_utf8_lossy(&paused.stderr);
    assert_eq!(
        paused.status.code(),
        Some(75),
        "a paused run exits 75: {said}"
    );
    assert!(said.contains("is paused: the cost cap"), "{said}");
    // The command it gives, pasted as it is, finishes the run (below).
    let hint = said
        .split_once("Continue it with `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(command, _)| command.to_string())
        .unwrap_or_else(|| panic!("no command to paste: {said}"));
    assert!(
        hint.starts_with(&format!("autoeval resume {out} --fleet --budget-usd ")),
        "{hint}"
    );

    // status says why.
    let mut status_args = vec!["status", &out];
    status_args.extend_from_slice(&base[..5]);
    let status = fleet.autoeval_output(&status_args);
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(
        shown.contains("PAUSED: the cost cap of $20.0000 is reached"),
        "{shown}"
    );

    // The overshoot. The cap is reached when the charge of a finished task
    // reaches it; the tasks charged before it cost less than the cap, so
    // there are at most `before` of them, the most of the cheapest calls,
    // two per task, that stay under it. After it, only the tasks under way
    // finish: at most each worker's concurrency, two calls each.
    let served: Vec<Arrival> = serde_json::from_value(get_json(&format!(
        "http://127.0.0.1:{}/timeline",
        fleet.port
    )))
    .unwrap();
    let spent: f64 = served.iter().map(|a| a.tokens as f64 * USD_PER_TOKEN).sum();
    let mut cheapest: Vec<u64> = served.iter().map(|a| a.tokens).collect();
    cheapest.sort_unstable();
    let mut before = 0;
    while 2 * before + 2 <= cheapest.len()
        && cheapest[..2 * before + 2].iter().sum::<u64>() as f64 * USD_PER_TOKEN < CAP_USD
    {
        before += 1;
    }
    let under_way = WORKERS * usize::from(CONCURRENCY);
    let bound = 2 * (before + under_way);
    eprintln!(
        "paused after {} calls costing ${spent:.2} (cap ${CAP_USD}); at most {before} tasks cost less than the cap, so at most {bound} calls",
        served.len()
    );
    assert!(
        spent >= CAP_USD,
        "the run paused at ${spent:.2}, before its cap of ${CAP_USD}"
    );
    assert!(
        served.len() <= bound,
        "{} calls: more than the tasks under the cap and those under way when it was reached make ({bound})",
        served.len()
    );
    let budget = fleet.block_on(fleet.store().budget()).unwrap();
    assert!(
        (budget.spent_usd - spent).abs() < 1e-6,
        "Redis says ${} spent, the server's tokens say ${spent}",
        budget.spent_usd
    );
    let units: usize = fleet.block_on(fleet.store().meta()).unwrap()["units"]
        .parse()
        .unwrap();
    assert!(
        served.len() < 2 * units,
        "the run paused before its end: {} calls of {}",
        served.len(),
        2 * units
    );

    // Run again with a higher cap, the paused run is not silently followed:
    // only resume continues it.
    let more = "1000";
    let mut again = args.clone();
    let at = again.iter().position(|a| *a == "--budget-usd").unwrap() + 1;
    again[at] = more;
    let refused = fleet.autoeval_output(&again);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "a paused run was run again: {said}"
    );
    assert!(
        said.contains("is paused at its budget; continue it with `autoeval resume"),
        "{said}"
    );
    // Every other command advised while the run is paused: the refusal's,
    // status's, and that of a resume whose cap the run has already spent.
    let mut advice = autoeval_e2e::advised(&said);
    advice.extend(autoeval_e2e::advised(&shown));
    let low = fleet.autoeval_output(&["resume", &out, "--fleet", "--budget-usd", "1", "--quiet"]);
    let said_low = String::from_utf8_lossy(&low.stderr).into_owned();
    assert_eq!(low.status.code(), Some(1), "{said_low}");
    assert!(said_low.contains("nothing was changed"), "{said_low}");
    advice.extend(autoeval_e2e::advised(&said_low));
    assert_eq!(advice.len(), 3, "{advice:?}");

    // Resumed with the pasted command, the run ends, each unit once, each prompt asked once.
    eprintln!("pasted: {hint}");
    let pasted = &autoeval_e2e::advised(&format!("`{hint}`"))[0];
    let pasted: Vec<&str> = pasted.iter().skip(1).map(String::as_str).collect();
    let resumed = fleet.autoeval_output(&pasted);
    assert!(
        resumed.status.success(),
        "resume failed: {}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let results = std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap();
    let rows = autoeval_e2e::jsonl(&results);
    let mut seen = std::collections::HashSet::new();
    for r in &rows {
        assert!(
            seen.insert(format!("{}|{}", r["id"], r["round"])),
            "a round recorded twice"
        );
    }
    assert_eq!(rows.len(), units, "one round per unit");
    let asked_twice: Vec<_> = fleet
        .prompt_counts()
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(
        asked_twice.is_empty(),
        "prompts asked more than once: {asked_twice:?}"
    );
    assert_eq!(
        fleet.mock_stats()["requests"].as_u64(),
        Some(2 * units as u64)
    );
    let budget = fleet.block_on(fleet.store().budget()).unwrap();
    assert!(budget.paused.is_none());
    // The other advice, pasted once the run is done, works as well, and pays for nothing more.
    for command in &advice {
        eprintln!("pasted: {}", command.join(" "));
        let args: Vec<&str> = command.iter().skip(1).map(String::as_str).collect();
        let again = fleet.autoeval_output(&args);
        assert!(
            again.status.success(),
            "`{}` failed: {}",
            command.join(" "),
            String::from_utf8_lossy(&again.stderr)
        );
    }
    assert_eq!(
        fleet.mock_stats()["requests"].as_u64(),
        Some(2 * units as u64)
    );
    eprintln!(
        "resumed: {units} units, {} requests, ${:.2} spent in all, {} tasks set aside while paused",
        2 * units,
        budget.spent_usd,
        budget.parked
    );
}

/// `autoeval run ARGS --quiet --out DIR`, which must be refused before
/// it writes anything; answers what it said.
fn refused_run(name: &str, args: &[&str]) -> String {
    let out = autoeval_e2e::scratch(name).join("run");
    let ran = std::process::Command::new(autoeval_e2e::fleet::binary("autoeval"))
        .arg("run")
        .args(args)
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .expect("autoeval runs");
    let said = String::from_utf8_lossy(&ran.stderr).into_owned();
    assert!(
        !ran.status.success(),
        "a cap that cannot be kept was accepted: {said}"
    );
    assert!(!out.exists(), "the refused run wrote {}", out.display());
    said
}

#[test]
fn a_cost_cap_on_a_model_without_a_price_is_refused() {
    let _turn = autoeval_e2e::turn(module_path!());
    let said = refused_run(
        "budget-unpriced",
        &[
            "--model",
            "openai-compatible:unpriced@http://127.0.0.1:9/v1",
            "--fleet",
            "--budget-usd",
            "5",
        ],
    );
    assert!(said.contains("--budget-usd needs a price for"), "{said}");
}

#[test]
fn a_cost_cap_on_a_one_machine_run_of_a_model_without_a_price_is_refused_as_on_a_fleet() {
    let _turn = autoeval_e2e::turn(module_path!());
    let said = refused_run(
        "budget-local",
        &[
            "--model",
            "openai-compatible:unpriced@http://127.0.0.1:9/v1",
            "--budget-usd",
            "1",
        ],
    );
    assert!(said.contains("--budget-usd needs a price for"), "{said}");
}
