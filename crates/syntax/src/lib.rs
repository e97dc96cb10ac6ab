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
use std::ops::Range;

/// Longest answer the parser reads.
pub const MAX_INPUT_BYTES: usize = 256 * 1024;

/// How an answer is read: the paper's strict protocol, or leniently.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
        Mode::Strict => strict_formula(text),
        Mode::Lenient => lenient_formula(text),
    }
}

/// The prompt's own spelling of each operator, which strict parsing requires.
fn strict_spelling(text: &str, tok: &lex::Spanned) -> Result<(), ParseError> {
    let here = &text[tok.at..];
    let (ok, wanted): (bool, &str) = match tok.tok {
        lex::Tok::Not => (here.starts_with('¬'), "¬"),
        lex::Tok::And => (here.starts_with('∧'), "∧"),
        lex::Tok::Or => (here.starts_with('∨'), "∨"),
        lex::Tok::Forall => (here.starts_with('∀') || here.starts_with("all"), "∀ or all"),
        lex::Tok::Exists => (
            here.starts_with('∃') || here.starts_with("exists"),
            "∃ or exists",
        ),
        lex::Tok::Dot => (here.starts_with('.'), "."),
        _ => (true, ""),
    };
    if ok {
        return Ok(());
    }
    // The spelling as written: a word, a LaTeX command, or a run of symbols.
    let first = here.chars().next().unwrap_or(' ');
    let found: String = if first.is_alphabetic() || first == '\\' {
        std::iter::once(first)
            .chain(here.chars().skip(1).take_while(|c| c.is_alphabetic()))
            .collect()
    } else {
        here.chars()
            .take_while(|c| !c.is_alphanumeric() && !c.is_whitespace() && !"()".contains(*c))
            .take(4)
            .collect()
    };
    Err(ParseError::new(
        tok.at,
        Reason::Notation(found, wanted.to_string()),
    ))
}

fn strict_formula(text: &str) -> Result<Parsed<Formula>, ParseError> {
    let (source, body) = answer::unfenced(text);
    let offset = answer::range_in(text, body).start;
    let shift = |e: ParseError| ParseError::new(e.at + offset, e.reason);
    let toks = lex::tokenize(body).map_err(shift)?;
    if toks.is_empty() {
        return Err(ParseError::new(0, Reason::Empty));
    }
    for t in &toks {
        strict_spelling(body, t).map_err(shift)?;
    }
    let mut p = parse_logic::Parser::new(&toks, Mode::Strict, body.len());
    let value = p.formula().map_err(shift)?;
    p.finish().map_err(shift)?;
    Ok(Parsed { value, source })
}

/// A formula's canonical text, which tells identical repeats apart from different formulas.
fn canonical_text(f: &Formula) -> String {
    print::formula(&canonical(f), Style::Unicode)
}

/// True for a lone word without digits or arguments (`Answer`, `Explanation`):
/// prose, not a formula, when it stands apart on a line or in quotes.
fn is_bare_word(f: &Formula) -> bool {
    matches!(f, Formula::Atom { name, args } if args.is_empty() && !name.chars().any(|c| c.is_ascii_digit()))
}

fn lenient_formula(original: &str) -> Result<Parsed<Formula>, ParseError> {
    let normalized = answer::brackets_as_parentheses(original);
    let text = normalized.as_str();
    // Most answers are just the formula; try that before looking for one.
    let whole = match attempt(text.trim(), Mode::Lenient) {
        Ok(value) => {
            return Ok(Parsed {
                value,
                source: Source::Whole,
            })
        }
        Err((e, _)) if matches!(e.reason, Reason::TooDeep(_)) => return Err(e),
        Err(failure) => failure,
    };
    let mut closest: Option<(ParseError, usize)> = Some(whole);
    let mut note = |e: ParseError, progress: usize| {
        if closest.as_ref().is_none_or(|(_, best)| progress > *best) {
            closest = Some((e, progress));
        }
    };
    let mut found = Vec::new();
    for (source, range) in answer::candidate_ranges(text, true) {
        match attempt(&text[range.clone()], Mode::Lenient) {
            Ok(value) if !(source != Source::CodeBlock && is_bare_word(&value)) => {
                found.push(answer::Found {
                    text: canonical_text(&value),
                    value,
                    source,
                    range,
                    crowded: None,
                })
            }
            Ok(_) => {}
            Err((e, _)) if matches!(e.reason, Reason::TooDeep(_)) => return Err(e),
            Err((e, progress)) => note(e, progress),
        }
    }
    spans(text, &mut found, &mut note);
    match answer::single(found, 0)? {
        Some(f) => Ok(Parsed {
            value: f.value,
            source: f.source,
        }),
        None => Err(closest.map_or_else(|| ParseError::new(0, Reason::Empty), |(e, _)| e)),
    }
}

/// True for `and`, `or` and `not` spelled as English words.
fn is_word_connective(text: &str, t: &lex::Spanned) -> bool {
    matches!(t.tok, lex::Tok::And | lex::Tok::Or | lex::Tok::Not)
        && text[t.at..]
            .chars()
            .take_while(|c| c.is_alphabetic())
            .count()
            > 1
}

/// Where a formula may start inside a line of prose.
fn starts_formula(c: char) -> bool {
    matches!(c, '(' | '¬' | '∀' | '∃' | '~')
}

