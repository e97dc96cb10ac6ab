//! First-order equivalence through Z3: ¬(φ0 ↔ φ1) over one uninterpreted
//! sort, constants as sort constants, functions as uninterpreted functions
//! on it, predicates as uninterpreted functions to Bool, and equations as
//! Z3's own equality. Each check gets its own context, a wall-clock timeout
//! and a resource limit.

use crate::sem::{Sem, Signature, Term};
use crate::structure::Structure;
use crate::{Counterexample, Method, Outcome, Verdict};
use autoeval_syntax::Quantifier;
use std::collections::{BTreeMap, HashMap};
use z3::ast::{Ast, Bool, Dynamic};
use z3::{Config, Context, FuncDecl, Model, Params, SatResult, Solver, Sort, Symbol};

pub use autoeval_proto::ProverLimits;

/// A fresh constant of `sort`.
fn constant<'ctx>(ctx: &'ctx Context, name: &str, sort: &Sort<'ctx>) -> Dynamic<'ctx> {
    FuncDecl::new(ctx, name, &[], sort).apply(&[])
}

struct Encoder<'ctx> {
    ctx: &'ctx Context,
    sort: Sort<'ctx>,
    constants: Vec<Dynamic<'ctx>>,
    predicates: Vec<FuncDecl<'ctx>>,
    functions: Vec<FuncDecl<'ctx>>,
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
        let functions = sig
            .functions
            .iter()
            .map(|(name, arity)| {
                let domain: Vec<&Sort> = vec![&sort; *arity];
                FuncDecl::new(ctx, format!("f:{name}/{arity}"), &domain, &sort)
            })
            .collect();
        Encoder {
            ctx,
            sort,
            constants,
            predicates,
            functions,
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
            Term::Apply(f, args) => {
                let args: Vec<Dynamic> = args.iter().map(|a| self.term(a)).collect();
                let refs: Vec<&dyn Ast> = args.iter().map(|a| a as &dyn Ast).collect();
                self.functions[*f as usize].apply(&refs)
            }
        }
    }

    /// The formula as a Z3 term; an atom Z3 cannot type is an error, never a truth value.
    fn encode(&mut self, f: &Sem) -> Result<Bool<'ctx>, String> {
        Ok(match f {
            Sem::Atom(p, args) => {
                let args: Vec<Dynamic> = args.iter().map(|t| self.term(t)).collect();
                let refs: Vec<&dyn Ast> = args.iter().map(|a| a as &dyn Ast).collect();
                let decl = self
                    .predicates
                    .get(*p as usize)
                    .ok_or_else(|| format!("predicate #{p} is not in the signature"))?;
                decl.apply(&refs).as_bool().ok_or_else(|| {
                    format!(
                        "predicate #{p} applied to {} arguments is not Boolean",
                        refs.len()
                    )
                })?
            }
            Sem::Equal(a, b) => self.term(a)._eq(&self.term(b)),
            Sem::Not(x) => self.encode(x)?.not(),
            Sem::And(xs) => {
                let parts = xs
                    .iter()
                    .map(|x| self.encode(x))
                    .collect::<Result<Vec<_>, _>>()?;
                Bool::and(self.ctx, &parts.iter().collect::<Vec<_>>())
            }
            Sem::Or(xs) => {
                let parts = xs
                    .iter()
                    .map(|x| self.encode(x))
                    .collect::<Result<Vec<_>, _>>()?;
                Bool::or(self.ctx, &parts.iter().collect::<Vec<_>>())
            }
            Sem::Implies(a, b) => self.encode(a)?.implies(&self.encode(b)?),
            Sem::Iff(a, b) => self.encode(a)?.iff(&self.encode(b)?),
            Sem::Xor(a, b) => self.encode(a)?.xor(&self.encode(b)?),
            Sem::Quant(q, v, body) => {
                let var = self.term(&Term::Var(*v));
                let body = self.encode(body)?;
                match q {
                    Quantifier::Forall => z3::ast::forall_const(self.ctx, &[&var], &[], &body),
                    Quantifier::Exists => z3::ast::exists_const(self.ctx, &[&var], &[], &body),
                }
            }
        })
    }
}

