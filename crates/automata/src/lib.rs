//! Deterministic finite automata for the benchmark's regular expressions.
//!
//! A regular expression becomes an NFA by Thompson's construction and a
//! complete DFA by the subset construction. Equivalence is a breadth-first
//! search over pairs of states of two DFAs on one alphabet, which compares
//! transition symbols and start states (not only the automata's shapes) and
//! yields the shortest distinguishing string.

mod nfa;

use autoeval_syntax::Regex;
use std::collections::{HashMap, VecDeque};
use thiserror::Error;

/// Why an automaton could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AutomatonError {
    /// The subset construction exceeded its state budget.
    #[error("the automaton needs more than {0} states")]
    TooLarge(usize),
    /// A symbol of the expression is not in the alphabet given.
    #[error("symbol {0:?} is not in the alphabet")]
    UnknownSymbol(char),
    /// The subset construction ran past its time limit.
    #[error("the automaton was not built within {0:?}")]
    OutOfTime(std::time::Duration),
    /// The alphabet has more symbols than an automaton supports.
    #[error("alphabets of more than 255 symbols are not supported")]
    AlphabetTooLarge,
}

/// A complete DFA: every state has a move on every symbol.
#[derive(Clone, Debug)]
pub struct Dfa {
    alphabet: Vec<char>,
    /// `trans[state * k + symbol]`.
    trans: Vec<u32>,
    accept: Vec<bool>,
    start: u32,
}

/// Size of a minimal DFA, as the benchmark's metrics report it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// States, not counting the dead (rejecting sink) state.
    pub states: usize,
    /// Transitions between those states.
    pub edges: usize,
    /// `edges / (states · (states − 1))` rounded to one decimal; 0 below two states.
    pub density: f64,
}

/// A string in exactly one of two languages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distinction {
    /// The shortest such string.
    pub word: String,
    /// Whether the first automaton accepts it (the second then rejects it).
    pub in_first: bool,
}

fn set_bit(set: &mut [u64], i: u32) -> bool {
    let (w, b) = ((i / 64) as usize, i % 64);
    let was = set[w] >> b & 1 == 1;
    set[w] |= 1 << b;
    !was
}

impl Dfa {
    /// Builds the DFA of `r` over `alphabet`, with at most `max_states` states.
    pub fn from_regex(
        r: &Regex,
        alphabet: &[char],
        max_states: usize,
    ) -> Result<Dfa, AutomatonError> {
        Dfa::from_regex_by(r, alphabet, max_states, None)
    }

