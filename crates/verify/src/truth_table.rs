//! Bit-parallel truth tables for formulas whose quantifiers are all vacuous:
//! each atom is a column of 2^k bits and every connective is a word-wise
//! operation on a stack of words, with no allocation per node.
//!
//! Ground first-order atoms are independent here even when they share
//! constants: an interpretation that maps every constant to its own element
//! realises every row, so the table decides equivalence exactly. That holds
//! for function terms too (distinct ground terms may denote distinct
//! elements), but not with equations, which tie atoms together: a formula
//! with one is left to the prover.

use autoeval_syntax::logic::assignment_column;
use autoeval_syntax::{Formula, Term};
use rustc_hash::FxHashMap;

/// Most distinct atoms a truth table is built for (2^20 rows).
pub const MAX_ATOMS: usize = 20;

/// An atom as written: predicate (or proposition) name and arguments.
pub type AtomKey<'a> = (&'a str, &'a [Term]);

/// The atoms of the formulas, numbered in order of appearance.
pub struct Atoms<'a> {
    index: FxHashMap<AtomKey<'a>, usize>,
    /// The atom of each column.
    pub list: Vec<AtomKey<'a>>,
}

impl<'a> Atoms<'a> {
    /// The distinct atoms of `formulas`, or `None` when a quantifier binds a
    /// variable that some atom uses (the formulas are then not ground) or a
    /// formula has an equation.
    pub fn of(formulas: &[&'a Formula]) -> Option<Atoms<'a>> {
        let mut atoms = Atoms {
            index: FxHashMap::default(),
            list: Vec::new(),
        };
        let mut scope: Vec<&'a str> = Vec::new();
        for f in formulas {
            atoms.collect(f, &mut scope)?;
        }
        Some(atoms)
    }

    fn collect(&mut self, f: &'a Formula, scope: &mut Vec<&'a str>) -> Option<()> {
        match f {
            Formula::Atom { name, args } => {
                let mut bound = false;
                for a in args {
                    a.visit_names(&mut |n| bound |= scope.contains(&n));
                }
                if bound {
                    return None;
                }
                let next = self.list.len();
                let key = (name.as_str(), args.as_slice());
                self.index.entry(key).or_insert_with(|| {
                    self.list.push(key);
                    next
                });
            }
            Formula::Equal(..) => return None,
            Formula::Not(x) | Formula::Group(x) => self.collect(x, scope)?,
            Formula::And(xs) | Formula::Or(xs) => {
                for x in xs {
                    self.collect(x, scope)?;
                }
            }
            Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
                self.collect(a, scope)?;
                self.collect(b, scope)?;
            }
            Formula::Quant { vars, body, .. } => {
                let n = scope.len();
                scope.extend(vars.iter().map(String::as_str));
                let r = self.collect(body, scope);
                scope.truncate(n);
                r?;
            }
        }
        Some(())
    }
}

/// The row (an assignment, bit i for column i) where `a` and `b` differ, or
/// `None` when they agree everywhere. Both must be ground over `atoms`.
pub fn first_difference(a: &Formula, b: &Formula, atoms: &Atoms) -> Option<u64> {
    let k = atoms.list.len();
    let words = if k <= 6 { 1 } else { 1usize << (k - 6) };
    let mask = if k < 6 {
        (1u64 << (1 << k)) - 1
    } else {
        u64::MAX
    };
    let mut stack = Vec::with_capacity(words * 8);
    push_table(a, atoms, words, &mut stack);
    push_table(b, atoms, words, &mut stack);
    let (ta, tb) = stack.split_at(words);
    for (w, (x, y)) in ta.iter().zip(tb).enumerate() {
        let diff = (x ^ y) & mask;
        if diff != 0 {
            return Some((w as u64) << 6 | diff.trailing_zeros() as u64);
        }
    }
    None
}

/// Combines the two tables on top of the stack into one.
fn fold_top(stack: &mut Vec<u64>, words: usize, op: fn(u64, u64) -> u64) {
    let n = stack.len();
    let (lower, upper) = stack.split_at_mut(n - words);
    for (x, y) in lower[n - 2 * words..].iter_mut().zip(upper.iter()) {
        *x = op(*x, *y);
    }
    stack.truncate(n - words);
}

/// Pushes the truth table of `f` (`words` words) onto `stack`.
fn push_table(f: &Formula, atoms: &Atoms, words: usize, stack: &mut Vec<u64>) {
    match f {
        Formula::Atom { name, args } => {
            let i = atoms.index[&(name.as_str(), args.as_slice())];
            stack.extend((0..words).map(|w| assignment_column(i, w as u64)));
        }
        Formula::Equal(..) => unreachable!("`Atoms::of` refuses a formula with an equation"),
        Formula::Not(x) => {
            push_table(x, atoms, words, stack);
            let n = stack.len();
            stack[n - words..].iter_mut().for_each(|w| *w = !*w);
        }
        Formula::And(xs) | Formula::Or(xs) => {
            let is_and = matches!(f, Formula::And(_));
            let Some((first, rest)) = xs.split_first() else {
                stack.extend((0..words).map(|_| if is_and { u64::MAX } else { 0 }));
                return;
            };
            push_table(first, atoms, words, stack);
            for x in rest {
                push_table(x, atoms, words, stack);
                fold_top(
                    stack,
                    words,
                    if is_and { |a, b| a & b } else { |a, b| a | b },
                );
            }
        }
        Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
            push_table(a, atoms, words, stack);
            push_table(b, atoms, words, stack);
            let op: fn(u64, u64) -> u64 = match f {
                Formula::Implies(..) => |x, y| !x | y,
                Formula::Iff(..) => |x, y| !(x ^ y),
                _ => |x, y| x ^ y,
            };
            fold_top(stack, words, op);
        }
        // Every quantifier is vacuous here (checked by `Atoms::of`).
        Formula::Group(x) | Formula::Quant { body: x, .. } => push_table(x, atoms, words, stack),
    }
}
