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
use crate::{attempt, canonical, parse_logic, print, Formula, Mode, Parsed, Style};
use std::ops::Range;

/// Characters that only formula syntax uses: next to a formula in prose they
/// mean the answer says more than one formula.
pub(crate) fn is_formula_syntax(c: char) -> bool {
    lex::is_operator(c) || matches!(c, '=' | '<' | '>' | '&' | '|' | '~' | '\\')
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

pub(crate) fn strict_formula(text: &str) -> Result<Parsed<Formula>, ParseError> {
    let (source, body) = unfenced(text);
    let offset = range_in(text, body).start;
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

pub(crate) fn lenient_formula(original: &str) -> Result<Parsed<Formula>, ParseError> {
    let normalized = brackets_as_parentheses(original);
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
    for (source, range) in candidate_ranges(text, true) {
        match attempt(&text[range.clone()], Mode::Lenient) {
            Ok(value) if !(source != Source::CodeBlock && is_bare_word(&value)) => {
                found.push(Found {
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
    announced_atoms(text, &mut found);
    match single(found, 0)? {
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

/// Where a formula that begins with a name may start in a line of prose:
/// at a word followed (after its arguments, if any) by a binary operator,
/// as `p1` in "the formula is p1 ∧ p2".
fn name_starts(line: &str) -> impl Iterator<Item = usize> + '_ {
    line.char_indices().filter_map(move |(i, c)| {
        let word_start = c.is_alphanumeric()
            && line[..i]
                .chars()
                .next_back()
                .is_none_or(|b| !(b.is_alphanumeric() || b == '_'));
        if !word_start {
            return None;
        }
        let rest = &line[i..];
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let mut after = rest[word_end..].trim_start();
        if after.starts_with('(') {
            after = after
                .find(')')
                .map_or("", |close| after[close + 1..].trim_start());
        }
        let binary = after.starts_with(['∧', '∨', '→', '↔', '⊕', '&', '|'])
            || after.starts_with("->")
            || after.starts_with("<->");
        binary.then_some(i)
    })
}

/// Formulas inside lines of prose, from a bounded number of start positions
/// per line: each is kept with what stands beside it, so that a formula
/// with more formula syntax next to it is refused rather than scored.
fn spans(text: &str, found: &mut Vec<Found<Formula>>, note: &mut impl FnMut(ParseError, usize)) {
    const MAX_STARTS_PER_LINE: usize = 8;
    for line in text.lines().rev().take(48) {
        let line_at = range_in(text, line).start;
        let mut starts: Vec<usize> = std::iter::once(0)
            .chain(
                line.char_indices()
                    .filter(|&(_, c)| starts_formula(c))
                    .map(|(i, _)| i),
            )
            .chain(name_starts(line))
            .take(MAX_STARTS_PER_LINE)
            .collect();
        starts.sort_unstable();
        starts.dedup();
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
            let syntax_beside = before.chars().chain(after.chars()).any(is_formula_syntax);
            let crowded = if syntax_beside {
                crowding(before, after, is_formula_syntax)
                    .or_else(|| Some("more formula syntax on its line".into()))
            } else if is_prose(before, &lex::tokenize_prefix(before).0)
                && is_prose(after, &lex::tokenize_prefix(after).0)
            {
                None
            } else {
                // Cut short by something that is neither prose nor an
                // operator (a stray parenthesis): not a formula of the answer.
                continue;
            };
            let range = line_at + start..line_at + start + line[start..end].trim_end().len();
            found.push(Found {
                text: canonical_text(&f),
                value: f,
                source: Source::Span,
                range,
                crowded,
            });
        }
    }
}

/// Words after which an atom in prose is offered as the answer: "The
/// formula is p4", "φ1: p4", "answer = pred1(x1)".
const ANNOUNCING: [&str; 5] = ["is", ":", "=", "formula", "answer"];

/// Atoms that prose offers as the answer ("The formula is p4, and …"): a
/// formula named in the prose as much as a compound one, so that beside a
/// different displayed formula the answer is ambiguous. Only an atom right
/// after an announcing word counts, and only one with a digit or
/// arguments: "p1 means it rains" explains an atom, it does not offer it.
fn announced_atoms(text: &str, found: &mut Vec<Found<Formula>>) {
    for line in text.lines().rev().take(48) {
        let line_at = range_in(text, line).start;
        let lower = line.to_lowercase();
        if lower.len() != line.len() {
            // Offsets of the lowercased line would not be the line's.
            continue;
        }
        for word in ANNOUNCING {
            for (at, _) in lower.match_indices(word) {
                let end = at + word.len();
                let alphabetic = word.chars().all(char::is_alphabetic);
                let bounded = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
                if alphabetic
                    && !(bounded(lower[..at].chars().next_back())
                        && bounded(lower[end..].chars().next()))
                {
                    continue;
                }
                if let Some((f, range)) = atom_after(line, end) {
                    let range = line_at + range.start..line_at + range.end;
                    found.push(Found {
                        text: canonical_text(&f),
                        value: f,
                        source: Source::Span,
                        range,
                        crowded: None,
                    });
                }
            }
        }
    }
}

/// The lone atom right after byte `from` of `line` with its range, when
/// what follows it is prose or the line's end; `None` for a bare word.
fn atom_after(line: &str, from: usize) -> Option<(Formula, Range<usize>)> {
    let rest = &line[from..];
    let toks = lex::tokenize_prefix(rest).0;
    let first = toks.first()?;
    let Tok::Name(_) = first.tok else { return None };
    let mut p = parse_logic::Parser::new(&toks, Mode::Lenient, rest.len());
    let f = p.atom().ok()?;
    let next = toks.get(p.position());
    let alone = next.is_none_or(|n| {
        matches!(n.tok, Tok::Comma | Tok::Dot)
            || (matches!(n.tok, Tok::And) && is_word_connective(rest, n))
    });
    if !alone || is_bare_word(&f) {
        return None;
    }
    let end = next.map_or(rest.len(), |n| n.at);
    Some((f, from + first.at..from + rest[..end].trim_end().len()))
}
