//! Reading the controlled English of [`crate::english`] back into trees.

use autoeval_syntax::{Formula, Quantifier, Regex};
use thiserror::Error;

/// Deepest nesting read back; deeper text is refused, not a stack overflow.
const MAX_DEPTH: usize = 256;

/// Why a text is not the controlled English.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("not the reference model's English at word {at}: expected {expected}, found {found:?}")]
pub struct ReadError {
    /// Index of the word where reading stopped.
    pub at: usize,
    /// What was expected there.
    pub expected: String,
    /// What was found (empty at the end).
    pub found: String,
}

struct Reader<'a> {
    words: Vec<&'a str>,
    pos: usize,
    depth: usize,
}

fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for w in text.split_whitespace() {
        let core = w.trim_end_matches([':', ';', ',', '.']);
        if !core.is_empty() {
            out.push(core);
        }
        let tail = &w[core.len()..];
        for (i, c) in tail.char_indices() {
            if matches!(c, ':' | ';' | ',') {
                out.push(&tail[i..i + 1]);
            }
        }
    }
    out
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            words: words(text),
            pos: 0,
            depth: 0,
        }
    }

    fn fail<T>(&self, expected: &str) -> Result<T, ReadError> {
        Err(ReadError {
            at: self.pos,
            expected: expected.to_string(),
            found: self.words.get(self.pos).copied().unwrap_or("").to_string(),
        })
    }

    fn next(&mut self, what: &str) -> Result<&'a str, ReadError> {
        match self.words.get(self.pos) {
            Some(w) => {
                self.pos += 1;
                Ok(w)
            }
            None => self.fail(what),
        }
    }

    fn expect(&mut self, phrase: &str) -> Result<(), ReadError> {
        for w in phrase.split_whitespace() {
            if self.words.get(self.pos) != Some(&w) {
                return self.fail(&format!("{w:?} (of {phrase:?})"));
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn count(&mut self) -> Result<usize, ReadError> {
        match self.next("a number")?.parse() {
            Ok(n) if n > 0 => Ok(n),
            _ => {
                self.pos -= 1;
                self.fail("a positive number")
            }
        }
    }

    fn enter(&mut self) -> Result<(), ReadError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.fail("less nesting");
        }
        Ok(())
    }

    fn finish(&self) -> Result<(), ReadError> {
        if self.pos < self.words.len() {
            return self.fail("the end of the description");
        }
        Ok(())
    }

    fn list<T>(
        &mut self,
        n: usize,
        item: impl Fn(&mut Self) -> Result<T, ReadError>,
    ) -> Result<Vec<T>, ReadError> {
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            if i > 0 {
                self.expect(";")?;
            }
            out.push(item(self)?);
        }
        Ok(out)
    }

    fn statement(&mut self) -> Result<Formula, ReadError> {
        self.enter()?;
        let f = match self.next("a statement")? {
            "proposition" => Formula::prop(self.next("a proposition name")?),
            "predicate" => {
                let name = self.next("a predicate name")?.to_string();
                self.expect("holds for the")?;
                let n = self.count()?;
                let noun = self.next("\"object\" or \"objects\"")?;
                if noun != "object" && noun != "objects" {
                    self.pos -= 1;
                    return self.fail("\"object\" or \"objects\"");
                }
                let mut args = Vec::with_capacity(n);
                for i in 0..n {
                    if i > 0 {
                        let sep = self.next("\",\" or \"and\"")?;
                        if sep != "," && sep != "and" {
                            self.pos -= 1;
                            return self.fail("\",\" or \"and\"");
                        }
                    }
                    args.push(self.next("an object name")?.into());
                }
                Formula::Atom { name, args }
            }
            "it" => {
                self.expect("is not the case that")?;
                Formula::Not(Box::new(self.statement()?))
            }
            "all" => {
                self.expect("of the following")?;
                let n = self.count()?;
                self.expect("statements hold :")?;
                Formula::And(self.list(n, Self::statement)?).group()
            }
            "at" => {
                self.expect("least one of the following")?;
                let n = self.count()?;
                self.expect("statements holds :")?;
                Formula::Or(self.list(n, Self::statement)?).group()
            }
            "exactly" => {
                self.expect("one of the following 2 statements holds :")?;
                let a = self.statement()?;
                self.expect(";")?;
                Formula::Xor(Box::new(a), Box::new(self.statement()?)).group()
            }
            "the" => {
                self.expect("following 2 statements are equivalent :")?;
                let a = self.statement()?;
                self.expect(";")?;
                Formula::Iff(Box::new(a), Box::new(self.statement()?)).group()
            }
            "if" => {
                let a = self.statement()?;
                self.expect(", then")?;
                Formula::Implies(Box::new(a), Box::new(self.statement()?)).group()
            }
            "for" => {
                let q = match self.next("\"every\" or \"some\"")? {
                    "every" => Quantifier::Forall,
                    "some" => Quantifier::Exists,
                    _ => {
                        self.pos -= 1;
                        return self.fail("\"every\" or \"some\"");
                    }
                };
                let var = self.next("a variable")?.to_string();
                self.expect(",")?;
                let body = self.statement()?;
                Formula::Quant {
                    q,
                    vars: vec![var],
                    body: Box::new(body),
                }
            }
            _ => {
                self.pos -= 1;
                return self.fail("a statement");
            }
        };
        self.depth -= 1;
        Ok(f)
    }

    fn expression(&mut self) -> Result<Regex, ReadError> {
        self.enter()?;
        let r = match self.next("a regular expression")? {
            "the" => match self.next("\"symbol\", \"empty\" or \"sequence\"")? {
                "symbol" => {
                    let s = self.next("a symbol")?;
                    let mut chars = s.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => Regex::Symbol(c),
                        _ => {
                            self.pos -= 1;
                            return self.fail("a single-character symbol");
                        }
                    }
                }
                "empty" => {
                    self.expect("string")?;
                    Regex::Epsilon
                }
                "sequence" => {
                    self.expect("of")?;
                    let n = self.count()?;
                    self.expect("parts :")?;
                    Regex::Concat(self.list(n, Self::expression)?)
                }
                _ => {
                    self.pos -= 1;
                    return self.fail("\"symbol\", \"empty\" or \"sequence\"");
                }
            },
            "one" => match self.next("\"of\" or \"or\"")? {
                "of" => {
                    let n = self.count()?;
                    self.expect("alternatives :")?;
                    Regex::Union(self.list(n, Self::expression)?)
                }
                "or" => {
                    self.expect("more repetitions of")?;
                    Regex::Plus(Box::new(self.expression()?))
                }
                _ => {
                    self.pos -= 1;
                    return self.fail("\"of\" or \"or\"");
                }
            },
            "zero" => {
                self.expect("or more repetitions of")?;
                Regex::Star(Box::new(self.expression()?))
            }
            "optionally" => Regex::Optional(Box::new(self.expression()?)),
            _ => {
                self.pos -= 1;
                return self.fail("a regular expression");
            }
        };
        self.depth -= 1;
        Ok(r)
    }
}

/// Reads a formula from controlled English.
pub fn read_formula(text: &str) -> Result<Formula, ReadError> {
    let mut r = Reader::new(text);
    let f = r.statement()?;
    r.finish()?;
    Ok(f)
}

/// Reads a regular expression from controlled English.
pub fn read_regex(text: &str) -> Result<Regex, ReadError> {
    let mut r = Reader::new(text);
    let x = r.expression()?;
    r.finish()?;
    Ok(x)
}
