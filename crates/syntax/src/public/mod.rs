//! Reading an answer as the public implementation that produced the paper's
//! numbers reads it (`--protocol reference`): its text substitutions, its
//! logic library's tokens, precedence and quantifier scope ([`nltk`]), and
//! the refusals of the prover it hands both formulas to ([`prover9`]); for
//! regular expressions, the automaton tool it runs and how it compares two
//! automata ([`reg2dfa`]).
//!
//! There is no extraction: the whole answer is one formula or none. What
//! that library or that prover refused, this reading refuses with the reason
//! in words; what they accepted, it returns as a [`Formula`] of the same
//! structure, so the tool's own verifier decides it.

mod nltk;
mod prover9;
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

/// `answer` read as the public implementation reads an answer: substituted,
/// then parsed by its logic library's rules, then held to what its prover
/// accepts of one formula alone (names it can print, no proposition named
/// as a prover variable). [`clash`] adds what it refuses of φ0 beside φ1.
pub fn read_formula(answer: &str) -> Result<Formula, ParseError> {
    let f = parse_formula(answer)?;
    if let Some(why) = prover9::alone(&f) {
        return Err(public(0, &why));
    }
    Ok(f)
}

/// `text` substituted and parsed by the public logic library's rules,
/// before any of the prover's refusals.
pub fn parse_formula(text: &str) -> Result<Formula, ParseError> {
    let text = substitute(text);
    // The library reads the first non-empty line not starting with `#`;
    // with newlines deleted, only other line breaks can make more.
    let Some(line) = text
        .split([
            '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
        ])
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return Err(public(
            0,
            "the answer has no line to read (the public code fails on it)",
        ));
    };
    let expr = nltk::parse(line).map_err(|e| public(e.at, &e.why))?;
    nltk::to_formula(&expr).map_err(|why| public(0, &why))
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
