//! The benchmark's context-free grammars (paper Fig. 2) as symbol tables.
//!
//! A sentential form is a byte string: terminals are below [`NT_BASE`],
//! nonterminals at or above it. Placeholder terminals (`V` for a proposition,
//! variable or alphabet symbol, `P` for a predicate atom) get their
//! vocabulary when an item is built.

/// First byte value used for nonterminals.
pub const NT_BASE: u8 = 64;

/// The start symbol of every grammar here.
pub const START: u8 = NT_BASE;

/// Terminal symbols shared by all grammars.
pub mod t {
    /// `(`
    pub const LP: u8 = 1;
    /// `)`
    pub const RP: u8 = 2;
    /// `∧`
    pub const AND: u8 = 3;
    /// `∨`
    pub const OR: u8 = 4;
    /// `¬`
    pub const NOT: u8 = 5;
    /// A proposition, quantified variable or alphabet symbol.
    pub const V: u8 = 6;
    /// A predicate atom.
    pub const P: u8 = 7;
    /// `∀`
    pub const FORALL: u8 = 8;
    /// `∃`
    pub const EXISTS: u8 = 9;
    /// `*`
    pub const STAR: u8 = 10;
}

/// A grammar: for each nonterminal, its productions.
pub struct Grammar {
    /// `productions[nt - NT_BASE]` lists right-hand sides.
    pub productions: Vec<Vec<Vec<u8>>>,
}

impl Grammar {
    /// Right-hand sides of `nt`.
    pub fn rules(&self, nt: u8) -> &[Vec<u8>] {
        &self.productions[(nt - NT_BASE) as usize]
    }

    /// The nonterminals, from `NT_BASE`.
    pub fn nonterminals(&self) -> impl Iterator<Item = u8> {
        (0..self.productions.len()).map(|i| NT_BASE + i as u8)
    }

    /// True when `nt` has a production made of terminals only.
    pub fn closable(&self, nt: u8) -> bool {
        self.rules(nt)
            .iter()
            .any(|rhs| rhs.iter().all(|&s| s < NT_BASE))
    }

    /// Productions of `nt` whose right-hand side contains a nonterminal.
    pub fn expanding(&self, nt: u8) -> impl Iterator<Item = &Vec<u8>> {
        self.rules(nt)
            .iter()
            .filter(|rhs| rhs.iter().any(|&s| s >= NT_BASE))
    }

    /// Productions of `nt` made of terminals only.
    pub fn closing(&self, nt: u8) -> Vec<&Vec<u8>> {
        self.rules(nt)
            .iter()
            .filter(|rhs| rhs.iter().all(|&s| s < NT_BASE))
            .collect()
    }
}

use t::*;
const S: u8 = NT_BASE;

/// Propositional logic: S → (S ∧ S) | (S ∨ S) | (¬S) | ¬v | v.
pub fn propositional() -> Grammar {
    Grammar {
        productions: vec![vec![
            vec![LP, S, AND, S, RP],
            vec![LP, S, OR, S, RP],
            vec![LP, NOT, S, RP],
            vec![NOT, V],
            vec![V],
        ]],
    }
}

/// k-SAT: S → S ∧ S | (P ∨ … ∨ P) with `width` literals; P → ¬v | v.
pub fn ksat(width: usize) -> Grammar {
    let p = NT_BASE + 1;
    let mut clause = vec![LP, p];
    for _ in 1..width {
        clause.extend([OR, p]);
    }
    clause.push(RP);
    Grammar {
        productions: vec![vec![vec![S, AND, S], clause], vec![vec![NOT, V], vec![V]]],
    }
}

/// Prenex first-order logic: S → Q; Q → (∀v. Q) | (∃v. Q) | F;
/// F → (F ∧ F) | (F ∨ F) | (¬F) | ¬p | p.
pub fn first_order() -> Grammar {
    let q = NT_BASE + 1;
    let f = NT_BASE + 2;
    Grammar {
        productions: vec![
            vec![vec![q]],
            vec![
                vec![LP, FORALL, V, q, RP],
                vec![LP, EXISTS, V, q, RP],
                vec![f],
            ],
            vec![
                vec![LP, f, AND, f, RP],
                vec![LP, f, OR, f, RP],
                vec![LP, NOT, f, RP],
                vec![NOT, P],
                vec![P],
            ],
        ],
    }
}

/// Regular expressions: S → (S)K | S σ K | σ K; K → * | ε.
pub fn regex() -> Grammar {
    let k = NT_BASE + 1;
    Grammar {
        productions: vec![
            vec![vec![LP, S, RP, k], vec![S, V, k], vec![V, k]],
            vec![vec![STAR], vec![]],
        ],
    }
}
