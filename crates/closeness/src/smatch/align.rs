//! The best alignment of a candidate graph's nodes to a reference graph's,
//! the one that matches the most triples. Finding it is NP-hard in general,
//! so the search is bounded: a greedy alignment improved by hill climbing
//! gives a first answer, then branch and bound looks for a better one for
//! at most [`SEARCH_STEPS`] steps. When the search ends within that bound
//! the alignment is optimal (as Smatch++ asks); otherwise the count is the
//! best found, a lower bound on the optimum, and the result says so.

use super::graph::{Graph, Role};
use std::collections::{HashMap, HashSet};

/// Most branch-and-bound steps (nodes of the search tree) per pair.
pub const SEARCH_STEPS: u64 = 10_000;

/// The triples of `candidate` matched under the best alignment found, and
/// whether the search proved it optimal.
pub fn best_match(reference: &Graph, candidate: &Graph) -> (usize, bool) {
    let problem = Problem::new(reference, candidate);
    let mut mapping = problem.greedy();
    problem.hill_climb(&mut mapping);
    let mut candidate_left = vec![0; problem.labels];
    for &l in &problem.candidate_label {
        candidate_left[l] += 1;
    }
    let mut reference_free = vec![0; problem.labels];
    for &l in &problem.reference_label {
        reference_free[l] += 1;
    }
    let mut search = Search {
        best: problem.matched(&mapping),
        steps: 0,
        complete: true,
        mapping: vec![None; candidate.labels.len()],
        used: vec![false; reference.labels.len()],
        candidate_left,
        reference_free,
        problem: &problem,
    };
    search.explore(0, 0);
    (search.best, search.complete)
}

/// A candidate-to-reference alignment, `None` for a node left unaligned.
type Mapping = Vec<Option<usize>>;

/// Terms (variables, constants) never gain from aligning with a formula
/// node: no role leads from a predicate to a formula or from a connective
/// to a term. So each aligns only within its kind.
fn kinds(g: &Graph) -> Vec<bool> {
    let mut term = vec![false; g.labels.len()];
    for &(_, role, b) in &g.edges {
        if matches!(role, Role::Arg(_) | Role::Var) {
            term[b] = true;
        }
    }
    term
}

/// The two graphs with what the search looks up often.
struct Problem<'a> {
    reference: &'a Graph,
    candidate: &'a Graph,
    reference_edges: HashSet<(usize, Role, usize)>,
    /// Per candidate node, the reference nodes of its kind.
    targets: Vec<Vec<usize>>,
    /// Per candidate node, the indices of the edges touching it.
    incident: Vec<Vec<usize>>,
    /// Candidate nodes, parents before children, so edges resolve early.
    order: Vec<usize>,
    /// Per position in `order`: the candidate edges both of whose ends are
    /// aligned once that node is.
    resolves: Vec<Vec<(usize, Role, usize)>>,
    /// Per position: the most edge triples that could match there and
    /// after, role by role (no more than the reference has of that role).
    edge_potential: Vec<usize>,
    /// The label id of each candidate node.
    candidate_label: Vec<usize>,
    /// The label id of each reference node.
    reference_label: Vec<usize>,
    /// How many distinct labels the two graphs have.
    labels: usize,
}

