//! A model spec is read once, where it comes in (a flag, a config file, a
//! message), into a typed `Model` the stages carry; nothing past that edge
//! reads the text again.

use crate::tokens::{tokens, Token};
use crate::tree::product_sources;

/// The types a spec is read into.
const SPEC_TYPES: [&str; 2] = ["Model", "ModelSpec"];

/// Files past the flags and the config file that read a spec, each for its
/// reason: text that comes in from outside there.
const READ_AT_EDGE: [(&str, &str); 3] = [
    (
        "crates/models/src/model.rs",
        "the one reading of a spec, which every edge calls through `Model`'s FromStr and Deserialize",
    ),
    (
        "crates/run-settings/src/names.rs",
        "a model as records name it, read from a file (an imported run's names are not specs)",
    ),
    (
        "crates/fleet-coordinator/src/pull.rs",
        "a judge as the run's Redis names it",
    ),
];

/// The places in `tokens` that read a spec from text: `parse_with_settings`,
/// `parse::<Model>()`, and `let x: Model = ….parse()`.
fn spec_reads(tokens: &[(Token, usize)]) -> Vec<usize> {
    let ident = |i: usize, names: &[&str]| matches!(tokens.get(i), Some((Token::Ident(s), _)) if names.contains(&s.as_str()));
    let punct =
        |i: usize, c: char| matches!(tokens.get(i), Some((Token::Punct(p, _), _)) if *p == c);
    let mut out = Vec::new();
    for (i, (t, line)) in tokens.iter().enumerate() {
        let Token::Ident(name) = t else { continue };
        let defined = i > 0 && matches!(&tokens[i - 1].0, Token::Ident(f) if f == "fn");
        if name == "parse_with_settings" && !defined {
            out.push(*line);
        }
        // parse :: < Model >
        if name == "parse" && punct(i + 1, ':') && punct(i + 3, '<') && ident(i + 4, &SPEC_TYPES) {
            out.push(*line);
        }
        // let NAME : … Model = … parse … ;
        if name == "let" {
            let end = (i..tokens.len())
                .find(|&j| punct(j, ';'))
                .unwrap_or(tokens.len());
            let Some(eq) = (i..end).find(|&j| punct(j, '=')) else {
                continue;
            };
            let typed = eq > 0 && ident(eq - 1, &SPEC_TYPES) && (i..eq).any(|j| punct(j, ':'));
            if typed && (eq..end).any(|j| ident(j, &["parse"])) {
                out.push(*line);
            }
        }
    }
    out
}

#[test]
fn a_model_spec_is_read_once_where_it_comes_in() {
    let mut found = Vec::new();
    let mut at_edges = 0;
    let mut edges_seen = std::collections::BTreeSet::new();
    for file in product_sources()
        .iter()
        .filter(|f| f.package != "autoeval-e2e")
    {
        let reads = spec_reads(&tokens(&file.syntax));
        if reads.is_empty() {
            continue;
        }
        if let Some((edge, _)) = READ_AT_EDGE.iter().find(|(p, _)| file.path.ends_with(p)) {
            at_edges += reads.len();
            edges_seen.insert(*edge);
        } else {
            found.push(format!("{}: lines {reads:?}", file.path));
        }
    }
    println!(
        "spec readings past the edge: {}; at the named edges: {at_edges}",
        found.len()
    );
    // Each named edge reads a spec: one that no longer does leaves the list.
    let stale: Vec<&str> = READ_AT_EDGE
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| !edges_seen.contains(p))
        .collect();
    assert!(stale.is_empty(), "edges that read no spec: {stale:?}");
    assert!(
        found.is_empty(),
        "a model spec read again past its edge (carry the `Model` read where it came in):\n{}",
        found.join("\n")
    );
}
