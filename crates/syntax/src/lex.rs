//! Tokenizer for logic formulas as LLMs write them: Unicode, ASCII, LaTeX and
//! English operator spellings.

use crate::error::{ParseError, Reason};
use std::borrow::Cow;

/// One lexical unit of a formula.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
    /// A name: proposition, predicate, object or variable.
    Name(Cow<'a, str>),
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `,`.
    Comma,
    /// `.` or `:` after a quantifier's variables.
    Dot,
    /// Negation in any spelling.
    Not,
    /// Conjunction in any spelling.
    And,
    /// Disjunction in any spelling (including a standalone `v`).
    Or,
    /// Implication (lenient vocabulary); the text is kept for messages.
    Implies(&'static str),
    /// Biconditional (lenient vocabulary).
    Iff(&'static str),
    /// Exclusive or (lenient vocabulary).
    Xor(&'static str),
    /// `∀` in any spelling.
    Forall,
    /// `∃` in any spelling.
    Exists,
}

/// A token and the byte offset where it starts.
#[derive(Clone, Debug)]
pub struct Spanned<'a> {
    /// The token.
    pub tok: Tok<'a>,
    /// Byte offset of its first character.
    pub at: usize,
    /// Whether whitespace comes right before it.
    pub space_before: bool,
}

fn keyword(word: &str) -> Option<Tok<'static>> {
    Some(match word {
        "v" => Tok::Or,
        "and" | "AND" | "And" => Tok::And,
        "or" | "OR" | "Or" => Tok::Or,
        "not" | "NOT" | "Not" => Tok::Not,
        "xor" | "XOR" => Tok::Xor("xor"),
        "implies" | "IMPLIES" => Tok::Implies("implies"),
        "iff" | "IFF" => Tok::Iff("iff"),
        "all" | "forall" | "ALL" | "FORALL" | "Forall" => Tok::Forall,
        "exists" | "exist" | "EXISTS" | "Exists" => Tok::Exists,
        _ => return None,
    })
}

fn latex(word: &str) -> Option<Tok<'static>> {
    Some(match word {
        "land" | "wedge" => Tok::And,
        "lor" | "vee" => Tok::Or,
        "neg" | "lnot" => Tok::Not,
        "forall" => Tok::Forall,
        "exists" => Tok::Exists,
        "rightarrow" | "to" | "implies" | "Rightarrow" => Tok::Implies("→"),
        "leftrightarrow" | "iff" | "Leftrightarrow" | "equiv" => Tok::Iff("↔"),
        "oplus" => Tok::Xor("⊕"),
        _ => return None,
    })
}

fn subscript_digit(c: char) -> Option<char> {
    let d = (c as u32).checked_sub('₀' as u32)?;
    (d < 10).then(|| char::from_digit(d, 10).unwrap_or('0'))
}

fn is_name_start(c: char) -> bool {
    // ASCII first: the Unicode tables are slow and formulas are mostly ASCII.
    c.is_ascii_alphabetic() || c == '_' || (!c.is_ascii() && !is_operator(c) && c.is_alphabetic())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || (!c.is_ascii()
            && !is_operator(c)
            && (c.is_alphanumeric() || subscript_digit(c).is_some()))
}

/// The non-ASCII operator symbols, which are never part of a name.
pub(crate) fn is_operator(c: char) -> bool {
    matches!(
        c,
        '¬' | '∧'
            | '∨'
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
            | '≠'
    )
}

/// Splits `text` into tokens, or says which character could not be read.
pub fn tokenize(text: &str) -> Result<Vec<Spanned<'_>>, ParseError> {
    match tokenize_prefix(text) {
        (toks, None) => Ok(toks),
        (_, Some(err)) => Err(err),
    }
}

