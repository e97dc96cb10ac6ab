//! The rules of the logic library the public implementation parses with
//! (its `nltk.sem.logic` reader, version 3.8.1), as they decide what an
//! answer means: which characters make a token, which words are operators,
//! how tightly each operator binds, where a quantifier's scope ends, which
//! names may be predicates or bound variables.
//!
//! * Tokens: only the symbols `& ^ | -> => <-> <=> = == != \ . ( ) , - !`
//!   are cut out of the text, the longest first; every other run of
//!   characters up to a space or tab is one token, so `p6v`, `p1∨p2` and
//!   `~p1` are names, and the words `and or not all exists some …` are
//!   operators only standing apart.
//! * Binding, tightest first: negation; application; `=`; a quantifier's
//!   body; `&`; `|`; `->`; `<->`. A quantifier's body ends at the first
//!   `&`, `|`, `->` or `<->` outside parentheses: `all x.P(x) & Q(x)` is
//!   `(all x.P(x)) & Q(x)`.
//! * A name of one letter and digits (`p1`, `x2`, not `e`) is an individual
//!   variable: it may be bound or stand as an atom, but takes no arguments;
//!   any other name (`pred1`, `admire`) is a constant: it takes arguments
//!   but cannot be bound. The dot after a quantifier's variables is
//!   optional, so `exists x1 pred1(x1)` asks to bind `pred1` and fails.

/// Most nested expressions read before giving up, as the tool's own parser.
const MAX_NESTING: usize = crate::parse_logic::MAX_DEPTH;

/// An expression as the library builds it.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Expr {
    /// A name: a variable or a constant.
    Name(String),
    /// A function applied to one argument (arguments are curried).
    Apply(Box<Expr>, Box<Expr>),
    /// Negation.
    Not(Box<Expr>),
    /// A binary connective.
    Binary(Op, Box<Expr>, Box<Expr>),
    /// `a = b`.
    Equal(Box<Expr>, Box<Expr>),
    /// A binder (quantifier, lambda, iota) over one variable.
    Bind(Binder, String, Box<Expr>),
}

/// A binary connective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    And,
    Or,
    Implies,
    Iff,
}

/// What binds a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Binder {
    All,
    Exists,
    Iota,
    Lambda,
}

/// Why the library refused a text, and where (a byte offset).
#[derive(Debug)]
pub(super) struct Refusal {
    pub(super) at: usize,
    pub(super) why: String,
}

/// The symbols the library cuts out of text.
const SYMBOLS: [&str; 17] = [
    "&", "^", "|", "->", "=>", "<->", "<=>", "=", "==", "!=", "\\", ".", "(", ")", ",", "-", "!",
];

/// Every token the library gives a meaning; any other token is a name.
const OPERATOR_WORDS: [&str; 11] = [
    "and", "or", "implies", "iff", "some", "exists", "exist", "all", "forall", "iota", "not",
];

/// The tokens of `text` with their byte offsets.
fn tokenize(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut name = String::new();
    let mut name_at = 0;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        // Walk the symbols' trie as far as the text follows it; a symbol
        // only when the walk ends on one.
        let mut walked = 0;
        while walked < rest.len() {
            let next = rest[walked..].chars().next().map_or(0, char::len_utf8);
            let longer = &rest[..walked + next];
            if SYMBOLS.iter().any(|s| s.starts_with(longer)) {
                walked += next;
            } else {
                break;
            }
        }
        if walked > 0 && SYMBOLS.contains(&&rest[..walked]) {
            if !name.is_empty() {
                out.push((std::mem::take(&mut name), name_at));
            }
            out.push((rest[..walked].to_string(), i));
            i += walked;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if matches!(c, ' ' | '\t' | '\n') {
            if !name.is_empty() {
                out.push((std::mem::take(&mut name), name_at));
            }
        } else {
            if name.is_empty() {
                name_at = i;
            }
            name.push(c);
        }
        i += c.len_utf8();
    }
    if !name.is_empty() {
        out.push((name, name_at));
    }
    out
}

/// True for a token the library gives no meaning: a name.
fn is_name(tok: &str) -> bool {
    !SYMBOLS.contains(&tok) && !OPERATOR_WORDS.contains(&tok)
}

