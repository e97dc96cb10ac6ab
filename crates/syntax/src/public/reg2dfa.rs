//! The public implementation's regular-expression check, as it decides:
//! each expression is cleaned (`strip`, spaces and backslashes removed),
//! turned into a minimal automaton by the reg2dfa tool it runs, and the two
//! automata are compared as graphs, by their shape alone.
//!
//! * reg2dfa's reading: only `*`, `|`, `(` and `)` are operators; every other
//!   character is a symbol, and the alphabet is the symbols the expression
//!   uses. `*` follows a symbol or a `)`; any other `*` (a second one, a
//!   leading one) is an error. An unmatched `)` ends the expression (the rest
//!   is ignored), an unclosed `(` is closed at the end, and an empty branch
//!   of `|` is dropped.
//! * Its automaton: the subset construction's partial DFA (no dead state),
//!   its states those that have a transition, minimised so that two states
//!   are one when both accept or neither does and, for every symbol, both
//!   lack a transition or both move to states that are one.
//! * The comparison: graph isomorphism of the two automata as directed
//!   multigraphs whose nodes are marked accepting or not; the edges' symbols
//!   and the start state take no part (the public code asks for a label match
//!   that, on a multigraph, compares nothing).
//!
//! So `(1*)` is "equivalent" to `(0*)` there, and prose is an expression
//! over its letters. [`shape_equal`] gives that verdict, or the error the
//! public code met.

use crate::Regex;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// An NFA edge: from, to, symbol (`None` for ε).
type Edge = (usize, usize, Option<char>);

/// A fragment under construction: its head, its tail and its edges.
struct Term {
    head: usize,
    tail: usize,
    edges: Vec<Edge>,
}

/// Builds reg2dfa's NFA of an expression as [`read`] reads it: each branch
/// a chain of fresh states from its head to its tail, joined to its
/// surroundings with ε-edges, as reg2dfa builds it while reading.
struct Builder {
    states: usize,
    symbols: BTreeSet<char>,
}

impl Builder {
    fn fresh(&mut self) -> usize {
        self.states += 1;
        self.states - 1
    }

    /// The branches of `r` (a union's, or `r` alone) as terms.
    fn alternatives(&mut self, r: &Regex) -> Vec<Term> {
        match r {
            Regex::Union(branches) => branches.iter().map(|b| self.term(b)).collect(),
            Regex::Optional(x) => vec![self.term(x), self.term(&Regex::Epsilon)],
            other => vec![self.term(other)],
        }
    }

    /// One branch: its parts chained from a fresh head (ε has none).
    fn term(&mut self, r: &Regex) -> Term {
        let head = self.fresh();
        let mut term = Term {
            head,
            tail: head,
            edges: Vec::new(),
        };
        let parts = match r {
            Regex::Concat(parts) => parts.as_slice(),
            Regex::Epsilon => &[],
            other => std::slice::from_ref(other),
        };
        for part in parts {
            self.part(part, &mut term);
        }
        term
    }

    /// Appends one part to `term`: a symbol, a starred symbol or group, or
    /// a group (anything else is taken as a group of itself).
    fn part(&mut self, r: &Regex, term: &mut Term) {
        match r {
            Regex::Symbol(c) => {
                self.symbols.insert(*c);
                let next = self.fresh();
                term.edges.push((term.tail, next, Some(*c)));
                term.tail = next;
            }
            Regex::Star(x) => {
                let next = self.fresh();
                term.edges.push((term.tail, next, None));
                match x.as_ref() {
                    Regex::Symbol(c) => {
                        self.symbols.insert(*c);
                        term.edges.push((term.tail, term.tail, Some(*c)));
                    }
                    // A group's alternatives loop on the tail; anything
                    // else (never read: a star follows a symbol or a `)`)
                    // is taken as a group of itself.
                    other => {
                        let inner = match other {
                            Regex::Group(inner) => inner.as_ref(),
                            other => other,
                        };
                        let inner = self.alternatives(inner);
                        merge(inner, term.tail, term.tail, &mut term.edges);
                    }
                }
                term.tail = next;
            }
            // Not reg2dfa's (never read): one or more is one, then a star.
            Regex::Plus(x) => {
                self.part(x, term);
                self.part(&Regex::Star(x.clone()), term);
            }
            Regex::Group(inner) => self.group(inner, term),
            other => self.group(other, term),
        }
    }

    /// Appends the alternatives of `inner` between `term`'s tail and a fresh one.
    fn group(&mut self, inner: &Regex, term: &mut Term) {
        let inner = self.alternatives(inner);
        let next = self.fresh();
        merge(inner, term.tail, next, &mut term.edges);
        term.tail = next;
    }
}

