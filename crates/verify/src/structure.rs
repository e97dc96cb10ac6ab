//! Finite first-order structures and the evaluation of formulas in them;
//! used to confirm every counterexample before it is reported.

use crate::sem::{Sem, Term};
use autoeval_syntax::Quantifier;
use std::collections::HashMap;

/// A finite interpretation of a [`crate::sem::Signature`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Structure {
    /// Number of domain elements (at least one).
    pub size: usize,
    /// The element each constant denotes, by constant id.
    pub constants: Vec<usize>,
    /// For each predicate id, its truth value on every tuple (mixed radix, first argument most significant).
    pub tables: Vec<Vec<bool>>,
    /// For each function id, its value on every tuple (indexed as `tables`).
    pub functions: Vec<Vec<usize>>,
}

impl Structure {
    fn holds(&self, pred: u32, args: &[usize]) -> bool {
        let idx = args.iter().fold(0, |acc, &a| acc * self.size + a);
        self.tables[pred as usize]
            .get(idx)
            .copied()
            .unwrap_or(false)
    }

    /// The element `t` denotes, its variables valued by `env` (an unvalued
    /// one denotes the first element).
    fn value(&self, t: &Term, env: &HashMap<u32, usize>) -> usize {
        match t {
            Term::Var(v) => env.get(v).copied().unwrap_or(0),
            Term::Const(c) => self.constants[*c as usize],
            Term::Apply(f, args) => {
                let idx = args
                    .iter()
                    .fold(0, |acc, a| acc * self.size + self.value(a, env));
                self.functions[*f as usize].get(idx).copied().unwrap_or(0)
            }
        }
    }

    /// Whether `f` is true in this structure.
    pub fn eval(&self, f: &Sem) -> bool {
        self.eval_in(f, &mut HashMap::new())
    }

    fn eval_in(&self, f: &Sem, env: &mut HashMap<u32, usize>) -> bool {
        match f {
            Sem::Atom(p, args) => {
                let vals: Vec<usize> = args.iter().map(|t| self.value(t, env)).collect();
                self.holds(*p, &vals)
            }
            Sem::Equal(a, b) => self.value(a, env) == self.value(b, env),
            Sem::Not(x) => !self.eval_in(x, env),
            Sem::And(xs) => xs.iter().all(|x| self.eval_in(x, env)),
            Sem::Or(xs) => xs.iter().any(|x| self.eval_in(x, env)),
            Sem::Implies(a, b) => !self.eval_in(a, env) || self.eval_in(b, env),
            Sem::Iff(a, b) => self.eval_in(a, env) == self.eval_in(b, env),
            Sem::Xor(a, b) => self.eval_in(a, env) != self.eval_in(b, env),
            Sem::Quant(q, v, body) => {
                let saved = env.get(v).copied();
                let mut result = *q == Quantifier::Forall;
                for e in 0..self.size {
                    env.insert(*v, e);
                    if self.eval_in(body, env) != result {
                        result = !result;
                        break;
                    }
                }
                match saved {
                    Some(s) => env.insert(*v, s),
                    None => env.remove(v),
                };
                result
            }
        }
    }
}
