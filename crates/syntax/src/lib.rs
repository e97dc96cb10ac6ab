//! Formal syntax of the benchmark: propositional and first-order formulas and
//! regular expressions, their printers, and a tolerant parser for what LLMs
//! answer.
//!
//! [`Mode::Strict`] reads an answer as the paper does: exactly one formula in
//! the prompt's notation. [`Mode::Lenient`] also reads Unicode, ASCII, LaTeX
//! and English operator spellings, brackets, code fences and prose around the
//! formula, and connectives the prompts do not offer (`→`, `↔`, `⊕`; `|`,
//! `+`, `?`, `ε` in regular expressions). Neither mode scores a fragment of an
//! answer that offers more than one formula. Inputs are bounded in length
//! ([`MAX_INPUT_BYTES`]) and nesting ([`MAX_DEPTH`]), so no input can panic,
//! overflow the stack or take more than linear time.

mod answer;
mod answer_regex;
pub mod canonical;
pub mod error;
mod extract;
pub mod lex;
pub mod logic;
mod parse_logic;
mod parse_regex;
pub mod print;
pub mod public;
pub mod regex;

pub use canonical::canonical;
pub use error::{ParseError, Reason};
pub use extract::Source;
pub use logic::{Application, Formula, Quantifier, Term};
pub use parse_logic::MAX_DEPTH;
pub use print::Style;
pub use regex::Regex;

use serde::{Deserialize, Serialize};

/// Longest answer the parser reads.
pub const MAX_INPUT_BYTES: usize = 256 * 1024;

/// How an answer is read: the paper's strict protocol, or leniently.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Exactly one formula in the prompt's notation (`∧ ∨ ¬ ∀ ∃`, `*` and
    /// parentheses for regexes), after trimming whitespace and one code fence.
    Strict,
    /// The formula may be found in prose; brackets group; other spellings,
    /// `→ ↔ ⊕` for logic and `| + ? ε` for regexes are read.
    #[default]
    Lenient,
}

/// A parsed value and where in the answer it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed<T> {
    /// The formula or regular expression.
    pub value: T,
    /// The part of the answer it came from.
    pub source: Source,
}

fn check_length(text: &str) -> Result<(), ParseError> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(ParseError::new(
            0,
            Reason::TooLong(text.len(), MAX_INPUT_BYTES),
        ));
    }
    Ok(())
}

/// Parses `text` as exactly one formula, with nothing around it.
pub fn parse_formula_exact(text: &str, mode: Mode) -> Result<Formula, ParseError> {
    check_length(text)?;
    attempt(text, mode).map_err(|(e, _)| e)
}

/// One parse of a whole text; on failure also how many tokens were read,
/// which tells how close the text came to being a formula.
pub(crate) fn attempt(text: &str, mode: Mode) -> Result<Formula, (ParseError, usize)> {
    let toks = lex::tokenize(text).map_err(|e| (e, 0))?;
    if toks.is_empty() {
        return Err((ParseError::new(0, Reason::Empty), 0));
    }
    let mut p = parse_logic::Parser::new(&toks, mode, text.len());
    let f = p.formula().map_err(|e| (e, p.position()))?;
    p.finish().map_err(|e| (e, p.position()))?;
    Ok(f)
}

/// Reads the formula of an LLM's answer in `mode`.
///
/// [`Mode::Strict`]: after trimming whitespace and one surrounding code
/// fence the answer must be exactly one formula written in the prompt's
/// notation (`∧ ∨ ¬`, `∀`/`all`, `∃`/`exists`, parentheses).
/// [`Mode::Lenient`]: the formula may be found in prose, `[ ]` and `{ }`
/// group, and other spellings are read. In both modes an answer that offers
/// two different formulas, or a formula with more formula syntax beside it,
/// is refused as ambiguous. On failure the error is that of the candidate
/// that came closest to being a formula, which is what a person would fix.
pub fn parse_formula(text: &str, mode: Mode) -> Result<Parsed<Formula>, ParseError> {
    check_length(text)?;
    match mode {
        Mode::Strict => answer::strict_formula(text),
        Mode::Lenient => answer::lenient_formula(text),
    }
}

/// The alphabet `{0, …, size−1}`: digits, then lowercase letters past ten.
pub fn alphabet(size: usize) -> Vec<char> {
    "0123456789abcdefghijklmnopqrstuvwxyz"
        .chars()
        .take(size)
        .collect()
}

/// Parses `text` as exactly one regular expression over `alphabet`.
pub fn parse_regex_exact(text: &str, mode: Mode, alphabet: &[char]) -> Result<Regex, ParseError> {
    check_length(text)?;
    parse_regex::parse_exact(text, mode, alphabet)
}

/// Reads the regular expression of an LLM's answer in `mode`: strictly,
/// exactly one expression over the alphabet with `*` and parentheses after
/// trimming whitespace and one code fence; leniently, also found in prose and
/// with `| + ? ε`. An answer that offers two different expressions, or an
/// expression beside `=`, is refused as ambiguous in both modes.
pub fn parse_regex(text: &str, mode: Mode, alphabet: &[char]) -> Result<Parsed<Regex>, ParseError> {
    check_length(text)?;
    answer_regex::regex(text, mode, alphabet)
}
