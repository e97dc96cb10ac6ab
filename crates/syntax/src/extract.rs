//! Finding the formula in an LLM's answer: the whole answer, a fenced code
//! block, an inline code span, one line (with a label such as `Formula:`
//! dropped), or the longest stretch that parses. Every strategy is bounded so
//! the total work stays linear in the answer's length.

use serde::{Deserialize, Serialize};

/// Where in the answer the accepted text was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The whole answer was the formula.
    Whole,
    /// The contents of a fenced code block.
    CodeBlock,
    /// An inline code span or quoted text.
    Quoted,
    /// One line of the answer.
    Line,
    /// A stretch of a line surrounded by prose.
    Span,
}

/// How many lines, blocks or spans are tried at most; keeps the work linear.
const MAX_CANDIDATES: usize = 48;

/// Candidate texts inside the answer (the whole answer is tried before
/// these), most specific first, each with where it came from.
/// `markdown_stars` strips `*` around a line (bold), which regexes must keep.
pub(crate) fn candidates(text: &str, markdown_stars: bool) -> Vec<(Source, &str)> {
    let mut out = Vec::new();
    for block in fenced_blocks(text).into_iter().rev().take(MAX_CANDIDATES) {
        out.push((Source::CodeBlock, block));
    }
    for quote in quoted_spans(text).into_iter().rev().take(MAX_CANDIDATES) {
        out.push((Source::Quoted, quote));
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for line in lines.iter().rev().take(MAX_CANDIDATES) {
        let line = line.trim_matches(|c: char| {
            (markdown_stars && c == '*') || c == '$' || c == '`' || c.is_whitespace()
        });
        out.push((Source::Line, line));
        if let Some(idx) = line.find(": ") {
            out.push((Source::Line, line[idx + 2..].trim()));
        }
    }
    out.retain(|(_, t)| !t.is_empty());
    out
}

/// Contents of ```-fenced blocks, without the language tag line.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(end) = after.find("```") else { break };
        let body = &after[..end];
        // Drop a language tag such as ```text on the opening line.
        let body = match body.find('\n') {
            Some(nl) if !body[..nl].trim().contains(' ') && !body[nl..].trim().is_empty() => {
                &body[nl + 1..]
            }
            _ => body,
        };
        out.push(body.trim());
        rest = &after[end + 3..];
    }
    out
}

/// Contents of single-backtick spans and of double quotes.
fn quoted_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for delim in ['`', '"', '“'] {
        let close = if delim == '“' { '”' } else { delim };
        let mut rest = text;
        while let Some(start) = rest.find(delim) {
            let after = &rest[start + delim.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = after[..end].trim();
            if !inner.is_empty() && !inner.contains("``") {
                out.push(inner);
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    out
}
