//! What the prover the public implementation hands `φ0 ↔ φ1` to makes of
//! an expression: the library prints it in the prover's syntax (connectives
//! and quantifiers its own way, anything else as the library writes it), and
//! the prover reads that text, so an expression becomes a [`Formula`] over
//! terms and equations, or a refusal that makes the round non-compliant.
//!
//! The prover takes a name of letters, digits, `_` and `$`; one that starts
//! with `u` to `z` is a variable, which may stand as an object (it is then
//! bound implicitly) but not as a formula. In an argument, a negation is the
//! prover's function `-`. A symbol used with two arities, or both as a
//! predicate and as an object or function, is refused. The public code also
//! fails to read the prover's reply when a name holds a character beyond
//! ASCII.

use super::nltk::{Binder, Expr, Op};
use crate::{Formula, Quantifier, Term};
use std::collections::BTreeMap;

/// The function symbol the prover reads a negated argument as.
const NEGATION: &str = "-";

/// True for a name the prover reads as a variable.
fn is_variable(name: &str) -> bool {
    name.starts_with(['u', 'v', 'w', 'x', 'y', 'z'])
}

/// Why the prover cannot read `name`, if it cannot.
fn unreadable(name: &str) -> Option<String> {
    if !name.is_ascii() {
        return Some(format!(
            "{name:?} holds a character beyond ASCII, and the public code fails on the prover's reply"
        ));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$')))
        .map(|c| format!("the prover cannot read the name {name:?} (its {c:?})"))
}

/// The formula the prover reads for `e` (simplified), with `bound` the
/// variables bound above it.
pub(super) fn formula(e: &Expr, bound: &mut Vec<String>) -> Result<Formula, String> {
    Ok(match e {
        Expr::Name(n) => {
            if bound.contains(n) || is_variable(n) {
                return Err(format!(
                    "{n} cannot be a proposition there: the prover takes it for a variable"
                ));
            }
            Formula::prop(n.as_str())
        }
        Expr::Apply(..) => {
            let (name, args) = uncurried(e, bound)?;
            Formula::Atom { name, args }
        }
        Expr::Not(x) => Formula::Not(Box::new(formula(x, bound)?)),
        Expr::Binary(op, a, b) => {
            let (a, b) = (formula(a, bound)?, formula(b, bound)?);
            match op {
                Op::And => Formula::And(vec![a, b]),
                Op::Or => Formula::Or(vec![a, b]),
                Op::Implies => Formula::Implies(Box::new(a), Box::new(b)),
                Op::Iff => Formula::Iff(Box::new(a), Box::new(b)),
            }
        }
        Expr::Equal(a, b) => Formula::Equal(term(a, bound)?, term(b, bound)?),
        Expr::Bind(binder @ (Binder::All | Binder::Exists), v, body) => {
            bound.push(v.clone());
            let body = formula(body, bound);
            bound.pop();
            Formula::Quant {
                q: match binder {
                    Binder::All => Quantifier::Forall,
                    _ => Quantifier::Exists,
                },
                vars: vec![v.clone()],
                body: Box::new(body?),
            }
        }
        Expr::Bind(Binder::Lambda | Binder::Iota, ..) => {
            return Err("a lambda or iota term the prover cannot read".into())
        }
    })
}

/// A function or predicate applied to terms: its name and its arguments.
fn uncurried(e: &Expr, bound: &mut Vec<String>) -> Result<(String, Vec<Term>), String> {
    match e {
        Expr::Apply(f, arg) => {
            let (name, mut args) = match &**f {
                Expr::Name(n) => (n.clone(), Vec::new()),
                inner @ Expr::Apply(..) => uncurried(inner, bound)?,
                _ => return Err("arguments after something that is no name".into()),
            };
            args.push(term(arg, bound)?);
            Ok((name, args))
        }
        _ => Err("not an application".into()),
    }
}

/// The term the prover reads for an argument or a side of an equation.
fn term(e: &Expr, bound: &mut Vec<String>) -> Result<Term, String> {
    Ok(match e {
        Expr::Name(n) => Term::Name(n.clone()),
        Expr::Apply(..) => {
            let (function, args) = uncurried(e, bound)?;
            Term::Apply { function, args }
        }
        Expr::Not(x) => Term::Apply {
            function: NEGATION.into(),
            args: vec![term(x, bound)?],
        },
        _ => return Err("a formula where the prover expects a term".into()),
    })
}

/// How a symbol is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Use {
    /// A predicate or proposition.
    Relation,
    /// An object or function.
    Function,
}

