//! The end-to-end tests, one binary: each module was a binary of its own
//! and still runs alone, since each test first waits for its module's turn
//! (`autoeval_e2e::turn`). One binary links once instead of once a module.

mod admission;
mod batch;
mod budget;
mod chaos;
mod claim;
mod conformance;
mod costs;
mod deploy;
mod deploy_compose;
mod deploy_k8s;
mod export;
mod fleet;
mod gc;
mod halt;
mod hints;
mod hostile;
mod limits;
mod nodeloss;
mod progress;
mod prometheus;
mod pull;
mod sdks;
mod secrets;
mod services;
mod store;
mod tls;
mod translated;

/// Every test of this binary waits for its module's turn first: a test
/// that did not could run beside a test that stops the broker.
#[test]
fn every_test_waits_for_its_modules_turn_first() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let mut tests = 0;
    for entry in std::fs::read_dir(&dir).expect("the tests' directory") {
        let path = entry.expect("an entry").path();
        if path.file_name().is_some_and(|n| n == "main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a test file");
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let attribute = line.trim();
            if attribute != "#[test]" && !attribute.starts_with("#[tokio::test") {
                continue;
            }
            tests += 1;
            let body = lines[at..]
                .iter()
                .position(|l| l.trim_end().ends_with('{'))
                .map(|open| lines.get(at + open + 1).copied().unwrap_or(""));
            assert!(
                body.is_some_and(|first| first.contains("autoeval_e2e::turn(module_path!())")),
                "{}:{}: the test does not wait for its module's turn first",
                path.display(),
                at + 1
            );
        }
    }
    assert!(tests > 60, "the tests were read ({tests})");
}
