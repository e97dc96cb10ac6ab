//! Formulas as meaning: names resolved to predicate symbols (keyed by name
//! and arity), constants and bound variables; parentheses gone.
//!
//! An argument is a variable when an enclosing quantifier binds its name and
//! a constant otherwise, so an unbound `x1` is a free constant: equivalence
//! must then hold for every value of it. A predicate used with two arities is
//! two different predicates, and likewise a function. A quantifier whose
//! variable does not occur in its scope is dropped: over a nonempty domain
//! it changes nothing.

use autoeval_syntax::{Formula, Quantifier};
use rustc_hash::FxHashMap as HashMap;

/// An argument of an atom or a side of an equation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    /// A bound variable, by its unique id.
    Var(u32),
    /// A constant, by its id in the [`Signature`].
    Const(u32),
    /// A function, by its id in the [`Signature`], applied to terms.
    Apply(u32, Vec<Term>),
}

/// A resolved formula.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sem {
    /// A predicate (or proposition, arity 0) applied to terms.
    Atom(u32, Vec<Term>),
    /// Two terms denote the same element.
    Equal(Term, Term),
    /// Negation.
    Not(Box<Sem>),
    /// Conjunction.
    And(Vec<Sem>),
    /// Disjunction.
    Or(Vec<Sem>),
    /// Implication.
    Implies(Box<Sem>, Box<Sem>),
    /// Biconditional.
    Iff(Box<Sem>, Box<Sem>),
    /// Exclusive or.
    Xor(Box<Sem>, Box<Sem>),
    /// One quantified variable.
    Quant(Quantifier, u32, Box<Sem>),
}

/// The names shared by the formulas being compared.
#[derive(Clone, Debug, Default)]
pub struct Signature {
    /// Predicates as (name, arity); propositions have arity 0.
    pub predicates: Vec<(String, usize)>,
    /// Constant (object) names.
    pub constants: Vec<String>,
    /// Functions as (name, arity), arity one or more.
    pub functions: Vec<(String, usize)>,
    pred_ids: HashMap<String, Vec<(usize, u32)>>,
    const_ids: HashMap<String, u32>,
    function_ids: HashMap<(String, usize), u32>,
    /// Number of variable ids handed out.
    pub variables: u32,
}

impl Signature {
    fn predicate(&mut self, name: &str, arity: usize) -> u32 {
        if let Some(&(_, id)) = self
            .pred_ids
            .get(name)
            .and_then(|v| v.iter().find(|(a, _)| *a == arity))
        {
            return id;
        }
        let id = self.predicates.len() as u32;
        self.predicates.push((name.to_string(), arity));
        self.pred_ids
            .entry(name.to_string())
            .or_default()
            .push((arity, id));
        id
    }

    fn constant(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.const_ids.get(name) {
            return id;
        }
        let id = self.constants.len() as u32;
        self.constants.push(name.to_string());
        self.const_ids.insert(name.to_string(), id);
        id
    }

    fn function(&mut self, name: &str, arity: usize) -> u32 {
        let key = (name.to_string(), arity);
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        let id = self.functions.len() as u32;
        self.functions.push(key.clone());
        self.function_ids.insert(key, id);
        id
    }

    /// A written term: a name bound in `scope` is that variable, any other
    /// name a constant.
    fn term(
        &mut self,
        t: &autoeval_syntax::Term,
        scope: &[(String, u32)],
        used: &mut [bool],
    ) -> Term {
        match t {
            autoeval_syntax::Term::Name(a) => match scope.iter().rev().find(|(n, _)| n == a) {
                Some(&(_, id)) => {
                    used[id as usize] = true;
                    Term::Var(id)
                }
                None => Term::Const(self.constant(a)),
            },
            autoeval_syntax::Term::Apply(app) => {
                let id = self.function(&app.function, app.args.len());
                let args = app.args.iter().map(|a| self.term(a, scope, used)).collect();
                Term::Apply(id, args)
            }
        }
    }

    /// Resolves a written formula against this signature.
    pub fn resolve(&mut self, f: &Formula) -> Sem {
        let mut scope = Vec::new();
        let mut used = Vec::new();
        self.resolve_in(f, &mut scope, &mut used)
    }

