//! What the prover the public implementation hands `φ0 ↔ φ1` to makes of
//! an expression: the library prints it in the prover's syntax (connectives
//! and quantifiers its own way, anything else as the library writes it), and
//! the prover reads that text, so an expression becomes a [`Formula`] over
//! terms and equations, or a refusal that makes the round non-compliant.
//!
//! The prover takes a name of letters, digits, `_` and `$`, or any text
//! between two double quotes (`"jamya"`, a symbol other than `jamya`); one
//! that starts with `u` to `z` is a variable, which may stand as an object
//! (it is then bound implicitly) but not as a formula. A name a quantifier
//! binds may stand as a formula unless it is such a variable (how the
//! prover then decides is [`super::clausified`]'s). In an argument, a
//! negation is the prover's function `-`. A symbol used with two arities,
//! or both as a predicate and as an object or function (a bound name
//! counts, unless it is a variable), is refused. The public code also fails
//! to read the prover's reply when a name holds a character beyond ASCII
//! outside quotes.

use super::nltk::{Binder, Expr, Op};
use crate::{Formula, Quantifier, Term};
use std::collections::BTreeMap;

/// The function symbol the prover reads a negated argument as.
const NEGATION: &str = "-";

/// True for a name the prover reads as a variable.
fn is_variable(name: &str) -> bool {
    name.starts_with(['u', 'v', 'w', 'x', 'y', 'z'])
}

/// Why the prover cannot read `name`, if it cannot: a character beyond
/// ASCII outside double quotes (the prover's tokenizer knows none there,
/// and the public code then fails on its reply; within quotes the prover
/// keeps it).
fn unreadable(name: &str) -> Option<String> {
    let mut quoted = false;
    let beyond = name.chars().any(|c| {
        quoted ^= c == '"';
        !quoted && !c.is_ascii()
    });
    beyond.then(|| {
        format!(
            "{name:?} holds a character beyond ASCII, and the public code fails on the prover's reply"
        )
    })
}

/// True for a name the prover reads as one symbol: its ordinary
/// characters, or text between two double quotes.
fn one_symbol(token: &str) -> bool {
    token.chars().all(ordinary) || is_quoted(token)
}

/// True for text between two double quotes with none inside.
fn is_quoted(token: &str) -> bool {
    token.len() >= 2
        && token.starts_with('"')
        && token.ends_with('"')
        && !token[1..token.len() - 1].contains('"')
}

/// A character the prover's tokenizer puts in a name.
fn ordinary(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$')
}

/// A character the prover's tokenizer puts in an operator.
fn special(c: char) -> bool {
    "+-*/\\^<>=`~?@&|!#'\";%".contains(c)
}

/// The prover's operators of more than one character (its standard table).
const LONG_OPERATORS: [&str; 14] = [
    "->", "<->", "<-", "||", "&&", "!=", "==", "!==", "<=", ">=", "@<", "@<=", "@>", "@>=",
];

/// How an operator of the prover's standard table binds: its precedence
/// and whether it chains to the right (the others chain not at all).
fn infix(op: &str) -> Option<(u16, bool)> {
    Some(match op {
        "#" => (810, true),
        "<->" | "->" | "<-" => (800, false),
        "|" | "||" => (790, true),
        "&" | "&&" => (780, true),
        "=" | "!=" | "==" | "!==" | "<" | "<=" | ">" | ">=" | "@<" | "@<=" | "@>" | "@>=" => {
            (700, false)
        }
        "+" | "*" | "@" | "/" | "\\" | "^" | "v" => (500, false),
        _ => return None,
    })
}

/// The tokens the prover cuts a name of the logic library into: names of
/// its ordinary characters and operators, the longest it knows.
fn prover_tokens(name: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = |ok: fn(char) -> bool| chars[i..].iter().take_while(|&&c| ok(c)).count();
        let len = if ordinary(c) {
            run(ordinary)
        } else if c == '"' {
            // A quoted symbol runs to the next quote; without one the
            // prover cannot read the name.
            match chars[i + 1..].iter().position(|&c| c == '"') {
                Some(end) => end + 2,
                None => {
                    return Err(format!(
                        "the prover cannot read the name {name:?} (its '\"' is never closed)"
                    ))
                }
            }
        } else if special(c) && c != '%' {
            let most = run(|c| special(c) && !matches!(c, '"' | '%'));
            (2..=most.min(3))
                .rev()
                .find(|&n| {
                    LONG_OPERATORS.contains(&chars[i..i + n].iter().collect::<String>().as_str())
                })
                .unwrap_or(1)
        } else {
            return Err(format!(
                "the prover cannot read the name {name:?} (its {c:?})"
            ));
        };
        out.push(chars[i..i + len].iter().collect());
        i += len;
    }
    Ok(out)
}