/// Formulas inside lines of prose, from a bounded number of start positions
/// per line: each is kept with what stands beside it, so that a formula
/// with more formula syntax next to it is refused rather than scored.
fn spans(
    text: &str,
    found: &mut Vec<answer::Found<Formula>>,
    note: &mut impl FnMut(ParseError, usize),
) {
    const MAX_STARTS_PER_LINE: usize = 8;
    for line in text.lines().rev().take(48) {
        let line_at = answer::range_in(text, line).start;
        let starts = std::iter::once(0)
            .chain(
                line.char_indices()
                    .filter(|&(_, c)| starts_formula(c))
                    .map(|(i, _)| i),
            )
            .take(MAX_STARTS_PER_LINE);
        for start in starts {
            let before = &line[..start];
            let rest = &line[start..];
            let (mut toks, mut stop) = lex::tokenize_prefix(rest);
            // Inside prose, `and`, `or` and `not` are words: "(p1 ∧ p2) or
            // (p2 ∨ p3)" offers two formulas, it does not join them.
            if let Some(i) = toks.iter().position(|t| is_word_connective(rest, t)) {
                stop = Some(ParseError::new(toks[i].at, Reason::Empty));
                toks.truncate(i);
            }
            let mut p = parse_logic::Parser::new(&toks, Mode::Lenient, line.len() - start);
            let f = match p.formula() {
                Ok(f) => f,
                Err(e) => {
                    note(e, p.position());
                    continue;
                }
            };
            let used = p.position();
            // A lone word of prose parses as a proposition; demand more.
            if used < 2 {
                continue;
            }
            let end = start
                + toks
                    .get(used)
                    .map(|t| t.at)
                    .or(stop.as_ref().map(|e| e.at))
                    .unwrap_or(line.len() - start);
            let after = &line[end..];
            let syntax_beside = before
                .chars()
                .chain(after.chars())
                .any(answer::is_formula_syntax);
            let crowded = if syntax_beside {
                answer::crowding(before, after, answer::is_formula_syntax)
                    .or_else(|| Some("more formula syntax on its line".into()))
            } else if answer::is_prose(before, &lex::tokenize_prefix(before).0)
                && answer::is_prose(after, &lex::tokenize_prefix(after).0)
            {
                None
            } else {
                // Cut short by something that is neither prose nor an
                // operator (a stray parenthesis): not a formula of the answer.
                continue;
            };
            let range = line_at + start..line_at + start + line[start..end].trim_end().len();
            found.push(answer::Found {
                text: canonical_text(&f),
                value: f,
                source: Source::Span,
                range,
                crowded,
            });
        }
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
    let (source, body) = answer::unfenced(text);
    let exact = parse_regex::parse_exact(body, mode, alphabet);
    if mode == Mode::Strict {
        let offset = answer::range_in(text, body).start;
        return exact
            .map(|value| Parsed { value, source })
            .map_err(|e| ParseError::new(e.at + offset, e.reason));
    }
    let first_error = match exact {
        Ok(value) => return Ok(Parsed { value, source }),
        Err(e) if matches!(e.reason, Reason::TooDeep(_)) => return Err(e),
        Err(e) => e,
    };
    let mut found = Vec::new();
    for (source, range) in answer::candidate_ranges(text, false) {
        let candidate = text[range.clone()].trim_end_matches('.');
        match parse_regex::parse_exact(candidate, mode, alphabet) {
            Ok(value) => found.push(answer::Found {
                text: print::regex(&value),
                value,
                source,
                range,
                crowded: None,
            }),
            Err(e) if matches!(e.reason, Reason::TooDeep(_)) => return Err(e),
            Err(_) => {}
        }
    }
    // Consecutive words made only of regex characters, inside prose; a word
    // with any other letter or digit is prose, so `0*2` is not cut to `0*`.
    // A lone symbol in prose ("the digit 1") is a mention, not an answer.
    for line in text.lines().rev().take(48) {
        let line_at = answer::range_in(text, line).start;
        let mut run: Option<Range<usize>> = None;
        let mut words = line
            .split_whitespace()
            .map(|w| answer::range_in(line, w))
            .chain(std::iter::once(line.len()..line.len()));
        for word in words.by_ref().take(4096) {
            let w = line[word.clone()].trim_end_matches(['.', ',', ';', ':']);
            let regex_word =
                !w.is_empty() && w.chars().all(|c| parse_regex::is_regex_text(c, alphabet));
            if regex_word {
                let end = word.start + w.len();
                run = Some(run.map_or(word.start..end, |r| r.start..end));
                continue;
            }
            let Some(r) = run.take() else { continue };
            let joined: String = line[r.clone()].split_whitespace().collect();
            if joined.chars().count() < 2 {
                continue;
            }
            if let Ok(value) = parse_regex::parse_exact(&joined, mode, alphabet) {
                let crowded =
                    answer::crowding(&line[..r.start], &line[r.end..], |c| matches!(c, '=' | '≠'));
                found.push(answer::Found {
                    text: print::regex(&value),
                    value,
                    source: Source::Span,
                    range: line_at + r.start..line_at + r.end,
                    crowded,
                });
            }
        }
    }
    match answer::single(found, 0)? {
        Some(f) => Ok(Parsed {
            value: f.value,
            source: f.source,
        }),
        None => Err(first_error),
    }
}
