//! The logical-equivalence score LE of LogicLLaMA (Yang et al., 2024), as
//! 003 uses it: quantifiers are set aside, every distinct atomic formula
//! becomes a proposition, and the score is the share of truth-table rows
//! on which the two formulas agree, under the binding of the candidate's
//! atoms to the ground truth's that agrees best. So a formula and an
//! equivalent rewrite score 1, and so do two formulas that differ only in
//! their names.

use autoeval_syntax::Formula;

/// Most propositions whose truth table is enumerated whole (2^20 rows).
/// Past it the share is taken over [`SAMPLED_ROWS`] rows drawn by a fixed
/// generator: an estimate with a standard error below 0.0005, exact 1 for
/// equivalent formulas, and the same on every run.
pub const EXACT_ATOMS: usize = 20;

/// Rows drawn when a table has more than [`EXACT_ATOMS`] propositions.
pub const SAMPLED_ROWS: u64 = 1 << 20;

/// Most row evaluations spent searching bindings: every binding is tried
/// when they all fit, otherwise those reached first, after the identity.
pub const SEARCH_BUDGET: u64 = 1 << 22;

/// A formula with its atoms numbered.
enum Node {
    Atom(usize),
    Not(Box<Node>),
    And(Vec<Node>),
    Or(Vec<Node>),
    Implies(Box<Node>, Box<Node>),
    Iff(Box<Node>, Box<Node>),
    Xor(Box<Node>, Box<Node>),
}

/// `f` with quantifiers and brackets set aside and each distinct atom
/// (name and arguments as written) numbered in order of first appearance.
fn compile(f: &Formula, atoms: &mut Vec<String>) -> Node {
    let mut sub = |g: &Formula| Box::new(compile(g, atoms));
    match f {
        Formula::Atom { .. } | Formula::Equal(..) => {
            // An atom or equation as written is one column.
            let key = f.to_string();
            let i = atoms.iter().position(|a| *a == key).unwrap_or_else(|| {
                atoms.push(key);
                atoms.len() - 1
            });
            Node::Atom(i)
        }
        Formula::Not(g) => Node::Not(sub(g)),
        Formula::Group(g) | Formula::Quant { body: g, .. } => compile(g, atoms),
        Formula::And(gs) => Node::And(gs.iter().map(|g| compile(g, atoms)).collect()),
        Formula::Or(gs) => Node::Or(gs.iter().map(|g| compile(g, atoms)).collect()),
        Formula::Implies(a, b) => Node::Implies(sub(a), sub(b)),
        Formula::Iff(a, b) => Node::Iff(sub(a), sub(b)),
        Formula::Xor(a, b) => Node::Xor(sub(a), sub(b)),
    }
}

