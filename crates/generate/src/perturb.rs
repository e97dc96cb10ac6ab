//! Rewrites of generated formulas: ones that keep the meaning (commutation,
//! De Morgan, double negation, renaming a bound variable, redundant
//! parentheses, `(a*)*` for `a*`) and near misses that usually change it
//! (one flipped negation, one ∧/∨ swap, one renamed symbol, ∀↔∃, a moved or
//! dropped star). Tests and benchmarks build checking workloads from them;
//! whether a near miss really changes the meaning is for a verifier to say.

use crate::rng::Rng;
use autoeval_syntax::{Formula, Quantifier, Regex};

/// A kind of rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// Reverse the operands of one ∧ or ∨.
    Commute,
    /// Replace one ∧/∨ by the negated dual of negated operands.
    DeMorgan,
    /// Put ¬¬ in front of one subformula.
    DoubleNegation,
    /// Rename one quantifier's variables.
    RenameBound,
    /// Add parentheses around one subformula.
    Parenthesize,
    /// Flip the negation of one literal.
    FlipNegation,
    /// Turn one ∧ into ∨ or the other way round.
    SwapAndOr,
    /// Rename one occurrence of a proposition, predicate or object.
    RenameSymbol,
    /// Turn one ∀ into ∃ or the other way round.
    FlipQuantifier,
    /// Move a parenthesis: `a ∧ (b ∨ c)` becomes `(a ∧ b) ∨ c`.
    Rescope,
    /// Put a variable where an object was, or an object where a variable was.
    ConstantVariable,
    /// Drop a predicate's last argument, or give a one-place predicate a second.
    WrongArity,
}

impl Rewrite {
    /// Rewrites that keep the meaning.
    pub const EQUIVALENT: [Rewrite; 5] = [
        Rewrite::Commute,
        Rewrite::DeMorgan,
        Rewrite::DoubleNegation,
        Rewrite::RenameBound,
        Rewrite::Parenthesize,
    ];
    /// Near misses: the error kinds LLMs make (paper App. G).
    pub const NEAR_MISS: [Rewrite; 7] = [
        Rewrite::FlipNegation,
        Rewrite::SwapAndOr,
        Rewrite::RenameSymbol,
        Rewrite::FlipQuantifier,
        Rewrite::Rescope,
        Rewrite::ConstantVariable,
        Rewrite::WrongArity,
    ];

    fn applies_to(self, f: &Formula) -> bool {
        match self {
            Rewrite::Commute | Rewrite::DeMorgan | Rewrite::SwapAndOr => {
                matches!(f, Formula::And(_) | Formula::Or(_))
            }
            Rewrite::DoubleNegation | Rewrite::Parenthesize => true,
            Rewrite::RenameBound | Rewrite::FlipQuantifier => matches!(f, Formula::Quant { .. }),
            Rewrite::FlipNegation | Rewrite::RenameSymbol => matches!(f, Formula::Atom { .. }),
            Rewrite::ConstantVariable | Rewrite::WrongArity => {
                matches!(f, Formula::Atom { args, .. } if !args.is_empty())
            }
            Rewrite::Rescope => match f {
                Formula::And(xs) => {
                    matches!(xs.last().map(Formula::ungrouped), Some(Formula::Or(_)))
                }
                Formula::Or(xs) => {
                    matches!(xs.last().map(Formula::ungrouped), Some(Formula::And(_)))
                }
                _ => false,
            },
        }
    }
}

fn count(f: &Formula, r: Rewrite) -> usize {
    let mut n = 0;
    f.visit(&mut |node| n += r.applies_to(node) as usize);
    n
}

/// Applies `action` to the `n`-th node (pre-order) that `r` applies to.
fn at_nth(
    f: &mut Formula,
    r: Rewrite,
    n: &mut usize,
    action: &mut dyn FnMut(&mut Formula),
) -> bool {
    if r.applies_to(f) {
        if *n == 0 {
            action(f);
            return true;
        }
        *n -= 1;
    }
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => false,
        Formula::Not(a) | Formula::Group(a) => at_nth(a, r, n, action),
        Formula::Quant { body, .. } => at_nth(body, r, n, action),
        Formula::And(xs) | Formula::Or(xs) => xs.iter_mut().any(|x| at_nth(x, r, n, action)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            at_nth(a, r, n, action) || at_nth(b, r, n, action)
        }
    }
}

fn rename_var(f: &mut Formula, from: &str, to: &str) {
    match f {
        Formula::Atom { args, .. } => {
            for a in args.iter_mut().filter(|a| **a == *from) {
                *a = to.into();
            }
        }
        Formula::Equal(..) => {}
        Formula::Not(a) | Formula::Group(a) => rename_var(a, from, to),
        Formula::Quant { vars, body, .. } => {
            if !vars.iter().any(|v| v == from) {
                rename_var(body, from, to);
            }
        }
        Formula::And(xs) | Formula::Or(xs) => xs.iter_mut().for_each(|x| rename_var(x, from, to)),
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            rename_var(a, from, to);
            rename_var(b, from, to);
        }
    }
}

