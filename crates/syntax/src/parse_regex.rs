//! Parser for regular expressions: symbols, `*` and parentheses, plus `|`,
//! `+`, `?` and `ε` in lenient mode. Whitespace is ignored.

use crate::error::{ParseError, Reason};
use crate::parse_logic::MAX_DEPTH;
use crate::regex::Regex;
use crate::Mode;

struct Parser<'a> {
    chars: Vec<(usize, char)>,
    pos: usize,
    depth: usize,
    mode: Mode,
    alphabet: &'a [char],
    text_len: usize,
}

fn is_regex_char(c: char) -> bool {
    matches!(c, '(' | ')' | '*' | '|' | '+' | '?' | 'ε' | 'ϵ')
}

/// Parses a whole regular expression whose symbols must come from `alphabet`.
pub fn parse_exact(text: &str, mode: Mode, alphabet: &[char]) -> Result<Regex, ParseError> {
    let chars: Vec<(usize, char)> = text
        .char_indices()
        .filter(|(_, c)| !c.is_whitespace())
        .collect();
    if chars.is_empty() {
        return Err(ParseError::new(0, Reason::Empty));
    }
    let mut p = Parser {
        chars,
        pos: 0,
        depth: 0,
        mode,
        alphabet,
        text_len: text.len(),
    };
    let r = p.union()?;
    match p.peek() {
        None => Ok(r),
        Some(')') => Err(p.error(Reason::UnmatchedClose)),
        Some(c) => Err(p.error(Reason::Trailing(format!("{c:?}")))),
    }
}

/// True for characters that can appear in a regular expression over `alphabet`.
pub fn is_regex_text(c: char, alphabet: &[char]) -> bool {
    alphabet.contains(&c) || is_regex_char(c) || c == ' '
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|&(_, c)| c)
    }

    fn here(&self) -> usize {
        self.chars
            .get(self.pos)
            .map_or(self.text_len, |&(at, _)| at)
    }

    fn error(&self, reason: Reason) -> ParseError {
        ParseError::new(self.here(), reason)
    }

    fn lenient_only(&self, c: char) -> Result<(), ParseError> {
        match self.mode {
            Mode::Lenient => Ok(()),
            Mode::Strict => Err(self.error(Reason::OutsideVocabulary(c.to_string()))),
        }
    }

    fn union(&mut self) -> Result<Regex, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(Reason::TooDeep(MAX_DEPTH)));
        }
        let mut alts = vec![self.concat()?];
        while self.peek() == Some('|') {
            self.lenient_only('|')?;
            self.pos += 1;
            alts.push(self.concat()?);
        }
        self.depth -= 1;
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Regex::Epsilon)
        } else {
            Regex::Union(alts)
        })
    }

    fn concat(&mut self) -> Result<Regex, ParseError> {
        let mut parts = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            parts.push(self.postfix()?);
        }
        match parts.len() {
            0 => match self.mode {
                Mode::Lenient => Ok(Regex::Epsilon),
                Mode::Strict => Err(self.error(match self.peek() {
                    Some(c) => Reason::ExpectedOperand(format!("{c:?}")),
                    None => Reason::UnexpectedEnd,
                })),
            },
            1 => Ok(parts.pop().unwrap_or(Regex::Epsilon)),
            _ => Ok(Regex::Concat(parts)),
        }
    }

    fn postfix(&mut self) -> Result<Regex, ParseError> {
        let mut r = self.atom()?;
        let mut repeats = 0;
        while let Some(c @ ('*' | '+' | '?')) = self.peek() {
            if c != '*' {
                self.lenient_only(c)?;
            }
            // Each repetition nests the tree one level deeper.
            repeats += 1;
            if self.depth + repeats > MAX_DEPTH {
                return Err(self.error(Reason::TooDeep(MAX_DEPTH)));
            }
            self.pos += 1;
            r = match c {
                '*' => Regex::Star(Box::new(r)),
                '+' => Regex::Plus(Box::new(r)),
                _ => Regex::Optional(Box::new(r)),
            };
        }
        Ok(r)
    }

    fn atom(&mut self) -> Result<Regex, ParseError> {
        let Some(c) = self.peek() else {
            return Err(self.error(Reason::UnexpectedEnd));
        };
        match c {
            '(' => {
                let open_at = self.here();
                self.pos += 1;
                let inner = self.union()?;
                if self.peek() != Some(')') {
                    return Err(ParseError::new(open_at, Reason::Unclosed));
                }
                self.pos += 1;
                Ok(Regex::Group(Box::new(inner)))
            }
            'ε' | 'ϵ' => {
                self.lenient_only(c)?;
                self.pos += 1;
                Ok(Regex::Epsilon)
            }
            '*' | '+' | '?' => Err(self.error(Reason::NothingToRepeat(c))),
            c if self.alphabet.contains(&c) => {
                self.pos += 1;
                Ok(Regex::Symbol(c))
            }
            c => {
                let shown: Vec<String> = self.alphabet.iter().map(|a| a.to_string()).collect();
                Err(self.error(Reason::NotInAlphabet(
                    c,
                    format!("{{{}}}", shown.join(", ")),
                )))
            }
        }
    }
}
