//! Checking a stream of requests: one request line to one result line, and
//! a whole stream checked in parallel with results in input order. The
//! `autoeval check` command and the `autoeval-verifier-stdio` binary both
//! run it; the caller opens the files.

use autoeval_proto::{bad_request_line, result_line, CheckRequest};
use autoeval_verify::{check, Kind, Prover, Settings};
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::time::Instant;

/// Checks one request line; a bad line becomes an `unknown` result that says what is wrong.
pub fn check_line(line: &str, settings: &Settings, prover: &dyn Prover) -> Map<String, Value> {
    let started = Instant::now();
    let request = match CheckRequest::from_line(line) {
        Ok(r) => r,
        Err(bad) => return bad_request_line(bad),
    };
    let kind: Kind = match request.kind.parse() {
        Ok(k) => k,
        Err(e) => {
            return bad_request_line(autoeval_proto::BadRequest {
                reason: e,
                partial: request_fields(&request),
            })
        }
    };
    let local;
    let settings = match &request.alphabet {
        Some(alphabet) => {
            local = Settings {
                alphabet: alphabet.chars().filter(|c| c.is_alphanumeric()).collect(),
                ..settings.clone()
            };
            &local
        }
        None => settings,
    };
    let outcome = check(kind, &request.phi0, &request.phi1, settings, prover);
    let outcome = match serde_json::to_value(&outcome) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    let ms = started.elapsed().as_secs_f64() * 1e3;
    result_line(request_fields(&request), outcome, Some(ms))
}

fn request_fields(request: &CheckRequest) -> Map<String, Value> {
    match serde_json::to_value(request) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Checks every line of `input` on `threads`, writing results to `output`
/// in input order as they complete; `on_result` sees each result. Returns
/// the count of each verdict.
pub fn run_checks(
    input: impl BufRead,
    mut output: impl Write,
    settings: &Settings,
    prover: &dyn Prover,
    threads: &rayon::ThreadPool,
    on_result: impl Fn(&Map<String, Value>),
) -> std::io::Result<BTreeMap<String, usize>> {
    // Chunks keep results streaming in input order while all cores work.
    const CHUNK: usize = 256;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut lines = input.lines();
    loop {
        let chunk: Vec<String> = lines.by_ref().take(CHUNK).collect::<std::io::Result<_>>()?;
        if chunk.is_empty() {
            break;
        }
        let results: Vec<Map<String, Value>> = threads.install(|| {
            chunk
                .par_iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| check_line(l, settings, prover))
                .collect()
        });
        for r in results {
            let verdict = r
                .get("verdict")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            *counts.entry(verdict.to_string()).or_default() += 1;
            on_result(&r);
            serde_json::to_writer(&mut output, &r)?;
            output.write_all(b"\n")?;
        }
        output.flush()?;
    }
    Ok(counts)
}
