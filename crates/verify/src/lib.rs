//! Deciding whether a model's formula φ1 means the same as the ground truth φ0.
//!
//! Logic goes through exact fast paths first: bit-parallel truth tables
//! when no quantifier is left (vacuous ones are dropped) and there are at
//! most [`truth_table::MAX_ATOMS`] atoms, then identical normal forms
//! ([`sem::Sem::normalized`]). Everything else goes to a [`Prover`]: Z3 on ¬(φ0 ↔ φ1), which
//! callers run in a separate, killable process. Regular expressions are
//! compared as languages with automata. A φ1 that does not parse is
//! [`Verdict::NonCompliant`], with the parser's reason.

pub mod names;
pub mod prover;
mod regex;
pub mod sem;
pub mod structure;
pub mod truth_table;

use autoeval_syntax::{parse_formula, parse_formula_exact, Formula, Mode};
pub use prover::ProverLimits;
pub use regex::{check_regex, public_regex_verdict};
use sem::Signature;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which language a pair is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// k-SAT formulas.
    Ksat,
    /// Propositional logic.
    Plogic,
    /// First-order logic (synthetic or English vocabulary).
    Fol,
    /// Regular expressions.
    Regex,
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Kind, String> {
        match s {
            "ksat" => Ok(Kind::Ksat),
            "plogic" => Ok(Kind::Plogic),
            "fol" | "fol-english" | "fol_human" => Ok(Kind::Fol),
            "regex" => Ok(Kind::Regex),
            other => Err(format!(
                "unknown kind {other:?}; expected ksat, plogic, fol or regex"
            )),
        }
    }
}

impl From<autoeval_proto::DatasetKind> for Kind {
    /// The verifier family of a dataset: both first-order datasets are `Fol`.
    fn from(dataset: autoeval_proto::DatasetKind) -> Kind {
        use autoeval_proto::DatasetKind as D;
        match dataset {
            D::Ksat => Kind::Ksat,
            D::Plogic => Kind::Plogic,
            D::Fol | D::FolEnglish => Kind::Fol,
            D::Regex => Kind::Regex,
        }
    }
}

/// The outcome of one check: the record's verdict, one type from the
/// verifier to the report (a check never yields `ApiFailure`).
pub use autoeval_proto::Verdict;

/// How a verdict was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The parser refused φ1 (or φ0).
    Parser,
    /// Identical normal forms.
    Syntactic,
    /// Exhaustive bit-parallel truth table.
    TruthTable,
    /// The Z3 prover.
    Z3,
    /// Language comparison of automata.
    Automata,
}

/// Evidence that two formulas differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Counterexample {
    /// Truth values of atoms under which exactly one formula holds.
    Assignment {
        /// Atom (as written) to truth value.
        assignment: BTreeMap<String, bool>,
    },
    /// A finite structure in which exactly one formula holds.
    Model {
        /// The elements, `e0`, `e1`, ….
        domain: Vec<String>,
        /// The element each object denotes, and each function on each tuple (`f(e0)`).
        constants: BTreeMap<String, String>,
        /// The atoms over the domain that are true; all others are false.
        true_atoms: Vec<String>,
    },
    /// The prover's own model text, when it could not be read back as a structure.
    RawModel {
        /// SMT-LIB model text.
        model: String,
    },
    /// The shortest string in exactly one of the two languages.
    Word {
        /// The string (possibly empty).
        word: String,
        /// `phi0` or `phi1`: which expression accepts it.
        accepted_by: String,
    },
}

/// A verdict with its reason, counterexample and method.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, for non-compliant, unknown and timeout verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Evidence, for not-equivalent verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
    /// How the verdict was reached.
    pub method: Method,
    /// True when names were compared with their case, because two of φ0's
    /// names differ only in case; otherwise case is ignored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_sensitive: bool,
}