/// The kinds of names the library tells apart by their spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NameKind {
    /// One letter other than `e`, then digits: `p1`, `x`, `a12`.
    Individual,
    /// An upper-case letter, then digits.
    Function,
    /// `e`, then digits.
    Event,
    /// Anything else: `pred1`, `admire`, `~p1`.
    Constant,
}

/// How the library classes a name.
pub(super) fn kind(name: &str) -> NameKind {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return NameKind::Constant;
    };
    // Digits beyond ASCII would not reach the prover as a name either.
    if !chars.all(|c| c.is_ascii_digit()) {
        return NameKind::Constant;
    }
    match first {
        'e' => NameKind::Event,
        'a'..='d' | 'f'..='z' => NameKind::Individual,
        'A'..='Z' => NameKind::Function,
        _ => NameKind::Constant,
    }
}

/// How tightly an operator binds, as the library ranks them (lower first).
fn precedence(tok: &str) -> u8 {
    match tok {
        "\\" => 1,
        "not" | "-" | "!" => 2,
        APPLY => 3,
        "=" | "==" | "!=" => 4,
        "some" | "exists" | "exist" | "all" | "forall" | "iota" => 5,
        "and" | "&" | "^" => 6,
        "or" | "|" => 7,
        "implies" | "->" | "=>" => 8,
        "iff" | "<->" | "<=>" => 9,
        _ => 10,
    }
}

/// The context of a function's arguments.
const APPLY: &str = "\u{0}apply";

/// The reader over one line's tokens.
struct Reader {
    toks: Vec<(String, usize)>,
    pos: usize,
    end: usize,
    depth: usize,
}

/// Parses one line as the library does.
pub(super) fn parse(line: &str) -> Result<Expr, Refusal> {
    let line = line.trim_end();
    let mut r = Reader {
        toks: tokenize(line),
        pos: 0,
        end: line.len(),
        depth: 0,
    };
    let e = r.expression(None)?;
    if let Some((tok, at)) = r.toks.get(r.pos) {
        return Err(Refusal {
            at: *at,
            why: format!("unexpected {tok:?} after a complete expression"),
        });
    }
    Ok(e)
}

