//! Algorithm 1 of the paper: level-by-level expansion of the grammar's tree.
//!
//! Level `d` samples at most `branching` sentential forms of level `d − 1`.
//! Each sampled form yields its leaves and its children. A child applies one
//! production that still contains a nonterminal, at one open nonterminal;
//! the nonterminals left of it are frozen and later closed with
//! terminal-only productions, so every derivation tree is reachable (its
//! expanding nodes are visited in pre-order). At most `branching` children
//! are kept per form. A form whose open nonterminals can all be closed is a
//! leaf: it is closed `closings` times with uniformly drawn terminal-only
//! productions, or, as the paper's implementation of Algorithm 1 does
//! (`enumerate_closings`), its first `closings` closings in a depth-first
//! enumeration whose productions are shuffled each time a nonterminal is
//! reached: distinct, and sharing more of their structure than random ones.

use crate::grammar::{t, Grammar, NT_BASE};
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
    /// Enumerate a form's closings as Algorithm 1's implementation does
    /// instead of drawing them at random.
    pub enumerate_closings: bool,
    /// Most quantifiers a form may hold.
    pub max_quantifiers: usize,
}

fn is_nt(s: u8) -> bool {
    s >= NT_BASE
}

fn open_nt(s: u8) -> bool {
    is_nt(s) && s & FROZEN == 0
}

/// Closed leaves in one buffer: Algorithm 1 makes millions of short ones,
/// which as vectors of their own would cost more in headers than in symbols.
#[derive(Default)]
pub struct Leaves {
    symbols: Vec<u8>,
    ends: Vec<u32>,
}

impl Leaves {
    /// Adds a leaf.
    pub fn push(&mut self, leaf: &[u8]) {
        self.symbols.extend_from_slice(leaf);
        self.ends.push(self.symbols.len() as u32);
    }

    /// Leaf `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.symbols[start..self.ends[i] as usize]
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The leaves in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// The closed leaves of the grammar's tree, in generation order.
pub fn leaves(grammar: &Grammar, start: u8, x: Expansion, rng: &mut Rng) -> Leaves {
    // A level is kept as (parent form, position, production) and only the
    // sampled children are built, so a level costs what is sampled from it.
    let mut parents: Vec<Vec<u8>> = vec![vec![start]];
    let mut level: Vec<(u32, u32, &[u8])> = vec![(0, u32::MAX, &[])];
    let mut out = Leaves::default();
    // Each nonterminal's closing productions, looked up once: an
    // enumeration reaches them millions of times.
    let closings: Vec<Vec<&[u8]>> = grammar
        .nonterminals()
        .map(|nt| grammar.closing(nt).into_iter().map(Vec::as_slice).collect())
        .collect();
    for _ in 0..x.depth {
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
                if x.enumerate_closings {
                    let mut prefix = Vec::with_capacity(form.len() * 2);
                    let first = out.len();
                    let to = Closings {
                        rules: &closings,
                        n: x.closings,
                        first,
                    };
                    enumerate_closings(&to, form, rng, &mut prefix, &mut out);
                } else {
                    for _ in 0..x.closings {
                        out.push(&close(grammar, form, rng));
                    }
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

/// What an enumeration of closings draws on and how far it goes.
struct Closings<'a> {
    /// Closing productions by nonterminal, from `NT_BASE`.
    rules: &'a [Vec<&'a [u8]>],
    /// Closings wanted.
    n: usize,
    /// Leaves in `out` before this form's.
    first: usize,
}

/// Appends to `out` the first `n` closings of `form` in a depth-first
/// enumeration: each nonterminal's terminal-only productions are tried in
/// an order shuffled afresh each time it is reached, and the nonterminals
/// further left vary slowest.
fn enumerate_closings(
    to: &Closings,
    form: &[u8],
    rng: &mut Rng,
    prefix: &mut Vec<u8>,
    out: &mut Leaves,
) {
    if out.len() - to.first >= to.n {
        return;
    }
    let Some((&s, rest)) = form.split_first() else {
        out.push(prefix);
        return;
    };
    if !is_nt(s) {
        prefix.push(s);
        enumerate_closings(to, rest, rng, prefix, out);
        prefix.pop();
        return;
    }
    let rules = &to.rules[usize::from((s & !FROZEN) - NT_BASE)];
    let mut order: Vec<usize> = (0..rules.len()).collect();
    // Fisher–Yates, as Python's random.sample of the whole list.
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    for i in order {
        let at = prefix.len();
        prefix.extend_from_slice(rules[i]);
        enumerate_closings(to, rest, rng, prefix, out);
        prefix.truncate(at);
        if out.len() - to.first >= to.n {
            return;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar;

    #[test]
    fn algorithm_1_takes_the_first_n_distinct_closings_of_a_form() {
        let g = grammar::ksat(3);
        let p = NT_BASE + 1;
        // A clause of three open literals: 2³ closings.
        let form = [t::LP, p, t::OR, p, t::OR, p, t::RP];
        let mut rng = Rng::new(7, "ksat", 0);
        let rules: Vec<Vec<&[u8]>> = g
            .nonterminals()
            .map(|nt| g.closing(nt).into_iter().map(Vec::as_slice).collect())
            .collect();
        for n in [3, 8, 200] {
            let mut leaves = Leaves::default();
            let to = Closings {
                rules: &rules,
                n,
                first: 0,
            };
            enumerate_closings(&to, &form, &mut rng, &mut Vec::new(), &mut leaves);
            let out: Vec<Vec<u8>> = leaves.iter().map(<[u8]>::to_vec).collect();
            assert_eq!(out.len(), n.min(8), "n = {n}");
            let distinct: std::collections::HashSet<&Vec<u8>> = out.iter().collect();
            assert_eq!(distinct.len(), out.len(), "closings are distinct");
            assert!(out.iter().all(|leaf| leaf.iter().all(|&s| s < NT_BASE)));
            if n == 3 {
                // Depth first: the leftmost literal varies slowest, so the
                // first three closings share it.
                assert!(out.iter().all(|leaf| leaf[..2] == out[0][..2]), "{out:?}");
            }
        }
    }
}
