//! Turning a closed grammar leaf into a formula: placeholders get names from
//! the vocabulary, and the text is parsed and put in canonical form.

use crate::grammar::t;
use crate::rng::Rng;
use crate::vocab::{draw_objects, draw_predicates, Predicate};
use crate::{DatasetConfig, DatasetKind};
use autoeval_syntax::{canonical, parse_formula_exact, parse_regex_exact, Formula, Mode, Regex};

/// A built item before it gets its id: the formula's text and its tree.
pub enum Built {
    /// A logic formula in canonical form.
    Logic(Formula),
    /// A regular expression exactly as derived.
    Regex(Regex),
}

/// A closed regex leaf as an expression, with `symbol` choosing each alphabet symbol.
pub fn regex_from_leaf(
    template: &[u8],
    alphabet: &[char],
    mut symbol: impl FnMut() -> char,
) -> Regex {
    let text: String = template
        .iter()
        .map(|&s| match s {
            t::LP => '(',
            t::RP => ')',
            t::STAR => '*',
            _ => symbol(),
        })
        .collect();
    parse_regex_exact(&text, Mode::Strict, alphabet)
        .unwrap_or_else(|e| unreachable!("generated regex {text:?} does not parse: {e}"))
}

/// Builds one formula from a closed leaf.
pub fn build(template: &[u8], cfg: &DatasetConfig, alphabet: &[char], rng: &mut Rng) -> Built {
    match cfg.kind {
        DatasetKind::Regex => {
            Built::Regex(regex_from_leaf(template, alphabet, || *rng.pick(alphabet)))
        }
        _ => {
            let text = logic_text(template, cfg, rng);
            let f = parse_formula_exact(&text, Mode::Strict)
                .unwrap_or_else(|e| unreachable!("generated formula {text:?} does not parse: {e}"));
            Built::Logic(canonical(&f))
        }
    }
}

fn logic_text(template: &[u8], cfg: &DatasetConfig, rng: &mut Rng) -> String {
    let first_order = matches!(cfg.kind, DatasetKind::Fol | DatasetKind::FolEnglish);
    let english = cfg.kind == DatasetKind::FolEnglish;
    let (objects, predicates): (Vec<String>, Vec<Predicate>) = if first_order {
        let preds = draw_predicates(
            rng,
            cfg.num_predicates,
            cfg.min_arity,
            cfg.max_arity,
            english,
        );
        (draw_objects(rng, cfg.num_objects, english), preds)
    } else {
        (Vec::new(), Vec::new())
    };
    let mut out = String::with_capacity(template.len() * 4);
    // Variables in scope, and for each open parenthesis whether it opened a quantifier.
    let mut scope: Vec<String> = Vec::new();
    let mut opened_quantifier: Vec<bool> = Vec::new();
    let mut next_var = 1;
    let mut i = 0;
    while i < template.len() {
        match template[i] {
            t::LP => {
                let quant = matches!(template.get(i + 1), Some(&t::FORALL) | Some(&t::EXISTS));
                opened_quantifier.push(quant);
                out.push('(');
            }
            t::RP => {
                if opened_quantifier.pop() == Some(true) {
                    scope.pop();
                }
                out.push(')');
            }
            t::AND => out.push_str(" ∧ "),
            t::OR => out.push_str(" ∨ "),
            t::NOT => out.push('¬'),
            q @ (t::FORALL | t::EXISTS) => {
                // The next symbol is the bound variable's placeholder.
                let var = format!("x{next_var}");
                next_var += 1;
                out.push_str(if q == t::FORALL { "∀ " } else { "∃ " });
                out.push_str(&var);
                out.push('.');
                scope.push(var);
                i += 1;
            }
            t::V => {
                let n = rng.between(1, cfg.num_propositions);
                out.push_str(&format!("p{n}"));
            }
            t::P => {
                let pred = rng.pick(&predicates);
                out.push_str(&pred.name);
                out.push('(');
                for a in 0..pred.arity {
                    if a > 0 {
                        out.push_str(", ");
                    }
                    // Free-variable substitution only inside a quantifier's scope.
                    if !scope.is_empty() && rng.chance(cfg.free_variable_prob) {
                        let var: &String = rng.pick(&scope);
                        out.push_str(var);
                    } else {
                        let object: &String = rng.pick(&objects);
                        out.push_str(object);
                    }
                }
                out.push(')');
            }
            other => unreachable!("terminal {other} in a logic template"),
        }
        i += 1;
    }
    out
}
