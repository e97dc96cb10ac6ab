//! How a model is called, from the outside: the requests reasoning and
//! thinking models take, against a mock server that refuses what each
//! provider refuses, under the defaults and the paper's protocol.

use crate::common::{free_port, get_json, mock_server, records, BIN};
use autoeval_e2e::scratch;
use autoeval_proto::Verdict;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Keys for every provider the cases name: the mock takes any.
const KEYS: [(&str, &str); 6] = [
    ("OPENAI_API_KEY", "sk-test"),
    ("ANTHROPIC_API_KEY", "sk-ant-test"),
    ("GEMINI_API_KEY", "test"),
    ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
    (
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    ),
    ("AWS_REGION", "us-east-1"),
];

/// `autoeval run` of `model` on a small plan into `out`, with `extra` flags.
fn run(model: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--model",
        model,
        "--dataset",
        "plogic",
        "--prompt",
        "zero-shot",
        "--per-bucket",
        "1",
        "--batches",
        "1",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    Command::new(BIN).args(&args).envs(KEYS).output().unwrap()
}

/// The bodies of the requests the mock at `port` recorded, newest last.
fn bodies(port: u16) -> Vec<Value> {
    get_json(port, "/recorded-requests")
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| serde_json::from_str(r["body"].as_str()?).ok())
        .collect()
}

#[test]
fn reasoning_and_thinking_models_are_sent_only_what_their_providers_take() {
    let port = free_port();
    let _server = mock_server(port, &["--record-requests"]);
    let v1 = format!("http://127.0.0.1:{port}/v1");
    let host = format!("http://127.0.0.1:{port}");
    // Each spec, and what its requests must and must not hold.
    let cases: [(String, &[&str], &[&str]); 6] = [
        (
            format!("openai:o3-mini@{v1}"),
            &["max_completion_tokens"],
            &["temperature", "max_tokens"],
        ),
        (
            format!("openai:gpt-5-mini@{v1}"),
            &["max_completion_tokens"],
            &["temperature", "max_tokens"],
        ),
        (
            format!("openai-responses:o4-mini@{v1}"),
            &["max_output_tokens"],
            &["temperature"],
        ),
        (
            format!("anthropic:claude-sonnet-4-5@{host}?thinking-budget=2048"),
            &["thinking", "max_tokens"],
            &["temperature"],
        ),
        (
            format!("gemini:gemini-2.5-flash@{host}?thinking-budget=1024"),
            &["generationConfig"],
            &[],
        ),
        (
            format!("bedrock:anthropic.claude-sonnet-4-5-v1:0@{host}?thinking-budget=2048"),
            &["additionalModelRequestFields", "inferenceConfig"],
            &[],
        ),
    ];
    let dir = scratch("reasoning-requests");
    for (i, (model, present, absent)) in cases.iter().enumerate() {
        for (j, protocol) in [&[][..], &["--protocol", "paper"][..]].iter().enumerate() {
            let out = dir.join(format!("{i}-{j}"));
            let before = bodies(port).len();
            let ran = run(model, &out, protocol);
            assert!(
                ran.status.success(),
                "{model} {protocol:?}: {}",
                String::from_utf8_lossy(&ran.stderr)
            );
            let recorded = records(&out);
            assert!(!recorded.is_empty(), "{model}");
            assert!(
                recorded.iter().all(|r| r.verdict != Verdict::ApiFailure),
                "{model} {protocol:?}: a call failed"
            );
            let sent = &bodies(port)[before..];
            assert!(!sent.is_empty(), "{model}: nothing reached the mock");
            for body in sent {
                for key in *present {
                    assert!(body.get(*key).is_some(), "{model}: no {key} in {body}");
                }
                for key in *absent {
                    assert!(body.get(*key).is_none(), "{model}: {key} in {body}");
                }
            }
        }
    }
    // Through the batch APIs the same requests complete, request by request.
    for model in [
        format!("openai:o3-mini@{v1}"),
        format!("anthropic:claude-sonnet-4-5@{host}?thinking-budget=2048"),
    ] {
        let batched = format!(
            "{model}{}batch=true&batch-wait-s=0.2&batch-poll-s=0.1",
            if model.contains('?') { '&' } else { '?' }
        );
        let out = dir.join(format!("batch-{}", model.len()));
        let ran = run(&batched, &out, &[]);
        let said = String::from_utf8_lossy(&ran.stderr);
        assert!(ran.status.success(), "{batched}: {said}");
        let recorded = records(&out);
        assert!(
            !recorded.is_empty() && recorded.iter().all(|r| r.verdict != Verdict::ApiFailure),
            "{batched}: a batched call failed"
        );
    }
    // A batch refuses what a direct request is refused, in the provider's words.
    let out = dir.join("batch-told-otherwise");
    let told =
        format!("openai:o3-mini@{v1}?reasoning=false&batch=true&batch-wait-s=0.2&batch-poll-s=0.1");
    let ran = run(&told, &out, &[]);
    assert!(!ran.status.success(), "{told}");
    assert!(
        records(&out)
            .iter()
            .all(|r| r.verdict == Verdict::ApiFailure
                && r.reason
                    .as_deref()
                    .is_some_and(|w| w.contains("Unsupported parameter: 'max_tokens'"))),
        "{told}: a batched request the provider refuses was answered"
    );
    // The mock is as strict as the provider: told the model is no reasoning
    // model, the run sends what OpenAI refuses, and halts on its words.
    let out = dir.join("told-otherwise");
    let ran = run(&format!("openai:o3-mini@{v1}?reasoning=false"), &out, &[]);
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(!ran.status.success(), "{said}");
    assert!(
        said.contains("Unsupported parameter: 'max_tokens'"),
        "{said}"
    );
}

