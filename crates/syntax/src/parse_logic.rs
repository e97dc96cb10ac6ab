//! Recursive-descent parser for logic formulas over the tokens of [`crate::lex`].
//!
//! Precedence, loosest first: `↔`/`⊕` (right-associative), `→`
//! (right-associative), `∨`, `∧`, then `¬` and quantifiers. A quantifier's
//! scope extends as far right as possible.

use crate::error::{ParseError, Reason};
use crate::lex::{Spanned, Tok};
use crate::logic::{Formula, Quantifier};
use crate::Mode;

/// Deepest nesting of parentheses, negations and quantifiers the parser accepts.
pub const MAX_DEPTH: usize = 256;

pub(crate) struct Parser<'a> {
    toks: &'a [Spanned<'a>],
    pos: usize,
    depth: usize,
    mode: Mode,
    text_len: usize,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) => format!("name {n:?}"),
        Tok::LParen => "'('".into(),
        Tok::RParen => "')'".into(),
        Tok::Comma => "','".into(),
        Tok::Dot => "'.'".into(),
        Tok::Not => "a negation".into(),
        Tok::And => "a conjunction".into(),
        Tok::Or => "a disjunction".into(),
        Tok::Implies(s) | Tok::Iff(s) | Tok::Xor(s) => format!("{s:?}"),
        Tok::Forall => "'∀'".into(),
        Tok::Exists => "'∃'".into(),
    }
}

