//! The tool's own variant of Algorithm 1 (`--sampling prefer-new-trees`):
//! level-by-level expansion of the grammar's tree that reaches every
//! derivation tree with less bias toward the right than the published walk
//! ([`crate::algorithm1`]).
//!
//! Level `d` samples at most `branching` sentential forms of level `d − 1`.
//! Each sampled form yields its leaves and its children. A child applies one
//! production that still contains a nonterminal, at one open nonterminal;
//! the nonterminals left of it are frozen and later closed with
//! terminal-only productions, so every derivation tree is reachable (its
//! expanding nodes are visited in pre-order). At most `branching` children
//! are kept per form. A form whose open nonterminals can all be closed is a
//! leaf: it is closed `closings` times with uniformly drawn terminal-only
//! productions.

use crate::grammar::{t, Grammar, NT_BASE};
use crate::leaves::Leaves;
use crate::rng::Rng;

/// Marks a nonterminal that may no longer be expanded, only closed.
const FROZEN: u8 = 0x80;

/// Settings of one expansion.
#[derive(Clone, Copy, Debug)]
pub struct Expansion {
    /// Number of levels (the paper's `depth`).
    pub depth: usize,
    /// Forms sampled per level and children kept per form (the paper's `n`).
    pub branching: usize,
    /// Closed leaves drawn from each closable form.
    pub closings: usize,
    /// Most quantifiers a form may hold.
    pub max_quantifiers: usize,
}

fn is_nt(s: u8) -> bool {
    s >= NT_BASE
}

fn open_nt(s: u8) -> bool {
    is_nt(s) && s & FROZEN == 0
}

/// The closed leaves of the grammar's tree, in generation order.
pub fn leaves(grammar: &Grammar, start: u8, x: Expansion, rng: &mut Rng) -> Leaves {
    // A level is kept as (parent form, position, production) and only the
    // sampled children are built, so a level costs what is sampled from it.
    let mut parents: Vec<Vec<u8>> = vec![vec![start]];
    let mut level: Vec<(u32, u32, &[u8])> = vec![(0, u32::MAX, &[])];
    let mut out = Leaves::default();
    for generation in 1..=x.depth {
        let forms: Vec<Vec<u8>> = rng
            .sample_indices(level.len(), x.branching)
            .into_iter()
            .map(|i| {
                let (parent, pos, rhs) = level[i];
                let parent = &parents[parent as usize];
                if pos == u32::MAX {
                    parent.clone()
                } else {
                    apply(parent, pos as usize, rhs)
                }
            })
            .collect();
        let mut next = Vec::new();
        for (fi, form) in forms.iter().enumerate() {
            if form.iter().all(|&s| !open_nt(s) || grammar.closable(s)) {
                for _ in 0..x.closings {
                    out.push(&close(grammar, form, rng), generation);
                }
            }
            let quantifiers = form
                .iter()
                .filter(|&&s| s == t::FORALL || s == t::EXISTS)
                .count();
            let mut options: Vec<(u32, &[u8])> = Vec::new();
            for (pos, &sym) in form.iter().enumerate() {
                if !open_nt(sym) {
                    continue;
                }
                for rhs in grammar.expanding(sym) {
                    let adds_quantifier = rhs.contains(&t::FORALL) || rhs.contains(&t::EXISTS);
                    if !(adds_quantifier && quantifiers >= x.max_quantifiers) {
                        options.push((pos as u32, rhs));
                    }
                }
                if !grammar.closable(sym) {
                    break;
                }
            }
            for j in rng.sample_indices(options.len(), x.branching) {
                let (pos, rhs) = options[j];
                next.push((fi as u32, pos, rhs));
            }
        }
        if next.is_empty() {
            break;
        }
        parents = forms;
        level = next;
    }
    out
}

/// `form` with `rhs` at `pos` and the open nonterminals before `pos` frozen.
fn apply(form: &[u8], pos: usize, rhs: &[u8]) -> Vec<u8> {
    let mut child = Vec::with_capacity(form.len() + rhs.len());
    child.extend(
        form[..pos]
            .iter()
            .map(|&s| if is_nt(s) { s | FROZEN } else { s }),
    );
    child.extend_from_slice(rhs);
    child.extend_from_slice(&form[pos + 1..]);
    child
}

/// Every nonterminal of `form` replaced by a uniformly drawn terminal-only production.
fn close(grammar: &Grammar, form: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(form.len() * 2);
    for &s in form {
        if is_nt(s) {
            let rules = grammar.closing(s & !FROZEN);
            let rhs: &&Vec<u8> = rng.pick(&rules);
            out.extend_from_slice(rhs);
        } else {
            out.push(s);
        }
    }
    out
}
