//! No module of ours is in an import circle: two modules of a crate never
//! name each other, directly or through others (a module naming its own
//! parent or children is not a circle).

use crate::debt::Debt;
use crate::tokens::all_paths;
use crate::tree::product_sources;
use std::collections::{BTreeMap, BTreeSet};

/// The module `path`, written in `module`, names among `modules`.
fn resolve(
    module: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut full: Vec<String> = match path.first()?.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    while rest.first().is_some_and(|s| s == "super") {
        full.pop();
        rest = &rest[1..];
    }
    full.extend(rest.iter().cloned());
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| modules.contains(m))
}

#[test]
fn no_module_is_in_an_import_circle() {
    let files = product_sources();
    let mut targets: BTreeMap<(&str, &str), Vec<&crate::tree::SourceFile>> = BTreeMap::new();
    for f in &files {
        targets.entry((&f.package, &f.target)).or_default().push(f);
    }
    let mut found = Vec::new();
    let mut edges_seen = 0;
    for ((_, target), files) in targets {
        let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
        let mut names: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for f in &files {
            for (path, _) in all_paths(&f.syntax) {
                let Some(to) = resolve(&f.module, &path, &modules) else {
                    continue;
                };
                if !to.starts_with(&f.module) && !f.module.starts_with(&to) {
                    names.entry(&f.module).or_default().insert(to);
                }
            }
        }
        edges_seen += names.values().map(BTreeSet::len).sum::<usize>();
        let reaches = |from: &Vec<String>| -> BTreeSet<Vec<String>> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from.clone()];
            while let Some(m) = todo.pop() {
                for next in names.get(&m).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        todo.push(next.clone());
                    }
                }
            }
            seen
        };
        let mut placed: BTreeSet<Vec<String>> = BTreeSet::new();
        for m in &modules {
            if placed.contains(m) {
                continue;
            }
            let from_m = reaches(m);
            let circle: Vec<&Vec<String>> = modules
                .iter()
                .filter(|other| from_m.contains(*other) && reaches(other).contains(m))
                .collect();
            if circle.len() > 1 {
                placed.extend(circle.iter().map(|m| (*m).clone()));
                let named: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
                found.push((
                    format!("{target}: {}", named.join(" ↔ ")),
                    "an import circle".to_string(),
                ));
            }
        }
    }
    assert!(
        edges_seen > 100,
        "the check reads modules naming others ({edges_seen})"
    );
    Debt::IMPORT_CIRCLES.check("import circles", found);
}