/// The truth values of proposition `p` on 64 drawn rows (SplitMix64 of
/// the proposition and chunk, so every binding sees the same rows).
fn sampled_word(p: usize, chunk: u64) -> u64 {
    let mut z = (p as u64) << 40 ^ chunk;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The values of `n` on 64 rows at once, atom i reading `words[binding[i]]`
/// (one bit per row, so a truth table costs rows / 64 tree walks).
fn eval(n: &Node, binding: &[usize], words: &[u64]) -> u64 {
    match n {
        Node::Atom(i) => words[binding[*i]],
        Node::Not(g) => !eval(g, binding, words),
        Node::And(gs) => gs.iter().fold(u64::MAX, |w, g| w & eval(g, binding, words)),
        Node::Or(gs) => gs.iter().fold(0, |w, g| w | eval(g, binding, words)),
        Node::Implies(a, b) => !eval(a, binding, words) | eval(b, binding, words),
        Node::Iff(a, b) => !(eval(a, binding, words) ^ eval(b, binding, words)),
        Node::Xor(a, b) => eval(a, binding, words) ^ eval(b, binding, words),
    }
}

/// The search over bindings of the candidate's atoms, each to a reference
/// atom no other candidate atom has; only a candidate with more atoms than
/// the reference binds the extra ones to fresh propositions of their own
/// (otherwise a fresh proposition would make ¬p agree with p on half the rows).
struct Search {
    reference: Node,
    identity: Vec<usize>,
    candidate: Node,
    candidate_atoms: usize,
    fresh_allowed: usize,
    budget: u64,
    best: f64,
}

impl Search {
    /// The share of rows of the truth table over every proposition in use
    /// on which the two formulas agree.
    fn score(&mut self, binding: &[usize]) -> f64 {
        let width = binding
            .iter()
            .map(|&b| b + 1)
            .chain([self.identity.len()])
            .max()
            .unwrap_or(0);
        let sampled = width > EXACT_ATOMS;
        let rows = if sampled { SAMPLED_ROWS } else { 1u64 << width };
        self.budget = self.budget.saturating_sub(rows);
        let (chunks, mask) = if rows >= 64 {
            (rows / 64, u64::MAX)
        } else {
            (1, (1u64 << rows) - 1)
        };
        let word = if sampled {
            sampled_word
        } else {
            autoeval_syntax::logic::assignment_column
        };
        let mut words = vec![0u64; width];
        let agree: u64 = (0..chunks)
            .map(|chunk| {
                for (p, w) in words.iter_mut().enumerate() {
                    *w = word(p, chunk);
                }
                let r = eval(&self.reference, &self.identity, &words);
                let c = eval(&self.candidate, binding, &words);
                u64::from((!(r ^ c) & mask).count_ones())
            })
            .sum();
        agree as f64 / rows as f64
    }

    /// Tries the bindings of candidate atoms `binding.len()..`.
    fn explore(&mut self, binding: &mut Vec<usize>, used: &mut [bool], fresh: usize) {
        if self.budget == 0 || self.best == 1.0 {
            return;
        }
        if binding.len() == self.candidate_atoms {
            let s = self.score(binding);
            self.best = self.best.max(s);
            return;
        }
        let n = used.len();
        for target in 0..n {
            if !used[target] {
                used[target] = true;
                binding.push(target);
                self.explore(binding, used, fresh);
                binding.pop();
                used[target] = false;
            }
        }
        if fresh < self.fresh_allowed {
            binding.push(n + fresh);
            self.explore(binding, used, fresh + 1);
            binding.pop();
        }
    }
}

/// LE of `candidate` against `reference`, in [0, 1].
pub fn logical_equivalence(reference: &Formula, candidate: &Formula) -> f64 {
    let (mut r, mut c) = (Vec::new(), Vec::new());
    let reference = compile(reference, &mut r);
    let candidate = compile(candidate, &mut c);
    let fresh_allowed = c.len().saturating_sub(r.len());
    // First the identity, when it is a binding: an atom the reference also
    // has is itself, any other is its own proposition.
    let mut fresh = r.len();
    let identity: Vec<usize> = c
        .iter()
        .map(|a| {
            r.iter().position(|b| b == a).unwrap_or_else(|| {
                fresh += 1;
                fresh - 1
            })
        })
        .collect();
    let mut search = Search {
        reference,
        identity: (0..r.len()).collect(),
        candidate,
        candidate_atoms: c.len(),
        fresh_allowed,
        budget: SEARCH_BUDGET,
        best: 0.0,
    };
    if fresh - r.len() <= fresh_allowed {
        search.best = search.score(&identity);
    }
    let mut used = vec![false; r.len()];
    search.explore(&mut Vec::new(), &mut used, 0);
    search.best
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, Mode};

    fn le(a: &str, b: &str) -> f64 {
        let p = |s: &str| parse_formula_exact(s, Mode::Lenient).unwrap();
        logical_equivalence(&p(a), &p(b))
    }

    #[test]
    fn hand_computed_values() {
        // ∧ against ∨: they agree on FF and TT of the four rows.
        assert_eq!(le("p ∧ q", "p ∨ q"), 0.5);
        // p ∧ q against p: they differ only where p is true and q false.
        assert_eq!(le("p ∧ q", "p"), 0.75);
        // An equivalent rewrite, and a renaming, score 1.
        assert_eq!(le("∀x (A(x) → B(x))", "∀x (¬B(x) → ¬A(x))"), 1.0);
        assert_eq!(le("Tall(alice) ∧ ¬Rich(bob)", "P(c) ∧ ¬Q(d)"), 1.0);
        // ¬p against p: no row agrees, whatever the binding.
        assert_eq!(le("¬p", "p"), 0.0);
        // A candidate with an extra atom: q is fresh, p ∧ q against p agrees on 3 of 4 rows.
        assert_eq!(le("p", "p ∧ q"), 0.75);
        // Names do not matter, structure does: p ∧ q against r ∧ ¬s binds r→p, s→q.
        assert_eq!(le("p ∧ q", "r ∧ ¬s"), 0.5);
        // p ⊕ q against p ∨ q: they differ only on TT.
        assert_eq!(le("p ⊕ q", "p ∨ q"), 0.75);
        // Past 64 rows the table spans several words: with seven atoms ∧
        // and ∨ agree only on the all-false and all-true rows.
        assert_eq!(
            le("a ∧ b ∧ c ∧ d ∧ e ∧ f ∧ g", "a ∨ b ∨ c ∨ d ∨ e ∨ f ∨ g"),
            2.0 / 128.0
        );
        // Dropping the eighth conjunct differs on one row of 256.
        assert_eq!(
            le("a ∧ b ∧ c ∧ d ∧ e ∧ f ∧ g ∧ h", "a ∧ b ∧ c ∧ d ∧ e ∧ f ∧ g"),
            255.0 / 256.0
        );
    }
}