impl Reader {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|(t, _)| t.as_str())
    }

    fn at(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |(_, at)| *at)
    }

    fn refuse(&self, why: impl Into<String>) -> Refusal {
        Refusal {
            at: self.at(),
            why: why.into(),
        }
    }

    fn next(&mut self) -> Option<String> {
        let t = self.toks.get(self.pos).map(|(t, _)| t.clone());
        self.pos += usize::from(t.is_some());
        t
    }

    fn expect(&mut self, want: &str) -> Result<(), Refusal> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            Some(t) => Err(self.refuse(format!("expected {want:?} but found {t:?}"))),
            None => Err(self.refuse(format!("the text ended where {want:?} was expected"))),
        }
    }

    /// True when `op` binds tighter than the context `ctx`.
    fn has_priority(op: &str, ctx: Option<&str>) -> bool {
        let (o, c) = (precedence(op), ctx.map_or(10, precedence));
        o < c || (op == APPLY && o == c)
    }

    /// One expression in context `ctx`, with what binds tighter than it.
    fn expression(&mut self, ctx: Option<&str>) -> Result<Expr, Refusal> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.refuse(format!("nested deeper than {MAX_NESTING} levels")));
        }
        let Some(tok) = self.next() else {
            return Err(self.refuse("an expression was expected where the text ended"));
        };
        let head = if is_name(&tok) {
            self.name(tok)?
        } else if matches!(tok.as_str(), "not" | "-" | "!") {
            Expr::Not(Box::new(self.expression(Some("-"))?))
        } else if tok == "\\" {
            self.binder(Binder::Lambda, &tok)?
        } else if matches!(tok.as_str(), "some" | "exists" | "exist") {
            self.binder(Binder::Exists, &tok)?
        } else if matches!(tok.as_str(), "all" | "forall") {
            self.binder(Binder::All, &tok)?
        } else if tok == "iota" {
            self.binder(Binder::Iota, &tok)?
        } else if tok == "(" {
            let inner = self.expression(None)?;
            self.expect(")")?;
            inner
        } else {
            self.pos -= 1;
            return Err(self.refuse(format!("an expression was expected, not {tok:?}")));
        };
        let e = self.adjuncts(head, ctx);
        self.depth -= 1;
        e
    }

    /// A name, applied to its arguments when a `(` follows.
    fn name(&mut self, tok: String) -> Result<Expr, Refusal> {
        let k = kind(&tok);
        let head = Expr::Name(tok.clone());
        if self.peek() != Some("(") {
            return Ok(head);
        }
        if !matches!(k, NameKind::Function | NameKind::Constant) {
            return Err(self.refuse(format!(
                "{tok:?} cannot be a predicate: a name of one letter and digits is a variable"
            )));
        }
        self.pos += 1;
        self.arguments(head)
    }

    /// The arguments of `f` after its `(`, through the `)`.
    fn arguments(&mut self, f: Expr) -> Result<Expr, Refusal> {
        let mut e = Expr::Apply(Box::new(f), Box::new(self.expression(Some(APPLY))?));
        while self.peek() == Some(",") {
            self.pos += 1;
            e = Expr::Apply(Box::new(e), Box::new(self.expression(Some(APPLY))?));
        }
        self.expect(")")?;
        Ok(e)
    }

    /// The variables after a binder, its optional dot and its body.
    fn binder(&mut self, binder: Binder, tok: &str) -> Result<Expr, Refusal> {
        let mut vars = vec![self.variable()?];
        loop {
            match self.peek() {
                None => return Err(self.refuse("an expression was expected where the text ended")),
                Some(".") if self.pos + 1 >= self.toks.len() => {
                    return Err(self.refuse("an expression was expected where the text ended"))
                }
                Some(t) if is_name(t) => vars.push(self.variable()?),
                Some(_) => break,
            }
        }
        if self.peek() == Some(".") {
            self.pos += 1;
        }
        let mut body = self.expression(Some(tok))?;
        while let Some(v) = vars.pop() {
            body = Expr::Bind(binder, v, Box::new(body));
        }
        Ok(body)
    }

    /// A variable to bind: any token but a constant's name.
    fn variable(&mut self) -> Result<String, Refusal> {
        let Some(tok) = self.next() else {
            return Err(self.refuse("a variable was expected where the text ended"));
        };
        if kind(&tok) == NameKind::Constant {
            return Err(self.refuse(format!(
                "{tok:?} cannot be bound: only a name of one letter and digits is a variable"
            )));
        }
        Ok(tok)
    }

    /// Equations, applications and connectives that bind tighter than `ctx`.
    fn adjuncts(&mut self, mut e: Expr, ctx: Option<&str>) -> Result<Expr, Refusal> {
        loop {
            let before = self.pos;
            if let Some(tok) = self.peek().map(str::to_string) {
                if matches!(tok.as_str(), "=" | "==" | "!=") && Self::has_priority(&tok, ctx) {
                    self.pos += 1;
                    let right = self.expression(Some(&tok))?;
                    e = Expr::Equal(Box::new(e), Box::new(right));
                    if tok == "!=" {
                        e = Expr::Not(Box::new(e));
                    }
                }
            }
            if Self::has_priority(APPLY, ctx) && self.peek() == Some("(") {
                let applicable = match &e {
                    Expr::Apply(..) | Expr::Bind(Binder::Lambda, ..) => true,
                    Expr::Name(n) => matches!(kind(n), NameKind::Function | NameKind::Constant),
                    _ => false,
                };
                if !applicable {
                    return Err(self.refuse("only a predicate may take arguments"));
                }
                self.pos += 1;
                e = self.arguments(e)?;
            }
            while let Some(tok) = self.peek().map(str::to_string) {
                let op = match tok.as_str() {
                    "and" | "&" | "^" => Op::And,
                    "or" | "|" => Op::Or,
                    "implies" | "->" | "=>" => Op::Implies,
                    "iff" | "<->" | "<=>" => Op::Iff,
                    _ => break,
                };
                if !Self::has_priority(&tok, ctx) {
                    break;
                }
                self.pos += 1;
                let right = self.expression(Some(&tok))?;
                e = Expr::Binary(op, Box::new(e), Box::new(right));
            }
            if self.pos == before {
                return Ok(e);
            }
        }
    }
}

