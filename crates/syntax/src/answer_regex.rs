//! Reading a regular expression out of an LLM's answer, strictly or
//! leniently, with the same ambiguity rules as formulas ([`crate::answer`]).

use crate::answer::{candidate_ranges, crowding, range_in, single, unfenced, Found};
use crate::error::{ParseError, Reason};
use crate::extract::Source;
use crate::{parse_regex, print, Mode, Parsed, Regex};
use std::ops::Range;

/// Reads the regular expression of an LLM's answer in `mode`: strictly,
/// exactly one expression over the alphabet with `*` and parentheses after
/// trimming whitespace and one code fence; leniently, also found in prose and
/// with `| + ? ε`. An answer that offers two different expressions, or an
/// expression beside `=`, is refused as ambiguous in both modes.
pub(crate) fn regex(
    text: &str,
    mode: Mode,
    alphabet: &[char],
) -> Result<Parsed<Regex>, ParseError> {
    let (source, body) = unfenced(text);
    let exact = parse_regex::parse_exact(body, mode, alphabet);
    if mode == Mode::Strict {
        let offset = range_in(text, body).start;
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
    for (source, range) in candidate_ranges(text, false) {
        let candidate = text[range.clone()].trim_end_matches('.');
        match parse_regex::parse_exact(candidate, mode, alphabet) {
            Ok(value) => found.push(Found {
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
        let line_at = range_in(text, line).start;
        let mut run: Option<Range<usize>> = None;
        let mut words = line
            .split_whitespace()
            .map(|w| range_in(line, w))
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
                    crowding(&line[..r.start], &line[r.end..], |c| matches!(c, '=' | '≠'));
                found.push(Found {
                    text: print::regex(&value),
                    value,
                    source: Source::Span,
                    range: line_at + r.start..line_at + r.end,
                    crowded,
                });
            }
        }
    }
    match single(found, 0)? {
        Some(f) => Ok(Parsed {
            value: f.value,
            source: f.source,
        }),
        None => Err(first_error),
    }
}
