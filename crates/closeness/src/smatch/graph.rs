//! A formula as a semantic graph of the kind Smatch compares: a node per
//! quantifier, connective, negation, predicate occurrence and term, with
//! labelled edges between them. Every bound variable is one node, reached
//! from its quantifier and from every argument slot it fills, so the graph
//! shows which predicates share a variable; every constant is one node.

use autoeval_syntax::{Formula, Quantifier};
use std::collections::HashMap;

/// An edge's role, as in a Penman graph (`:scope`, `:op`, `:arg1`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Quantifier to the variable it binds.
    Var,
    /// Quantifier or negation to its scope.
    Scope,
    /// Commutative connective (∧, ∨, ↔, ⊕) to an operand.
    Op,
    /// Implication to its antecedent.
    Antecedent,
    /// Implication to its consequent.
    Consequent,
    /// Predicate to its argument in this position (from 1).
    Arg(u16),
}

/// A rooted, node-labelled, edge-labelled graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    /// Node labels: `forall`, `and`, a predicate name, a term name, ….
    pub labels: Vec<String>,
    /// Edges (from, role, to).
    pub edges: Vec<(usize, Role, usize)>,
    /// The top node.
    pub root: usize,
}

impl Graph {
    /// Its Smatch triples: one instance triple per node, one per edge, and
    /// the top triple.
    pub fn triples(&self) -> usize {
        self.labels.len() + self.edges.len() + 1
    }

    fn node(&mut self, label: &str) -> usize {
        self.labels.push(label.to_string());
        self.labels.len() - 1
    }

    /// The graph of `f`.
    pub fn of(f: &Formula) -> Graph {
        let mut g = Graph::default();
        let mut builder = Builder {
            bound: Vec::new(),
            constants: HashMap::new(),
        };
        g.root = builder.add(&mut g, f);
        g
    }
}

/// Which names are bound, innermost last, and the constants met so far.
struct Builder {
    bound: Vec<(String, usize)>,
    constants: HashMap<String, usize>,
}

impl Builder {
    fn add(&mut self, g: &mut Graph, f: &Formula) -> usize {
        match f {
            Formula::Group(inner) => self.add(g, inner),
            Formula::Atom { name, args } => {
                let n = g.node(name);
                for (i, arg) in args.iter().enumerate() {
                    let term = self.term(g, &arg.text());
                    g.edges.push((n, Role::Arg(i as u16 + 1), term));
                }
                n
            }
            Formula::Equal(a, b) => {
                let n = g.node("=");
                for (i, side) in [a, b].into_iter().enumerate() {
                    let term = self.term(g, &side.text());
                    g.edges.push((n, Role::Arg(i as u16 + 1), term));
                }
                n
            }
            Formula::Not(inner) => self.unary(g, "not", inner),
            Formula::And(xs) => self.commutative(g, "and", xs.iter()),
            Formula::Or(xs) => self.commutative(g, "or", xs.iter()),
            Formula::Iff(a, b) => self.commutative(g, "iff", [&**a, &**b].into_iter()),
            Formula::Xor(a, b) => self.commutative(g, "xor", [&**a, &**b].into_iter()),
            Formula::Implies(a, b) => {
                let n = g.node("implies");
                let (a, b) = (self.add(g, a), self.add(g, b));
                g.edges.push((n, Role::Antecedent, a));
                g.edges.push((n, Role::Consequent, b));
                n
            }
            Formula::Quant { q, vars, body } => {
                let label = match q {
                    Quantifier::Forall => "forall",
                    Quantifier::Exists => "exists",
                };
                // ∀x y φ is ∀x ∀y φ: one quantifier node per variable.
                let mut top = None;
                let mut parent: Option<usize> = None;
                for v in vars {
                    let n = g.node(label);
                    let var = g.node(v);
                    g.edges.push((n, Role::Var, var));
                    self.bound.push((v.clone(), var));
                    if let Some(p) = parent {
                        g.edges.push((p, Role::Scope, n));
                    }
                    top.get_or_insert(n);
                    parent = Some(n);
                }
                let scope = self.add(g, body);
                self.bound.truncate(self.bound.len() - vars.len());
                match parent {
                    Some(p) => {
                        g.edges.push((p, Role::Scope, scope));
                        top.unwrap_or(p)
                    }
                    None => scope,
                }
            }
        }
    }

    fn unary(&mut self, g: &mut Graph, label: &str, inner: &Formula) -> usize {
        let n = g.node(label);
        let child = self.add(g, inner);
        g.edges.push((n, Role::Scope, child));
        n
    }

    fn commutative<'a>(
        &mut self,
        g: &mut Graph,
        label: &str,
        operands: impl Iterator<Item = &'a Formula>,
    ) -> usize {
        let n = g.node(label);
        for x in operands {
            let child = self.add(g, x);
            g.edges.push((n, Role::Op, child));
        }
        n
    }

    /// The node of a term: the innermost binding variable, else the constant.
    fn term(&mut self, g: &mut Graph, name: &str) -> usize {
        if let Some((_, n)) = self.bound.iter().rev().find(|(v, _)| v == name) {
            return *n;
        }
        if let Some(&n) = self.constants.get(name) {
            return n;
        }
        let n = g.node(name);
        self.constants.insert(name.to_string(), n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, Mode};

    #[test]
    fn a_shared_variable_is_one_node() {
        let f = parse_formula_exact("∀x (Eel(x) → Fish(x, c))", Mode::Lenient).unwrap();
        let g = Graph::of(&f);
        assert_eq!(g.labels, ["forall", "x", "implies", "Eel", "Fish", "c"]);
        assert_eq!(
            g.edges,
            [
                (0, Role::Var, 1),
                (3, Role::Arg(1), 1),
                (4, Role::Arg(1), 1),
                (4, Role::Arg(2), 5),
                (2, Role::Antecedent, 3),
                (2, Role::Consequent, 4),
                (0, Role::Scope, 2),
            ]
        );
        assert_eq!((g.root, g.triples()), (0, 14));
    }
}
