//! Formal syntax of the benchmark: propositional and first-order formulas and
//! regular expressions, their printers, and a tolerant parser for what LLMs
//! answer.
//!
//! The parser accepts Unicode, ASCII, LaTeX and English operator spellings,
//! code fences and prose around the formula, and redundant or missing outer
//! parentheses. [`Mode::Strict`] refuses connectives that the prompts do not
//! offer (`→`, `↔`, `⊕`; `|`, `+`, `?`, `ε` in regular expressions);
//! [`Mode::Lenient`] accepts them. Inputs are bounded in length
//! ([`MAX_INPUT_BYTES`]) and nesting ([`MAX_DEPTH`]), so no input can panic,
//! overflow the stack or take more than linear time.

pub mod canonical;
pub mod error;
mod extract;
pub mod lex;
pub mod logic;
mod parse_logic;
mod parse_regex;
pub mod print;
pub mod regex;

pub use canonical::canonical;
pub use error::{ParseError, Reason};
pub use extract::Source;
pub use logic::{Formula, Quantifier};
pub use parse_logic::MAX_DEPTH;
pub use print::Style;
pub use regex::Regex;

use serde::{Deserialize, Serialize};

/// Longest answer the parser reads.
pub const MAX_INPUT_BYTES: usize = 256 * 1024;

/// Which connectives the parser accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Only the prompt's vocabulary: `∧ ∨ ¬ ∀ ∃` (in any spelling); `*` and parentheses for regexes.
    Strict,
    /// Also `→ ↔ ⊕` for logic and `| + ? ε` for regexes.
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
fn attempt(text: &str, mode: Mode) -> Result<Formula, (ParseError, usize)> {
    let toks = lex::tokenize(text).map_err(|e| (e, 0))?;
    if toks.is_empty() {
        return Err((ParseError::new(0, Reason::Empty), 0));
    }
    let mut p = parse_logic::Parser::new(&toks, mode, text.len());
    let f = p.formula().map_err(|e| (e, p.position()))?;
    p.finish().map_err(|e| (e, p.position()))?;
    Ok(f)
}

/// Finds and parses the formula in an LLM's answer.
///
/// On failure the error is that of the candidate text (the whole answer, a
/// code block, a line, or a stretch of a line) that came closest to being a
/// formula, which is what a person reading it would fix.
pub fn parse_formula(text: &str, mode: Mode) -> Result<Parsed<Formula>, ParseError> {
    check_length(text)?;
    // Most answers are just the formula; try that before looking for one.
    let whole = match attempt(text.trim(), mode) {
        Ok(value) => {
            return Ok(Parsed {
                value,
                source: Source::Whole,
            })
        }
        Err((e, _)) if matches!(e.reason, Reason::OutsideVocabulary(_) | Reason::TooDeep(_)) => {
            return Err(e)
        }
        Err(failure) => failure,
    };
    let mut closest: Option<(ParseError, usize)> = Some(whole);
    let mut note = |e: ParseError, progress: usize| {
        if closest.as_ref().is_none_or(|(_, best)| progress > *best) {
            closest = Some((e, progress));
        }
    };
    for (source, candidate) in extract::candidates(text, true) {
        match attempt(candidate, mode) {
            Ok(value) => return Ok(Parsed { value, source }),
            // A forbidden connective or runaway nesting is the answer's
            // problem, not something to look past.
            Err((e, _))
                if matches!(e.reason, Reason::OutsideVocabulary(_) | Reason::TooDeep(_)) =>
            {
                return Err(e)
            }
            Err((e, progress)) => note(e, progress),
        }
    }
    match longest_span(text, mode, &mut note) {
        Some(value) => Ok(Parsed {
            value,
            source: Source::Span,
        }),
        None => Err(closest.map_or_else(|| ParseError::new(0, Reason::Empty), |(e, _)| e)),
    }
}

/// Where a formula may start inside a line of prose.
fn starts_formula(c: char) -> bool {
    matches!(c, '(' | '¬' | '∀' | '∃' | '~')
}

/// True when the tokens are words and punctuation, with no formula syntax.
fn is_prose(toks: &[lex::Spanned]) -> bool {
    toks.iter()
        .all(|t| matches!(t.tok, lex::Tok::Name(_) | lex::Tok::Comma | lex::Tok::Dot))
}

/// The longest stretch of some line that parses as a formula, trying a
/// bounded number of start positions per line.
fn longest_span(
    text: &str,
    mode: Mode,
    note: &mut impl FnMut(ParseError, usize),
) -> Option<Formula> {
    const MAX_STARTS_PER_LINE: usize = 8;
    let mut best: Option<(usize, Formula)> = None;
    for line in text.lines().rev().take(48) {
        let starts = std::iter::once(0)
            .chain(
                line.char_indices()
                    .filter(|&(_, c)| starts_formula(c))
                    .map(|(i, _)| i),
            )
            .take(MAX_STARTS_PER_LINE);
        for start in starts {
            if !is_prose(&lex::tokenize_prefix(&line[..start]).0) {
                continue;
            }
            let (toks, _) = lex::tokenize_prefix(&line[start..]);
            let mut p = parse_logic::Parser::new(&toks, mode, line.len() - start);
            let parsed = p.formula();
            if let Err(e) = &parsed {
                note(e.clone(), p.position());
            }
            if let Ok(f) = parsed {
                let used = p.position();
                // A lone word of prose parses as a proposition; demand more, and
                // refuse to cut a malformed formula short.
                if used > 1
                    && is_prose(&toks[used..])
                    && best.as_ref().is_none_or(|(n, _)| used > *n)
                {
                    best = Some((used, f));
                }
            }
        }
    }
    best.map(|(_, f)| f)
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

/// Finds and parses the regular expression in an LLM's answer.
pub fn parse_regex(text: &str, mode: Mode, alphabet: &[char]) -> Result<Parsed<Regex>, ParseError> {
    check_length(text)?;
    let mut first_error = None;
    let whole = std::iter::once((Source::Whole, text.trim()));
    for (source, candidate) in whole.chain(extract::candidates(text, false)) {
        let candidate = candidate.trim_end_matches('.');
        match parse_regex::parse_exact(candidate, mode, alphabet) {
            Ok(value) => return Ok(Parsed { value, source }),
            Err(e) if matches!(e.reason, Reason::OutsideVocabulary(_) | Reason::TooDeep(_)) => {
                return Err(e)
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    // Consecutive words made only of regex characters, inside prose; a word
    // with any other letter or digit is prose, so `0*2` is not cut to `0*`.
    let mut runs: Vec<String> = Vec::new();
    for line in text.lines().rev().take(48) {
        let mut run: Vec<&str> = Vec::new();
        for word in line.split_whitespace().chain(std::iter::once("\u{0}")) {
            let word = word.trim_end_matches(['.', ',', ';', ':']);
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| parse_regex::is_regex_text(c, alphabet))
            {
                run.push(word);
            } else if !run.is_empty() {
                runs.push(run.concat());
                run.clear();
            }
        }
    }
    runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
    for run in runs.into_iter().take(48) {
        if let Ok(value) = parse_regex::parse_exact(&run, mode, alphabet) {
            return Ok(Parsed {
                value,
                source: Source::Span,
            });
        }
    }
    Err(first_error.unwrap_or_else(|| ParseError::new(0, Reason::Empty)))
}
