//! Bit-parallel truth tables for quantifier-free formulas: each atom is a
//! column of 2^k bits and every connective is a word-wise operation.
//!
//! Ground first-order atoms are independent here even when they share
//! constants: an interpretation that maps every constant to its own element
//! realises every row, so the table decides equivalence exactly.

use crate::sem::{Sem, Term};
use std::collections::HashMap;

/// Most distinct atoms a truth table is built for (2^20 rows).
pub const MAX_ATOMS: usize = 20;

/// The ground atoms of the formulas, numbered in order of appearance.
pub struct Atoms<'a> {
    index: HashMap<(u32, &'a [Term]), usize>,
    /// (predicate, arguments) of each column.
    pub list: Vec<(u32, &'a [Term])>,
}

impl<'a> Atoms<'a> {
    /// Collects the distinct atoms of `formulas`.
    pub fn of(formulas: &[&'a Sem]) -> Atoms<'a> {
        let mut atoms = Atoms {
            index: HashMap::new(),
            list: Vec::new(),
        };
        for f in formulas {
            f.atoms(&mut |p, args| {
                let next = atoms.list.len();
                atoms.index.entry((p, args)).or_insert_with(|| {
                    atoms.list.push((p, args));
                    next
                });
            });
        }
        atoms
    }
}

/// The row (an assignment, bit i for column i) where `a` and `b` differ, or
/// `None` when they agree everywhere. Both must be ground.
pub fn first_difference(a: &Sem, b: &Sem, atoms: &Atoms) -> Option<u64> {
    let k = atoms.list.len();
    let words = if k <= 6 { 1 } else { 1usize << (k - 6) };
    let rows_in_word = if k < 6 { 1u64 << (1 << k) } else { 0 };
    let mask = if k < 6 { rows_in_word - 1 } else { u64::MAX };
    let ta = table(a, atoms, words);
    let tb = table(b, atoms, words);
    for (w, (x, y)) in ta.iter().zip(&tb).enumerate() {
        let diff = (x ^ y) & mask;
        if diff != 0 {
            return Some((w as u64) << 6 | diff.trailing_zeros() as u64);
        }
    }
    None
}

/// The column of atom `i`: row r is true when bit i of r is set.
fn column(i: usize, words: usize) -> Vec<u64> {
    const PATTERNS: [u64; 6] = [
        0xAAAA_AAAA_AAAA_AAAA,
        0xCCCC_CCCC_CCCC_CCCC,
        0xF0F0_F0F0_F0F0_F0F0,
        0xFF00_FF00_FF00_FF00,
        0xFFFF_0000_FFFF_0000,
        0xFFFF_FFFF_0000_0000,
    ];
    (0..words)
        .map(|w| {
            if i < 6 {
                PATTERNS[i]
            } else if w >> (i - 6) & 1 == 1 {
                u64::MAX
            } else {
                0
            }
        })
        .collect()
}

fn table(f: &Sem, atoms: &Atoms, words: usize) -> Vec<u64> {
    let combine = |xs: &[Sem], init: u64, op: fn(u64, u64) -> u64| {
        let mut acc = vec![init; words];
        for x in xs {
            for (a, b) in acc.iter_mut().zip(table(x, atoms, words)) {
                *a = op(*a, b);
            }
        }
        acc
    };
    let pair = |a: &Sem, b: &Sem, op: fn(u64, u64) -> u64| {
        let mut ta = table(a, atoms, words);
        for (x, y) in ta.iter_mut().zip(table(b, atoms, words)) {
            *x = op(*x, y);
        }
        ta
    };
    match f {
        Sem::Atom(p, args) => column(atoms.index[&(*p, args.as_slice())], words),
        Sem::Not(x) => table(x, atoms, words).into_iter().map(|w| !w).collect(),
        Sem::And(xs) => combine(xs, u64::MAX, |a, b| a & b),
        Sem::Or(xs) => combine(xs, 0, |a, b| a | b),
        Sem::Implies(a, b) => pair(a, b, |x, y| !x | y),
        Sem::Iff(a, b) => pair(a, b, |x, y| !(x ^ y)),
        Sem::Xor(a, b) => pair(a, b, |x, y| x ^ y),
        Sem::Quant(_, _, body) => table(body, atoms, words),
    }
}