/// What the prover reads in a name of the logic library: the name itself,
/// or, where it holds the prover's operators (`p+1`, `a<b`, `p'`), the term
/// they make; a name the prover cannot parse is refused as it refuses it.
fn read_name(name: &str) -> Result<Term, String> {
    if let Some(why) = unreadable(name) {
        return Err(why);
    }
    if one_symbol(name) {
        return Ok(Term::Name(name.to_string()));
    }
    let toks = prover_tokens(name)?;
    let mut pos = 0;
    let t = operand(&toks, &mut pos, 999, name)?;
    match toks.get(pos) {
        None => Ok(t),
        Some(tok) => Err(format!(
            "the prover cannot parse the name {name:?} (at {tok:?})"
        )),
    }
}

/// One term of `toks` from `pos` whose operators bind tighter than `limit`.
fn operand(toks: &[String], pos: &mut usize, limit: u16, name: &str) -> Result<Term, String> {
    let syntax = || format!("the prover cannot parse the name {name:?}");
    let tok = toks.get(*pos).ok_or_else(syntax)?;
    *pos += 1;
    let mut left = if tok == "-" && toks.get(*pos).is_some() {
        let x = operand(toks, pos, 350, name)?;
        Term::apply(NEGATION, vec![x])
    } else if one_symbol(tok) || (infix(tok).is_none() && tok != "'") {
        Term::Name(tok.clone())
    } else {
        return Err(syntax());
    };
    let mut last: Option<u16> = None;
    while let Some(op) = toks.get(*pos) {
        if op == "'" {
            *pos += 1;
            left = Term::apply(op.clone(), vec![left]);
            continue;
        }
        let Some((prec, right)) = infix(op) else {
            return Err(syntax());
        };
        if prec > limit || (last == Some(prec) && !right) {
            break;
        }
        *pos += 1;
        let rhs = operand(toks, pos, if right { prec } else { prec - 1 }, name)?;
        left = Term::apply(op.clone(), vec![left, rhs]);
        last = Some(prec);
    }
    Ok(left)
}