/// Decides `a ≡ b` with Z3 within `limits`.
///
/// Each try gets a context of its own. A context reused across checks
/// (push, check, pop) saves a few milliseconds a check, but it carries what
/// earlier checks taught it: a hard pair is then decided or left undecided
/// depending on which checks the thread ran before, so two runs that spread
/// the same checks differently (a fleet and one machine) would disagree on
/// it, and on the counterexample found. On fresh contexts the outcome is a
/// function of the pair alone.
///
/// Z3's incremental solver, used first, decides most pairs soonest; a pair
/// it leaves undecided is tried once more with its one-shot solver, whose
/// preprocessing decides some of those (and the reverse happens too).
pub fn z3_equivalence(a: &Sem, b: &Sem, sig: &Signature, limits: ProverLimits) -> Outcome {
    let first = on_fresh_context(a, b, sig, limits, true);
    if !matches!(first.verdict, Verdict::Timeout | Verdict::Unknown) {
        return first;
    }
    let second = on_fresh_context(a, b, sig, limits, false);
    if !matches!(second.verdict, Verdict::Timeout | Verdict::Unknown) {
        return second;
    }
    let why = |o: &Outcome| o.reason.clone().unwrap_or_default();
    Outcome {
        reason: Some(format!(
            "{} (incremental solver); {} (one-shot solver)",
            why(&first),
            why(&second)
        )),
        ..second
    }
}

/// One try on a new context: in Z3's incremental mode (a scope opened
/// first) or its one-shot mode.
fn on_fresh_context(
    a: &Sem,
    b: &Sem,
    sig: &Signature,
    limits: ProverLimits,
    incremental: bool,
) -> Outcome {
    let mut cfg = Config::new();
    cfg.set_model_generation(true);
    let ctx = Context::new(&cfg);
    let solver = Solver::new(&ctx);
    let mut params = Params::new(&ctx);
    params.set_u32("timeout", limits.timeout_ms);
    params.set_u32("rlimit", limits.rlimit);
    solver.set_params(&params);
    if incremental {
        solver.push();
    }
    decide(&solver, &ctx, a, b, sig)
}

