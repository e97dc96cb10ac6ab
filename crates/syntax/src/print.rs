//! Printers for formulas and regular expressions.
//!
//! Written parentheses (`Group`) are printed as they are; where the tree has
//! no `Group` but the text would otherwise read differently, the printer adds
//! parentheses, so `parse(print(f))` always means the same as `f`.

use crate::logic::{Formula, Quantifier, Term};
use crate::regex::Regex;

/// Which symbols a printed formula uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Style {
    /// The paper's form: `∧ ∨ ¬ ∀ ∃ → ↔ ⊕`.
    #[default]
    Unicode,
    /// Plain ASCII: `& | ~ all exists -> <-> xor`.
    Ascii,
    /// The public reference implementation's form: Unicode, but `v` for disjunction.
    Reference,
}

struct Symbols {
    and: &'static str,
    or: &'static str,
    not: &'static str,
    implies: &'static str,
    iff: &'static str,
    xor: &'static str,
    forall: &'static str,
    exists: &'static str,
    args: &'static str,
}

impl Style {
    fn symbols(self) -> Symbols {
        match self {
            Style::Unicode | Style::Reference => Symbols {
                and: " ∧ ",
                or: if self == Style::Reference {
                    " v "
                } else {
                    " ∨ "
                },
                not: "¬",
                implies: " → ",
                iff: " ↔ ",
                xor: " ⊕ ",
                forall: "∀",
                exists: "∃",
                args: if self == Style::Reference { "," } else { ", " },
            },
            Style::Ascii => Symbols {
                and: " & ",
                or: " | ",
                not: "~",
                implies: " -> ",
                iff: " <-> ",
                xor: " xor ",
                forall: "all",
                exists: "exists",
                args: ", ",
            },
        }
    }
}

/// Binding strength, loosest first; used to decide where parentheses are needed.
fn precedence(f: &Formula) -> u8 {
    match f {
        Formula::Iff(..) | Formula::Xor(..) => 1,
        Formula::Implies(..) => 2,
        Formula::Or(_) => 3,
        Formula::And(_) => 4,
        // A quantifier's scope runs to the right as far as it can, so inside
        // an operator it must be enclosed.
        Formula::Quant { .. } => 0,
        // `¬(a = b)`: an equation under a negation is enclosed.
        Formula::Equal(..) => 8,
        Formula::Not(_) | Formula::Atom { .. } | Formula::Group(_) => 9,
    }
}

/// Prints a formula in the given style.
pub fn formula(f: &Formula, style: Style) -> String {
    let mut out = String::new();
    write_formula(&mut out, f, &style.symbols(), style);
    out
}

fn write_operand(out: &mut String, f: &Formula, min_prec: u8, s: &Symbols, style: Style) {
    if precedence(f) < min_prec {
        out.push('(');
        write_formula(out, f, s, style);
        out.push(')');
    } else {
        write_formula(out, f, s, style);
    }
}

fn write_formula(out: &mut String, f: &Formula, s: &Symbols, style: Style) {
    match f {
        Formula::Atom { name, args } => {
            out.push_str(name);
            write_arguments(out, args, s);
        }
        Formula::Equal(a, b) => {
            write_term(out, a, s);
            out.push_str(" = ");
            write_term(out, b, s);
        }
        Formula::Not(a) => {
            out.push_str(s.not);
            write_operand(out, a, 9, s, style);
        }
        Formula::And(xs) | Formula::Or(xs) => {
            let (sep, prec) = match f {
                Formula::And(_) => (s.and, 4),
                _ => (s.or, 3),
            };
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                // Same-operator children without a Group are enclosed too, so the
                // printed text parses back to the same tree shape.
                write_operand(out, x, prec + 1, s, style);
            }
        }
        Formula::Implies(a, b) => {
            write_operand(out, a, 3, s, style);
            out.push_str(s.implies);
            write_operand(out, b, 2, s, style);
        }
        Formula::Iff(a, b) | Formula::Xor(a, b) => {
            let sep = if matches!(f, Formula::Iff(..)) {
                s.iff
            } else {
                s.xor
            };
            write_operand(out, a, 2, s, style);
            out.push_str(sep);
            write_operand(out, b, 2, s, style);
        }
        Formula::Quant { q, vars, body } => {
            out.push_str(match q {
                Quantifier::Forall => s.forall,
                Quantifier::Exists => s.exists,
            });
            out.push(' ');
            out.push_str(&vars.join(" "));
            out.push('.');
            write_formula(out, body, s, style);
        }
        Formula::Group(a) => {
            out.push('(');
            write_formula(out, a, s, style);
            out.push(')');
        }
    }
}

fn write_arguments(out: &mut String, args: &[Term], s: &Symbols) {
    if args.is_empty() {
        return;
    }
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(s.args);
        }
        write_term(out, a, s);
    }
    out.push(')');
}

fn write_term(out: &mut String, t: &Term, s: &Symbols) {
    match t {
        Term::Name(n) => out.push_str(n),
        Term::Apply(app) => {
            out.push_str(&app.function);
            write_arguments(out, &app.args, s);
        }
    }
}

/// Prints a regular expression: symbols, `*`, parentheses, and `|`, `+`, `?`, `ε` where used.
pub fn regex(r: &Regex) -> String {
    let mut out = String::new();
    write_regex(&mut out, r);
    out
}

fn regex_needs_group(r: &Regex, inside_concat: bool) -> bool {
    match r {
        Regex::Union(_) => true,
        Regex::Concat(_) => !inside_concat,
        _ => false,
    }
}

fn write_regex(out: &mut String, r: &Regex) {
    match r {
        Regex::Epsilon => out.push('ε'),
        Regex::Symbol(c) => out.push(*c),
        Regex::Concat(xs) => {
            for x in xs {
                if matches!(x, Regex::Union(_) | Regex::Concat(_)) {
                    out.push('(');
                    write_regex(out, x);
                    out.push(')');
                } else {
                    write_regex(out, x);
                }
            }
        }
        Regex::Union(xs) => {
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                if matches!(x, Regex::Union(_)) {
                    out.push('(');
                    write_regex(out, x);
                    out.push(')');
                } else {
                    write_regex(out, x);
                }
            }
        }
        Regex::Star(a) | Regex::Plus(a) | Regex::Optional(a) => {
            if regex_needs_group(a, false) || matches!(**a, Regex::Epsilon) {
                out.push('(');
                write_regex(out, a);
                out.push(')');
            } else {
                write_regex(out, a);
            }
            out.push(match r {
                Regex::Star(_) => '*',
                Regex::Plus(_) => '+',
                _ => '?',
            });
        }
        Regex::Group(a) => {
            out.push('(');
            write_regex(out, a);
            out.push(')');
        }
    }
}

impl std::fmt::Display for Formula {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&formula(self, Style::Unicode))
    }
}

impl std::fmt::Display for Term {
    /// `name`, or `f(a, g(b))`, as the formula printer writes a term.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        write_term(&mut out, self, &Style::Unicode.symbols());
        f.write_str(&out)
    }
}

impl std::fmt::Display for Regex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&regex(self))
    }
}
