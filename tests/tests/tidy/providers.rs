//! A provider is one module behind one trait: nothing outside a provider's
//! module names a provider, in a name or a string (doc comments, which are
//! prose, aside).

use crate::debt::Debt;
use crate::tokens::{tokens, Token};
use crate::tree::product_sources;

/// The providers' names as the code writes them, lowercased.
const PROVIDERS: [&str; 2] = ["anthropic", "openai"];

/// Whether `path` is inside a provider's module.
fn in_provider_module(path: &str) -> bool {
    path.contains("/provider/")
}

#[test]
fn no_provider_is_named_outside_its_module() {
    let files = product_sources();
    let mut found = Vec::new();
    let (mut total, mut inside) = (0, 0);
    for file in files.iter().filter(|f| f.package != "autoeval-e2e") {
        let tokens = tokens(&file.syntax);
        // Doc comments are prose: an example spec there is not a provider's quirk.
        let is_doc = |i: usize| {
            i >= 2
                && matches!(&tokens[i - 2].0, Token::Ident(d) if d == "doc")
                && matches!(&tokens[i - 1].0, Token::Punct('=', _))
        };
        let names = tokens
            .iter()
            .enumerate()
            .filter(|(i, _)| !is_doc(*i))
            .filter(|(_, (t, _))| match t {
                Token::Ident(s) | Token::Literal(s) => {
                    let s = s.to_lowercase();
                    PROVIDERS.iter().any(|p| s.contains(p))
                }
                _ => false,
            })
            .count();
        if in_provider_module(&file.path) {
            inside += names;
        } else if names > 0 {
            total += names;
            found.push((file.path.clone(), format!("{names} names")));
        }
    }
    println!("provider names outside provider modules: {total}; inside: {inside}");
    assert!(
        inside > 0,
        "the check sees the names inside the provider modules"
    );
    Debt::PROVIDER_NAMES.check("provider names outside their modules", found);
}
