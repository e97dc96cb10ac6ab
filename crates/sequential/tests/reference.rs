//! The betting confidence sequences held to the reference implementation's
//! (`confseq`, by the method's authors, built from PyPI into a cached
//! environment by `scripts/confseq-venv`): on fixed sequences, with the same
//! α and the same population sampled without replacement, every interval
//! at every t is the reference's within 1e-6, or narrower where the tool's
//! running intersection (of each candidate's highest capital, not of each
//! step's hull) is the documented improvement.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_generate::rng::Rng;
use autoeval_sequential::betting::HedgedSequence;
use autoeval_sequential::method::TRUNCATION;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One sequence and the settings it is run at.
struct Case {
    name: String,
    x: Vec<f64>,
    alpha: f64,
    population: Option<u64>,
    truncation: f64,
    aim: Option<f64>,
}

/// `n` values drawn from `shares` ((value, chance) pairs) by `seed`.
fn draws(n: usize, shares: &[(f64, f64)], seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed, "reference", 0);
    (0..n)
        .map(|_| {
            let mut u = rng.below(1_000_000) as f64 / 1e6;
            for &(value, chance) in shares {
                if u < chance {
                    return value;
                }
                u -= chance;
            }
            shares[shares.len() - 1].0
        })
        .collect()
}

/// The sequences: a level's shares of two prompt styles, a model right on
/// every item, a pair's (d + 1)/2, each without replacement over its whole
/// population, and one with replacement; each at the reference's defaults
/// and at the tool's own settings.
fn cases() -> Vec<Case> {
    let level = draws(400, &[(1.0, 0.88), (0.5, 0.1), (0.0, 0.02)], 1);
    let perfect = vec![1.0; 300];
    let pair = draws(500, &[(1.0, 0.2), (0.5, 0.7), (0.0, 0.1)], 2);
    let open = draws(300, &[(1.0, 0.7), (0.0, 0.3)], 3);
    let mut out = Vec::new();
    for (name, x, population, aim) in [
        ("a level near 93%, N = 400", level, Some(400), Some(0.02)),
        ("every item right, N = 300", perfect, Some(300), Some(0.02)),
        ("a pair's (d + 1)/2, N = 500", pair, Some(500), None),
        ("70% with replacement", open, None, Some(0.02)),
    ] {
        out.push(Case {
            name: format!("{name}, the reference's defaults"),
            x: x.clone(),
            alpha: 0.05,
            population,
            truncation: 0.5,
            aim: None,
        });
        out.push(Case {
            name: format!("{name}, the tool's settings"),
            x,
            // A pair's sequence runs at α over the family's pairs.
            alpha: if aim.is_some() { 0.05 } else { 0.05 / 12.0 },
            population,
            truncation: TRUNCATION,
            aim,
        });
    }
    out
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The reference environment's python, built the first time.
fn reference_python() -> PathBuf {
    let out = Command::new(root().join("scripts/confseq-venv"))
        .output()
        .expect("scripts/confseq-venv runs");
    assert!(
        out.status.success(),
        "scripts/confseq-venv failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The reference's (lower, upper) at every t of every case.
fn reference(cases: &[Case]) -> Vec<Vec<(f64, f64)>> {
    let input: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| {
            serde_json::json!({
                "x": c.x, "alpha": c.alpha, "N": c.population,
                "trunc": c.truncation, "aim": c.aim,
            })
        })
        .collect();
    let mut child = Command::new(reference_python())
        .arg(root().join("tests/reference/confseq_cs.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the reference runs");
    let text = serde_json::to_string(&input).unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the reference failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    answer
        .iter()
        .map(|c| {
            let ends = |k: &str| -> Vec<f64> {
                c[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect()
            };
            ends("lower").into_iter().zip(ends("upper")).collect()
        })
        .collect()
}

/// The tool's (lower, upper) at every t of `case`.
fn tool(case: &Case) -> Vec<(f64, f64)> {
    let mut cs = HedgedSequence::new(case.alpha, case.population).with_truncation(case.truncation);
    if let Some(aim) = case.aim {
        cs = cs.aimed_at(aim);
    }
    case.x
        .iter()
        .map(|&x| {
            cs.push(x);
            cs.interval()
        })
        .collect()
}

#[test]
fn the_betting_sequences_are_the_reference_implementations() {
    let cases = cases();
    let reference = reference(&cases);
    let (mut points, mut narrower, mut largest) = (0, 0, 0.0_f64);
    for (case, want) in cases.iter().zip(&reference) {
        let got = tool(case);
        assert_eq!(got.len(), want.len(), "{}", case.name);
        for (t, ((l, u), (rl, ru))) in got.iter().zip(want).enumerate() {
            points += 1;
            let difference = (l - rl).abs().max((u - ru).abs());
            if difference <= 1e-6 {
                largest = largest.max(difference);
                continue;
            }
            assert!(
                *l >= rl - 1e-9 && *u <= ru + 1e-9,
                "{} at t = {}: the tool's [{l}, {u}] is not within the reference's [{rl}, {ru}]",
                case.name,
                t + 1
            );
            narrower += 1;
        }
    }
    eprintln!(
        "cross-check: {} sequences, {points} intervals compared; the largest difference where \
         they agree: {largest:.1e}; narrower than the reference at {narrower}",
        cases.len()
    );
    // Every t of every case was compared: the reference answered them all.
    assert_eq!(points, cases.iter().map(|c| c.x.len()).sum::<usize>());
}
