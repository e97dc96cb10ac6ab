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
        /// Argument names: objects, or variables when an enclosing quantifier binds them.
        args: Vec<String>,
    },
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
            args: args.iter().map(|a| a.to_string()).collect(),
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
            Formula::Atom { .. } => {}
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
