//! ARCHITECTURE.md's code map is the tree: every package of the workspace
//! is on it, and every folder it names exists.

use crate::tree::root;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// The folders the code map names: the first word of each line of the
/// fenced block under "## Crates" that ends with `/`.
fn mapped_folders(architecture: &str) -> BTreeSet<String> {
    let section = architecture
        .split("## Crates")
        .nth(1)
        .expect("ARCHITECTURE.md has a \"## Crates\" section");
    let block = section
        .split("```")
        .nth(1)
        .expect("the code map is a fenced block");
    block
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.ends_with('/'))
        .map(|w| w.trim_end_matches('/').to_string())
        .collect()
}

/// The folder of each package of the workspace, from the root.
fn package_folders() -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root())
        .output()
        .unwrap();
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let manifest = std::path::Path::new(p["manifest_path"].as_str().unwrap());
            let dir = manifest.parent().unwrap().strip_prefix(root()).unwrap();
            dir.display().to_string()
        })
        .collect()
}

#[test]
fn the_code_map_is_the_tree() {
    let text = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let mapped = mapped_folders(&text);
    let packages = package_folders();
    assert!(packages.len() > 20, "{packages:?}");
    let unmapped: Vec<&String> = packages.difference(&mapped).collect();
    assert!(
        unmapped.is_empty(),
        "packages missing from ARCHITECTURE.md's code map: {unmapped:?}"
    );
    let missing: Vec<&String> = mapped.iter().filter(|d| !root().join(d).is_dir()).collect();
    assert!(
        missing.is_empty(),
        "the code map names folders that are gone: {missing:?}"
    );
}
