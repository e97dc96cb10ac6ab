//! Reading an answer as the public implementation that produced the paper's
//! numbers reads it (`--protocol reference`), rule for rule: its text
//! substitutions, Python's lines and whitespace ([`python`]), its logic
//! library's reader with its recursion limit and beta-reduction ([`nltk`]),
//! and how the prover it hands both formulas to reads and refuses them
//! ([`prover9`]) and decides a bound name standing as a formula
//! ([`clausified`]); for regular expressions, the automaton tool it runs and
//! how it compares two automata ([`reg2dfa`]).
//!
//! There is no extraction: the whole answer is one formula or none. What
//! that library or that prover refused, this reading refuses with the reason
//! in words; what they accepted, it returns as a [`Formula`] of the same
//! structure (with equations and function terms where the prover takes
//! them), so the tool's own verifier decides it, without reading it again.

pub mod clausified;
mod nltk;
mod prover9;
mod python;
pub mod reg2dfa;

pub use prover9::clash;

use crate::error::{ParseError, Reason};
use crate::{Formula, Regex};

/// The public implementation's text substitutions before parsing
/// (`str_to_expr`), in its order: everything lowercased, its Unicode and
/// `v` spellings turned into words only where spaces surround them, newlines
/// deleted, brackets turned into parentheses.
pub fn substitute(answer: &str) -> String {
    let mut s = answer.to_lowercase();
    for (from, to) in [
        (" ∨ ", " or "),
        (" v ", " or "),
        (")v ", ") or "),
        (" v(", " or ("),
        (")v(", ") or ("),
        ("∧", " and "),
        ("¬", " not "),
        ("∀", " all "),
        ("∃", " exists "),
        ("\n", ""),
        ("[", "("),
        ("]", ")"),
        ("→", "->"),
        ("↔", "<->"),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// `text` substituted and read by the public logic library (`read_logic`):
/// every line Python's `splitlines` gives, stripped as Python strips, is
/// read unless it is empty or starts with `#`; any line it cannot read
/// fails the whole text, and the first line read is the expression.
fn expression(text: &str) -> Result<nltk::Expr, ParseError> {
    let text = substitute(text);
    let mut first = None;
    for line in python::splitlines(&text) {
        let line = python::strip(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let e = nltk::parse(line).map_err(|e| public(e.at, &e.why))?;
        first.get_or_insert(e);
    }
    first.ok_or_else(|| {
        public(
            0,
            "the answer has no line to read (the public code fails on it: list index out of range)",
        )
    })
}

/// The formula the prover reads for a beta-reduced expression.
fn prover_formula(simplified: &nltk::Expr) -> Result<Formula, ParseError> {
    prover9::formula(simplified).map_err(|why| public(0, &why))
}

/// `text` read by the public logic library and beta-reduced, as the prover
/// takes it, before the prover's refusals of symbols.
pub fn parse_formula(text: &str) -> Result<Formula, ParseError> {
    prover_formula(&nltk::simplify(&expression(text)?))
}

/// `answer` read as the public implementation reads an answer, alone:
/// substituted, read by its logic library, and held to what its prover
/// accepts of one formula (names it can read, no variable as a
/// proposition, no symbol of two arities or uses, not too deep). [`read_pair`]
/// adds what it refuses of φ0 beside φ1.
pub fn read_formula(answer: &str) -> Result<Formula, ParseError> {
    let e = expression(answer)?;
    let simplified = nltk::simplify(&e);
    let p = nltk::Expr::Name("p".into());
    if let Some(why) = nltk::too_deep_for_the_prover([(&p, &p), (&e, &simplified)]) {
        return Err(public(0, &why));
    }
    let f = prover_formula(&simplified)?;
    if let Some(why) = prover9::alone(&f) {
        return Err(public(0, &why));
    }
    Ok(f)
}

/// φ0 and the answer's φ1 as the public implementation reads and hands
/// them to its prover together: φ1 as [`read_formula`] reads it, refused
/// also where the prover refuses the two side by side ([`clash`]) or the
/// library cannot simplify their biconditional within Python's recursion
/// limit. φ0 that the public code cannot read is an error of φ0's.
pub fn read_pair(phi0: &str, answer: &str) -> Result<(Formula, Formula), PairError> {
    let e0 = expression(phi0).map_err(PairError::Phi0)?;
    let s0 = nltk::simplify(&e0);
    let f0 = prover_formula(&s0).map_err(PairError::Phi0)?;
    let e1 = expression(answer).map_err(PairError::Phi1)?;
    let s1 = nltk::simplify(&e1);
    let refuse = |why: String| PairError::Phi1(public(0, &why));
    if let Some(why) = nltk::too_deep_for_the_prover([(&e0, &s0), (&e1, &s1)]) {
        return Err(refuse(why));
    }
    let f1 = prover_formula(&s1).map_err(PairError::Phi1)?;
    if let Some(why) = prover9::alone(&f1) {
        return Err(refuse(why));
    }
    if let Some(why) = clash(&f0, &f1) {
        return Err(refuse(why));
    }
    Ok((f0, f1))
}

/// Which of the two texts the public reading refused.
#[derive(Debug)]
pub enum PairError {
    /// φ0 itself (a verifier error, not the model's).
    Phi0(ParseError),
    /// The answer (non-compliant).
    Phi1(ParseError),
}

/// A regular expression read as the public implementation reads one: its
/// spaces and backslashes dropped, then every character but reg2dfa's
/// operators (`*`, `|`, `(`, `)`) a symbol ([`reg2dfa::read`]); a `*` that
/// follows no symbol or `)` is refused as reg2dfa refused it.
pub fn read_regex(answer: &str) -> Result<Regex, ParseError> {
    reg2dfa::read(answer).map_err(|why| public(0, &format!("reg2dfa: {why}")))
}

fn public(at: usize, why: &str) -> ParseError {
    ParseError::new(at, Reason::Public(why.to_string()))
}