impl Outcome {
    /// An outcome with no reason or counterexample.
    pub fn new(verdict: Verdict, method: Method) -> Outcome {
        Outcome {
            verdict,
            reason: None,
            counterexample: None,
            method,
            case_sensitive: false,
        }
    }

    fn because(verdict: Verdict, method: Method, reason: String) -> Outcome {
        Outcome {
            reason: Some(reason),
            ..Outcome::new(verdict, method)
        }
    }
}

/// Runs first-order checks that the fast paths cannot decide.
pub trait Prover: Sync {
    /// Decides `phi0 ≡ phi1` within `limits`.
    fn prove(&self, phi0: &Formula, phi1: &Formula, limits: ProverLimits) -> Outcome;
}

/// Z3 in the calling thread. A check that ignores its limits can hang the
/// caller, so services use an isolating prover instead; this one is for the
/// isolated process itself and for tests.
pub struct InProcessZ3;

impl Prover for InProcessZ3 {
    fn prove(&self, phi0: &Formula, phi1: &Formula, limits: ProverLimits) -> Outcome {
        let mut sig = Signature::default();
        let a = sig.resolve(phi0);
        let b = sig.resolve(phi1);
        prover::z3_equivalence(&a, &b, &sig, limits)
    }
}

/// How checks are run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Which connectives φ1 may use.
    pub mode: Mode,
    /// Prover budgets.
    pub limits: ProverLimits,
    /// The regex alphabet; symbols of φ0 are added to it.
    pub alphabet: Vec<char>,
    /// Largest DFA built for a regular expression.
    pub max_dfa_states: usize,
    /// Read a regular-expression φ1 as the public implementation reads it
    /// (`--protocol reference`): every character but `*`, `|`, `(` and `)`
    /// a symbol, in the alphabet or not.
    pub public_regex_reading: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            mode: Mode::Lenient,
            limits: ProverLimits::default(),
            alphabet: autoeval_syntax::alphabet(10),
            max_dfa_states: 100_000,
            public_regex_reading: false,
        }
    }
}

/// Whether `a` and `b` (of kind `ksat`, `plogic`, `fol` or `regex`) mean the
/// same, proved in this thread with the default limits; `None` when that
/// cannot be decided. This is the built-in model's judge (A4).
pub fn equivalent(kind: &str, a: &str, b: &str) -> Option<bool> {
    let kind: Kind = kind.parse().ok()?;
    match check(kind, a, b, &Settings::default(), &InProcessZ3).verdict {
        Verdict::Equivalent => Some(true),
        Verdict::NotEquivalent => Some(false),
        _ => None,
    }
}

/// Checks one pair of texts: φ0 (the ground truth, parsed exactly) and φ1
/// (a model's answer, parsed tolerantly).
pub fn check(
    kind: Kind,
    phi0: &str,
    phi1: &str,
    settings: &Settings,
    prover: &dyn Prover,
) -> Outcome {
    if kind == Kind::Regex {
        return check_regex(phi0, phi1, settings);
    }
    let f0 = match parse_formula_exact(phi0, Mode::Lenient) {
        Ok(f) => f,
        Err(e) => {
            return Outcome::because(
                Verdict::VerifierError,
                Method::Parser,
                format!("φ0 does not parse: {e}"),
            )
        }
    };
    match parse_formula(phi1, settings.mode) {
        Ok(parsed) => check_names_folded(&f0, &parsed.value, settings, prover),
        Err(e) => Outcome::because(Verdict::NonCompliant, Method::Parser, e.to_string()),
    }
}

