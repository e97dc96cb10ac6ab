//! Dataset diversity as the paper measures it (App. M): the share of items
//! whose CFG parse tree is unique once the vocabulary is taken away, i.e.
//! every proposition, predicate atom and quantified variable replaced by
//! one symbol of its kind and every regex symbol by `σ`.

use crate::{DatasetKind, Item};
use autoeval_syntax::{parse_formula_exact, parse_regex_exact, print, Formula, Mode, Quantifier};
use std::collections::HashSet;

/// The item's parse tree without its vocabulary, as text; `None` when the
/// formula does not parse.
pub fn skeleton(kind: DatasetKind, fs: &str) -> Option<String> {
    if kind == DatasetKind::Regex {
        let symbols = autoeval_syntax::alphabet(36);
        let r = parse_regex_exact(fs, Mode::Lenient, &symbols).ok()?;
        return Some(
            print::regex(&r)
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { 'σ' } else { c })
                .collect(),
        );
    }
    let f = parse_formula_exact(fs, Mode::Lenient).ok()?;
    let mut out = String::with_capacity(fs.len() / 2);
    write_skeleton(&f, &mut out);
    Some(out)
}

fn write_skeleton(f: &Formula, out: &mut String) {
    let list = |xs: &[Formula], op: &str, out: &mut String| {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.push_str(op);
            }
            write_skeleton(x, out);
        }
    };
    match f {
        // The grammar's terminal is a proposition, or a predicate atom whose
        // arguments are filled in from the vocabulary.
        Formula::Atom { args, .. } => out.push(if args.is_empty() { 'p' } else { 'P' }),
        Formula::Equal(..) => out.push('='),
        Formula::Not(x) => {
            out.push('¬');
            write_skeleton(x, out);
        }
        Formula::And(xs) => list(xs, "∧", out),
        Formula::Or(xs) => list(xs, "∨", out),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            list(&[(**a).clone(), (**b).clone()], "?", out)
        }
        Formula::Quant { q, vars, body } => {
            for _ in vars {
                out.push(match q {
                    Quantifier::Forall => '∀',
                    Quantifier::Exists => '∃',
                });
            }
            out.push('.');
            write_skeleton(body, out);
        }
        Formula::Group(x) => {
            out.push('(');
            write_skeleton(x, out);
            out.push(')');
        }
    }
}

/// Distinct skeletons among `items` of one dataset, and the number of items.
pub fn unique_skeletons<'a>(
    kind: DatasetKind,
    items: impl IntoIterator<Item = &'a Item>,
) -> (usize, usize) {
    let mut seen = HashSet::new();
    let mut n = 0;
    for item in items {
        n += 1;
        seen.insert(skeleton(kind, &item.fs).unwrap_or_else(|| item.fs.clone()));
    }
    (seen.len(), n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skeletons_forget_the_vocabulary_and_keep_the_tree() {
        let k = |kind, fs| skeleton(kind, fs).unwrap();
        assert_eq!(
            k(DatasetKind::Ksat, "(p1 ∨ ¬p2 ∨ p3) ∧ (¬p4 ∨ p5 ∨ p1)"),
            "(p∨¬p∨p)∧(¬p∨p∨p)"
        );
        assert_eq!(
            k(DatasetKind::Ksat, "(p7 ∨ ¬p9 ∨ p9) ∧ (¬p1 ∨ p1 ∨ p12)"),
            k(DatasetKind::Ksat, "(p1 ∨ ¬p2 ∨ p3) ∧ (¬p4 ∨ p5 ∨ p1)")
        );
        assert_ne!(
            k(DatasetKind::Plogic, "((p1 ∧ p2) ∨ p3)"),
            k(DatasetKind::Plogic, "(p1 ∧ (p2 ∨ p3))")
        );
        assert_eq!(
            k(
                DatasetKind::Fol,
                "∀ x1.∃ x2 x3.(pred1(x1, p3) ∧ ¬pred2(x3))"
            ),
            "∀.∃∃.(P∧¬P)"
        );
        assert_eq!(k(DatasetKind::Regex, "(01*)1*"), "(σσ*)σ*");
    }
}
