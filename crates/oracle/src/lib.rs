//! Independent oracles for tests of verdicts and measured rates: a direct
//! evaluator over the written formula, a regex matcher over the written
//! expression, and an SMT-LIB text encoding for Z3. None of them shares
//! code with the verifier.

use autoeval_generate::perturb::{self, RegexRewrite, Rewrite};
use autoeval_generate::rng::Rng;
use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_syntax::{
    parse_formula_exact, parse_regex_exact, Formula, Mode, Quantifier, Regex, Term,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Generated formulas of `kind` (small buckets, several batches).
pub fn items(kind: DatasetKind, per_bucket: usize, batches: u64) -> Vec<String> {
    let cfg = DatasetConfig {
        per_bucket,
        seed: 7,
        ..DatasetConfig::table1(kind)
    };
    (0..batches)
        .flat_map(|b| {
            generate_batch(&cfg, b)
                .expect("the dataset generates")
                .items
        })
        .map(|i| i.fs)
        .collect()
}

/// (φ0, φ1, rewritten-to-be-equivalent) pairs: one rewrite and one near miss per item.
pub fn logic_pairs(items: &[String], seed: u64) -> Vec<(Formula, Formula, bool)> {
    let mut rng = Rng::new(seed, "pairs", 0);
    let mut out = Vec::new();
    for text in items {
        let f =
            parse_formula_exact(text, Mode::Strict).expect("a formula the grammar emitted parses");
        for (pool, equivalent) in [
            (&Rewrite::EQUIVALENT[..], true),
            (&Rewrite::NEAR_MISS[..], false),
        ] {
            let r = *rng.pick(pool);
            if let Some(g) = perturb::logic(&f, r, &mut rng) {
                out.push((f.clone(), g, equivalent));
            }
        }
    }
    out
}

/// The same for regular expressions over {0, 1}.
pub fn regex_pairs(items: &[String], seed: u64) -> Vec<(Regex, Regex, bool)> {
    let mut rng = Rng::new(seed, "regex-pairs", 0);
    let sigma = ['0', '1'];
    let mut out = Vec::new();
    for text in items {
        let r = parse_regex_exact(text, Mode::Strict, &sigma)
            .expect("a regex the grammar emitted parses");
        for (pool, equivalent) in [
            (&RegexRewrite::EQUIVALENT[..], true),
            (&RegexRewrite::NEAR_MISS[..], false),
        ] {
            if let Some(s) = perturb::regex(&r, *rng.pick(pool), &sigma, &mut rng) {
                out.push((r.clone(), s, equivalent));
            }
        }
    }
    out
}

/// Propositions of a quantifier-free formula.
pub fn propositions(f: &Formula, out: &mut BTreeSet<String>) {
    f.visit(&mut |n| {
        if let Formula::Atom { name, args } = n {
            out.insert(atom_key(name, args));
        }
    });
}

fn atom_key(name: &str, args: &[Term]) -> String {
    if args.is_empty() {
        name.to_string()
    } else {
        let args: Vec<String> = args.iter().map(ToString::to_string).collect();
        format!("{name}({})", args.join(","))
    }
}

/// Truth of a quantifier-free formula under `env` (atoms keyed as in [`propositions`]).
pub fn eval_pl(f: &Formula, env: &HashMap<String, bool>) -> bool {
    match f {
        Formula::Atom { name, args } => env[&atom_key(name, args)],
        Formula::Equal(..) => panic!("an equation is not propositional"),
        Formula::Not(x) => !eval_pl(x, env),
        Formula::Group(x) => eval_pl(x, env),
        Formula::And(xs) => xs.iter().all(|x| eval_pl(x, env)),
        Formula::Or(xs) => xs.iter().any(|x| eval_pl(x, env)),
        Formula::Implies(a, b) => !eval_pl(a, env) || eval_pl(b, env),
        Formula::Iff(a, b) => eval_pl(a, env) == eval_pl(b, env),
        Formula::Xor(a, b) => eval_pl(a, env) != eval_pl(b, env),
        Formula::Quant { body, .. } => eval_pl(body, env),
    }
}

/// Truth of a quantifier-free formula in row `row` of the table over `atoms`.
fn eval_row(f: &Formula, atoms: &[String], row: u64) -> bool {
    match f {
        Formula::Atom { name, args } => {
            let key = atom_key(name, args);
            let i = atoms.iter().position(|a| *a == key).unwrap_or(0);
            row >> i & 1 == 1
        }
        Formula::Equal(..) => panic!("an equation is not propositional"),
        Formula::Not(x) => !eval_row(x, atoms, row),
        Formula::Group(x) | Formula::Quant { body: x, .. } => eval_row(x, atoms, row),
        Formula::And(xs) => xs.iter().all(|x| eval_row(x, atoms, row)),
        Formula::Or(xs) => xs.iter().any(|x| eval_row(x, atoms, row)),
        Formula::Implies(a, b) => !eval_row(a, atoms, row) || eval_row(b, atoms, row),
        Formula::Iff(a, b) => eval_row(a, atoms, row) == eval_row(b, atoms, row),
        Formula::Xor(a, b) => eval_row(a, atoms, row) != eval_row(b, atoms, row),
    }
}

/// Exhaustive truth-table comparison, one assignment at a time.
pub fn pl_equivalent(a: &Formula, b: &Formula) -> bool {
    let mut atoms = BTreeSet::new();
    propositions(a, &mut atoms);
    propositions(b, &mut atoms);
    let atoms: Vec<String> = atoms.into_iter().collect();
    (0u64..1 << atoms.len()).all(|row| eval_row(a, &atoms, row) == eval_row(b, &atoms, row))
}

/// Whether `r` matches all of `w` (at most 63 symbols): the set of
/// positions reachable after each part, as a bit mask.
pub fn matches(r: &Regex, w: &[char]) -> bool {
    ends(r, w, 1) >> w.len() & 1 == 1
}

fn ends(r: &Regex, w: &[char], starts: u64) -> u64 {
    match r {
        Regex::Epsilon => starts,
        Regex::Symbol(c) => (0..w.len())
            .filter(|&i| starts >> i & 1 == 1 && w[i] == *c)
            .fold(0, |acc, i| acc | 1 << (i + 1)),
        Regex::Group(x) => ends(x, w, starts),
        Regex::Concat(xs) => xs.iter().fold(starts, |s, x| ends(x, w, s)),
        Regex::Union(xs) => xs.iter().fold(0, |acc, x| acc | ends(x, w, starts)),
        Regex::Optional(x) => ends(x, w, starts) | starts,
        Regex::Star(x) | Regex::Plus(x) => {
            let mut all = if matches!(r, Regex::Star(_)) {
                starts
            } else {
                0
            };
            let mut frontier = ends(x, w, starts);
            while frontier & !all != 0 {
                all |= frontier;
                frontier = ends(x, w, frontier);
            }
            all
        }
    }
}

/// All words over `sigma` of length at most `n`, shortest first.
pub fn words(sigma: &[char], n: usize) -> Vec<Vec<char>> {
    let mut out = vec![vec![]];
    let mut layer = vec![vec![]];
    for _ in 0..n {
        layer = layer
            .iter()
            .flat_map(|w: &Vec<char>| sigma.iter().map(move |&c| [w.clone(), vec![c]].concat()))
            .collect();
        out.extend(layer.iter().cloned());
    }
    out
}

/// SMT-LIB text for ¬(a ↔ b): a second encoding, written from the syntax tree.
pub fn smtlib(a: &Formula, b: &Formula) -> String {
    let mut preds: BTreeMap<String, usize> = BTreeMap::new();
    let mut consts: BTreeSet<String> = BTreeSet::new();
    let ea = smt(a, &mut Vec::new(), &mut preds, &mut consts);
    let eb = smt(b, &mut Vec::new(), &mut preds, &mut consts);
    let mut out = String::from("(declare-sort Obj 0)\n");
    for c in &consts {
        // A function is kept as `f#k`; a constant by its name alone.
        match c.split_once('#') {
            Some((_, k)) => {
                let k: usize = k.parse().expect("an arity");
                out += &format!("(declare-fun |f.{c}| ({}) Obj)\n", vec!["Obj"; k].join(" "));
            }
            None => out += &format!("(declare-const |o.{c}| Obj)\n"),
        }
    }
    for (p, k) in &preds {
        out += &format!(
            "(declare-fun |r.{p}| ({}) Bool)\n",
            vec!["Obj"; *k].join(" ")
        );
    }
    out += &format!("(assert (not (= {ea} {eb})))\n");
    out
}

fn smt(
    f: &Formula,
    scope: &mut Vec<String>,
    preds: &mut BTreeMap<String, usize>,
    consts: &mut BTreeSet<String>,
) -> String {
    match f {
        Formula::Atom { name, args } => {
            let key = format!("{name}#{}", args.len());
            preds.insert(key.clone(), args.len());
            if args.is_empty() {
                return format!("|r.{key}|");
            }
            let terms: Vec<String> = args.iter().map(|a| smt_term(a, scope, consts)).collect();
            format!("(|r.{key}| {})", terms.join(" "))
        }
        Formula::Equal(a, b) => format!(
            "(= {} {})",
            smt_term(a, scope, consts),
            smt_term(b, scope, consts)
        ),
        Formula::Group(x) => smt(x, scope, preds, consts),
        Formula::Not(x) => format!("(not {})", smt(x, scope, preds, consts)),
        Formula::And(xs) | Formula::Or(xs) => {
            let op = if matches!(f, Formula::And(_)) {
                "and"
            } else {
                "or"
            };
            let parts: Vec<String> = xs.iter().map(|x| smt(x, scope, preds, consts)).collect();
            format!("({op} {})", parts.join(" "))
        }
        Formula::Implies(a, b) => format!(
            "(=> {} {})",
            smt(a, scope, preds, consts),
            smt(b, scope, preds, consts)
        ),
        Formula::Iff(a, b) => format!(
            "(= {} {})",
            smt(a, scope, preds, consts),
            smt(b, scope, preds, consts)
        ),
        Formula::Xor(a, b) => format!(
            "(xor {} {})",
            smt(a, scope, preds, consts),
            smt(b, scope, preds, consts)
        ),
        Formula::Quant { q, vars, body } => {
            let n = scope.len();
            scope.extend(vars.iter().cloned());
            let inner = smt(body, scope, preds, consts);
            scope.truncate(n);
            let q = if *q == Quantifier::Forall {
                "forall"
            } else {
                "exists"
            };
            let binders: Vec<String> = vars.iter().map(|v| format!("(|v.{v}| Obj)")).collect();
            format!("({q} ({}) {inner})", binders.join(" "))
        }
    }
}

fn smt_term(t: &Term, scope: &[String], consts: &mut BTreeSet<String>) -> String {
    match t {
        Term::Name(a) if scope.contains(a) => format!("|v.{a}|"),
        Term::Name(a) => {
            consts.insert(a.clone());
            format!("|o.{a}|")
        }
        Term::Apply(app) => {
            let (function, args) = (&app.function, &app.args);
            let key = format!("{function}#{}", args.len());
            consts.insert(key.clone());
            let args: Vec<String> = args.iter().map(|a| smt_term(a, scope, consts)).collect();
            format!("(|f.{key}| {})", args.join(" "))
        }
    }
}

/// Decides ¬(a ↔ b) through the SMT-LIB text: Some(true) when equivalent.
pub fn z3_text_equivalent(a: &Formula, b: &Formula) -> Option<bool> {
    let cfg = z3::Config::new();
    let ctx = z3::Context::new(&cfg);
    let solver = z3::Solver::new(&ctx);
    let mut params = z3::Params::new(&ctx);
    params.set_u32("timeout", 20_000);
    solver.set_params(&params);
    solver.from_string(smtlib(a, b));
    match solver.check() {
        z3::SatResult::Unsat => Some(true),
        z3::SatResult::Sat => Some(false),
        z3::SatResult::Unknown => None,
    }
}

/// Truth of a first-order formula in a finite model given as the verifier's
/// counterexample: domain names, constants to elements, and the true atoms.
pub fn eval_in_model(
    f: &Formula,
    domain: &[String],
    constants: &BTreeMap<String, String>,
    true_atoms: &BTreeSet<String>,
    env: &mut Vec<(String, String)>,
) -> bool {
    match f {
        Formula::Atom { name, args } => {
            if args.is_empty() {
                return true_atoms.contains(name);
            }
            let vals: Vec<String> = args
                .iter()
                .map(|a| element_of(a, domain, constants, env))
                .collect();
            true_atoms.contains(&format!("{name}({})", vals.join(", ")))
        }
        Formula::Equal(a, b) => {
            element_of(a, domain, constants, env) == element_of(b, domain, constants, env)
        }
        Formula::Not(x) => !eval_in_model(x, domain, constants, true_atoms, env),
        Formula::Group(x) => eval_in_model(x, domain, constants, true_atoms, env),
        Formula::And(xs) => xs
            .iter()
            .all(|x| eval_in_model(x, domain, constants, true_atoms, env)),
        Formula::Or(xs) => xs
            .iter()
            .any(|x| eval_in_model(x, domain, constants, true_atoms, env)),
        Formula::Implies(a, b) => {
            !eval_in_model(a, domain, constants, true_atoms, env)
                || eval_in_model(b, domain, constants, true_atoms, env)
        }
        Formula::Iff(a, b) => {
            eval_in_model(a, domain, constants, true_atoms, env)
                == eval_in_model(b, domain, constants, true_atoms, env)
        }
        Formula::Xor(a, b) => {
            eval_in_model(a, domain, constants, true_atoms, env)
                != eval_in_model(b, domain, constants, true_atoms, env)
        }
        Formula::Quant { q, vars, body } => {
            quantify(*q, vars, body, domain, constants, true_atoms, env)
        }
    }
}

/// The element a term denotes in the model: a function's value on a tuple
/// is listed among the constants as `f(e0, e1)`.
fn element_of(
    t: &Term,
    domain: &[String],
    constants: &BTreeMap<String, String>,
    env: &[(String, String)],
) -> String {
    let key = match t {
        Term::Name(a) => match env.iter().rev().find(|(v, _)| v == a) {
            Some((_, e)) => return e.clone(),
            None => a.clone(),
        },
        Term::Apply(app) => {
            let (function, args) = (&app.function, &app.args);
            let vals: Vec<String> = args
                .iter()
                .map(|a| element_of(a, domain, constants, env))
                .collect();
            format!("{function}({})", vals.join(", "))
        }
    };
    constants
        .get(&key)
        .cloned()
        .unwrap_or_else(|| domain[0].clone())
}

fn quantify(
    q: Quantifier,
    vars: &[String],
    body: &Formula,
    domain: &[String],
    constants: &BTreeMap<String, String>,
    true_atoms: &BTreeSet<String>,
    env: &mut Vec<(String, String)>,
) -> bool {
    let Some((v, rest)) = vars.split_first() else {
        return eval_in_model(body, domain, constants, true_atoms, env);
    };
    let mut results = domain.iter().map(|e| {
        env.push((v.clone(), e.clone()));
        let r = quantify(q, rest, body, domain, constants, true_atoms, env);
        env.pop();
        r
    });
    if q == Quantifier::Forall {
        results.all(|r| r)
    } else {
        results.any(|r| r)
    }
}