#[test]
fn a_setting_the_model_cannot_take_is_refused_before_any_call() {
    let port = free_port();
    let _server = mock_server(port, &[]);
    let dir = scratch("refused-settings");
    for (model, words) in [
        (
            format!("gemini:gemini-2.5-pro@http://127.0.0.1:{port}?thinking-budget=0"),
            "thinking-budget must be within 128..=32768",
        ),
        (
            format!("anthropic:claude-sonnet-4-5@http://127.0.0.1:{port}?thinking-budget=100"),
            "thinking-budget must be at least 1024",
        ),
    ] {
        let ran = run(&model, &dir.join(words.len().to_string()), &[]);
        let said = String::from_utf8_lossy(&ran.stderr);
        assert!(!ran.status.success() && said.contains(words), "{said}");
    }
    assert_eq!(get_json(port, "/stats")["requests"], 0);
}

/// A run of the built-in model to judge, in `out`.
fn judged_run(out: &Path) {
    let ran = run("reference", out, &[]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// `autoeval judge DIR --judge MODEL` with `env` beside the keys.
fn judge(dir: &Path, model: &str, env: &[(&str, String)]) -> Output {
    Command::new(BIN)
        .args(["judge", dir.to_str().unwrap(), "--judge", model, "--quiet"])
        .args(["--concurrency", "1"])
        .envs(KEYS)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap()
}

/// Requests the mock at `port` has had.
fn requests(port: u16) -> u64 {
    get_json(port, "/stats")["requests"].as_u64().unwrap()
}

#[test]
fn the_judge_reaches_each_providers_base_address_and_asks_a_cached_question_once() {
    let port = free_port();
    let _server = mock_server(port, &[]);
    let dir = scratch("judge-base-addresses");
    let run_dir = dir.join("run");
    judged_run(&run_dir);
    let host = format!("http://127.0.0.1:{port}");
    for (judge_model, variable, address) in [
        (
            "openai:gpt-4o-mini",
            "OPENAI_BASE_URL",
            format!("{host}/v1"),
        ),
        (
            "anthropic:claude-haiku-4-5",
            "ANTHROPIC_BASE_URL",
            host.clone(),
        ),
        ("gemini:gemini-2.5-flash", "GEMINI_BASE_URL", host.clone()),
    ] {
        let before = requests(port);
        let env = [(variable, address)];
        let judged = judge(&run_dir, judge_model, &env);
        assert!(
            judged.status.success(),
            "{judge_model}: {}",
            String::from_utf8_lossy(&judged.stderr)
        );
        let asked = requests(port) - before;
        assert!(asked > 0, "{judge_model}: nothing reached {variable}");
        // Asked again from scratch, every answer comes from the reply cache.
        let file = std::fs::read_dir(&run_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with("judge-") && name.ends_with(".jsonl")
            })
            .expect("a judge file");
        std::fs::remove_file(&file).unwrap();
        let again = judge(&run_dir, judge_model, &env);
        assert!(again.status.success());
        assert_eq!(requests(port) - before, asked, "{judge_model}: asked twice");
        assert!(file.exists(), "the judgements are written again");
    }
}

#[test]
fn the_judge_gives_up_after_the_attempts_a_run_makes_on_the_same_server() {
    let port = free_port();
    let _server = mock_server(port, &["--latency-ms", "3000"]);
    let dir = scratch("judge-attempts");
    let run_dir = dir.join("run");
    judged_run(&run_dir);
    let settings = "?request-timeout-s=1&max-attempts=2";
    let env = [("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))];
    let judged = judge(&run_dir, &format!("openai:gpt-4o-mini{settings}"), &env);
    let by_judge = requests(port);
    let ran = run(
        &format!("openai:gpt-4o-mini@http://127.0.0.1:{port}/v1{settings}"),
        &dir.join("slow-run"),
        &["--concurrency", "1"],
    );
    let by_run = requests(port) - by_judge;
    for (what, out) in [("judge", &judged), ("run", &ran)] {
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: {said}");
        assert!(said.contains("within 1 s"), "{what}: {said}");
    }
    assert!(by_judge > 0 && by_judge % 2 == 0, "{by_judge}");
    assert_eq!(
        by_judge, by_run,
        "the judge and the run make the same attempts"
    );
}