/// The formula the prover reads for `e` (simplified).
pub(super) fn formula(e: &Expr) -> Result<Formula, String> {
    Ok(match e {
        Expr::Name(n) => match read_name(n)? {
            // A name a quantifier binds may stand as a formula (see
            // `clausified`), unless the prover takes it for a variable.
            Term::Name(n) => {
                if is_variable(&n) {
                    return Err(format!(
                        "{n} cannot be a proposition: the prover takes it for a variable"
                    ));
                }
                Formula::prop(n)
            }
            Term::Apply(app) => Formula::Atom {
                name: app.function,
                args: app.args,
            },
        },
        Expr::Apply(..) => {
            let (name, args) = uncurried(e)?;
            Formula::Atom { name, args }
        }
        Expr::Not(x) => Formula::Not(Box::new(formula(x)?)),
        Expr::Binary(op, a, b) => {
            let (a, b) = (formula(a)?, formula(b)?);
            match op {
                Op::And => Formula::And(vec![a, b]),
                Op::Or => Formula::Or(vec![a, b]),
                Op::Implies => Formula::Implies(Box::new(a), Box::new(b)),
                Op::Iff => Formula::Iff(Box::new(a), Box::new(b)),
            }
        }
        Expr::Equal(a, b) => Formula::Equal(term(a)?, term(b)?),
        Expr::Bind(binder @ (Binder::All | Binder::Exists), v, body) => {
            if let Some(why) = unreadable(v) {
                return Err(why);
            }
            let body = formula(body);
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
fn uncurried(e: &Expr) -> Result<(String, Vec<Term>), String> {
    match e {
        Expr::Apply(f, arg) => {
            let (name, mut args) = match &**f {
                Expr::Name(n) => match read_name(n)? {
                    Term::Name(n) => (n, Vec::new()),
                    Term::Apply(_) => {
                        return Err(format!(
                            "the prover cannot parse {n:?} applied to arguments"
                        ))
                    }
                },
                inner @ Expr::Apply(..) => uncurried(inner)?,
                _ => return Err("arguments after something that is no name".into()),
            };
            args.push(term(arg)?);
            Ok((name, args))
        }
        _ => Err("not an application".into()),
    }
}

/// The term the prover reads for an argument or a side of an equation.
fn term(e: &Expr) -> Result<Term, String> {
    Ok(match e {
        Expr::Name(n) => read_name(n)?,
        Expr::Apply(..) => {
            let (function, args) = uncurried(e)?;
            Term::apply(function, args)
        }
        Expr::Not(x) => Term::apply(NEGATION, vec![term(x)?]),
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

/// Every symbol of `f` with its arity and use. The prover sorts symbols
/// before it sees what a quantifier binds, so a bound name counts as the
/// symbol it is written as (`∀ p1.pred1(p1)` beside the proposition `p1`
/// is refused); only its variables (`u` to `z`) standing as objects are no
/// symbols.
fn symbols(f: &Formula, out: &mut Vec<(String, usize, Use)>) {
    match f {
        Formula::Atom { name, args } => {
            out.push((name.to_lowercase(), args.len(), Use::Relation));
            args.iter().for_each(|a| term_symbols(a, out));
        }
        Formula::Equal(a, b) => {
            term_symbols(a, out);
            term_symbols(b, out);
        }
        Formula::Quant { body: x, .. } | Formula::Not(x) | Formula::Group(x) => symbols(x, out),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| symbols(x, out)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            symbols(a, out);
            symbols(b, out);
        }
    }
}

fn term_symbols(t: &Term, out: &mut Vec<(String, usize, Use)>) {
    match t {
        Term::Name(n) => {
            let n = n.to_lowercase();
            if !is_variable(&n) {
                out.push((n, 0, Use::Function));
            }
        }
        Term::Apply(app) => {
            out.push((app.function.to_lowercase(), app.args.len(), Use::Function));
            app.args.iter().for_each(|a| term_symbols(a, out));
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

/// Why the prover refuses `f` (a formula [`formula`] read, so every name
/// in it is one the prover reads) whatever it is compared with, if it does:
/// a symbol of two arities or two uses.
pub(super) fn alone(f: &Formula) -> Option<String> {
    let mut all = Vec::new();
    symbols(f, &mut all);
    conflict(&all)
}

/// Why the prover refuses `φ0 ↔ φ1` for the symbols the two share (one
/// arity in φ0, another in φ1; a predicate of one an object of the other),
/// if it does. φ0's names are taken lowercased, as the public code takes them.
pub fn clash(phi0: &Formula, phi1: &Formula) -> Option<String> {
    let mut all = Vec::new();
    symbols(phi0, &mut all);
    symbols(phi1, &mut all);
    conflict(&all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_between_two_quotes_is_one_symbol_other_than_the_bare_name() {
        assert_eq!(read_name("\"a+b\""), Ok(Term::Name("\"a+b\"".into())));
        assert_eq!(read_name("\"\""), Ok(Term::Name("\"\"".into())));
        assert_eq!(read_name("\"é\""), Ok(Term::Name("\"é\"".into())));
        assert_ne!(read_name("\"p1\""), read_name("p1"));
        let sum = Term::apply(
            "+",
            vec![Term::Name("\"a\"".into()), Term::Name("\"b\"".into())],
        );
        assert_eq!(read_name("\"a\"+\"b\""), Ok(sum));
    }

    #[test]
    fn a_quote_that_touches_a_name_or_never_closes_is_refused() {
        for name in [
            "\"p\"3",
            "p\"3\"",
            "\"p\"\"3\"",
            "\"ab\"c\"",
            "\"a",
            "\"é\"x",
        ] {
            assert!(read_name(name).is_err(), "{name} was read");
        }
    }

    #[test]
    fn a_character_beyond_ascii_is_refused_only_outside_quotes() {
        assert!(unreadable("é").is_some());
        assert!(unreadable("\"é\"x").is_none());
        assert!(unreadable("\"é\"é").is_some());
    }

    #[test]
    fn a_quoted_letter_of_the_prover_variables_is_no_variable() {
        assert!(!is_variable("\"x\""));
        assert!(is_variable("x"));
    }
}