impl<'a> Parser<'a> {
    pub(crate) fn new(toks: &'a [Spanned<'a>], mode: Mode, text_len: usize) -> Parser<'a> {
        Parser {
            toks,
            pos: 0,
            depth: 0,
            mode,
            text_len,
        }
    }

    /// Index of the first token not consumed yet.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    fn peek(&self) -> Option<&'a Tok<'a>> {
        self.toks.get(self.pos).map(|s| &s.tok)
    }

    fn peek_at(&self, offset: usize) -> Option<&'a Spanned<'a>> {
        self.toks.get(self.pos + offset)
    }

    fn here(&self) -> usize {
        self.toks.get(self.pos).map_or(self.text_len, |s| s.at)
    }

    fn error(&self, reason: Reason) -> ParseError {
        ParseError::new(self.here(), reason)
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(Reason::TooDeep(MAX_DEPTH)));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn lenient_only(&self, spelling: &str) -> Result<(), ParseError> {
        match self.mode {
            Mode::Lenient => Ok(()),
            Mode::Strict => Err(self.error(Reason::OutsideVocabulary(spelling.to_string()))),
        }
    }

    /// Parses one whole formula; tokens after it are left for the caller.
    pub(crate) fn formula(&mut self) -> Result<Formula, ParseError> {
        self.enter()?;
        let lhs = self.implication()?;
        let out = match self.peek() {
            Some(Tok::Iff(s)) | Some(Tok::Xor(s)) => {
                let is_iff = matches!(self.peek(), Some(Tok::Iff(_)));
                self.lenient_only(s)?;
                self.pos += 1;
                let rhs = Box::new(self.formula()?);
                if is_iff {
                    Formula::Iff(Box::new(lhs), rhs)
                } else {
                    Formula::Xor(Box::new(lhs), rhs)
                }
            }
            _ => lhs,
        };
        self.leave();
        Ok(out)
    }

    fn implication(&mut self) -> Result<Formula, ParseError> {
        let lhs = self.disjunction()?;
        if let Some(Tok::Implies(s)) = self.peek() {
            self.lenient_only(s)?;
            self.pos += 1;
            self.enter()?;
            let rhs = self.implication()?;
            self.leave();
            return Ok(Formula::Implies(Box::new(lhs), Box::new(rhs)));
        }
        Ok(lhs)
    }

    fn disjunction(&mut self) -> Result<Formula, ParseError> {
        let first = self.conjunction()?;
        if self.peek() != Some(&Tok::Or) {
            return Ok(first);
        }
        let mut parts = vec![first];
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            parts.push(self.conjunction()?);
        }
        Ok(Formula::Or(parts))
    }

    fn conjunction(&mut self) -> Result<Formula, ParseError> {
        let first = self.unary()?;
        if self.peek() != Some(&Tok::And) {
            return Ok(first);
        }
        let mut parts = vec![first];
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            parts.push(self.unary()?);
        }
        Ok(Formula::And(parts))
    }

    fn unary(&mut self) -> Result<Formula, ParseError> {
        match self.peek() {
            Some(Tok::Not) => {
                self.pos += 1;
                self.enter()?;
                let inner = self.unary()?;
                self.leave();
                Ok(Formula::Not(Box::new(inner)))
            }
            Some(Tok::Forall) | Some(Tok::Exists) => self.quantified(),
            _ => self.primary(),
        }
    }

    fn quantified(&mut self) -> Result<Formula, ParseError> {
        let q = match self.peek() {
            Some(Tok::Forall) => Quantifier::Forall,
            _ => Quantifier::Exists,
        };
        self.pos += 1;
        let mut vars: Vec<String> = Vec::new();
        let mut separated = false;
        while let Some(Tok::Name(name)) = self.peek() {
            // `∀x1 pred(x1)`: a name glued to '(' starts the body, not the variable list.
            if let Some(next) = self.peek_at(1) {
                if next.tok == Tok::LParen && !next.space_before {
                    break;
                }
            }
            vars.push(name.to_string());
            self.pos += 1;
            match self.peek() {
                Some(Tok::Comma) => self.pos += 1,
                Some(Tok::Dot) => {
                    self.pos += 1;
                    separated = true;
                    break;
                }
                _ => {}
            }
        }
        if !separated {
            // `∀x1 p1`: without a separator, a name that ends the formula or
            // stands before an operator is the body.
            let ends_here = matches!(
                self.peek(),
                None | Some(Tok::RParen)
                    | Some(Tok::And)
                    | Some(Tok::Or)
                    | Some(Tok::Implies(_))
                    | Some(Tok::Iff(_))
                    | Some(Tok::Xor(_))
            );
            if ends_here && vars.len() > 1 {
                vars.pop();
                self.pos -= 1;
            }
        }
        if vars.is_empty() {
            return Err(self.error(Reason::QuantifierWithoutVariable));
        }
        self.enter()?;
        let body = self.formula()?;
        self.leave();
        Ok(Formula::Quant {
            q,
            vars,
            body: Box::new(body),
        })
    }

    fn primary(&mut self) -> Result<Formula, ParseError> {
        match self.peek() {
            Some(Tok::LParen) => {
                let open_at = self.here();
                self.pos += 1;
                self.enter()?;
                let inner = self.formula()?;
                self.leave();
                match self.peek() {
                    Some(Tok::RParen) => {
                        self.pos += 1;
                        Ok(Formula::Group(Box::new(inner)))
                    }
                    None => Err(ParseError::new(open_at, Reason::Unclosed)),
                    Some(other) => Err(self.error(Reason::Trailing(describe(other)))),
                }
            }
            Some(Tok::Name(name)) => {
                self.pos += 1;
                if self.peek() == Some(&Tok::LParen) {
                    let args = self.arguments(name)?;
                    Ok(Formula::Atom {
                        name: name.to_string(),
                        args: args.into_iter().map(crate::Term::Name).collect(),
                    })
                } else {
                    Ok(Formula::prop(name.as_ref()))
                }
            }
            Some(Tok::RParen) => Err(self.error(Reason::UnmatchedClose)),
            Some(other) => Err(self.error(Reason::ExpectedOperand(describe(other)))),
            None => Err(self.error(Reason::UnexpectedEnd)),
        }
    }

    fn arguments(&mut self, pred: &str) -> Result<Vec<String>, ParseError> {
        let bad = |p: &Parser, why: &str| {
            p.error(Reason::BadArguments(pred.to_string(), why.to_string()))
        };
        self.pos += 1; // '('
        let mut args = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Name(arg)) => {
                    args.push(arg.to_string());
                    self.pos += 1;
                }
                Some(Tok::RParen) if args.is_empty() => {
                    return Err(bad(self, "no arguments between the parentheses"))
                }
                Some(other) => {
                    return Err(bad(
                        self,
                        &format!("expected an object or variable, found {}", describe(other)),
                    ))
                }
                None => return Err(bad(self, "the argument list is never closed")),
            }
            match self.peek() {
                Some(Tok::Comma) => self.pos += 1,
                Some(Tok::RParen) => {
                    self.pos += 1;
                    return Ok(args);
                }
                Some(other) => {
                    return Err(bad(
                        self,
                        &format!("expected ',' or ')', found {}", describe(other)),
                    ))
                }
                None => return Err(bad(self, "the argument list is never closed")),
            }
        }
    }

    /// Fails unless every token was used; trailing periods are allowed.
    /// One atom (a proposition, or a predicate with its arguments), nothing more.
    pub(crate) fn atom(&mut self) -> Result<Formula, ParseError> {
        match self.peek() {
            Some(Tok::Name(_)) => self.primary(),
            _ => Err(self.error(Reason::Empty)),
        }
    }

    pub(crate) fn finish(&mut self) -> Result<(), ParseError> {
        while self.peek() == Some(&Tok::Dot) {
            self.pos += 1;
        }
        match self.peek() {
            None => Ok(()),
            Some(Tok::RParen) => Err(self.error(Reason::UnmatchedClose)),
            Some(other) => Err(self.error(Reason::Trailing(describe(other)))),
        }
    }
}
