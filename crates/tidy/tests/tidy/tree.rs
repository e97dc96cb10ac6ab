//! The workspace's product sources as the compiler sees them: each target
//! of each package, read from its root file through its `mod` declarations,
//! with test code (`#[cfg(test)]` and `#[test]` items) left out.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One source file of a target.
pub struct SourceFile {
    /// The package it belongs to, e.g. `autoeval-proto`.
    pub package: String,
    /// The target's name (the library's or the binary's).
    pub target: String,
    /// The path from the workspace's root, e.g. `proto/src/tls.rs`.
    pub path: String,
    /// Its module path in the target, e.g. `["bench", "fleet"]`.
    pub module: Vec<String>,
    /// Its text as written.
    pub text: String,
    /// Its items, test items left out.
    pub syntax: syn::File,
}

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// Every file of every library and binary target of the workspace.
pub fn product_sources() -> Vec<SourceFile> {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut files = Vec::new();
    for package in meta["packages"].as_array().unwrap() {
        for target in package["targets"].as_array().unwrap() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            if !kinds.iter().any(|k| *k == "lib" || *k == "bin") {
                continue;
            }
            let walk = Walk {
                package: package["name"].as_str().unwrap().to_string(),
                target: target["name"].as_str().unwrap().to_string(),
            };
            walk.file(
                Path::new(target["src_path"].as_str().unwrap()),
                true,
                Vec::new(),
                &mut files,
            );
        }
    }
    assert!(files.len() > 100, "the walk found {} files", files.len());
    files
}

/// A walk through one target's module tree.
struct Walk {
    package: String,
    target: String,
}

impl Walk {
    /// Reads `path` (a module's file, `owns_dir` when its children sit beside
    /// it, as for `lib.rs`, `main.rs` and `mod.rs`) and its declared children.
    fn file(&self, path: &Path, owns_dir: bool, module: Vec<String>, out: &mut Vec<SourceFile>) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut syntax =
            syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        syntax.items.retain(|item| !is_test(item_attrs(item)));
        let dir = if owns_dir {
            path.parent().unwrap().to_path_buf()
        } else {
            path.with_extension("")
        };
        let mut children = Vec::new();
        for item in &syntax.items {
            if let syn::Item::Mod(m) = item {
                if m.content.is_none() {
                    children.push(m.ident.to_string());
                }
            }
        }
        let relative = path.strip_prefix(root()).unwrap_or(path);
        out.push(SourceFile {
            package: self.package.clone(),
            target: self.target.clone(),
            path: relative.display().to_string(),
            module: module.clone(),
            text,
            syntax,
        });
        for child in children {
            let flat = dir.join(format!("{child}.rs"));
            let (child_path, owns) = if flat.exists() {
                (flat, false)
            } else {
                (dir.join(&child).join("mod.rs"), true)
            };
            let mut child_module = module.clone();
            child_module.push(child);
            self.file(&child_path, owns, child_module, out);
        }
    }
}

/// The attributes of an item, when it has any.
pub fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// Whether attributes mark test code: `#[test]`, `#[tokio::test]` or
/// `#[cfg(test)]`.
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        path.is_ident("test")
            || path.segments.last().is_some_and(|s| s.ident == "test")
            || (path.is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

/// Lines of code in `file`: its lines that are neither blank nor only a
/// comment, test items left out.
pub fn lines_of_code(file: &SourceFile) -> usize {
    let lines: Vec<&str> = file.text.lines().collect();
    let mut counted = vec![false; lines.len()];
    use syn::spanned::Spanned;
    for item in &file.syntax.items {
        let span = item.span();
        for line in span.start().line..=span.end().line {
            if let Some(c) = counted.get_mut(line - 1) {
                *c = true;
            }
        }
    }
    // Inner attributes and docs (`//!`, `#![…]`) sit outside the items.
    lines
        .iter()
        .zip(counted)
        .filter(|(line, in_item)| {
            let t = line.trim();
            *in_item && !t.is_empty() && !t.starts_with("//")
        })
        .count()
}
