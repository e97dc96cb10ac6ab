//! A provider is one module behind one trait: nothing outside a provider's
//! module names a provider, in a name or a string (doc comments, which are
//! prose, aside), and nothing outside one reads a provider's word for why a
//! model stopped: the tool's own words (`complete`, `truncated`, …) are
//! all that leaves a provider's module.

use crate::debt::Debt;
use crate::tokens::{tokens, Token};
use crate::tree::product_sources;

/// The providers' names as the code writes them, lowercased (the named
/// hosts' too, but for names that are also words: `together`, `xai`).
const PROVIDERS: [&str; 12] = [
    "anthropic",
    "openai",
    "gemini",
    "google",
    "azure",
    "bedrock",
    "amazon",
    "groq",
    "deepseek",
    "mistral",
    "openrouter",
    "fireworks",
];

/// The providers' words for why a model stopped, as their APIs write them.
/// (`stop` and `max_tokens` are also request fields every module names, so
/// they are not among them.)
const FINISH_WORDS: [&str; 12] = [
    "length",
    "end_turn",
    "stop_sequence",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "content_filter",
    "max_output_tokens",
    "guardrail_intervened",
    "content_filtered",
    "model_context_window_exceeded",
];

/// Files outside the provider modules that may write a finish word, each
/// for its reason.
const FINISH_WORDS_ALLOWED: [(&str, &str); 1] = [(
    "crates/export/src/inspect/sample.rs",
    "Inspect's own StopReason, which the export writes from the tool's words",
)];

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

#[test]
fn no_providers_finish_reason_is_read_outside_its_module() {
    let files = product_sources();
    let mut found = Vec::new();
    let mut inside = 0;
    for file in files.iter().filter(|f| f.package != "autoeval-e2e") {
        let words = tokens(&file.syntax)
            .iter()
            .filter(|(t, _)| match t {
                Token::Literal(s) => FINISH_WORDS.iter().any(|w| s == &format!("\"{w}\"")),
                _ => false,
            })
            .count();
        if in_provider_module(&file.path) {
            inside += words;
        } else if words > 0
            && !FINISH_WORDS_ALLOWED
                .iter()
                .any(|(p, _)| file.path.ends_with(p))
        {
            found.push(format!("{}: {words} finish words", file.path));
        }
    }
    println!(
        "providers' finish words outside provider modules: {}; inside: {inside}",
        found.len()
    );
    assert!(
        inside > 0,
        "the check sees the words inside the provider modules"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}
