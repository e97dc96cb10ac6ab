//! The pool against real processes: the prover itself, one that hangs, one
//! that dies at once, one that dies during a check, and one starved of memory.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_solver_pool::{PoolConfig, SolverPool};
use autoeval_syntax::{parse_formula_exact, Mode};
use autoeval_verify::{Prover, ProverLimits, Verdict};
use std::time::{Duration, Instant};

fn pool(program: &str, args: &[&str]) -> SolverPool {
    SolverPool::new(PoolConfig {
        program: program.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        size: 2,
        grace: Duration::from_millis(200),
    })
}

fn prove(p: &SolverPool, a: &str, b: &str, timeout_ms: u32) -> autoeval_verify::Outcome {
    let fa = parse_formula_exact(a, Mode::Lenient).unwrap();
    let fb = parse_formula_exact(b, Mode::Lenient).unwrap();
    p.prove(
        &fa,
        &fb,
        ProverLimits {
            timeout_ms,
            rlimit: 0,
        },
    )
}

const PROVER: &str = env!("CARGO_BIN_EXE_autoeval-prover");

#[test]
fn prover_processes_answer_and_are_reused() {
    let p = pool(PROVER, &[]);
    for _ in 0..5 {
        let o = prove(
            &p,
            "∀ x1.∃ x2.pred2(x1, x2)",
            "∀ x3.∃ x4.pred2(x3, x4)",
            5_000,
        );
        assert_eq!(o.verdict, Verdict::Equivalent, "{o:?}");
        let o = prove(
            &p,
            "∀ x1.∃ x2.pred2(x1, x2)",
            "∃ x2.∀ x1.pred2(x1, x2)",
            5_000,
        );
        assert_eq!(o.verdict, Verdict::NotEquivalent, "{o:?}");
    }
    assert!(p.live() <= 2, "the pool started {} processes", p.live());
}

#[test]
fn a_process_that_hangs_is_killed_at_its_deadline() {
    // Ready, then silent.
    let p = pool(
        "sh",
        &["-c", "printf 'autoeval-prover ready\\n'; exec sleep 600"],
    );
    let started = Instant::now();
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 300);
    let took = started.elapsed();
    assert_eq!(o.verdict, Verdict::Timeout, "{o:?}");
    assert!(o.reason.unwrap().contains("overran"));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(p.live(), 0, "the killed process must be reaped");
    // The pool goes on working after a kill.
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 300);
    assert_eq!(o.verdict, Verdict::Timeout);
}

#[test]
fn a_process_that_cannot_start_is_a_verifier_error_with_the_reason() {
    let p = pool("true", &[]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::VerifierError, "{o:?}");
    assert!(o.reason.unwrap().contains("could not start"));
    let p = pool("sh", &["-c", "echo hello"]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::VerifierError, "{o:?}");
    assert!(o.reason.unwrap().contains("not a prover"));
}

#[test]
fn a_process_that_dies_during_a_check_is_a_timeout_and_the_pool_goes_on() {
    // Ready, then it dies on the first request it reads, as a crash would.
    let p = pool(
        "sh",
        &[
            "-c",
            "printf 'autoeval-prover ready\\n'; head -c 1 >/dev/null; kill -SEGV $$",
        ],
    );
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::Timeout, "{o:?}");
    let reason = o.reason.unwrap();
    assert!(reason.contains("died during the check"), "{reason}");
    assert_eq!(p.live(), 0, "the dead process must be reaped");
}

#[test]
fn a_process_out_of_memory_dies_alone_and_the_check_is_a_timeout() {
    // 8 MiB of address space is not enough for a check: the process says
    // it is ready, then dies of memory exhaustion on the check.
    let p = pool(PROVER, &["8"]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::Timeout, "{o:?}");
    assert!(o.reason.unwrap().contains("died during the check"));
    // The pool goes on with processes that have memory.
    let p = pool(PROVER, &[]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::NotEquivalent, "{o:?}");
    let p = pool("no-such-prover-binary", &[]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::VerifierError, "{o:?}");
    assert!(o.reason.unwrap().contains("cannot start the prover"));
}
