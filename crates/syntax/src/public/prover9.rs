//! What the prover the public implementation hands `φ0 ↔ φ1` to refuses,
//! and so makes a round non-compliant there: names it cannot read, a
//! proposition named as one of its variables, and one symbol used with two
//! arities or both as a predicate and as an object.
//!
//! The prover takes a name of letters, digits, `_` and `$`; one that starts
//! with `u` to `z` is a variable, which may stand as an object (it is then
//! bound implicitly) but not as a proposition. The public code also fails to
//! read the prover's reply when a name holds a character beyond ASCII.

use crate::Formula;
use std::collections::BTreeMap;

/// How a symbol is used: as a predicate or proposition, or as an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Use {
    Relation,
    Object,
}

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

/// Every symbol of `f` with its arity and use; bound and prover variables
/// standing as objects are no symbols.
fn symbols(f: &Formula, bound: &mut Vec<String>, out: &mut Vec<(String, usize, Use)>) {
    match f {
        Formula::Atom { name, args } => {
            out.push((name.to_lowercase(), args.len(), Use::Relation));
            for a in args {
                let a = a.to_lowercase();
                if !bound.contains(&a) && !is_variable(&a) {
                    out.push((a, 0, Use::Object));
                }
            }
        }
        Formula::Quant { vars, body, .. } => {
            let at = bound.len();
            bound.extend(vars.iter().map(|v| v.to_lowercase()));
            symbols(body, bound, out);
            bound.truncate(at);
        }
        Formula::Not(x) | Formula::Group(x) => symbols(x, bound, out),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| symbols(x, bound, out)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            symbols(a, bound, out);
            symbols(b, bound, out);
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
            "the prover refuses a symbol used both as a predicate and as an object: {}",
            both.join(", ")
        )
    })
}

/// Why the prover refuses `f` whatever it is compared with, if it does.
pub(super) fn alone(f: &Formula) -> Option<String> {
    let mut all = Vec::new();
    symbols(f, &mut Vec::new(), &mut all);
    let mut names: Vec<&str> = all.iter().map(|(n, _, _)| n.as_str()).collect();
    let mut binders = Vec::new();
    f.visit(&mut |node| {
        if let Formula::Quant { vars, .. } = node {
            binders.extend(vars.iter().cloned());
        }
    });
    names.extend(binders.iter().map(String::as_str));
    if let Some(why) = names.iter().find_map(|n| unreadable(n)) {
        return Some(why);
    }
    if let Some((name, ..)) = all
        .iter()
        .find(|(n, arity, used)| *arity == 0 && *used == Use::Relation && is_variable(n))
    {
        return Some(format!(
            "{name} cannot be a proposition there: the prover takes names from u to z for variables"
        ));
    }
    conflict(&all)
}

/// Why the prover refuses `φ0 ↔ φ1` for the symbols the two share (one
/// arity in φ0, another in φ1; a predicate of one an object of the other),
/// if it does. φ0's names are taken lowercased, as the public code takes them.
pub fn clash(phi0: &Formula, phi1: &Formula) -> Option<String> {
    let mut all = Vec::new();
    symbols(phi0, &mut Vec::new(), &mut all);
    symbols(phi1, &mut Vec::new(), &mut all);
    conflict(&all)
}