    fn resolve_in(
        &mut self,
        f: &Formula,
        scope: &mut Vec<(String, u32)>,
        used: &mut Vec<bool>,
    ) -> Sem {
        match f {
            Formula::Atom { name, args } => {
                let pred = self.predicate(name, args.len());
                let terms = args.iter().map(|a| self.term(a, scope, used)).collect();
                Sem::Atom(pred, terms)
            }
            Formula::Equal(a, b) => {
                Sem::Equal(self.term(a, scope, used), self.term(b, scope, used))
            }
            Formula::Group(x) => self.resolve_in(x, scope, used),
            Formula::Not(x) => Sem::Not(Box::new(self.resolve_in(x, scope, used))),
            Formula::And(xs) => {
                Sem::And(xs.iter().map(|x| self.resolve_in(x, scope, used)).collect())
            }
            Formula::Or(xs) => {
                Sem::Or(xs.iter().map(|x| self.resolve_in(x, scope, used)).collect())
            }
            Formula::Implies(a, b) | Formula::Iff(a, b) | Formula::Xor(a, b) => {
                let a = Box::new(self.resolve_in(a, scope, used));
                let b = Box::new(self.resolve_in(b, scope, used));
                match f {
                    Formula::Implies(..) => Sem::Implies(a, b),
                    Formula::Iff(..) => Sem::Iff(a, b),
                    _ => Sem::Xor(a, b),
                }
            }
            Formula::Quant { q, vars, body } => {
                let ids: Vec<u32> = vars
                    .iter()
                    .map(|v| {
                        let id = self.variables;
                        self.variables += 1;
                        used.resize(self.variables as usize, false);
                        scope.push((v.clone(), id));
                        id
                    })
                    .collect();
                let mut sem = self.resolve_in(body, scope, used);
                for &id in ids.iter().rev() {
                    scope.pop();
                    if used[id as usize] {
                        sem = Sem::Quant(*q, id, Box::new(sem));
                    }
                }
                sem
            }
        }
    }
}

impl Sem {
    /// A normal form for syntactic comparison: variables renumbered in binding
    /// order, double negations removed, ∧/∨ chains flattened, sorted and
    /// without repeats. Equal normal forms mean equivalent formulas.
    pub fn normalized(&self) -> Sem {
        let mut renames = HashMap::default();
        self.renamed(&mut renames).sorted()
    }

    fn renamed(&self, map: &mut HashMap<u32, u32>) -> Sem {
        match self {
            Sem::Atom(p, args) => Sem::Atom(*p, args.iter().map(|t| t.renamed(map)).collect()),
            Sem::Equal(a, b) => Sem::Equal(a.renamed(map), b.renamed(map)),
            Sem::Quant(q, v, body) => {
                let fresh = u32::MAX - map.len() as u32;
                map.insert(*v, fresh);
                Sem::Quant(*q, fresh, Box::new(body.renamed(map)))
            }
            Sem::Not(x) => Sem::Not(Box::new(x.renamed(map))),
            Sem::And(xs) => Sem::And(xs.iter().map(|x| x.renamed(map)).collect()),
            Sem::Or(xs) => Sem::Or(xs.iter().map(|x| x.renamed(map)).collect()),
            Sem::Implies(a, b) => Sem::Implies(Box::new(a.renamed(map)), Box::new(b.renamed(map))),
            Sem::Iff(a, b) => Sem::Iff(Box::new(a.renamed(map)), Box::new(b.renamed(map))),
            Sem::Xor(a, b) => Sem::Xor(Box::new(a.renamed(map)), Box::new(b.renamed(map))),
        }
    }

    fn sorted(self) -> Sem {
        match self {
            Sem::Not(x) => match x.sorted() {
                Sem::Not(inner) => *inner,
                other => Sem::Not(Box::new(other)),
            },
            Sem::And(xs) | Sem::Or(xs) if xs.len() == 1 => {
                xs.into_iter().next().map_or(Sem::And(vec![]), Sem::sorted)
            }
            Sem::And(xs) => Sem::And(flatten(xs, true)),
            Sem::Or(xs) => Sem::Or(flatten(xs, false)),
            Sem::Implies(a, b) => Sem::Implies(Box::new(a.sorted()), Box::new(b.sorted())),
            Sem::Iff(a, b) => Sem::Iff(Box::new(a.sorted()), Box::new(b.sorted())),
            Sem::Xor(a, b) => Sem::Xor(Box::new(a.sorted()), Box::new(b.sorted())),
            Sem::Quant(q, v, body) => Sem::Quant(q, v, Box::new(body.sorted())),
            atom => atom,
        }
    }
}

impl Term {
    fn renamed(&self, map: &HashMap<u32, u32>) -> Term {
        match self {
            Term::Var(v) => Term::Var(map.get(v).copied().unwrap_or(*v)),
            Term::Const(c) => Term::Const(*c),
            Term::Apply(f, args) => Term::Apply(*f, args.iter().map(|a| a.renamed(map)).collect()),
        }
    }
}

fn flatten(xs: Vec<Sem>, is_and: bool) -> Vec<Sem> {
    let mut out = Vec::with_capacity(xs.len());
    for x in xs {
        match (x.sorted(), is_and) {
            (Sem::And(ys), true) | (Sem::Or(ys), false) => out.extend(ys),
            (other, _) => out.push(other),
        }
    }
    out.sort();
    out.dedup();
    out
}