impl<'a> Problem<'a> {
    fn new(reference: &'a Graph, candidate: &'a Graph) -> Self {
        let n = candidate.labels.len();
        let mut order = vec![candidate.root];
        let mut seen = vec![false; n];
        seen[candidate.root] = true;
        let mut i = 0;
        while i < order.len() {
            for &(a, _, b) in &candidate.edges {
                if a == order[i] && !seen[b] {
                    seen[b] = true;
                    order.push(b);
                }
            }
            i += 1;
        }
        order.extend((0..n).filter(|&c| !seen[c]));
        let mut position = vec![0; n];
        for (i, &c) in order.iter().enumerate() {
            position[c] = i;
        }
        let mut resolves = vec![Vec::new(); n];
        let mut incident = vec![Vec::new(); n];
        for (k, &(a, role, b)) in candidate.edges.iter().enumerate() {
            resolves[position[a].max(position[b])].push((a, role, b));
            incident[a].push(k);
            if b != a {
                incident[b].push(k);
            }
        }
        let mut reference_roles: HashMap<Role, usize> = HashMap::new();
        for e in &reference.edges {
            *reference_roles.entry(e.1).or_default() += 1;
        }
        let mut edge_potential = vec![0; n + 1];
        let mut later: HashMap<Role, usize> = HashMap::new();
        for i in (0..n).rev() {
            for e in &resolves[i] {
                *later.entry(e.1).or_default() += 1;
            }
            edge_potential[i] = later
                .iter()
                .map(|(role, k)| (*k).min(reference_roles.get(role).copied().unwrap_or(0)))
                .sum();
        }
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut id = |l: &'a String| {
            let next = ids.len();
            *ids.entry(l.as_str()).or_insert(next)
        };
        let candidate_label: Vec<usize> = candidate.labels.iter().map(&mut id).collect();
        let reference_label: Vec<usize> = reference.labels.iter().map(&mut id).collect();
        let (rk, ck) = (kinds(reference), kinds(candidate));
        let targets = (0..n)
            .map(|c| (0..rk.len()).filter(|&r| rk[r] == ck[c]).collect())
            .collect();
        Problem {
            reference,
            candidate,
            reference_edges: reference.edges.iter().copied().collect(),
            targets,
            incident,
            order,
            resolves,
            edge_potential,
            candidate_label,
            reference_label,
            labels: ids.len(),
        }
    }

    fn edge_matches(&self, mapping: &Mapping, (a, role, b): (usize, Role, usize)) -> bool {
        match (mapping[a], mapping[b]) {
            (Some(x), Some(y)) => self.reference_edges.contains(&(x, role, y)),
            _ => false,
        }
    }

    /// Matched triples of candidate node `c` alone: its instance and top.
    fn own(&self, mapping: &Mapping, c: usize) -> usize {
        mapping[c].map_or(0, |r| {
            usize::from(self.candidate.labels[c] == self.reference.labels[r])
                + usize::from(c == self.candidate.root && r == self.reference.root)
        })
    }

    /// Matched triples touching any of `nodes` (each counted once).
    fn local(&self, mapping: &Mapping, nodes: &[usize]) -> usize {
        let mut edges: Vec<usize> = nodes
            .iter()
            .flat_map(|&c| self.incident[c].iter().copied())
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let own: usize = nodes.iter().map(|&c| self.own(mapping, c)).sum();
        own + edges
            .into_iter()
            .filter(|&k| self.edge_matches(mapping, self.candidate.edges[k]))
            .count()
    }

    /// Triples matched once the node at `position` is aligned to `r`,
    /// among those it resolves given the nodes aligned before it.
    fn gain(&self, mapping: &mut Mapping, position: usize, r: usize) -> usize {
        let c = self.order[position];
        mapping[c] = Some(r);
        let gain = self.own(mapping, c)
            + self.resolves[position]
                .iter()
                .filter(|&&e| self.edge_matches(mapping, e))
                .count();
        mapping[c] = None;
        gain
    }

    /// Every matched triple under `mapping`.
    fn matched(&self, mapping: &Mapping) -> usize {
        let own: usize = (0..mapping.len()).map(|c| self.own(mapping, c)).sum();
        own + self
            .candidate
            .edges
            .iter()
            .filter(|&&e| self.edge_matches(mapping, e))
            .count()
    }

    /// Each candidate node in turn to the free reference node of its kind
    /// that gains most, one of the same label first among equals.
    fn greedy(&self) -> Mapping {
        let mut mapping = vec![None; self.candidate.labels.len()];
        let mut used = vec![false; self.reference.labels.len()];
        for (position, &c) in self.order.iter().enumerate() {
            let best = self.targets[c]
                .iter()
                .copied()
                .filter(|&r| !used[r])
                .max_by_key(|&r| {
                    let same = self.candidate.labels[c] == self.reference.labels[r];
                    let gain = self.gain(&mut mapping, position, r);
                    (gain, same, std::cmp::Reverse(r))
                });
            if let Some(r) = best {
                used[r] = true;
                mapping[c] = Some(r);
            }
        }
        mapping
    }

    /// Moves one node to a free target of its kind, or swaps two nodes'
    /// targets, taking the best such step while one matches more triples.
    fn hill_climb(&self, mapping: &mut Mapping) {
        loop {
            let mut used = vec![false; self.reference.labels.len()];
            for r in mapping.iter().flatten() {
                used[*r] = true;
            }
            // (gain, node, new target, or the node to swap with)
            let mut best: Option<(usize, usize, Result<usize, usize>)> = None;
            for c in 0..mapping.len() {
                let before = self.local(mapping, &[c]);
                let old = mapping[c];
                for &r in self.targets[c].iter().filter(|&&r| !used[r]) {
                    mapping[c] = Some(r);
                    let after = self.local(mapping, &[c]);
                    if after > before + best.map_or(0, |b| b.0) {
                        best = Some((after - before, c, Ok(r)));
                    }
                }
                mapping[c] = old;
                for d in c + 1..mapping.len() {
                    if mapping[d].is_some_and(|r| !self.targets[c].contains(&r))
                        || old.is_some_and(|r| !self.targets[d].contains(&r))
                    {
                        continue;
                    }
                    let before = self.local(mapping, &[c, d]);
                    mapping.swap(c, d);
                    let after = self.local(mapping, &[c, d]);
                    mapping.swap(c, d);
                    if after > before + best.map_or(0, |b| b.0) {
                        best = Some((after - before, c, Err(d)));
                    }
                }
            }
            match best {
                Some((_, c, Ok(r))) => mapping[c] = Some(r),
                Some((_, c, Err(d))) => mapping.swap(c, d),
                None => return,
            }
        }
    }
}