fn decide<'ctx>(
    solver: &Solver<'ctx>,
    ctx: &'ctx Context,
    a: &Sem,
    b: &Sem,
    sig: &Signature,
) -> Outcome {
    let mut enc = Encoder::new(ctx, sig);
    let goal = match (enc.encode(a), enc.encode(b)) {
        (Ok(a), Ok(b)) => a.iff(&b).not(),
        (Err(e), _) | (_, Err(e)) => {
            return Outcome {
                reason: Some(format!("cannot encode the formulas for the prover: {e}")),
                ..Outcome::new(Verdict::VerifierError, Method::Z3)
            }
        }
    };
    solver.assert(&goal);
    match solver.check() {
        SatResult::Unsat => Outcome::new(Verdict::Equivalent, Method::Z3),
        SatResult::Sat => Outcome {
            counterexample: counterexample(solver, &enc, a, b, sig),
            ..Outcome::new(Verdict::NotEquivalent, Method::Z3)
        },
        SatResult::Unknown => {
            let why = solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".into());
            // The time and the resource budget are both budgets running out.
            let out_of_budget = ["timeout", "canceled", "resource"]
                .iter()
                .any(|w| why.contains(w));
            let verdict = if out_of_budget {
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

/// Largest domain tried when looking for a small counterexample.
const MAX_DOMAIN: usize = 4;
/// Largest number of predicate tuples read back from a model.
const MAX_TUPLES: usize = 4096;

/// A counterexample with every element named: the smallest domain (up to
/// [`MAX_DOMAIN`]) on which `goal` holds, read back as a [`Structure`] and
/// checked to tell `a` from `b`; Z3's own model text when none is found.
fn counterexample<'ctx>(
    solver: &Solver<'ctx>,
    enc: &Encoder<'ctx>,
    a: &Sem,
    b: &Sem,
    sig: &Signature,
) -> Option<Counterexample> {
    let raw = solver.get_model().map(|m| Counterexample::RawModel {
        model: m.to_string(),
    });
    for size in 1..=MAX_DOMAIN {
        solver.push();
        let elements: Vec<Dynamic> = (0..size)
            .map(|i| constant(enc.ctx, &format!("e:{i}"), &enc.sort))
            .collect();
        if size > 1 {
            let refs: Vec<&Dynamic> = elements.iter().collect();
            solver.assert(&Dynamic::distinct(enc.ctx, &refs));
        }
        // Every element is one of the named ones.
        let x = constant(enc.ctx, "e:any", &enc.sort);
        let choices: Vec<Bool> = elements.iter().map(|e| x._eq(e)).collect();
        let covered = Bool::or(enc.ctx, &choices.iter().collect::<Vec<_>>());
        solver.assert(&z3::ast::forall_const(enc.ctx, &[&x], &[], &covered));
        let found = match solver.check() {
            SatResult::Sat => solver
                .get_model()
                .and_then(|m| read_structure(&m, enc, &elements, sig)),
            _ => None,
        };
        solver.pop(1);
        if let Some(s) = found.filter(|s| s.eval(a) != s.eval(b)) {
            return Some(describe(&s, sig));
        }
    }
    raw
}

/// The interpretation of the signature in `m`, over the named `elements`.
fn read_structure<'ctx>(
    m: &Model<'ctx>,
    enc: &Encoder<'ctx>,
    elements: &[Dynamic<'ctx>],
    sig: &Signature,
) -> Option<Structure> {
    let size = elements.len();
    let element_of = |v: &Dynamic<'ctx>| -> Option<usize> {
        elements
            .iter()
            .position(|e| m.eval(&e._eq(v), true).and_then(|b| b.as_bool()) == Some(true))
    };
    let constants = enc
        .constants
        .iter()
        .map(|c| element_of(&m.eval(c, true)?))
        .collect::<Option<Vec<usize>>>()?;
    let tables = enc
        .predicates
        .iter()
        .zip(&sig.predicates)
        .map(|(decl, (_, arity))| {
            table(elements, *arity, |args| {
                m.eval(&decl.apply(args), true)?.as_bool()?.as_bool()
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let functions = enc
        .functions
        .iter()
        .zip(&sig.functions)
        .map(|(decl, (_, arity))| {
            table(elements, *arity, |args| {
                element_of(&m.eval(&decl.apply(args), true)?)
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Structure {
        size,
        constants,
        tables,
        functions,
    })
}

/// `value` on every tuple of `arity` elements, in the order
/// [`Structure`] keeps its tables (first argument most significant); `None`
/// past [`MAX_TUPLES`] tuples or where the model gives no value.
fn table<'ctx, T>(
    elements: &[Dynamic<'ctx>],
    arity: usize,
    value: impl Fn(&[&dyn Ast<'ctx>]) -> Option<T>,
) -> Option<Vec<T>> {
    let size = elements.len();
    let count = size
        .checked_pow(arity as u32)
        .filter(|&c| c <= MAX_TUPLES)?;
    (0..count)
        .map(|idx| {
            let args: Vec<&dyn Ast<'ctx>> = (0..arity)
                .rev()
                .map(|i| &elements[idx / size.pow(i as u32) % size] as &dyn Ast<'ctx>)
                .collect();
            value(&args)
        })
        .collect()
}

/// A structure in words: its domain, what each constant (and each function
/// on each tuple, as `f(e0)`) denotes, and the true atoms.
pub fn describe(s: &Structure, sig: &Signature) -> Counterexample {
    let element = |e: usize| format!("e{e}");
    let tuple = |idx: usize, arity: usize| -> String {
        let args: Vec<String> = (0..arity)
            .rev()
            .map(|i| element(idx / s.size.pow(i as u32) % s.size))
            .collect();
        args.join(", ")
    };
    let mut constants: BTreeMap<String, String> = sig
        .constants
        .iter()
        .zip(&s.constants)
        .map(|(name, &e)| (name.clone(), element(e)))
        .collect();
    for ((name, arity), table) in sig.functions.iter().zip(&s.functions) {
        for (idx, &value) in table.iter().enumerate() {
            constants.insert(format!("{name}({})", tuple(idx, *arity)), element(value));
        }
    }
    let mut true_atoms = Vec::new();
    for ((name, arity), table) in sig.predicates.iter().zip(&s.tables) {
        for (idx, &value) in table.iter().enumerate() {
            if !value {
                continue;
            }
            if *arity == 0 {
                true_atoms.push(name.clone());
            } else {
                true_atoms.push(format!("{name}({})", tuple(idx, *arity)));
            }
        }
    }
    Counterexample::Model {
        domain: (0..s.size).map(element).collect(),
        constants,
        true_atoms,
    }
}
