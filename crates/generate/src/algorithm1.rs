//! Algorithm 1 as the paper's public implementation runs it
//! (`--sampling algorithm-1`, the default of both protocols).
//!
//! Level `d` samples at most `n` of the sentential forms level `d − 1`
//! produced. Each sampled form is walked depth first, left to right, with
//! every nonterminal's productions shuffled afresh each time the walk
//! reaches it:
//!
//! * a production made of terminals only closes that nonterminal, and the
//!   walk goes on to the next symbol; when it passes the form's end, the
//!   closed string is a leaf of level `d`;
//! * a production holding a nonterminal records a child form (the closed
//!   prefix, that production, the rest of the form as it is) and closes
//!   nothing, so the walk does not get past a nonterminal without
//!   terminal-only productions.
//!
//! The walk stops at its `n`-th leaf, and with it the recording of
//! children: which children a form has depends on how far its enumeration
//! got. A uniform sample of at most `n` of them goes on. Positions further
//! right are reached once per closing of everything before them, so the
//! tree grows mostly on the right, and a leaf's height stays below the
//! height of a tree grown evenly at the same operator count. Duplicates
//! are kept, among children and among leaves, as the public code keeps
//! them; items are made distinct only when buckets are filled.

use crate::grammar::{t, Grammar, NT_BASE};
use crate::leaves::Leaves;
use crate::rng::Rng;

/// Settings of one expansion.
#[derive(Clone, Copy, Debug)]
pub struct Walk {
    /// Number of levels (the paper's `depth`).
    pub depth: usize,
    /// Forms sampled per level, leaves per form and children kept per form
    /// (the paper's `n`).
    pub n: usize,
    /// Most quantifiers a form may hold (the public code has no such limit;
    /// unlimited by default).
    pub max_quantifiers: usize,
}

/// The leaves of every level, duplicates included, in generation order.
pub fn leaves(grammar: &Grammar, start: u8, x: Walk, rng: &mut Rng) -> Leaves {
    let mut out = Leaves::default();
    let mut forms: Vec<Vec<u8>> = vec![vec![start]];
    for level in 1..=x.depth {
        let mut next = Vec::new();
        for i in rng.sample_indices(forms.len(), x.n) {
            let mut walk = FormWalk::new(grammar, &forms[i], x, level, &mut out);
            walk.all(&forms[i], &mut Vec::new(), rng);
            next.extend(walk.children.kept);
        }
        if next.is_empty() {
            break;
        }
        forms = next;
    }
    out
}

/// One form's walk: the leaves it found and the children it recorded.
struct FormWalk<'a> {
    grammar: &'a Grammar,
    n: usize,
    level: usize,
    found: usize,
    out: &'a mut Leaves,
    children: Reservoir,
    /// True when the form may not gain another quantifier.
    quantifiers_full: bool,
}

impl<'a> FormWalk<'a> {
    fn new(grammar: &'a Grammar, form: &[u8], x: Walk, level: usize, out: &'a mut Leaves) -> Self {
        let quantifiers = form
            .iter()
            .filter(|&&s| s == t::FORALL || s == t::EXISTS)
            .count();
        FormWalk {
            grammar,
            n: x.n,
            level,
            found: 0,
            out,
            children: Reservoir::new(x.n),
            quantifiers_full: quantifiers >= x.max_quantifiers,
        }
    }

    /// Walks `items` after the closed `prefix`; true once `n` leaves are found.
    fn all(&mut self, items: &[u8], prefix: &mut Vec<u8>, rng: &mut Rng) -> bool {
        let Some((&symbol, rest)) = items.split_first() else {
            self.out.push(prefix, self.level);
            self.found += 1;
            return self.found >= self.n;
        };
        if symbol < NT_BASE {
            prefix.push(symbol);
            let done = self.all(rest, prefix, rng);
            prefix.pop();
            return done;
        }
        let rules = self.grammar.rules(symbol);
        // A fresh shuffle at every visit, as `random.sample(prods, len(prods))`.
        for i in rng.sample_indices(rules.len(), rules.len()) {
            let rhs = &rules[i];
            if rhs.iter().any(|&s| s >= NT_BASE) {
                let adds_quantifier = rhs.contains(&t::FORALL) || rhs.contains(&t::EXISTS);
                if !(adds_quantifier && self.quantifiers_full) {
                    self.children
                        .offer(rng, || [prefix.as_slice(), rhs, rest].concat());
                }
                continue;
            }
            let at = prefix.len();
            prefix.extend_from_slice(rhs);
            let done = self.all(rest, prefix, rng);
            prefix.truncate(at);
            if done {
                return true;
            }
        }
        false
    }
}

