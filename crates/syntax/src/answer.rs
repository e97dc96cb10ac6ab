//! Reading an LLM's answer in the two declared modes.
//!
//! Strict (the paper's protocol): after trimming whitespace and one
//! surrounding code fence, the answer must be exactly one formula in the
//! notation the prompt listed. Lenient: the formula may sit in prose, square
//! and curly brackets group, and common alternative notations are read.
//!
//! In both modes an answer is scored on one formula or not at all: when it
//! offers two different formulas, or a formula with more formula syntax next
//! to it (`=`, an operator), it is refused as ambiguous, never scored on the
//! piece that happens to parse.

use crate::error::{ParseError, Reason};
use crate::extract::{self, Source};
use crate::lex::{self, Tok};
use std::ops::Range;

/// Characters that only formula syntax uses: next to a formula in prose they
/// mean the answer says more than one formula.
pub(crate) fn is_formula_syntax(c: char) -> bool {
    matches!(
        c,
        '=' | '≠'
            | '<'
            | '>'
            | '∧'
            | '∨'
            | '¬'
            | '∀'
            | '∃'
            | '→'
            | '↔'
            | '⊕'
            | '⇒'
            | '⇔'
            | '≡'
            | '⊃'
            | '⊻'
            | '⋀'
            | '⋁'
            | '&'
            | '|'
            | '~'
            | '\\'
    )
}

/// The answer without surrounding whitespace and one surrounding code fence
/// (with its language tag), and the source that says which was removed.
pub(crate) fn unfenced(text: &str) -> (Source, &str) {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix("```").and_then(|r| r.strip_suffix("```")) {
        if !inner.contains("```") {
            // A language tag is the rest of the opening line.
            let body = match inner.find('\n') {
                Some(nl) if !inner[..nl].trim().contains(' ') => &inner[nl + 1..],
                _ => inner,
            };
            return (Source::CodeBlock, body.trim());
        }
    }
    (Source::Whole, t)
}

/// Square and curly brackets as parentheses, when every bracket of the text
/// is matched by its own kind; otherwise the text unchanged. Byte offsets
/// stay valid because every replacement is one ASCII byte for another.
pub(crate) fn brackets_as_parentheses(text: &str) -> String {
    let mut stack = Vec::new();
    let mut any = false;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => {
                any |= c != '(';
                stack.push(c);
            }
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return text.to_string();
                }
            }
            _ => {}
        }
    }
    if !any || !stack.is_empty() {
        return text.to_string();
    }
    text.chars()
        .map(|c| match c {
            '[' | '{' => '(',
            ']' | '}' => ')',
            c => c,
        })
        .collect()
}

/// Where `part` (a slice of `whole`) lies in `whole`.
pub(crate) fn range_in(whole: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

/// A formula (or regular expression) found in an answer.
#[derive(Clone, Debug)]
pub(crate) struct Found<T> {
    /// The value.
    pub value: T,
    /// Its canonical text, which tells identical repeats from different formulas.
    pub text: String,
    /// Where it came from.
    pub source: Source,
    /// Its bytes in the answer.
    pub range: Range<usize>,
    /// Formula syntax right before or after it, if any.
    pub crowded: Option<String>,
}

/// The one formula of an answer, or why there is not exactly one: drops
/// finds inside a larger find, then refuses the rest if any is crowded by
/// formula syntax or if they differ.
pub(crate) fn single<T>(
    mut found: Vec<Found<T>>,
    at: usize,
) -> Result<Option<Found<T>>, ParseError> {
    let clean: Vec<Range<usize>> = found
        .iter()
        .filter(|f| f.crowded.is_none())
        .map(|f| f.range.clone())
        .collect();
    let inside = |r: &Range<usize>| {
        clean
            .iter()
            .any(|c| c.start <= r.start && r.end <= c.end && c.len() > r.len())
    };
    found.retain(|f| !inside(&f.range));
    if let Some(f) = found.iter().find(|f| f.crowded.is_some()) {
        let why = f.crowded.clone().unwrap_or_default();
        return Err(ParseError::new(
            f.range.start,
            Reason::Ambiguous(format!("{why} next to {}", f.text)),
        ));
    }
    let Some(first) = found.first() else {
        return Ok(None);
    };
    if let Some(other) = found.iter().find(|f| f.text != first.text) {
        return Err(ParseError::new(
            at.min(other.range.start),
            Reason::Ambiguous(format!(
                "it gives two different formulas, {} and {}",
                first.text, other.text
            )),
        ));
    }
    Ok(found.into_iter().next())
}

/// What stands next to a formula on its line: `None` for prose, or which
/// character of formula syntax (as `syntax` tells them) comes right before or after.
pub(crate) fn crowding(before: &str, after: &str, syntax: fn(char) -> bool) -> Option<String> {
    let last = before.trim_end().chars().last();
    let next = after.trim_start().chars().next();
    match (last, next) {
        (Some(c), _) if syntax(c) => Some(format!("{c:?} before")),
        (_, Some(c)) if syntax(c) => Some(format!("{c:?} after")),
        _ => None,
    }
}

/// True when `text` reads as prose: words, commas and periods, with
/// operators spelled as English words counted as words.
pub(crate) fn is_prose(text: &str, toks: &[lex::Spanned]) -> bool {
    toks.iter().all(|t| match t.tok {
        Tok::Name(_) | Tok::Comma | Tok::Dot => true,
        Tok::And | Tok::Or | Tok::Not | Tok::Forall | Tok::Exists => {
            text[t.at..].chars().next().is_some_and(char::is_alphabetic)
        }
        _ => false,
    })
}

/// Candidate texts of the answer, with their byte ranges: fenced blocks,
/// quoted spans, lines and labelled parts of lines.
pub(crate) fn candidate_ranges(text: &str, markdown_stars: bool) -> Vec<(Source, Range<usize>)> {
    extract::candidates(text, markdown_stars)
        .into_iter()
        .map(|(s, part)| (s, range_in(text, part)))
        .collect()
}
