//! Tokenizer for logic formulas as LLMs write them: Unicode, ASCII, LaTeX and
//! English operator spellings.

use crate::error::{ParseError, Reason};

/// One lexical unit of a formula.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name: proposition, predicate, object or variable.
    Name(String),
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
pub struct Spanned {
    /// The token.
    pub tok: Tok,
    /// Byte offset of its first character.
    pub at: usize,
    /// Whether whitespace comes right before it.
    pub space_before: bool,
}

fn keyword(word: &str) -> Option<Tok> {
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

fn latex(word: &str) -> Option<Tok> {
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
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || subscript_digit(c).is_some()
}

/// Splits `text` into tokens, or says which character could not be read.
pub fn tokenize(text: &str) -> Result<Vec<Spanned>, ParseError> {
    match tokenize_prefix(text) {
        (toks, None) => Ok(toks),
        (_, Some(err)) => Err(err),
    }
}

/// Tokens up to the first character that cannot be read, and the error there if any.
pub fn tokenize_prefix(text: &str) -> (Vec<Spanned>, Option<ParseError>) {
    let mut out: Vec<Spanned> = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut space_before = false;
    while let Some(&(at, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            space_before = true;
            continue;
        }
        let mut take = |n: usize| {
            for _ in 0..n {
                chars.next();
            }
        };
        let rest = &text[at..];
        let tok = if is_name_start(c) {
            let mut name = String::new();
            let mut end = at;
            for (i, ch) in text[at..].char_indices() {
                if !is_name_char(ch) {
                    break;
                }
                name.push(subscript_digit(ch).unwrap_or(ch));
                end = at + i + ch.len_utf8();
            }
            let len = text[at..end].chars().count();
            take(len);
            keyword(&name).unwrap_or(Tok::Name(name))
        } else if rest.starts_with("\\/") {
            take(2);
            Tok::Or
        } else if c == '\\' {
            let word: String = rest[1..]
                .chars()
                .take_while(|c| c.is_alphabetic())
                .collect();
            match latex(&word) {
                Some(tok) => {
                    take(1 + word.chars().count());
                    tok
                }
                None => {
                    return (
                        out,
                        Some(ParseError::new(at, Reason::UnknownCharacter('\\'))),
                    )
                }
            }
        } else {
            let (tok, len) = match c {
                '(' => (Tok::LParen, 1),
                ')' => (Tok::RParen, 1),
                ',' => (Tok::Comma, 1),
                '.' | ':' => (Tok::Dot, 1),
                '¬' | '~' | '!' => (Tok::Not, 1),
                '∧' | '⋀' => (Tok::And, 1),
                '∨' | '⋁' => (Tok::Or, 1),
                '∀' => (Tok::Forall, 1),
                '∃' => (Tok::Exists, 1),
                '→' | '⇒' | '⊃' => (Tok::Implies("→"), 1),
                '↔' | '⇔' | '≡' => (Tok::Iff("↔"), 1),
                '⊕' | '⊻' => (Tok::Xor("⊕"), 1),
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
            };
            take(len);
            tok
        };
        out.push(Spanned {
            tok,
            at,
            space_before,
        });
        space_before = false;
    }
    (out, None)
}
