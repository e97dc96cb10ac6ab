//! First-order equivalence through Z3: ¬(φ0 ↔ φ1) over one uninterpreted
//! sort, constants as sort constants and predicates as uninterpreted
//! functions to Bool. Each check gets its own context, a wall-clock timeout
//! and a resource limit.

use crate::sem::{Sem, Signature, Term};
use crate::structure::Structure;
use crate::{Counterexample, Method, Outcome, Verdict};
use autoeval_syntax::Quantifier;
use std::collections::{BTreeMap, HashMap};
use z3::ast::{Ast, Bool, Dynamic};
use z3::{Config, Context, FuncDecl, Model, Params, SatResult, Solver, Sort, Symbol};

/// Budgets of one Z3 check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProverLimits {
    /// Wall-clock limit Z3 is asked to respect, in milliseconds.
    pub timeout_ms: u32,
    /// Z3's deterministic resource limit (`rlimit`); 0 means none.
    pub rlimit: u32,
}

/// A fresh constant of `sort`.
fn constant<'ctx>(ctx: &'ctx Context, name: &str, sort: &Sort<'ctx>) -> Dynamic<'ctx> {
    FuncDecl::new(ctx, name, &[], sort).apply(&[])
}

struct Encoder<'ctx> {
    ctx: &'ctx Context,
    sort: Sort<'ctx>,
    constants: Vec<Dynamic<'ctx>>,
    predicates: Vec<FuncDecl<'ctx>>,
    vars: HashMap<u32, Dynamic<'ctx>>,
}

impl<'ctx> Encoder<'ctx> {
    fn new(ctx: &'ctx Context, sig: &Signature) -> Encoder<'ctx> {
        let sort = Sort::uninterpreted(ctx, Symbol::String("U".into()));
        let constants = sig
            .constants
            .iter()
            .map(|c| constant(ctx, &format!("c:{c}"), &sort))
            .collect();
        let predicates = sig
            .predicates
            .iter()
            .map(|(name, arity)| {
                let domain: Vec<&Sort> = vec![&sort; *arity];
                FuncDecl::new(ctx, format!("p:{name}/{arity}"), &domain, &Sort::bool(ctx))
            })
            .collect();
        Encoder {
            ctx,
            sort,
            constants,
            predicates,
            vars: HashMap::new(),
        }
    }

    fn term(&mut self, t: &Term) -> Dynamic<'ctx> {
        match t {
            Term::Const(c) => self.constants[*c as usize].clone(),
            Term::Var(v) => {
                let (ctx, sort) = (self.ctx, &self.sort);
                self.vars
                    .entry(*v)
                    .or_insert_with(|| constant(ctx, &format!("v:{v}"), sort))
                    .clone()
            }
        }
    }

    fn encode(&mut self, f: &Sem) -> Bool<'ctx> {
        match f {
            Sem::Atom(p, args) => {
                let args: Vec<Dynamic> = args.iter().map(|t| self.term(t)).collect();
                let refs: Vec<&dyn Ast> = args.iter().map(|a| a as &dyn Ast).collect();
                self.predicates[*p as usize]
                    .apply(&refs)
                    .as_bool()
                    .unwrap_or_else(|| Bool::from_bool(self.ctx, false))
            }
            Sem::Not(x) => self.encode(x).not(),
            Sem::And(xs) => {
                let parts: Vec<Bool> = xs.iter().map(|x| self.encode(x)).collect();
                Bool::and(self.ctx, &parts.iter().collect::<Vec<_>>())
            }
            Sem::Or(xs) => {
                let parts: Vec<Bool> = xs.iter().map(|x| self.encode(x)).collect();
                Bool::or(self.ctx, &parts.iter().collect::<Vec<_>>())
            }
            Sem::Implies(a, b) => self.encode(a).implies(&self.encode(b)),
            Sem::Iff(a, b) => self.encode(a).iff(&self.encode(b)),
            Sem::Xor(a, b) => self.encode(a).xor(&self.encode(b)),
            Sem::Quant(q, v, body) => {
                let var = self.term(&Term::Var(*v));
                let body = self.encode(body);
                match q {
                    Quantifier::Forall => z3::ast::forall_const(self.ctx, &[&var], &[], &body),
                    Quantifier::Exists => z3::ast::exists_const(self.ctx, &[&var], &[], &body),
                }
            }
        }
    }
}

/// Decides `a ≡ b` with Z3 within `limits`.
pub fn z3_equivalence(a: &Sem, b: &Sem, sig: &Signature, limits: ProverLimits) -> Outcome {
    let mut cfg = Config::new();
    cfg.set_model_generation(true);
    cfg.set_timeout_msec(limits.timeout_ms as u64);
    let ctx = Context::new(&cfg);
    let mut enc = Encoder::new(&ctx, sig);
    let goal = enc.encode(a).iff(&enc.encode(b)).not();
    let solver = Solver::new(&ctx);
    let mut params = Params::new(&ctx);
    params.set_u32("timeout", limits.timeout_ms);
    if limits.rlimit > 0 {
        params.set_u32("rlimit", limits.rlimit);
    }
    solver.set_params(&params);
    solver.assert(&goal);
    match solver.check() {
        SatResult::Unsat => Outcome::new(Verdict::Equivalent, Method::Z3),
        SatResult::Sat => {
            let counterexample = solver.get_model().map(|m| counterexample(&m, a, b, sig));
            Outcome {
                counterexample,
                ..Outcome::new(Verdict::NotEquivalent, Method::Z3)
            }
        }
        SatResult::Unknown => {
            let why = solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".into());
            let verdict = if why.contains("timeout") || why.contains("canceled") {
                Verdict::Timeout
            } else if why.contains("resource") {
                Verdict::Timeout
            } else {
                Verdict::Unknown
            };
            Outcome {
                reason: Some(format!("the prover gave up: {why}")),
                ..Outcome::new(verdict, Method::Z3)
            }
        }
    }
}