/// Branch and bound over alignments, node by node in `order`.
struct Search<'p, 'a> {
    problem: &'p Problem<'a>,
    mapping: Mapping,
    used: Vec<bool>,
    /// Per label, candidate nodes not yet aligned and free reference nodes.
    candidate_left: Vec<usize>,
    reference_free: Vec<usize>,
    best: usize,
    steps: u64,
    complete: bool,
}

impl Search<'_, '_> {
    /// The most triples the nodes from `position` on could still match.
    fn potential(&self, position: usize) -> usize {
        let instances: usize = self
            .candidate_left
            .iter()
            .zip(&self.reference_free)
            .map(|(a, b)| *a.min(b))
            .sum();
        instances + usize::from(position == 0) + self.problem.edge_potential[position]
    }

    fn explore(&mut self, position: usize, matched: usize) {
        let p = self.problem;
        if matched + self.potential(position) <= self.best {
            return;
        }
        if position == p.order.len() {
            self.best = matched;
            return;
        }
        self.steps += 1;
        if self.steps > SEARCH_STEPS {
            self.complete = false;
            return;
        }
        let c = p.order[position];
        let mut options: Vec<(usize, usize)> = p.targets[c]
            .iter()
            .copied()
            .filter(|&r| !self.used[r])
            .map(|r| (p.gain(&mut self.mapping, position, r), r))
            .collect();
        options.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.candidate_left[p.candidate_label[c]] -= 1;
        for (gain, r) in options {
            self.used[r] = true;
            self.reference_free[p.reference_label[r]] -= 1;
            self.mapping[c] = Some(r);
            self.explore(position + 1, matched + gain);
            self.mapping[c] = None;
            self.reference_free[p.reference_label[r]] += 1;
            self.used[r] = false;
            if !self.complete {
                break;
            }
        }
        if self.complete {
            self.explore(position + 1, matched);
        }
        self.candidate_left[p.candidate_label[c]] += 1;
    }
}
