//! The providers' own SDKs hold the mock server and the model client to
//! their APIs (`tests/sdks/check_sdks.py`, run from a cached virtual
//! environment, `scripts/sdks-venv`): `autoeval run` sends each provider's
//! requests to the mock (chat completions, Responses, Anthropic's
//! messages, Gemini, Azure on both its paths, Bedrock signed with two sets
//! of keys, and the batch APIs); then OpenAI's, Anthropic's and Google's
//! SDKs and boto3 read the mock's replies, batches and error fixtures as
//! their own, each request the client sent is held to its SDK's request
//! types, and each Bedrock signature to botocore's for the same request.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{binary, free_port};
use autoeval_e2e::scratch;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A mock server, stopped when dropped.
struct Mock {
    child: Child,
    base: String,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `autoeval mock-llm` with `extra` arguments, once it listens.
fn mock(extra: &[&str]) -> Mock {
    let port = free_port();
    let child = Command::new(binary("autoeval"))
        .args(["mock-llm", "--port", &port.to_string()])
        .args(extra)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the mock server did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    Mock {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// The Bedrock keys of the runs: (access key id, secret, session token, region).
const AWS_KEYS: [(&str, &str, Option<&str>, &str); 2] = [
    (
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
        "us-east-1",
    ),
    (
        "ASIAEXAMPLETEMPORARY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        Some("IQoJb3JpZ2luX2VjEXAMPLE//////////wEaCXVzLWVhc3QtMSJGMEQCIEXAMPLE="),
        "eu-west-3",
    ),
];

/// Runs `autoeval run` of `spec` against the mock, `aws` naming the keys
/// a Bedrock spec signs with.
fn run(dir: &Path, base: &str, spec: &str, aws: usize) {
    let (key_id, secret, token, region) = AWS_KEYS[aws];
    let out = dir.join(format!("run-{}", dir.read_dir().unwrap().count()));
    let mut c = Command::new(binary("autoeval"));
    c.args(["run", "--model", spec, "--quiet", "--out"])
        .arg(&out)
        .args(["--dataset", "plogic", "--per-bucket", "1", "--batches", "1"])
        .args(["--prompt", "zero-shot"])
        .env("OPENAI_API_KEY", "sk-test")
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", base)
        .env("GEMINI_API_KEY", "gm-test")
        .env("AZURE_OPENAI_API_KEY", "az-test")
        .env("AWS_ACCESS_KEY_ID", key_id)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env("AWS_REGION", region)
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_BEARER_TOKEN_BEDROCK");
    if let Some(t) = token {
        c.env("AWS_SESSION_TOKEN", t);
    }
    let done = c.output().unwrap();
    assert!(
        done.status.success(),
        "the run of {spec} failed: {}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// The SDKs' python, its environment created the first time.
fn sdks_python() -> PathBuf {
    let out = Command::new(root().join("scripts/sdks-venv"))
        .output()
        .expect("scripts/sdks-venv runs");
    assert!(
        out.status.success(),
        "the SDKs' environment could not be made: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A mock that answers every request with the fixture at `path` (under
/// the model client's provider-error fixtures), and what the check expects of it.
fn refusing(path: &str) -> (Mock, Value) {
    let file = root()
        .join("crates/llm-client/tests/fixtures/provider-errors")
        .join(path);
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let server = mock(&[
        "--refuse-with",
        file.to_str().unwrap(),
        "--refuse-after",
        "0",
    ]);
    let expected = json!({
        "base": server.base,
        "status": fixture["status"],
        "cause": fixture["cause"],
        "name": path,
    });
    (server, expected)
}

#[test]
fn each_provider_sdk_reads_the_mock_and_accepts_the_clients_requests_and_signatures() {
    let _turn = autoeval_e2e::turn(module_path!());
    let dir = scratch("sdks");
    let server = mock(&["--record-requests"]);
    let b = server.base.as_str();
    let batched = "batch=true&batch-wait-s=0.2&batch-poll-s=0.05";
    let runs = [
        (format!("openai-compatible:m@{b}/v1?reasoning-effort=low&seed=7"), 0),
        ("anthropic:claude-haiku-4-5?thinking-budget=1024&max-tokens=2048&system=Be+brief".to_string(), 0),
        (format!("openai-responses:o4-mini@{b}/v1?reasoning-effort=low&system=Be+brief"), 0),
        (format!("gemini:gemini-2.5-flash@{b}?thinking-budget=512&max-tokens=2048&system=Be+brief&seed=7"), 0),
        (format!("azure:gpt-4o@{b}?api-version=2024-10-21"), 0),
        (format!("azure:gpt-4o-mini@{b}?system=Be+brief"), 0),
        (format!("bedrock:anthropic.claude-3-haiku-20240307-v1:0@{b}?system=Be+brief"), 0),
        (
            format!("bedrock:arn:aws:bedrock:eu-west-3::foundation-model/anthropic.claude-3-haiku-20240307-v1:0@{b}?thinking-budget=1024&max-tokens=2048"),
            1,
        ),
        (format!("openai-responses:o4-mini@{b}/v1?{batched}"), 0),
        (format!("gemini:gemini-2.5-flash@{b}?{batched}"), 0),
        (format!("azure:gpt-4o@{b}?{batched}"), 0),
    ];
    for (spec, aws) in &runs {
        run(&dir, b, spec, *aws);
    }
    let recorded: Value = reqwest::blocking::get(format!("{b}/recorded-requests"))
        .unwrap()
        .json()
        .unwrap();
    let fixtures = [
        ("gemini", "gemini/resource-exhausted-per-minute.json"),
        ("bedrock", "bedrock/throttling.json"),
        ("azure", "azure/deployment-not-found.json"),
        ("openai-responses", "openai-responses/rate-limit.json"),
    ];
    let mut servers = Vec::new();
    let mut refusing_bases = serde_json::Map::new();
    for (provider, path) in fixtures {
        let (s, expected) = refusing(path);
        servers.push(s);
        refusing_bases.insert(provider.to_string(), expected);
    }
    let keys: serde_json::Map<String, Value> = AWS_KEYS
        .iter()
        .map(|(id, secret, token, region)| (id.to_string(), json!([secret, token, region])))
        .collect();
    let checks = json!({
        "base": b,
        "refusing": refusing_bases,
        "recorded": recorded,
        "keys": keys,
    });
    let file = dir.join("checks.json");
    std::fs::write(&file, checks.to_string()).unwrap();
    let out = Command::new(sdks_python())
        .arg(root().join("tests/sdks/check_sdks.py"))
        .arg(&file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    // Requests held one by one pass by the hundred: their count says enough.
    let summary: Vec<&str> = said
        .lines()
        .filter(|l| !l.starts_with("ok   request ") && !l.starts_with("ok   inlined request "))
        .collect();
    eprintln!("{}", summary.join("\n"));
    assert!(
        out.status.success(),
        "the SDKs found differences:\n{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
