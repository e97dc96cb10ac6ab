//! Libraries do no I/O, except those whose job is I/O.

use crate::debt::Debt;
use crate::tokens::all_paths;
use crate::tree::product_sources;

/// The packages whose job is I/O, and the binaries and tests at the edges.
const IO_PACKAGES: [&str; 15] = [
    "autoeval-solver-pool",
    "autoeval-local-servers",
    "autoeval-llm-client",
    "autoeval-mock-llm",
    "autoeval-amqp",
    "autoeval-redis-store",
    "autoeval-service",
    "autoeval-run-dir",
    "autoeval-fleet-coordinator",
    "autoeval-progress",
    "autoeval-telemetry",
    "autoeval-coordinator",
    "autoeval-worker",
    "autoeval-verifier-worker",
    "autoeval-e2e",
];

/// Paths that reach files, processes, the network or the environment.
const IO_PATHS: [&[&str]; 14] = [
    &["std", "fs"],
    &["std", "process"],
    &["std", "net"],
    &["std", "env"],
    &["std", "io", "stdin"],
    &["std", "io", "stdout"],
    &["tokio", "fs"],
    &["tokio", "process"],
    &["tokio", "net"],
    &["reqwest"],
    &["hyper"],
    &["lapin"],
    &["redis"],
    &["tempfile"],
];

#[test]
fn no_library_outside_the_io_crates_does_io() {
    let files = product_sources();
    let mut found = Vec::new();
    let mut io_files = 0;
    for file in &files {
        let calls: Vec<String> = all_paths(&file.syntax)
            .into_iter()
            .filter(|(path, _)| {
                IO_PATHS.iter().any(|io| {
                    path.starts_with(&io.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                })
            })
            .map(|(path, line)| format!("{} (line {line})", path.join("::")))
            .collect();
        if calls.is_empty() {
            continue;
        }
        io_files += 1;
        if !IO_PACKAGES.contains(&file.package.as_str()) {
            found.push((file.path.clone(), calls.join(", ")));
        }
    }
    assert!(
        io_files > 10,
        "the check sees I/O where it is allowed ({io_files} files)"
    );
    Debt::IO_OUTSIDE_IO_CRATES.check("I/O outside the I/O crates", found);
}
