//! The canonical written form of a formula, which is also how the public
//! reference implementation prints its datasets: every binary connective in
//! parentheses, chains of one connective flattened (`(a ∧ b ∧ c)`), no other
//! parentheses except around a quantified operand, consecutive quantifiers of
//! one kind merged (`∀ x1 x2.`).

use crate::logic::Formula;

/// The canonical form of `f`; printing it and parsing the text gives it back.
pub fn canonical(f: &Formula) -> Formula {
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => f.clone(),
        Formula::Group(inner) => canonical(inner),
        Formula::Not(inner) => Formula::Not(Box::new(operand(inner))),
        Formula::And(xs) | Formula::Or(xs) => {
            let is_and = matches!(f, Formula::And(_));
            let mut flat = Vec::with_capacity(xs.len());
            for x in xs {
                match operand(x) {
                    Formula::Group(g) => match *g {
                        Formula::And(ys) if is_and => flat.extend(ys),
                        Formula::Or(ys) if !is_and => flat.extend(ys),
                        other => flat.push(Formula::Group(Box::new(other))),
                    },
                    other => flat.push(other),
                }
            }
            let node = if is_and {
                Formula::And(flat)
            } else {
                Formula::Or(flat)
            };
            Formula::Group(Box::new(node))
        }
        Formula::Implies(a, b) => {
            Formula::Implies(Box::new(operand(a)), Box::new(operand(b))).group()
        }
        Formula::Iff(a, b) => Formula::Iff(Box::new(operand(a)), Box::new(operand(b))).group(),
        Formula::Xor(a, b) => Formula::Xor(Box::new(operand(a)), Box::new(operand(b))).group(),
        Formula::Quant { q, vars, body } => match canonical(body) {
            Formula::Quant {
                q: inner_q,
                vars: inner_vars,
                body: inner_body,
            } if inner_q == *q => {
                let mut all = vars.clone();
                all.extend(inner_vars);
                Formula::Quant {
                    q: *q,
                    vars: all,
                    body: inner_body,
                }
            }
            body => Formula::Quant {
                q: *q,
                vars: vars.clone(),
                body: Box::new(body),
            },
        },
    }
}

/// Canonical form of an operand of a connective: a quantified operand is
/// enclosed, because a quantifier's scope would otherwise run to the right.
fn operand(f: &Formula) -> Formula {
    match canonical(f) {
        q @ Formula::Quant { .. } => q.group(),
        other => other,
    }
}
