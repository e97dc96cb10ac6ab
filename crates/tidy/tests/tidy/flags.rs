//! Flags every command or process shares are declared once and flattened
//! where they are taken: the broker's and Redis's URLs, `--quiet` and `--plain`.

use crate::tree::product_sources;
use quote::ToTokens;
use std::collections::BTreeMap;
use syn::visit::Visit;

/// The shared flags, as the fields that declare them are named.
const SHARED: [&str; 4] = ["amqp", "redis", "quiet", "plain"];

/// Where each command-line argument is declared: a field with an `arg`
/// attribute (or one behind `cfg_attr`), by name.
#[derive(Default)]
struct Declared {
    found: BTreeMap<String, Vec<String>>,
    path: String,
}

impl<'ast> Visit<'ast> for Declared {
    fn visit_field(&mut self, f: &'ast syn::Field) {
        let is_arg = f.attrs.iter().any(|a| {
            let text = a.to_token_stream().to_string();
            text.starts_with("# [arg") || (text.contains("cfg_attr") && text.contains("arg ("))
        });
        if let (true, Some(name)) = (is_arg, &f.ident) {
            self.found
                .entry(name.to_string())
                .or_default()
                .push(self.path.clone());
        }
        syn::visit::visit_field(self, f);
    }
}

#[test]
fn shared_flags_are_declared_once() {
    let mut declared = Declared::default();
    for file in product_sources() {
        declared.path = file.path.clone();
        declared.visit_file(&file.syntax);
    }
    assert!(
        declared.found.len() > 50,
        "the command line's arguments were read"
    );
    for flag in SHARED {
        let at = declared.found.get(flag).cloned().unwrap_or_default();
        println!("--{flag}: declared in {at:?}");
        assert_eq!(at.len(), 1, "--{flag} is declared in {at:?}");
    }
}
