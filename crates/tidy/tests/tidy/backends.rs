//! A model's backend is built in one place: `build_backend`, which merges
//! a model's settings, reads the provider's address from the spec or this
//! machine's environment, and brings the reply cache, the rate gate and the
//! secrets. A command that built its own would skip some of them (as the
//! judge once ignored the base addresses, time limits and the cache).

use crate::tokens::{tokens, Token};
use crate::tree::product_sources;

/// The one file outside the model client that builds a backend.
const BUILDER: &str = "crates/translate/src/settings.rs";

/// The lines of `tokens` that build a backend: `Backend::new(…)` or a
/// `BackendOptions { … }` literal.
fn builds(tokens: &[(Token, usize)]) -> Vec<usize> {
    let ident = |i: usize, name: &str| matches!(&tokens[i].0, Token::Ident(s) if s == name);
    let mut lines = Vec::new();
    for i in 0..tokens.len() {
        let new = i + 3 < tokens.len()
            && ident(i, "Backend")
            && matches!(tokens[i + 1].0, Token::Punct(':', true))
            && matches!(tokens[i + 2].0, Token::Punct(':', _))
            && ident(i + 3, "new");
        let literal = i + 1 < tokens.len()
            && ident(i, "BackendOptions")
            && matches!(tokens[i + 1].0, Token::Group);
        if new || literal {
            lines.push(tokens[i].1);
        }
    }
    lines
}

#[test]
fn a_backend_is_built_only_by_the_one_builder() {
    let mut elsewhere = Vec::new();
    let mut in_builder = 0;
    for file in product_sources() {
        if file.package == "autoeval-llm-client" {
            continue;
        }
        let lines = builds(&tokens(&file.syntax));
        if file.path == BUILDER {
            in_builder += lines.len();
        } else {
            elsewhere.extend(lines.into_iter().map(|l| format!("{}:{l}", file.path)));
        }
    }
    assert!(
        in_builder > 0,
        "{BUILDER} builds no backend: the check would pass vacuously"
    );
    assert!(
        elsewhere.is_empty(),
        "a backend is built outside build_backend ({BUILDER}); call it instead: {elsewhere:#?}"
    );
}
