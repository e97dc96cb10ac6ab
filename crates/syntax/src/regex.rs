//! Regular expressions as written, keeping explicit parentheses.

use serde::{Deserialize, Serialize};

/// A regular expression over single-character symbols.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Regex {
    /// The empty string, written `ε` (lenient parser only).
    Epsilon,
    /// One alphabet symbol.
    Symbol(char),
    /// Concatenation of two or more parts.
    Concat(Vec<Regex>),
    /// Union of two or more alternatives, written `|` (lenient parser only).
    Union(Vec<Regex>),
    /// Kleene star: zero or more repetitions.
    Star(Box<Regex>),
    /// One or more repetitions, written `+` (lenient parser only).
    Plus(Box<Regex>),
    /// Zero or one occurrence, written `?` (lenient parser only).
    Optional(Box<Regex>),
    /// Explicit parentheses.
    Group(Box<Regex>),
}

impl Regex {
    /// Calls `f` on every node, parents before children.
    pub fn visit(&self, f: &mut impl FnMut(&Regex)) {
        f(self);
        match self {
            Regex::Epsilon | Regex::Symbol(_) => {}
            Regex::Concat(xs) | Regex::Union(xs) => xs.iter().for_each(|x| x.visit(f)),
            Regex::Star(a) | Regex::Plus(a) | Regex::Optional(a) | Regex::Group(a) => a.visit(f),
        }
    }

    /// The symbols the expression mentions, sorted and without repeats.
    pub fn symbols(&self) -> Vec<char> {
        let mut out = Vec::new();
        self.visit(&mut |r| {
            if let Regex::Symbol(c) = r {
                out.push(*c);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Number of Kleene stars in the expression.
    pub fn count_stars(&self) -> usize {
        let mut n = 0;
        self.visit(&mut |r| n += matches!(r, Regex::Star(_)) as usize);
        n
    }
}