/// The formula an expression stands for, or why the tool cannot take it as
/// one (an equation, a function term, a lambda).
pub(super) fn to_formula(e: &Expr) -> Result<crate::Formula, String> {
    use crate::{Formula, Quantifier};
    let pair = |a: &Expr, b: &Expr| Ok::<_, String>((to_formula(a)?, to_formula(b)?));
    Ok(match e {
        Expr::Name(n) => Formula::prop(n.as_str()),
        Expr::Apply(..) => {
            let (name, args) = uncurried(e)?;
            Formula::Atom { name, args }
        }
        Expr::Not(x) => Formula::Not(Box::new(to_formula(x)?)),
        Expr::Binary(op, a, b) => {
            let (a, b) = pair(a, b)?;
            match op {
                Op::And => Formula::And(vec![a, b]),
                Op::Or => Formula::Or(vec![a, b]),
                Op::Implies => Formula::Implies(Box::new(a), Box::new(b)),
                Op::Iff => Formula::Iff(Box::new(a), Box::new(b)),
            }
        }
        Expr::Equal(..) => {
            return Err(
                "an equation (=), which the public code hands the prover as one and \
                        this tool's vocabulary has not"
                    .into(),
            )
        }
        Expr::Bind(binder @ (Binder::All | Binder::Exists), v, body) => Formula::Quant {
            q: match binder {
                Binder::All => Quantifier::Forall,
                _ => Quantifier::Exists,
            },
            vars: vec![v.clone()],
            body: Box::new(to_formula(body)?),
        },
        Expr::Bind(Binder::Lambda | Binder::Iota, ..) => {
            return Err("a lambda or iota term, which the prover cannot read".into())
        }
    })
}

/// A predicate applied to names: its name and its arguments, in order.
fn uncurried(e: &Expr) -> Result<(String, Vec<String>), String> {
    match e {
        Expr::Apply(f, arg) => {
            let (name, mut args) = match &**f {
                Expr::Name(n) => (n.clone(), Vec::new()),
                inner @ Expr::Apply(..) => uncurried(inner)?,
                _ => return Err("an argument list after something that is no predicate".into()),
            };
            match &**arg {
                Expr::Name(a) => args.push(a.clone()),
                _ => {
                    return Err(format!(
                        "an argument of {name} that is no name (a function term or a formula)"
                    ))
                }
            }
            Ok((name, args))
        }
        _ => Err("not a predicate application".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> String {
        match parse(text) {
            Ok(e) => format!("{e:?}"),
            Err(r) => format!("refused: {}", r.why),
        }
    }

    #[test]
    fn only_symbols_are_cut_out_of_names() {
        let toks: Vec<String> = tokenize("(p6v not p3)&~p1<-x")
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(toks, ["(", "p6v", "not", "p3", ")", "&", "~p1<", "-", "x"]);
    }

    #[test]
    fn a_quantifier_body_ends_at_the_first_connective() {
        assert_eq!(
            shape("all x1.pred1(x1) and pred2(x1)"),
            shape("(all x1.pred1(x1)) and pred2(x1)")
        );
        assert_ne!(
            shape("all x1.pred1(x1) and pred2(x1)"),
            shape("all x1.(pred1(x1) and pred2(x1))")
        );
        // Negation binds tightest; and before or.
        assert_eq!(
            shape("not p1 and p2 or p3"),
            shape("((not p1) and p2) or p3")
        );
    }

    #[test]
    fn names_decide_what_may_be_bound_or_applied() {
        assert!(shape("exists x1 pred1(x1)").starts_with("refused"));
        assert!(shape("exists x1.pred1(x1)").starts_with("Bind"));
        assert!(shape("p1(x1)").starts_with("refused"));
        assert!(shape("all x1 x2.pred1(x1,x2)").starts_with("Bind"));
        assert!(shape("(p1 and p2").starts_with("refused"));
        assert!(shape("p1 p2").starts_with("refused"));
    }
}