/// Tokens up to the first character that cannot be read, and the error there if any.
pub fn tokenize_prefix(text: &str) -> (Vec<Spanned<'_>>, Option<ParseError>) {
    let mut out: Vec<Spanned> = Vec::with_capacity(text.len() / 3 + 1);
    let mut at = 0;
    let mut space_before = false;
    let bytes = text.as_bytes();
    while at < bytes.len() {
        // ASCII is decoded byte by byte; other characters through `chars`.
        let c = match bytes[at] {
            b if b.is_ascii() => b as char,
            _ => text[at..].chars().next().unwrap_or(' '),
        };
        if c.is_whitespace() {
            at += c.len_utf8();
            space_before = true;
            continue;
        }
        let rest = &text[at..];
        let (tok, len) = if is_name_start(c) {
            let ascii_end = rest
                .bytes()
                .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
                .unwrap_or(rest.len());
            let end = if rest
                .as_bytes()
                .get(ascii_end)
                .is_some_and(|b| !b.is_ascii())
            {
                rest.char_indices()
                    .find(|&(_, ch)| !is_name_char(ch))
                    .map_or(rest.len(), |(i, _)| i)
            } else {
                ascii_end
            };
            let word = &rest[..end];
            let name: Cow<str> = if word.is_ascii() {
                Cow::Borrowed(word)
            } else {
                Cow::Owned(
                    word.chars()
                        .map(|ch| subscript_digit(ch).unwrap_or(ch))
                        .collect(),
                )
            };
            // No keyword is longer than seven letters or has a digit.
            let may_be_keyword = name.len() <= 7 && !name.bytes().any(|b| b.is_ascii_digit());
            let keyword = if may_be_keyword { keyword(&name) } else { None };
            (keyword.unwrap_or(Tok::Name(name)), end)
        } else if rest.starts_with("\\/") {
            (Tok::Or, 2)
        } else if c == '\\' {
            let word_len = rest[1..]
                .char_indices()
                .find(|&(_, ch)| !ch.is_alphabetic())
                .map_or(rest.len() - 1, |(i, _)| i);
            match latex(&rest[1..1 + word_len]) {
                Some(tok) => (tok, 1 + word_len),
                None => {
                    return (
                        out,
                        Some(ParseError::new(at, Reason::UnknownCharacter('\\'))),
                    )
                }
            }
        } else {
            let one = c.len_utf8();
            match c {
                '(' => (Tok::LParen, one),
                ')' => (Tok::RParen, one),
                ',' => (Tok::Comma, one),
                '.' | ':' => (Tok::Dot, one),
                '¬' | '~' | '!' => (Tok::Not, one),
                '∧' | '⋀' => (Tok::And, one),
                '∨' | '⋁' => (Tok::Or, one),
                '∀' => (Tok::Forall, one),
                '∃' => (Tok::Exists, one),
                '→' | '⇒' | '⊃' => (Tok::Implies("→"), one),
                '↔' | '⇔' | '≡' => (Tok::Iff("↔"), one),
                '⊕' | '⊻' => (Tok::Xor("⊕"), one),
                '&' if rest.starts_with("&&") => (Tok::And, 2),
                '&' => (Tok::And, 1),
                '|' if rest.starts_with("||") => (Tok::Or, 2),
                '|' => (Tok::Or, 1),
                '/' if rest.starts_with("/\\") => (Tok::And, 2),
                '-' if rest.starts_with("->") => (Tok::Implies("->"), 2),
                '-' => (Tok::Not, 1),
                '=' if rest.starts_with("=>") => (Tok::Implies("=>"), 2),
                '<' if rest.starts_with("<->") => (Tok::Iff("<->"), 3),
                '<' if rest.starts_with("<=>") => (Tok::Iff("<=>"), 3),
                '=' | '≠' => return (out, Some(ParseError::new(at, Reason::Equality(c)))),
                _ => return (out, Some(ParseError::new(at, Reason::UnknownCharacter(c)))),
            }
        };
        out.push(Spanned {
            tok,
            at,
            space_before,
        });
        at += len;
        space_before = false;
    }
    (out, None)
}