/// Checks a logic answer as the public implementation reads it
/// (`--protocol reference`): φ0 and the raw answer both read by the one
/// public reading ([`autoeval_syntax::public::read_pair`]), which also holds
/// them to what the public prover refuses; the formulas it produced are
/// then decided here, not read again by another parser.
pub fn check_as_reference(
    phi0: &str,
    answer: &str,
    settings: &Settings,
    prover: &dyn Prover,
) -> Outcome {
    use autoeval_syntax::public::{clausified, read_pair, PairError};
    match read_pair(phi0, answer) {
        Ok((f0, f1)) => match clausified::sides(&f1) {
            None => check_names_folded(&f0, &f1, settings, prover),
            Some(sides) => check_sides(&f0, &sides, settings, prover),
        },
        Err(PairError::Phi1(e)) => {
            Outcome::because(Verdict::NonCompliant, Method::Parser, e.to_string())
        }
        Err(PairError::Phi0(e)) => Outcome::because(
            Verdict::VerifierError,
            Method::Parser,
            format!("φ0 does not parse as the public code reads it: {e}"),
        ),
    }
}

/// Checks φ0 against an answer whose quantifier binds a name standing as a
/// formula, as the public prover decides it ([`clausified`]): equivalent
/// when the answer assumed implies φ0 and φ0 implies the answer denied,
/// each implication `a → b` checked as `a ≡ a ∧ b`.
///
/// [`clausified`]: autoeval_syntax::public::clausified
fn check_sides(
    f0: &Formula,
    sides: &autoeval_syntax::public::clausified::Sides,
    settings: &Settings,
    prover: &dyn Prover,
) -> Outcome {
    let fold = names::fold_keeps_apart(f0);
    let named = |f: &Formula| if fold { names::folded(f) } else { f.clone() };
    let implies = |a: &Formula, b: &Formula| {
        let (a, b) = (named(a), named(b));
        let both = Formula::And(vec![a.clone(), b]);
        Outcome {
            case_sensitive: !fold,
            ..check_formulas(&a, &both, settings, prover)
        }
    };
    let assumed = implies(&sides.positive, f0);
    if assumed.verdict != Verdict::Equivalent {
        return assumed;
    }
    implies(f0, &sides.negative)
}

/// Checks two parsed formulas with names compared without case, as the
/// public implementation does, unless two of φ0's names differ only in case
/// (then exactly, and the outcome says so).
pub fn check_names_folded(
    f0: &Formula,
    f1: &Formula,
    settings: &Settings,
    prover: &dyn Prover,
) -> Outcome {
    if names::fold_keeps_apart(f0) {
        check_formulas(&names::folded(f0), &names::folded(f1), settings, prover)
    } else {
        Outcome {
            case_sensitive: true,
            ..check_formulas(f0, f1, settings, prover)
        }
    }
}

/// Checks two parsed formulas: fast paths first, then the prover.
pub fn check_formulas(
    f0: &Formula,
    f1: &Formula,
    settings: &Settings,
    prover: &dyn Prover,
) -> Outcome {
    // Without (non-vacuous) quantifiers a truth table is exact and cheapest.
    if let Some(atoms) = truth_table::Atoms::of(&[f0, f1]) {
        if atoms.list.len() <= truth_table::MAX_ATOMS {
            return match truth_table::first_difference(f0, f1, &atoms) {
                None => Outcome::new(Verdict::Equivalent, Method::TruthTable),
                Some(row) => Outcome {
                    counterexample: Some(assignment(row, &atoms)),
                    ..Outcome::new(Verdict::NotEquivalent, Method::TruthTable)
                },
            };
        }
    }
    let mut sig = Signature::default();
    let a = sig.resolve(f0);
    let b = sig.resolve(f1);
    if a.normalized() == b.normalized() {
        return Outcome::new(Verdict::Equivalent, Method::Syntactic);
    }
    prover.prove(f0, f1, settings.limits)
}

fn assignment(row: u64, atoms: &truth_table::Atoms) -> Counterexample {
    let assignment = atoms
        .list
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            let text = if args.is_empty() {
                name.to_string()
            } else {
                let args: Vec<String> = args.iter().map(|a| a.text().into_owned()).collect();
                format!("{name}({})", args.join(", "))
            };
            (text, row >> i & 1 == 1)
        })
        .collect();
    Counterexample::Assignment { assignment }
}
