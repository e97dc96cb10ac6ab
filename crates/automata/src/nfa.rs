//! Thompson construction: a regular expression becomes an NFA with ε-moves.

use autoeval_syntax::Regex;

/// An NFA with one start and one accepting state.
pub(crate) struct Nfa {
    /// ε-successors of each state.
    pub eps: Vec<Vec<u32>>,
    /// Symbol moves of each state: (symbol index, target).
    pub moves: Vec<Vec<(u8, u32)>>,
    pub start: u32,
    pub accept: u32,
}

impl Nfa {
    fn state(&mut self) -> u32 {
        self.eps.push(Vec::new());
        self.moves.push(Vec::new());
        (self.eps.len() - 1) as u32
    }

    fn eps(&mut self, from: u32, to: u32) {
        self.eps[from as usize].push(to);
    }

    /// Builds the NFA of `r`; `index` maps a symbol to its position in the alphabet.
    pub(crate) fn build(r: &Regex, index: &impl Fn(char) -> u8) -> Nfa {
        let mut nfa = Nfa {
            eps: Vec::new(),
            moves: Vec::new(),
            start: 0,
            accept: 0,
        };
        let (s, a) = nfa.fragment(r, index);
        nfa.start = s;
        nfa.accept = a;
        nfa
    }

    /// Adds the states of `r` and returns its (entry, exit).
    fn fragment(&mut self, r: &Regex, index: &impl Fn(char) -> u8) -> (u32, u32) {
        match r {
            Regex::Epsilon => {
                let s = self.state();
                (s, s)
            }
            Regex::Symbol(c) => {
                let s = self.state();
                let e = self.state();
                self.moves[s as usize].push((index(*c), e));
                (s, e)
            }
            Regex::Group(inner) => self.fragment(inner, index),
            Regex::Concat(parts) => {
                let Some((first, rest)) = parts.split_first() else {
                    let s = self.state();
                    return (s, s);
                };
                let (start, mut end) = self.fragment(first, index);
                for p in rest {
                    let (s, e) = self.fragment(p, index);
                    self.eps(end, s);
                    end = e;
                }
                (start, end)
            }
            Regex::Union(alts) => {
                let s = self.state();
                let e = self.state();
                for alt in alts {
                    let (as_, ae) = self.fragment(alt, index);
                    self.eps(s, as_);
                    self.eps(ae, e);
                }
                (s, e)
            }
            Regex::Star(inner) | Regex::Plus(inner) | Regex::Optional(inner) => {
                let s = self.state();
                let e = self.state();
                let (is, ie) = self.fragment(inner, index);
                self.eps(s, is);
                self.eps(ie, e);
                if !matches!(r, Regex::Plus(_)) {
                    self.eps(s, e);
                }
                if !matches!(r, Regex::Optional(_)) {
                    self.eps(ie, is);
                }
                (s, e)
            }
        }
    }
}
