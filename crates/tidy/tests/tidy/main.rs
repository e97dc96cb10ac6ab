//! The invariants docs/ARCHITECTURE.md states, checked against the
//! workspace's resolved graph (`cargo metadata`) and its sources read as
//! Rust: each test fails when its invariant stops holding. Here: the
//! dependency graph and the commands' separation; in the modules: sizes,
//! I/O, import circles, provider names, the next-round rule, the code map,
//! the shared flags.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod backends;
mod calls;
mod circles;
mod debt;
mod flags;
mod io;
mod map;
mod providers;
mod rules;
mod sizes;
mod specs;
mod tokens;
mod tree;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The packages that build a binary: none may be a dependency.
const BINARY_PACKAGES: [&str; 3] = [
    "autoeval-coordinator",
    "autoeval-worker",
    "autoeval-verifier-worker",
];

/// The workspace's resolved graph: each package's normal (not dev or build)
/// dependencies, by name, and the names of the workspace's own packages.
struct Graph {
    normal: BTreeMap<String, BTreeSet<String>>,
    ours: BTreeSet<String>,
}

/// The triple of this machine: the graph is the one built here.
fn host() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .unwrap()
}

fn graph() -> Graph {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", &host()])
        .current_dir(tree::root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let name_of: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let ours = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| name_of[id.as_str().unwrap()].to_string())
        .collect();
    let mut normal: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let name = name_of[node["id"].as_str().unwrap()].to_string();
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null())
            })
            .map(|d| name_of[d["pkg"].as_str().unwrap()].to_string());
        normal.entry(name).or_default().extend(deps);
    }
    Graph { normal, ours }
}

impl Graph {
    /// Every package `root` links, directly or not.
    fn linked(&self, root: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![root.to_string()];
        while let Some(p) = todo.pop() {
            for d in self.normal.get(&p).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        seen
    }
}

#[test]
fn proto_depends_on_no_crate_of_ours() {
    let g = graph();
    let ours: Vec<&String> = g.normal["autoeval-proto"]
        .iter()
        .filter(|d| g.ours.contains(*d))
        .collect();
    assert!(ours.is_empty(), "autoeval-proto depends on {ours:?}");
}

#[test]
fn no_binary_crate_is_a_dependency() {
    let g = graph();
    for (package, deps) in &g.normal {
        for binary in BINARY_PACKAGES {
            assert!(
                !deps.contains(binary),
                "{package} depends on the binary crate {binary}"
            );
        }
    }
}

#[test]
fn the_worker_links_no_prover_and_the_verifier_no_http_client() {
    let g = graph();
    let worker = g.linked("autoeval-worker");
    assert!(
        worker.contains("lapin"),
        "the graph reads the worker's links"
    );
    for prover in ["z3", "z3-sys"] {
        assert!(!worker.contains(prover), "autoeval-worker links {prover}");
    }
    let verifier = g.linked("autoeval-verifier-worker");
    assert!(
        verifier.contains("z3"),
        "the graph reads the verifier's links"
    );
    assert!(!verifier.contains("reqwest"), "the verifier links reqwest");
}

/// ARCHITECTURE.md: a run's settings and its directory are read by every
/// command and service, so they link neither the model client's HTTP nor
/// the prover.
#[test]
fn run_settings_and_run_dir_link_no_http_client_and_no_prover() {
    let g = graph();
    for package in ["autoeval-run-settings", "autoeval-run-dir"] {
        let linked = g.linked(package);
        assert!(
            linked.contains("autoeval-proto"),
            "the graph reads {package}'s links"
        );
        for heavy in ["reqwest", "z3", "z3-sys"] {
            assert!(!linked.contains(heavy), "{package} links {heavy}");
        }
    }
}

/// The modules `crate::…` names in `text`: each path after `crate::`, and
/// each first name inside a `crate::{…}` group.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for part in inner.split(',') {
                out.insert(ident(part.trim()));
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// Every `.rs` file under `path` (or `path` itself), with its text.
fn sources(path: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    if path.is_file() {
        return vec![(path.to_path_buf(), std::fs::read_to_string(path).unwrap())];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() || p.extension().is_some_and(|e| e == "rs") {
            out.extend(sources(&p));
        }
    }
    out
}

/// ARCHITECTURE.md: a module of `coordinator/src` is a command; what two
/// commands share is in `app/` or in a library, and the one way from a
/// product command into `bench/` is `closeness --bench`. So no command's
/// sources name another command's module, and `app/` names none.
#[test]
fn no_command_module_imports_another() {
    let src = tree::root().join("coordinator/src");
    let mut modules: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name != "main" && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            modules.insert(name, path);
        }
    }
    assert!(
        modules.len() > 10 && modules.contains_key("app"),
        "{modules:?}"
    );
    let commands: BTreeSet<&str> = modules
        .keys()
        .map(String::as_str)
        .filter(|m| *m != "app")
        .collect();
    let mut crossings = Vec::new();
    for (module, path) in &modules {
        for (file, text) in sources(path) {
            for named in crate_paths(&text) {
                let allowed = named == *module
                    || !commands.contains(named.as_str())
                    || (module == "closeness" && named == "bench");
                if !allowed {
                    crossings.push(format!("{} names crate::{named}", file.display()));
                }
            }
        }
    }
    assert!(
        crossings.is_empty(),
        "{}",
        crossings.join(
            "
//! "
        )
    );
}
