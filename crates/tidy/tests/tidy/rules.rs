//! Rules written once: whether a unit goes on after a round is decided by
//! `NextRound::after` alone.

use crate::tokens::{tokens, Token};
use crate::tree::product_sources;

/// The one file that may compare a round with the rounds asked for.
const RULE_FILE: &str = "proto/src/task.rs";

#[test]
fn the_next_round_rule_is_written_once() {
    let files = product_sources();
    let mut copies = Vec::new();
    let mut in_rule = 0;
    for file in &files {
        let t = tokens(&file.syntax);
        for (i, w) in t.windows(4).enumerate() {
            let is_round = matches!(&w[0].0, Token::Punct('.', _))
                && matches!(&w[1].0, Token::Ident(r) if r == "round")
                && matches!(&w[2].0, Token::Punct('<' | '>', _));
            let against_rounds = t[i + 3..(i + 7).min(t.len())]
                .iter()
                .any(|(tok, _)| matches!(tok, Token::Ident(r) if r.ends_with("rounds")));
            if is_round && against_rounds {
                if file.path == RULE_FILE {
                    in_rule += 1;
                } else {
                    copies.push(format!("{} line {}", file.path, w[0].1));
                }
            }
        }
    }
    assert_eq!(
        in_rule, 1,
        "the rule's own comparison is found in {RULE_FILE}"
    );
    assert!(
        copies.is_empty(),
        "the next-round rule is decided again at:\n  {}",
        copies.join("\n  ")
    );
}
