//! Size limits that keep the code readable in one screen: no function over
//! 120 lines, and no `lib.rs` or `mod.rs` (a crate's or a folder's map)
//! over 400 lines of code.

use crate::debt::Debt;
use crate::tree::{is_test, lines_of_code, product_sources, SourceFile};
use syn::visit::Visit;

/// The most lines a function may span, signature to closing brace.
const FUNCTION_LINES: usize = 120;
/// The most lines of code a `lib.rs` or `mod.rs` may hold, test items left out.
const LIB_RS_LINES: usize = 400;

/// Every function of a file with the lines it spans.
#[derive(Default)]
struct Functions {
    found: Vec<(String, usize)>,
}

impl Functions {
    fn add(&mut self, attrs: &[syn::Attribute], name: &syn::Ident, from: usize, to: usize) {
        if !is_test(attrs) {
            self.found.push((name.to_string(), to + 1 - from));
        }
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let (from, to) = (
            f.sig.fn_token.span.start().line,
            f.block.brace_token.span.close().end().line,
        );
        self.add(&f.attrs, &f.sig.ident, from, to);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let (from, to) = (
            f.sig.fn_token.span.start().line,
            f.block.brace_token.span.close().end().line,
        );
        self.add(&f.attrs, &f.sig.ident, from, to);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            let (from, to) = (
                f.sig.fn_token.span.start().line,
                block.brace_token.span.close().end().line,
            );
            self.add(&f.attrs, &f.sig.ident, from, to);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
}

/// Each function of the product's sources, as `path::name`, with its lines.
pub fn function_lengths(files: &[SourceFile]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for file in files {
        let mut functions = Functions::default();
        functions.visit_file(&file.syntax);
        out.extend(
            functions
                .found
                .into_iter()
                .map(|(name, lines)| (format!("{}::{name}", file.path), lines)),
        );
    }
    out
}

#[test]
fn no_function_is_over_120_lines() {
    let files = product_sources();
    let lengths = function_lengths(&files);
    let longest = lengths.iter().max_by_key(|(_, n)| *n).unwrap();
    println!("longest function: {} ({} lines)", longest.0, longest.1);
    assert!(lengths.len() > 1000, "{} functions read", lengths.len());
    let over = lengths
        .into_iter()
        .filter(|(_, n)| *n > FUNCTION_LINES)
        .map(|(name, n)| (name, format!("{n} lines")));
    Debt::FUNCTIONS_OVER_120_LINES.check("functions over 120 lines", over);
}

#[test]
fn no_lib_rs_or_mod_rs_is_over_400_lines_of_code() {
    let files = product_sources();
    let mut libs: Vec<(String, usize)> = files
        .iter()
        .filter(|f| f.path.ends_with("/lib.rs") || f.path.ends_with("/mod.rs"))
        .map(|f| (f.path.clone(), lines_of_code(f)))
        .collect();
    libs.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    println!(
        "largest lib.rs or mod.rs: {} ({} lines of code)",
        libs[0].0, libs[0].1
    );
    assert!(libs.len() > 40, "{} lib.rs and mod.rs read", libs.len());
    let over = libs
        .into_iter()
        .filter(|(_, n)| *n > LIB_RS_LINES)
        .map(|(path, n)| (path, format!("{n} lines of code")));
    Debt::MAPS_OVER_400_LINES.check("lib.rs or mod.rs over 400 lines of code", over);
}
