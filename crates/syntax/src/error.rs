//! Why a text was refused, in words a person can act on.

use thiserror::Error;

/// The kind of problem found in a formula or regular expression.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Reason {
    /// Nothing to parse.
    #[error("the answer contains no formula")]
    Empty,
    /// Input longer than the parser accepts.
    #[error("the answer is {0} bytes long; at most {1} bytes are accepted")]
    TooLong(usize, usize),
    /// Parentheses or operators nested deeper than the parser accepts.
    #[error("nesting is deeper than {0} levels")]
    TooDeep(usize),
    /// A character that is no part of any accepted notation.
    #[error("unexpected character {0:?}")]
    UnknownCharacter(char),
    /// `=` or `≠`, which the vocabulary does not have.
    #[error("equality {0:?} is not part of the vocabulary")]
    Equality(char),
    /// A connective that only the lenient mode accepts.
    #[error(
        "{0:?} is not in the prompt's vocabulary (strict mode allows only the listed operators)"
    )]
    OutsideVocabulary(String),
    /// An operator written in another notation than the prompt's (strict mode).
    #[error("{0:?} is not the prompt's notation (strict parsing accepts only {1})")]
    Notation(String, String),
    /// An answer that offers more than one formula, or formula syntax beside one.
    #[error("ambiguous answer: {0}")]
    Ambiguous(String),
    /// An opening parenthesis without its closing one.
    #[error("'(' is never closed")]
    Unclosed,
    /// A closing parenthesis without an opening one.
    #[error("')' has no matching '('")]
    UnmatchedClose,
    /// Something where an operand was needed.
    #[error("expected a formula but found {0}")]
    ExpectedOperand(String),
    /// A token left over after a complete formula.
    #[error("unexpected {0} after a complete formula")]
    Trailing(String),
    /// A quantifier with no variable.
    #[error("quantifier without a variable")]
    QuantifierWithoutVariable,
    /// A predicate with an empty or broken argument list.
    #[error("bad argument list for predicate {0:?}: {1}")]
    BadArguments(String, String),
    /// The text ended where an operand or `)` was still needed.
    #[error("the end of the answer was reached in the middle of a formula")]
    UnexpectedEnd,
    /// A symbol outside the regular expression's alphabet.
    #[error("symbol {0:?} is not in the alphabet {1}")]
    NotInAlphabet(char, String),
    /// What the public implementation's logic library or prover refuses.
    #[error("as the public implementation reads it: {0}")]
    Public(String),
    /// A repetition operator with nothing to repeat.
    #[error("{0:?} has nothing before it to repeat")]
    NothingToRepeat(char),
}

/// A refusal: where in the text, and why.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{reason} (at byte {at})")]
pub struct ParseError {
    /// Byte offset in the text that was parsed.
    pub at: usize,
    /// What was wrong.
    pub reason: Reason,
}

impl ParseError {
    /// A refusal at byte offset `at`.
    pub fn new(at: usize, reason: Reason) -> ParseError {
        ParseError { at, reason }
    }
}