/// A uniform sample of at most `k` of the forms offered, built only when kept.
struct Reservoir {
    k: usize,
    offered: usize,
    kept: Vec<Vec<u8>>,
}

impl Reservoir {
    fn new(k: usize) -> Reservoir {
        Reservoir {
            k,
            offered: 0,
            kept: Vec::new(),
        }
    }

    fn offer(&mut self, rng: &mut Rng, build: impl FnOnce() -> Vec<u8>) {
        self.offered += 1;
        if self.kept.len() < self.k {
            self.kept.push(build());
        } else {
            let j = rng.below(self.offered);
            if j < self.k {
                self.kept[j] = build();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar;

    /// The leaves, the children kept and the number of children recorded.
    fn walk_one(
        g: &Grammar,
        form: &[u8],
        n: usize,
        seed: u64,
    ) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, usize) {
        let mut out = Leaves::default();
        let mut rng = Rng::new(seed, "walk", 0);
        let x = Walk {
            depth: 1,
            n,
            max_quantifiers: usize::MAX,
        };
        let mut walk = FormWalk::new(g, form, x, 1, &mut out);
        walk.all(form, &mut Vec::new(), &mut rng);
        let (children, offered) = (walk.children.kept, walk.children.offered);
        (out.iter().map(<[u8]>::to_vec).collect(), children, offered)
    }

    #[test]
    fn a_clause_yields_its_first_n_closings_depth_first() {
        let g = grammar::ksat(3);
        let p = NT_BASE + 1;
        let form = [t::LP, p, t::OR, p, t::OR, p, t::RP];
        for n in [3, 8, 200] {
            let (leaves, children, _) = walk_one(&g, &form, n, 7);
            assert_eq!(leaves.len(), n.min(8), "n = {n}");
            let distinct: std::collections::HashSet<&Vec<u8>> = leaves.iter().collect();
            assert_eq!(distinct.len(), leaves.len(), "closings are distinct");
            assert!(children.is_empty(), "literals only close");
            if n == 3 {
                // Depth first: the leftmost literal varies slowest.
                assert!(
                    leaves.iter().all(|l| l[..2] == leaves[0][..2]),
                    "{leaves:?}"
                );
            }
        }
    }

    #[test]
    fn children_close_everything_left_of_the_expanded_symbol() {
        let g = grammar::propositional();
        let s = grammar::START;
        // (S ∧ S): the first S has two closings, each followed by a visit of
        // the second S, whose three expanding productions are recorded each
        // time; the first S's three are recorded once.
        let form = [t::LP, s, t::AND, s, t::RP];
        let (leaves, children, _) = walk_one(&g, &form, 200, 3);
        assert_eq!(leaves.len(), 4);
        assert_eq!(children.len(), 3 + 2 * 3);
        let left_open = children.iter().filter(|c| c[1] == t::LP).count();
        assert_eq!(left_open, 3, "the first S's three: {children:?}");
        for child in &children {
            let first_nt = child.iter().position(|&c| c >= NT_BASE).unwrap();
            let expanded_right = child[first_nt..].iter().filter(|&&c| c >= NT_BASE).count();
            assert!(expanded_right >= 1);
            assert!(child[..first_nt].iter().all(|&c| c < NT_BASE));
        }
    }

    #[test]
    fn the_walk_stops_recording_at_its_nth_leaf() {
        let g = grammar::propositional();
        let s = grammar::START;
        let form = [t::LP, s, t::AND, s, t::RP];
        for seed in 0..20 {
            let (leaves, children, offered) = walk_one(&g, &form, 1, seed);
            assert_eq!(leaves.len(), 1);
            // Before the first leaf the walk met only the first S's
            // expanding productions ahead of its first closing, and the
            // second S's ahead of its first: at most 3 + 3, never the 9 of
            // the whole walk.
            assert!(offered <= 6, "seed {seed}: {offered} recorded");
            assert_eq!(children.len(), offered.min(1));
        }
    }

    #[test]
    fn a_nonterminal_without_closings_ends_the_walk() {
        let g = grammar::first_order();
        let q = NT_BASE + 1;
        let f = NT_BASE + 2;
        // (∀ v Q) ∧ F: Q cannot close, so F is never reached.
        let form = [t::LP, t::FORALL, t::V, q, t::RP, f];
        let (leaves, children, _) = walk_one(&g, &form, 200, 1);
        assert!(leaves.is_empty());
        assert_eq!(children.len(), 3, "Q's three productions: {children:?}");
        assert!(children.iter().all(|c| c.last() == Some(&f)));
    }
}