/// A different name of the same shape: `p3` → `p7`, `pred2` → `pred5`,
/// other names get a suffix.
fn other_name(name: &str, rng: &mut Rng) -> String {
    let digits = name.trim_start_matches(|c: char| !c.is_ascii_digit());
    let stem = &name[..name.len() - digits.len()];
    match digits.parse::<usize>() {
        Ok(k) => format!("{stem}{}", (k + 1 + rng.below(11)) % 12 + 1),
        Err(_) => format!("{name}X"),
    }
}

/// Applies rewrite `r` at a random place; `None` when `r` has no place in `f`.
pub fn logic(f: &Formula, r: Rewrite, rng: &mut Rng) -> Option<Formula> {
    let places = count(f, r);
    if places == 0 {
        return None;
    }
    let mut n = rng.below(places);
    let mut out = f.clone();
    let mut action = |node: &mut Formula| {
        let old = std::mem::replace(node, Formula::prop("_"));
        *node = match (r, old) {
            (Rewrite::Commute, Formula::And(mut xs)) => {
                xs.reverse();
                Formula::And(xs)
            }
            (Rewrite::Commute, Formula::Or(mut xs)) => {
                xs.reverse();
                Formula::Or(xs)
            }
            (Rewrite::DeMorgan, Formula::And(xs)) => {
                Formula::Or(xs.into_iter().map(|x| x.group().negate()).collect())
                    .group()
                    .negate()
            }
            (Rewrite::DeMorgan, Formula::Or(xs)) => {
                Formula::And(xs.into_iter().map(|x| x.group().negate()).collect())
                    .group()
                    .negate()
            }
            (Rewrite::SwapAndOr, Formula::And(xs)) => Formula::Or(xs),
            (Rewrite::SwapAndOr, Formula::Or(xs)) => Formula::And(xs),
            (Rewrite::DoubleNegation, x) => x.group().negate().negate(),
            (Rewrite::Parenthesize, x) => x.group(),
            (Rewrite::RenameBound, Formula::Quant { q, vars, mut body }) => {
                let renamed: Vec<String> = vars.iter().map(|v| format!("{v}r")).collect();
                for (v, w) in vars.iter().zip(&renamed) {
                    rename_var(&mut body, v, w);
                }
                Formula::Quant {
                    q,
                    vars: renamed,
                    body,
                }
            }
            (Rewrite::FlipQuantifier, Formula::Quant { q, vars, body }) => Formula::Quant {
                q: match q {
                    Quantifier::Forall => Quantifier::Exists,
                    Quantifier::Exists => Quantifier::Forall,
                },
                vars,
                body,
            },
            (Rewrite::FlipNegation, atom) => atom.negate(),
            (Rewrite::Rescope, outer @ (Formula::And(_) | Formula::Or(_))) => rescope(outer),
            (Rewrite::ConstantVariable, Formula::Atom { name, mut args }) => {
                let i = rng.below(args.len());
                let name_i = args[i].text();
                let is_variable =
                    name_i.starts_with('x') && name_i[1..].chars().all(|c| c.is_ascii_digit());
                args[i] = if is_variable { "p1" } else { "x1" }.into();
                Formula::Atom { name, args }
            }
            (Rewrite::WrongArity, Formula::Atom { name, mut args }) => {
                if args.len() >= 2 {
                    args.pop();
                } else {
                    args.push(args[0].clone());
                }
                Formula::Atom { name, args }
            }
            (Rewrite::RenameSymbol, Formula::Atom { name, mut args }) => {
                if args.is_empty() || rng.below(2) == 0 {
                    Formula::Atom {
                        name: other_name(&name, rng),
                        args,
                    }
                } else {
                    let i = rng.below(args.len());
                    args[i] = other_name(&args[i].text(), rng).into();
                    Formula::Atom { name, args }
                }
            }
            (_, other) => other,
        };
    };
    at_nth(&mut out, r, &mut n, &mut action);
    // Flipping a negation on an atom under ¬ removes that ¬ instead.
    Some(remove_double_flip(out))
}

/// `X(a…, (Y(b, c…)))` becomes `Y((X(a…, b)), c…)`: the parenthesis moves left.
fn rescope(outer: Formula) -> Formula {
    let (is_and, mut xs) = match outer {
        Formula::And(xs) => (true, xs),
        Formula::Or(xs) => (false, xs),
        other => return other,
    };
    let inner = match xs.pop().map(|x| x.ungrouped().clone()) {
        Some(Formula::And(ys)) | Some(Formula::Or(ys)) => ys,
        _ => return Formula::prop("_"),
    };
    let mut inner = inner.into_iter();
    let first = inner.next().unwrap_or_else(|| Formula::prop("_"));
    xs.push(first);
    let regrouped = if is_and {
        Formula::And(xs)
    } else {
        Formula::Or(xs)
    }
    .group();
    let mut outer_parts = vec![regrouped];
    outer_parts.extend(inner);
    if is_and {
        Formula::Or(outer_parts)
    } else {
        Formula::And(outer_parts)
    }
}