/// Every symbol of `f` with its arity and use, and every name it binds;
/// bound and prover variables standing as objects are no symbols.
fn symbols(
    f: &Formula,
    bound: &mut Vec<String>,
    out: &mut Vec<(String, usize, Use)>,
    binders: &mut Vec<String>,
) {
    match f {
        Formula::Atom { name, args } => {
            out.push((name.to_lowercase(), args.len(), Use::Relation));
            args.iter().for_each(|a| term_symbols(a, bound, out));
        }
        Formula::Equal(a, b) => {
            term_symbols(a, bound, out);
            term_symbols(b, bound, out);
        }
        Formula::Quant { vars, body, .. } => {
            let at = bound.len();
            bound.extend(vars.iter().map(|v| v.to_lowercase()));
            binders.extend(vars.iter().map(|v| v.to_lowercase()));
            symbols(body, bound, out, binders);
            bound.truncate(at);
        }
        Formula::Not(x) | Formula::Group(x) => symbols(x, bound, out, binders),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| symbols(x, bound, out, binders)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            symbols(a, bound, out, binders);
            symbols(b, bound, out, binders);
        }
    }
}

fn term_symbols(t: &Term, bound: &[String], out: &mut Vec<(String, usize, Use)>) {
    match t {
        Term::Name(n) => {
            let n = n.to_lowercase();
            if !bound.contains(&n) && !is_variable(&n) {
                out.push((n, 0, Use::Function));
            }
        }
        Term::Apply { function, args } => {
            out.push((function.to_lowercase(), args.len(), Use::Function));
            args.iter().for_each(|a| term_symbols(a, bound, out));
        }
    }
}

/// Why the prover refuses these symbols together, if it does.
fn conflict(all: &[(String, usize, Use)]) -> Option<String> {
    let mut arities: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut uses: BTreeMap<(&str, usize), Vec<Use>> = BTreeMap::new();
    for (name, arity, used) in all {
        let a = arities.entry(name).or_default();
        if !a.contains(arity) {
            a.push(*arity);
        }
        let u = uses.entry((name, *arity)).or_default();
        if !u.contains(used) {
            u.push(*used);
        }
    }
    let multiple: Vec<String> = arities
        .iter()
        .filter(|(_, a)| a.len() > 1)
        .map(|(n, a)| {
            let list: Vec<String> = a.iter().map(|k| format!("{n}/{k}")).collect();
            list.join(", ")
        })
        .collect();
    if !multiple.is_empty() {
        return Some(format!(
            "the prover refuses a symbol used with more than one arity: {}",
            multiple.join("; ")
        ));
    }
    let both: Vec<String> = uses
        .iter()
        .filter(|(_, u)| u.len() > 1)
        .map(|((n, k), _)| format!("{n}/{k}"))
        .collect();
    (!both.is_empty()).then(|| {
        format!(
            "the prover refuses a symbol used both as a predicate and as an object or function: {}",
            both.join(", ")
        )
    })
}

/// Why the prover refuses `f` whatever it is compared with, if it does.
pub(super) fn alone(f: &Formula) -> Option<String> {
    let (mut all, mut binders) = (Vec::new(), Vec::new());
    symbols(f, &mut Vec::new(), &mut all, &mut binders);
    let mut names: Vec<&str> = all
        .iter()
        .map(|(n, _, _)| n.as_str())
        .filter(|n| *n != NEGATION)
        .collect();
    names.extend(binders.iter().map(String::as_str));
    // Names the prover takes for variables are read too.
    let mut variables = Vec::new();
    f.visit(&mut |node| {
        let mut each = |t: &Term| {
            t.visit_names(&mut |n| {
                if is_variable(n) {
                    variables.push(n.to_string());
                }
            })
        };
        match node {
            Formula::Atom { args, .. } => args.iter().for_each(&mut each),
            Formula::Equal(a, b) => {
                each(a);
                each(b);
            }
            _ => {}
        }
    });
    names.extend(variables.iter().map(String::as_str));
    if let Some(why) = names.iter().find_map(|n| unreadable(n)) {
        return Some(why);
    }
    conflict(&all)
}

/// Why the prover refuses `φ0 ↔ φ1` for the symbols the two share (one
/// arity in φ0, another in φ1; a predicate of one an object of the other),
/// if it does. φ0's names are taken lowercased, as the public code takes them.
pub fn clash(phi0: &Formula, phi1: &Formula) -> Option<String> {
    let mut all = Vec::new();
    symbols(phi0, &mut Vec::new(), &mut all, &mut Vec::new());
    symbols(phi1, &mut Vec::new(), &mut all, &mut Vec::new());
    conflict(&all)
}