/// Joins alternatives between `head` and `tail` with ε-edges.
fn merge(terms: Vec<Term>, head: usize, tail: usize, out: &mut Vec<Edge>) {
    for t in terms {
        out.push((head, t.head, None));
        out.extend(t.edges);
        out.push((t.tail, tail, None));
    }
}

/// A minimal automaton as reg2dfa writes it: for each state, whether it
/// accepts, and its edges' multiplicities between states.
#[derive(Debug, PartialEq)]
struct Shape {
    accepting: Vec<bool>,
    edges: BTreeMap<(usize, usize), usize>,
}

/// reg2dfa's NFA of an expression: its edges, its ε-closures, its final
/// state and its symbols.
struct Nfa {
    edges: Vec<Edge>,
    eps: Vec<BTreeSet<usize>>,
    last: usize,
    symbols: BTreeSet<char>,
}

impl Nfa {
    /// The NFA reg2dfa builds of `exp` (cleaned first), or its error.
    fn of(exp: &str) -> Result<Nfa, String> {
        let mut b = Builder {
            states: 1,
            symbols: BTreeSet::new(),
        };
        let terms = b.alternatives(&read(exp)?);
        let mut edges = Vec::new();
        let last = b.states;
        merge(terms, 0, last, &mut edges);
        let mut eps: Vec<BTreeSet<usize>> = (0..=last).map(|s| BTreeSet::from([s])).collect();
        loop {
            let mut changed = false;
            for &(a, b, label) in &edges {
                if label.is_none() {
                    let add: Vec<usize> = eps[b].iter().copied().collect();
                    for x in add {
                        changed |= eps[a].insert(x);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        Ok(Nfa {
            edges,
            eps,
            last,
            symbols: b.symbols,
        })
    }

    /// The states reached from `set` reading `c`, ε-closed.
    fn step(&self, set: &BTreeSet<usize>, c: char) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        for &(a, b, label) in &self.edges {
            if label == Some(c) && set.contains(&a) {
                out.extend(self.eps[b].iter().copied());
            }
        }
        out
    }

    fn start(&self) -> BTreeSet<usize> {
        self.eps[0].clone()
    }

    fn accepts(&self, set: &BTreeSet<usize>) -> bool {
        set.contains(&self.last)
    }
}

/// Most states the subset construction builds, and most partial mappings
/// the isomorphism search tries, before the check gives up: bounds on an
/// answer made to be expensive (the public code had none).
const MAX_STATES: usize = 100_000;
const MAX_MAPPINGS: usize = 1_000_000;

/// reg2dfa's minimal automaton of `exp`, or its error.
fn shape(exp: &str) -> Result<Shape, String> {
    let nfa = Nfa::of(exp)?;
    let last = nfa.last;
    // Subset construction: only non-empty moves make edges.
    let symbols: Vec<char> = nfa.symbols.iter().copied().collect();
    let step = |set: &BTreeSet<usize>, c: char| nfa.step(set, c);
    let mut index: HashMap<BTreeSet<usize>, usize> = HashMap::new();
    let mut sets = vec![nfa.start()];
    index.insert(nfa.start(), 0);
    let mut dfa: Vec<(usize, usize, char)> = Vec::new();
    let mut at = 0;
    while at < sets.len() {
        if sets.len() > MAX_STATES {
            return Err(format!("the automaton outgrew {MAX_STATES} states"));
        }
        for &c in &symbols {
            let next = step(&sets[at], c);
            if next.is_empty() {
                continue;
            }
            let to = *index.entry(next.clone()).or_insert_with(|| {
                sets.push(next);
                sets.len() - 1
            });
            dfa.push((at, to, c));
        }
        at += 1;
    }
    // Only states with an edge take part, as reg2dfa enumerates them.
    let present: BTreeSet<usize> = dfa.iter().flat_map(|&(a, b, _)| [a, b]).collect();
    let accepts = |s: usize| sets[s].contains(&last);
    let moves: HashMap<(usize, char), usize> = dfa.iter().map(|&(a, b, c)| ((a, c), b)).collect();
    // Coarsest partition: same acceptance, and per symbol both without a
    // move or both moving into one block.
    let mut block: HashMap<usize, usize> = present
        .iter()
        .map(|&s| (s, usize::from(accepts(s))))
        .collect();
    loop {
        let mut keys: HashMap<Vec<Option<usize>>, usize> = HashMap::new();
        let mut next: HashMap<usize, usize> = HashMap::new();
        for &s in &present {
            let mut key = vec![Some(block[&s])];
            key.extend(
                symbols
                    .iter()
                    .map(|&c| moves.get(&(s, c)).map(|t| block[t])),
            );
            let fresh = keys.len();
            next.insert(s, *keys.entry(key).or_insert(fresh));
        }
        let before: BTreeSet<usize> = block.values().copied().collect();
        let stable = keys.len() == before.len();
        block = next;
        if stable {
            break;
        }
    }
    let ids: BTreeMap<usize, usize> = block
        .values()
        .copied()
        .collect::<BTreeSet<usize>>()
        .into_iter()
        .enumerate()
        .map(|(i, b)| (b, i))
        .collect();
    let mut accepting = vec![false; ids.len()];
    for &s in &present {
        accepting[ids[&block[&s]]] = accepts(s);
    }
    let distinct: BTreeSet<(usize, usize, char)> = dfa
        .iter()
        .map(|&(a, b, c)| (ids[&block[&a]], ids[&block[&b]], c))
        .collect();
    let mut multiplicity = BTreeMap::new();
    for (a, b, _) in distinct {
        *multiplicity.entry((a, b)).or_insert(0) += 1;
    }
    Ok(Shape {
        accepting,
        edges: multiplicity,
    })
}

/// Whether the two shapes are isomorphic (a bijection of states keeping
/// acceptance and the number of edges between every ordered pair), or
/// `None` when the search outgrew [`MAX_MAPPINGS`].
fn isomorphic(a: &Shape, b: &Shape) -> Option<bool> {
    let n = a.accepting.len();
    if n != b.accepting.len() || a.edges.values().sum::<usize>() != b.edges.values().sum::<usize>()
    {
        return Some(false);
    }
    let count = |s: &Shape, x: usize, y: usize| s.edges.get(&(x, y)).copied().unwrap_or(0);
    let signature = |s: &Shape, x: usize| {
        let out: usize = (0..n).map(|y| count(s, x, y)).sum();
        let inn: usize = (0..n).map(|y| count(s, y, x)).sum();
        (s.accepting[x], out, inn, count(s, x, x))
    };
    let sig_a: Vec<_> = (0..n).map(|x| signature(a, x)).collect();
    let sig_b: Vec<_> = (0..n).map(|x| signature(b, x)).collect();
    let mut map = vec![usize::MAX; n];
    let mut used = vec![false; n];
    fn extend(
        x: usize,
        map: &mut [usize],
        used: &mut [bool],
        tries: &mut usize,
        fits: &dyn Fn(usize, usize, &[usize]) -> bool,
    ) -> bool {
        if x == map.len() {
            return true;
        }
        for y in 0..map.len() {
            *tries += 1;
            if *tries > MAX_MAPPINGS {
                return false;
            }
            if !used[y] && fits(x, y, map) {
                map[x] = y;
                used[y] = true;
                if extend(x + 1, map, used, tries, fits) {
                    return true;
                }
                used[y] = false;
                map[x] = usize::MAX;
            }
        }
        false
    }
    let fits = |x: usize, y: usize, map: &[usize]| {
        sig_a[x] == sig_b[y]
            && (0..x).all(|p| {
                count(a, x, p) == count(b, y, map[p]) && count(a, p, x) == count(b, map[p], y)
            })
    };
    let mut tries = 0;
    let found = extend(0, &mut map, &mut used, &mut tries, &fits);
    (found || tries <= MAX_MAPPINGS).then_some(found)
}

/// The public code's cleaning of an answer before reg2dfa reads it:
/// stripped as Python strips, then its spaces and backslashes removed.
pub fn clean(answer: &str) -> String {
    super::python::strip(answer).replace([' ', '\\'], "")
}

/// The symbols reg2dfa reads in `exp`: JavaScript's UTF-16 code units, so a
/// character beyond the Basic Multilingual Plane is two symbols there. Each
/// half is kept as a character of a private-use plane, which no symbol can
/// otherwise be (every character of those planes is itself split in two).
fn code_units(exp: &str) -> Vec<char> {
    exp.encode_utf16()
        .map(|unit| match unit {
            0xD800..=0xDFFF => char::from_u32(0xF0000 + u32::from(unit - 0xD800)),
            _ => char::from_u32(u32::from(unit)),
        })
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Whether the two expressions, as reg2dfa reads them, denote the same
/// language: the sound verdict on the public reading (symbols count, and a
/// missing move is a dead state), or the error reg2dfa met.
pub fn language_equal(a: &str, b: &str) -> Result<bool, String> {
    let (a, b) = (Nfa::of(a)?, Nfa::of(b)?);
    let symbols: BTreeSet<char> = a.symbols.union(&b.symbols).copied().collect();
    let mut seen = BTreeSet::new();
    let mut todo = vec![(a.start(), b.start())];
    while let Some((x, y)) = todo.pop() {
        if !seen.insert((x.clone(), y.clone())) {
            continue;
        }
        if a.accepts(&x) != b.accepts(&y) {
            return Ok(false);
        }
        for &c in &symbols {
            let next = (a.step(&x, c), b.step(&y, c));
            if !(next.0.is_empty() && next.1.is_empty()) {
                todo.push(next);
            }
        }
    }
    Ok(true)
}

/// reg2dfa's reading of an answer (cleaned first) as an expression of this
/// crate: every character but `*`, `|`, `(` and `)` a symbol, or the error
/// reg2dfa met. [`print`] writes it back in a form reg2dfa reads the same.
pub fn read(answer: &str) -> Result<Regex, String> {
    let cleaned = clean(answer);
    // The public code passes the expression on reg2dfa's command line, whose
    // runner takes an argument beginning with `-` for an option of its own
    // (a lone `-` is an argument).
    if cleaned.starts_with('-') && cleaned != "-" {
        return Err(
            "the answer begins with '-', which reg2dfa's command line takes for an option".into(),
        );
    }
    let r = read_alternatives(&code_units(&cleaned))?;
    if depth(&r) > MAX_CHECKED_DEPTH {
        return Err(format!(
            "groups nest deeper than this tool checks ({MAX_CHECKED_DEPTH} levels beyond what \
             collapses)"
        ));
    }
    Ok(r)
}

/// Deepest expression this tool builds automata for: its automata are
/// built by walking the expression, and a deeper one could exhaust a
/// thread's stack. Redundant groups (`((x))`, `(x*)*`) are collapsed first.
const MAX_CHECKED_DEPTH: usize = 1_000;

/// How deeply `r` nests, counted without recursion.
fn depth(r: &Regex) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(r, 1)];
    while let Some((node, d)) = todo.pop() {
        deepest = deepest.max(d);
        match node {
            Regex::Concat(xs) | Regex::Union(xs) => todo.extend(xs.iter().map(|x| (x, d + 1))),
            Regex::Star(x) | Regex::Plus(x) | Regex::Optional(x) | Regex::Group(x) => {
                todo.push((x, d + 1))
            }
            Regex::Epsilon | Regex::Symbol(_) => {}
        }
    }
    deepest
}

/// Deepest nesting of groups reg2dfa reads: its reader calls itself once
/// for each `(`, and JavaScript's stack ends it past this depth (measured
/// on the public setup: 5,724 parentheses read, 5,725 do not).
const MAX_NESTING: usize = 5_724;

/// reg2dfa's reader over the expression, as it reads it: the alternatives
/// up to a `)` or the end, an empty branch dropped before a `|` and kept
/// (as ε) before a `)` or the end; an unmatched `)` ends the expression and
/// an unclosed `(` is closed at the end. The reader keeps one frame per open
/// group on a stack of its own, so no depth reg2dfa reads exhausts this
/// process's stack.
fn read_alternatives(exp: &[char]) -> Result<Regex, String> {
    // The open groups, innermost last: their branches and current term.
    let mut frames: Vec<(Vec<Regex>, Vec<Regex>)> = vec![(Vec::new(), Vec::new())];
    let mut pos = 0;
    loop {
        let c = exp.get(pos).copied();
        pos += 1;
        let starred = exp.get(pos) == Some(&'*');
        let Some((branches, term)) = frames.last_mut() else {
            return Err("the reader lost its frame".into());
        };
        match c {
            Some('*') => return Err(format!("unspecified asterisk at position {pos}")),
            Some('|') => {
                if !term.is_empty() {
                    branches.push(sequence(std::mem::take(term)));
                }
            }
            Some('(') => {
                if frames.len() > MAX_NESTING {
                    return Err(format!(
                        "nested deeper than reg2dfa reads ({MAX_NESTING} groups; JavaScript's stack ends it)"
                    ));
                }
                frames.push((Vec::new(), Vec::new()));
            }
            Some(')') | None => {
                let (mut branches, term) = frames.pop().unwrap_or_default();
                branches.push(sequence(term));
                let alternatives = match branches.len() {
                    1 => branches.remove(0),
                    _ => Regex::Union(branches),
                };
                let Some((_, outer)) = frames.last_mut() else {
                    return Ok(alternatives);
                };
                let group = group_of(alternatives);
                if exp.get(pos) == Some(&'*') {
                    pos += 1;
                    outer.push(starred_group(group));
                } else {
                    outer.push(group);
                }
            }
            Some(symbol) => {
                let symbol = Regex::Symbol(symbol);
                if starred {
                    pos += 1;
                    term.push(Regex::Star(Box::new(symbol)));
                } else {
                    term.push(symbol);
                }
            }
        }
    }
}

/// A group of `inner`; a group of a group is one group (the same language,
/// and reg2dfa's minimal automaton is the language's).
fn group_of(inner: Regex) -> Regex {
    match inner {
        g @ Regex::Group(_) => g,
        other => Regex::Group(Box::new(other)),
    }
}

/// A starred group; `(x*)*` is `x*` (the same language).
fn starred_group(group: Regex) -> Regex {
    match group {
        Regex::Group(inner) if matches!(*inner, Regex::Star(_)) => *inner,
        other => Regex::Star(Box::new(other)),
    }
}

/// Parts read one after another: ε when there are none.
fn sequence(mut parts: Vec<Regex>) -> Regex {
    match parts.len() {
        0 => Regex::Epsilon,
        1 => parts.remove(0),
        _ => Regex::Concat(parts),
    }
}

/// `r` written with reg2dfa's operators only, so that [`read`] gives back
/// the same expression: ε as `()`, a star after a symbol or a `)`.
pub fn print(r: &Regex) -> String {
    let mut out = String::new();
    write(&mut out, r);
    out
}

/// `x` in parentheses; ε as `()`.
fn grouped(out: &mut String, x: &Regex) {
    out.push('(');
    if *x != Regex::Epsilon {
        write(out, x);
    }
    out.push(')');
}

/// `x` as the operand of a star: a symbol alone, anything else grouped.
fn atom(out: &mut String, x: &Regex) {
    match x {
        Regex::Symbol(c) => out.push(*c),
        Regex::Group(inner) => grouped(out, inner),
        other => grouped(out, other),
    }
}

fn write(out: &mut String, r: &Regex) {
    match r {
        Regex::Epsilon => out.push_str("()"),
        Regex::Symbol(c) => out.push(*c),
        Regex::Concat(parts) => {
            for p in parts {
                match p {
                    Regex::Union(_) => grouped(out, p),
                    _ => write(out, p),
                }
            }
        }
        Regex::Union(branches) => {
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write(out, b);
            }
        }
        Regex::Star(x) => {
            atom(out, x);
            out.push('*');
        }
        // Not reg2dfa's operators: written with its own.
        Regex::Plus(x) => {
            atom(out, x);
            atom(out, x);
            out.push('*');
        }
        Regex::Optional(x) => {
            out.push('(');
            write(out, x);
            out.push_str("|())");
        }
        Regex::Group(inner) => grouped(out, inner),
    }
}

/// The public implementation's verdict on two regular expressions: true
/// when their minimal automata have one shape, or the error it met.
pub fn shape_equal(a: &str, b: &str) -> Result<bool, String> {
    isomorphic(&shape(a)?, &shape(b)?)
        .ok_or_else(|| format!("the isomorphism search outgrew {MAX_MAPPINGS} mappings"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_code_units_and_a_leading_dash_is_an_option() {
        // One character beyond the BMP is two symbols: its star repeats the second.
        let astral = read("𝟎*").unwrap();
        assert_eq!(print(&astral).chars().count(), 3);
        assert_eq!(shape_equal("𝟎*", "01*"), Ok(true));
        assert_eq!(language_equal("𝟎𝟎", "𝟎𝟎"), Ok(true));
        assert!(read("-0*1").is_err());
        // A lone dash is an argument, not an option.
        assert!(read("-").is_ok());
        assert!(read(" \u{1f}0-1").is_ok());
    }

    #[test]
    fn groups_nest_as_deep_as_reg2dfa_reads_them() {
        let parens = |k: usize| format!("{}0*{}", "(".repeat(k), ")".repeat(k));
        assert_eq!(shape_equal(&parens(5_724), "0*"), Ok(true));
        assert!(read(&parens(5_725)).is_err());
        let stars = |k: usize| format!("{}0{}", "(".repeat(k), ")*".repeat(k));
        assert_eq!(language_equal(&stars(3_000), "0*"), Ok(true));
    }

    #[test]
    fn symbols_do_not_count_and_operators_are_few() {
        assert_eq!(shape_equal("(0*)", "(1*)"), Ok(true));
        assert_eq!(shape_equal("0*1", "0*1)"), Ok(true));
        assert_eq!(shape_equal("0*1", "(0*1"), Ok(true));
        assert_eq!(shape_equal("00*", "0+"), Ok(false));
        assert!(shape_equal("0", "0**").is_err());
        assert_eq!(shape_equal("(01)*", "(0|1)*"), Ok(false));
    }
}