    /// As [`Dfa::from_regex`], giving up once `deadline` (the instant, and
    /// the time limit it stands for) has passed.
    pub fn from_regex_by(
        r: &Regex,
        alphabet: &[char],
        max_states: usize,
        deadline: Option<(std::time::Instant, std::time::Duration)>,
    ) -> Result<Dfa, AutomatonError> {
        if alphabet.len() > 255 {
            return Err(AutomatonError::AlphabetTooLarge);
        }
        for c in r.symbols() {
            if !alphabet.contains(&c) {
                return Err(AutomatonError::UnknownSymbol(c));
            }
        }
        let index = |c: char| alphabet.iter().position(|&a| a == c).unwrap_or(0) as u8;
        let nfa = nfa::Nfa::build(r, &index);
        let words = nfa.eps.len().div_ceil(64);
        let closure = |set: &mut Vec<u64>| {
            let mut stack: Vec<u32> = Vec::new();
            for (w, &bits) in set.iter().enumerate() {
                let mut bits = bits;
                while bits != 0 {
                    stack.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
            while let Some(s) = stack.pop() {
                for &t in &nfa.eps[s as usize] {
                    if set_bit(set, t) {
                        stack.push(t);
                    }
                }
            }
        };
        let k = alphabet.len();
        let mut start_set = vec![0u64; words];
        set_bit(&mut start_set, nfa.start);
        closure(&mut start_set);
        let mut ids: HashMap<Vec<u64>, u32> = HashMap::new();
        let mut sets: Vec<Vec<u64>> = Vec::new();
        ids.insert(start_set.clone(), 0);
        sets.push(start_set);
        let mut trans: Vec<u32> = Vec::new();
        let mut next = 0;
        while next < sets.len() {
            if let Some((at, limit)) = deadline {
                if std::time::Instant::now() >= at {
                    return Err(AutomatonError::OutOfTime(limit));
                }
            }
            for sym in 0..k as u8 {
                let mut target = vec![0u64; words];
                for (w, &bits) in sets[next].iter().enumerate() {
                    let mut bits = bits;
                    while bits != 0 {
                        let s = (w * 64) as u32 + bits.trailing_zeros();
                        bits &= bits - 1;
                        for &(m, t) in &nfa.moves[s as usize] {
                            if m == sym {
                                set_bit(&mut target, t);
                            }
                        }
                    }
                }
                closure(&mut target);
                let id = match ids.get(&target) {
                    Some(&id) => id,
                    None => {
                        if sets.len() >= max_states {
                            return Err(AutomatonError::TooLarge(max_states));
                        }
                        let id = sets.len() as u32;
                        ids.insert(target.clone(), id);
                        sets.push(target);
                        id
                    }
                };
                trans.push(id);
            }
            next += 1;
        }
        let (aw, ab) = ((nfa.accept / 64) as usize, nfa.accept % 64);
        let accept = sets.iter().map(|s| s[aw] >> ab & 1 == 1).collect();
        Ok(Dfa {
            alphabet: alphabet.to_vec(),
            trans,
            accept,
            start: 0,
        })
    }

    /// Number of states, including a dead state if there is one.
    pub fn len(&self) -> usize {
        self.accept.len()
    }

    /// True when the automaton has no states (never: it has at least a start state).
    pub fn is_empty(&self) -> bool {
        self.accept.is_empty()
    }

    fn next(&self, state: u32, sym: usize) -> u32 {
        self.trans[state as usize * self.alphabet.len() + sym]
    }

    /// Whether the automaton accepts `word`; symbols outside the alphabet are rejected.
    pub fn accepts(&self, word: &str) -> bool {
        let mut s = self.start;
        for c in word.chars() {
            match self.alphabet.iter().position(|&a| a == c) {
                Some(i) => s = self.next(s, i),
                None => return false,
            }
        }
        self.accept[s as usize]
    }

    /// The minimal complete DFA of the same language (Moore's partition refinement).
    pub fn minimize(&self) -> Dfa {
        let k = self.alphabet.len();
        let n = self.len();
        let mut class: Vec<u32> = self.accept.iter().map(|&a| a as u32).collect();
        let mut count = 0;
        loop {
            let mut sigs: HashMap<Vec<u32>, u32> = HashMap::new();
            let mut new_class = vec![0u32; n];
            for s in 0..n {
                let mut sig = Vec::with_capacity(k + 1);
                sig.push(class[s]);
                sig.extend((0..k).map(|a| class[self.next(s as u32, a) as usize]));
                let next_id = sigs.len() as u32;
                new_class[s] = *sigs.entry(sig).or_insert(next_id);
            }
            let new_count = sigs.len();
            class = new_class;
            if new_count == count {
                break;
            }
            count = new_count;
        }
        let mut trans = vec![0u32; count * k];
        let mut accept = vec![false; count];
        for s in 0..n {
            let c = class[s] as usize;
            accept[c] = self.accept[s];
            for a in 0..k {
                trans[c * k + a] = class[self.next(s as u32, a) as usize];
            }
        }
        Dfa {
            alphabet: self.alphabet.clone(),
            trans,
            accept,
            start: class[self.start as usize],
        }
    }

    /// States from which some accepting state can be reached.
    fn live_states(&self) -> Vec<bool> {
        let k = self.alphabet.len();
        let mut live = self.accept.clone();
        let mut changed = true;
        while changed {
            changed = false;
            for s in 0..self.len() {
                if !live[s] && (0..k).any(|a| live[self.next(s as u32, a) as usize]) {
                    live[s] = true;
                    changed = true;
                }
            }
        }
        live
    }

    /// States, edges and density of this automaton without its dead states;
    /// call it on a minimal DFA for the benchmark's metrics.
    pub fn shape(&self) -> Shape {
        let live = self.live_states();
        let k = self.alphabet.len();
        let states = live.iter().filter(|&&l| l).count();
        let mut edges = 0;
        for s in (0..self.len()).filter(|&s| live[s]) {
            edges += (0..k)
                .filter(|&a| live[self.next(s as u32, a) as usize])
                .count();
        }
        let density = if states >= 2 {
            let d = edges as f64 / (states * (states - 1)) as f64;
            (d * 10.0).round() / 10.0
        } else {
            0.0
        };
        Shape {
            states,
            edges,
            density,
        }
    }

    /// The shortest string accepted by exactly one of `self` and `other`, or
    /// `None` when the languages are equal. Both must share one alphabet.
    pub fn distinguish(&self, other: &Dfa) -> Option<Distinction> {
        debug_assert_eq!(self.alphabet, other.alphabet);
        let k = self.alphabet.len();
        let key = |a: u32, b: u32| (a as u64) << 32 | b as u64;
        // Breadth-first over reachable pairs; `parent` rebuilds the word.
        let mut parent: HashMap<u64, (u64, u8)> = HashMap::new();
        let start = key(self.start, other.start);
        parent.insert(start, (start, 0));
        let mut queue = VecDeque::from([(self.start, other.start)]);
        while let Some((a, b)) = queue.pop_front() {
            if self.accept[a as usize] != other.accept[b as usize] {
                let mut word = Vec::new();
                let mut at = key(a, b);
                while at != start {
                    let (prev, sym) = parent[&at];
                    word.push(self.alphabet[sym as usize]);
                    at = prev;
                }
                word.reverse();
                return Some(Distinction {
                    word: word.into_iter().collect(),
                    in_first: self.accept[a as usize],
                });
            }
            for sym in 0..k {
                let (na, nb) = (self.next(a, sym), other.next(b, sym));
                let nk = key(na, nb);
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(nk) {
                    e.insert((key(a, b), sym as u8));
                    queue.push_back((na, nb));
                }
            }
        }
        None
    }
}