fn remove_double_flip(f: Formula) -> Formula {
    match f {
        Formula::Not(inner) => match *inner {
            Formula::Not(x) if matches!(*x, Formula::Atom { .. }) => *x,
            other => Formula::Not(Box::new(remove_double_flip(other))),
        },
        Formula::Group(x) => Formula::Group(Box::new(remove_double_flip(*x))),
        Formula::And(xs) => Formula::And(xs.into_iter().map(remove_double_flip).collect()),
        Formula::Or(xs) => Formula::Or(xs.into_iter().map(remove_double_flip).collect()),
        Formula::Quant { q, vars, body } => Formula::Quant {
            q,
            vars,
            body: Box::new(remove_double_flip(*body)),
        },
        other => other,
    }
}

/// A kind of regular-expression rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegexRewrite {
    /// `a*` becomes `(a*)*`.
    StarOfStar,
    /// `a*` becomes `a*a*`.
    DoubleStar,
    /// A symbol gets parentheses.
    Parenthesize,
    /// One star is dropped.
    DropStar,
    /// One unstarred symbol gets a star.
    AddStar,
    /// One symbol becomes another symbol of the alphabet.
    FlipSymbol,
}

impl RegexRewrite {
    /// Rewrites that keep the language.
    pub const EQUIVALENT: [RegexRewrite; 3] = [
        RegexRewrite::StarOfStar,
        RegexRewrite::DoubleStar,
        RegexRewrite::Parenthesize,
    ];
    /// Near misses.
    pub const NEAR_MISS: [RegexRewrite; 3] = [
        RegexRewrite::DropStar,
        RegexRewrite::AddStar,
        RegexRewrite::FlipSymbol,
    ];
}

fn regex_places(r: &Regex, w: RegexRewrite) -> usize {
    let mut n = 0;
    r.visit(&mut |node| {
        n += match w {
            RegexRewrite::StarOfStar | RegexRewrite::DoubleStar | RegexRewrite::DropStar => {
                matches!(node, Regex::Star(_))
            }
            _ => matches!(node, Regex::Symbol(_)),
        } as usize
    });
    n
}

fn regex_at(
    r: &mut Regex,
    w: RegexRewrite,
    n: &mut usize,
    action: &mut dyn FnMut(&mut Regex),
) -> bool {
    let hit = match w {
        RegexRewrite::StarOfStar | RegexRewrite::DoubleStar | RegexRewrite::DropStar => {
            matches!(r, Regex::Star(_))
        }
        _ => matches!(r, Regex::Symbol(_)),
    };
    if hit {
        if *n == 0 {
            action(r);
            return true;
        }
        *n -= 1;
    }
    match r {
        Regex::Concat(xs) | Regex::Union(xs) => xs.iter_mut().any(|x| regex_at(x, w, n, action)),
        Regex::Star(x) | Regex::Plus(x) | Regex::Optional(x) | Regex::Group(x) => {
            regex_at(x, w, n, action)
        }
        Regex::Symbol(_) | Regex::Epsilon => false,
    }
}

/// Applies regex rewrite `w` at a random place; `None` when it has no place.
pub fn regex(r: &Regex, w: RegexRewrite, alphabet: &[char], rng: &mut Rng) -> Option<Regex> {
    let places = regex_places(r, w);
    if places == 0 {
        return None;
    }
    let mut n = rng.below(places);
    let shift = 1 + rng.below(alphabet.len().max(2) - 1);
    let mut out = r.clone();
    let mut action = |node: &mut Regex| {
        let old = std::mem::replace(node, Regex::Epsilon);
        *node = match (w, old) {
            (RegexRewrite::StarOfStar, star) => Regex::Star(Box::new(Regex::Group(Box::new(star)))),
            (RegexRewrite::DoubleStar, star) => {
                Regex::Group(Box::new(Regex::Concat(vec![star.clone(), star])))
            }
            (RegexRewrite::Parenthesize, sym) => Regex::Group(Box::new(sym)),
            (RegexRewrite::DropStar, Regex::Star(inner)) => *inner,
            (RegexRewrite::AddStar, sym) => Regex::Star(Box::new(sym)),
            (RegexRewrite::FlipSymbol, Regex::Symbol(c)) => {
                let i = alphabet.iter().position(|&a| a == c).unwrap_or(0);
                Regex::Symbol(alphabet[(i + shift) % alphabet.len()])
            }
            (_, other) => other,
        };
    };
    regex_at(&mut out, w, &mut n, &mut action);
    Some(out)
}
