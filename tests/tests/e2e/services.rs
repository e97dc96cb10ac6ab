//! A fleet service that cannot start says why in one line, naming the flag
//! to fix, and never with a backtrace, whatever `RUST_BACKTRACE` says.

use autoeval_e2e::fleet::binary;
use std::process::Command;

#[test]
fn a_service_that_cannot_reach_redis_says_so_in_one_line() {
    let _turn = autoeval_e2e::turn(module_path!());
    for (service, args) in [
        ("autoeval-worker", vec!["--model", "reference"]),
        ("autoeval-verifier", vec![]),
    ] {
        let out = Command::new(binary(service))
            .args(&args)
            .args(["--redis", "redis://:a-password@127.0.0.1:1"])
            .env("RUST_BACKTRACE", "1")
            .output()
            .expect("the service starts");
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{service}: {said}");
        let line = said
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("{service}: no error line: {said}"));
        assert!(
            line.contains("cannot reach Redis at redis://:***@127.0.0.1:1")
                && line.contains("--redis"),
            "{service}: {line}"
        );
        assert!(
            !said.contains("backtrace") && !said.contains("a-password"),
            "{service}: {said}"
        );
    }
}