/// Largest number of predicate tuples read back from a model.
const MAX_TUPLES: usize = 4096;

/// One declaration of a model as Z3 prints it: a value, or a table of
/// argument tuples with a default.
#[derive(Default)]
struct Interpretation {
    value: Option<String>,
    entries: Vec<(Vec<String>, String)>,
    default: Option<String>,
}

/// Reads Z3's model text: `name -> value` lines and `name -> { args -> value … else -> value }` tables.
fn read_model(text: &str) -> Option<HashMap<String, Interpretation>> {
    let mut out: HashMap<String, Interpretation> = HashMap::new();
    let mut open: Option<String> = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line == "}" {
            open = None;
            continue;
        }
        let (lhs, rhs) = line.split_once(" -> ")?;
        let (lhs, rhs) = (lhs.replace('|', ""), rhs.trim().to_string());
        match &open {
            Some(decl) => {
                let interp = out.get_mut(decl)?;
                if lhs == "else" {
                    interp.default = Some(rhs);
                } else {
                    interp
                        .entries
                        .push((lhs.split_whitespace().map(String::from).collect(), rhs));
                }
            }
            None if rhs == "{" => {
                out.insert(lhs.clone(), Interpretation::default());
                open = Some(lhs);
            }
            None => {
                out.insert(
                    lhs,
                    Interpretation {
                        value: Some(rhs),
                        ..Interpretation::default()
                    },
                );
            }
        }
    }
    Some(out)
}

/// The model as a finite structure that is checked to tell `a` from `b`;
/// Z3's own text when that cannot be done.
fn counterexample(m: &Model, a: &Sem, b: &Sem, sig: &Signature) -> Counterexample {
    let text = m.to_string();
    structure_from_model(&text, a, b, sig)
        .map(|s| describe(&s, sig))
        .unwrap_or(Counterexample::RawModel { model: text })
}

fn structure_from_model(text: &str, a: &Sem, b: &Sem, sig: &Signature) -> Option<Structure> {
    let model = read_model(text)?;
    let is_element = |v: &str| v.contains("!val!");
    let mut elements: Vec<&str> = Vec::new();
    for interp in model.values() {
        let tuples = interp
            .entries
            .iter()
            .flat_map(|(args, v)| args.iter().map(String::as_str).chain([v.as_str()]));
        for v in interp.value.iter().map(String::as_str).chain(tuples) {
            if is_element(v) && !elements.contains(&v) {
                elements.push(v);
            }
        }
    }
    elements.sort_unstable();
    let named = elements.len();
    let truth = |v: &str| match v {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let constants: Vec<usize> = sig
        .constants
        .iter()
        .map(|c| {
            let v = model
                .get(&format!("c:{c}"))
                .and_then(|i| i.value.as_deref());
            v.and_then(|v| elements.iter().position(|e| *e == v))
                .unwrap_or(0)
        })
        .collect();
    // Elements the model leaves unnamed all behave alike, so at most one
    // more element is needed; try without and with it.
    for with_other in [false, true] {
        let size = named + with_other as usize;
        if size == 0 {
            continue;
        }
        let mut tables = Vec::with_capacity(sig.predicates.len());
        for (name, arity) in &sig.predicates {
            let count = size
                .checked_pow(*arity as u32)
                .filter(|&c| c <= MAX_TUPLES)?;
            let interp = model.get(&format!("p:{name}/{arity}"));
            let mut table = Vec::with_capacity(count);
            for idx in 0..count {
                let tuple: Vec<usize> = (0..*arity)
                    .rev()
                    .map(|i| idx / size.pow(i as u32) % size)
                    .collect();
                let value = match interp {
                    None => false,
                    Some(i) if *arity == 0 => truth(i.value.as_deref()?)?,
                    Some(i) => {
                        let hit = i.entries.iter().find(|(args, _)| {
                            args.len() == tuple.len()
                                && args
                                    .iter()
                                    .zip(&tuple)
                                    .all(|(arg, &e)| e < named && elements[e] == arg)
                        });
                        match hit {
                            Some((_, v)) => truth(v)?,
                            None => truth(i.default.as_deref()?)?,
                        }
                    }
                };
                table.push(value);
            }
            tables.push(table);
        }
        let s = Structure {
            size,
            constants: constants.clone(),
            tables,
        };
        if s.eval(a) != s.eval(b) {
            return Some(s);
        }
    }
    None
}

/// A structure in words: its domain, what each constant denotes, and the true atoms.
pub fn describe(s: &Structure, sig: &Signature) -> Counterexample {
    let element = |e: usize| format!("e{e}");
    let constants: BTreeMap<String, String> = sig
        .constants
        .iter()
        .zip(&s.constants)
        .map(|(name, &e)| (name.clone(), element(e)))
        .collect();
    let mut true_atoms = Vec::new();
    for ((name, arity), table) in sig.predicates.iter().zip(&s.tables) {
        for (idx, &value) in table.iter().enumerate() {
            if !value {
                continue;
            }
            if *arity == 0 {
                true_atoms.push(name.clone());
            } else {
                let args: Vec<String> = (0..*arity)
                    .rev()
                    .map(|i| element(idx / s.size.pow(i as u32) % s.size))
                    .collect();
                true_atoms.push(format!("{name}({})", args.join(", ")));
            }
        }
    }
    Counterexample::Model {
        domain: (0..s.size).map(element).collect(),
        constants,
        true_atoms,
    }
}
