//! Propositional and first-order formulas as written: the tree keeps explicit
//! parentheses (`Group`) so that a formula prints back exactly as it was read.

use serde::{Deserialize, Serialize};

/// A quantifier symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Quantifier {
    /// Universal quantification, `∀`.
    Forall,
    /// Existential quantification, `∃`.
    Exists,
}

/// An argument of a predicate: a name (an object, or a variable when an
/// enclosing quantifier binds it) or a function applied to terms. The
/// benchmark's own formulas have names only; function terms come from
/// answers read as the public implementation reads them, whose prover takes
/// them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Term {
    /// An object or a variable.
    Name(String),
    /// A function symbol applied to one or more terms (boxed, so that a
    /// term is no larger than a name).
    Apply(Box<Application>),
}

/// A function symbol applied to terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Application {
    /// The function symbol.
    pub function: String,
    /// Its arguments, in order.
    pub args: Vec<Term>,
}

impl Term {
    /// `function` applied to `args`.
    pub fn apply(function: impl Into<String>, args: Vec<Term>) -> Term {
        Term::Apply(Box::new(Application {
            function: function.into(),
            args,
        }))
    }

    /// The name, when the term is one.
    pub fn as_name(&self) -> Option<&str> {
        match self {
            Term::Name(n) => Some(n),
            Term::Apply(_) => None,
        }
    }

    /// The term as written: a name without a copy, a function term printed.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Term::Name(n) => std::borrow::Cow::Borrowed(n),
            Term::Apply(_) => std::borrow::Cow::Owned(self.to_string()),
        }
    }

    /// The term with every symbol passed through `rename`.
    pub fn renamed(&self, rename: &impl Fn(&str) -> String) -> Term {
        match self {
            Term::Name(n) => Term::Name(rename(n)),
            Term::Apply(app) => Term::apply(
                rename(&app.function),
                app.args.iter().map(|a| a.renamed(rename)).collect(),
            ),
        }
    }

    /// Calls `f` on every name and function symbol of the term.
    pub fn visit_names<'a>(&'a self, f: &mut impl FnMut(&'a str)) {
        match self {
            Term::Name(n) => f(n),
            Term::Apply(app) => {
                f(&app.function);
                app.args.iter().for_each(|a| a.visit_names(f));
            }
        }
    }
}

impl PartialEq<str> for Term {
    fn eq(&self, other: &str) -> bool {
        self.as_name() == Some(other)
    }
}

impl From<&str> for Term {
    fn from(name: &str) -> Term {
        Term::Name(name.to_string())
    }
}

impl From<String> for Term {
    fn from(name: String) -> Term {
        Term::Name(name)
    }
}

/// A formula of propositional or (prenex or not) first-order logic.
///
/// `And` and `Or` are n-ary because `a ∧ b ∧ c` is written without inner
/// parentheses (3-SAT clauses, for instance); nesting that was written with
/// parentheses is kept as `Group` nodes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Formula {
    /// A proposition (`args` empty) or a predicate applied to terms.
    Atom {
        /// Proposition or predicate name, case-sensitive.
        name: String,
        /// Arguments: objects, variables when an enclosing quantifier binds
        /// them, or function terms.
        args: Vec<Term>,
    },
    /// Two terms denote the same object (read only as the public
    /// implementation reads answers).
    Equal(Term, Term),
    /// Negation.
    Not(Box<Formula>),
    /// Conjunction of two or more operands.
    And(Vec<Formula>),
    /// Disjunction of two or more operands.
    Or(Vec<Formula>),
    /// Implication (accepted only by the lenient parser).
    Implies(Box<Formula>, Box<Formula>),
    /// Biconditional (accepted only by the lenient parser).
    Iff(Box<Formula>, Box<Formula>),
    /// Exclusive or (accepted only by the lenient parser).
    Xor(Box<Formula>, Box<Formula>),
    /// A quantifier binding one or more variables over a body.
    Quant {
        /// Which quantifier.
        q: Quantifier,
        /// The bound variables, in written order.
        vars: Vec<String>,
        /// The scope of the quantifier.
        body: Box<Formula>,
    },
    /// Explicit parentheses around a formula.
    Group(Box<Formula>),
}

impl Formula {
    /// A proposition.
    pub fn prop(name: impl Into<String>) -> Formula {
        Formula::Atom {
            name: name.into(),
            args: Vec::new(),
        }
    }

    /// A predicate applied to argument names.
    pub fn pred(name: impl Into<String>, args: &[&str]) -> Formula {
        Formula::Atom {
            name: name.into(),
            args: args.iter().map(|&a| Term::from(a)).collect(),
        }
    }

    /// `¬self`.
    pub fn negate(self) -> Formula {
        Formula::Not(Box::new(self))
    }

    /// `(self)`.
    pub fn group(self) -> Formula {
        Formula::Group(Box::new(self))
    }

    /// The formula with every `Group` removed (parentheses carry no meaning).
    pub fn ungrouped(&self) -> &Formula {
        let mut f = self;
        while let Formula::Group(inner) = f {
            f = inner;
        }
        f
    }

    /// Calls `f` on every node, parents before children.
    pub fn visit(&self, f: &mut impl FnMut(&Formula)) {
        f(self);
        match self {
            Formula::Atom { .. } | Formula::Equal(..) => {}
            Formula::Not(a) | Formula::Group(a) => a.visit(f),
            Formula::Quant { body, .. } => body.visit(f),
            Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| x.visit(f)),
            Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
                a.visit(f);
                b.visit(f);
            }
        }
    }
}

/// Word `chunk` of atom `atom`'s column in the truth table that lists every
/// assignment in order, 64 rows a word: row `r` gives atom `i` the value of
/// bit `i` of `r`.
pub fn assignment_column(atom: usize, chunk: u64) -> u64 {
    const LOW: [u64; 6] = [
        0xAAAA_AAAA_AAAA_AAAA,
        0xCCCC_CCCC_CCCC_CCCC,
        0xF0F0_F0F0_F0F0_F0F0,
        0xFF00_FF00_FF00_FF00,
        0xFFFF_0000_FFFF_0000,
        0xFFFF_FFFF_0000_0000,
    ];
    match LOW.get(atom) {
        Some(&word) => word,
        None if chunk >> (atom - 6) & 1 == 1 => u64::MAX,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_is_no_larger_than_a_name() {
        // Atoms of the benchmark's formulas hold names only; a function
        // term must not make every argument bigger.
        assert_eq!(std::mem::size_of::<Term>(), std::mem::size_of::<String>());
    }
}
