//! The pool against real processes: the prover itself, one that hangs, one
//! that dies at once, and one starved of memory.

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
    let p = pool("sleep", &["600"]);
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
fn a_process_that_dies_is_a_verifier_error_with_the_reason() {
    let p = pool("true", &[]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::VerifierError, "{o:?}");
    assert!(o.reason.unwrap().contains("ended unexpectedly"));
}

#[test]
fn a_process_out_of_memory_dies_alone() {
    // 8 MiB of address space is not enough to start the prover.
    let p = pool(PROVER, &["8"]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::VerifierError, "{o:?}");
    let p = pool("no-such-prover-binary", &[]);
    let o = prove(&p, "∀ x1.pred1(x1)", "∃ x1.pred1(x1)", 5_000);
    assert_eq!(o.verdict, Verdict::VerifierError, "{o:?}");
    assert!(o.reason.unwrap().contains("cannot start the prover"));
}
