//! The logic library the public implementation parses with (`nltk.sem.logic`,
//! version 3.8.1), rule for rule: its tokenizer, its recursive-descent
//! reader with the same functions in the same order, its beta-reduction
//! (`simplify`), and the depth at which Python's recursion limit stops it.
//!
//! * Tokens: only the symbols `& ^ | -> => <-> <=> = == != \ . ( ) , - !`
//!   are cut out of the text, by walking them as far as the text follows and
//!   taking the walk only when it ends on a whole symbol; a space, tab or
//!   newline ends a name; every other character belongs to one, so `p6v`,
//!   `p1∨p2`, `~p1` and `a\u{a0}b` are names.
//! * Binding, tightest first: lambda; negation; application; `=` and `!=`;
//!   a quantifier's body; `&`; `|`; `->`; `<->`. A quantifier's body ends at
//!   the first `&`, `|`, `->` or `<->` outside parentheses; an argument
//!   takes no `=` or connective outside parentheses.
//! * A name of one letter and digits (`p1`, `x2`, `e3`) is a variable: it
//!   may be bound or stand as an atom, but takes no arguments; any other
//!   name (`pred1`, `admire`, `12`, `$a`) is a constant: it takes arguments
//!   but cannot be bound. The dot after a quantifier's variables is
//!   optional, so `exists x1 pred1(x1)` asks to bind `pred1` and fails.
//! * Depth: every function of the reader, and of the beta-reduction the
//!   prover's input goes through, is a Python frame; past 1,000 frames the
//!   public code fails. The frames are counted as Python counts them, from
//!   the depth at which the public code starts reading (measured on it).

use super::python;

/// Python's default recursion limit, which the public code keeps.
const RECURSION_LIMIT: usize = 1000;

/// Frames on the stack when the public code's reader reads a line, with
/// the pool worker, the verifier and `read_logic` beneath it (measured:
/// 321 parentheses around `p1` read, 322 do not).
const READER_BASE: usize = 28;

/// Frames a name costs at its deepest: the expression made of it, through
/// the regular expressions that class it (`VariableExpression`, `is_indvar`,
/// `re.match`, `re._compile`).
const NAME_FRAMES: usize = 5;

/// Frames on the stack when the prover's input is simplified, with the
/// biconditional of φ0 and φ1 beneath it (measured: 241 negations of `p1`
/// are proved, 242 are not).
const SIMPLIFY_BASE: usize = 29;

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
    /// One letter `a`–`z` other than `e`, then digits: `p1`, `x`, `a12`.
    Individual,
    /// An upper-case letter, then digits.
    Function,
    /// `e`, then digits.
    Event,
    /// Anything else: `pred1`, `admire`, `~p1`, `1`.
    Constant,
}

/// How the library classes a name. Python's `\d` is any decimal digit; this
/// takes any numeric character, which differs only on names beyond ASCII,
/// which the prover refuses whichever way they are classed.
pub(super) fn kind(name: &str) -> NameKind {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return NameKind::Constant;
    };
    if !chars.all(char::is_numeric) {
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

/// Why a text or expression is past Python's recursion limit.
const TOO_DEEP: &str =
    "nested deeper than the public code reads (Python's recursion limit of 1,000 frames)";

/// The reader over one line's tokens; each of its functions takes the
/// Python stack depth of the function it stands for.
struct Reader {
    toks: Vec<(String, usize)>,
    pos: usize,
    end: usize,
}

/// Parses one line as the library does (`LogicParser.parse`).
pub(super) fn parse(line: &str) -> Result<Expr, Refusal> {
    let line = python::rstrip(line);
    let mut r = Reader {
        toks: tokenize(line),
        pos: 0,
        end: line.len(),
    };
    let e = r.expression(None, READER_BASE + 1)?;
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

    /// Refuses when a call at stack depth `frames` passes Python's limit.
    fn frame(&self, frames: usize) -> Result<(), Refusal> {
        if frames > RECURSION_LIMIT {
            return Err(self.refuse(TOO_DEEP));
        }
        Ok(())
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

    /// `process_next_expression`, at stack depth `frames`: one expression
    /// in context `ctx`, with what binds tighter than it.
    fn expression(&mut self, ctx: Option<&str>, frames: usize) -> Result<Expr, Refusal> {
        self.frame(frames)?;
        let Some(tok) = self.next() else {
            return Err(self.refuse("an expression was expected where the text ended"));
        };
        let head = self.handle(tok, frames + 1)?;
        self.adjuncts(head, ctx, frames + 1)
    }

    /// `handle`, at stack depth `frames`; each branch is a function of its own.
    fn handle(&mut self, tok: String, frames: usize) -> Result<Expr, Refusal> {
        self.frame(frames + 1)?;
        let inner = frames + 1;
        Ok(if is_name(&tok) {
            self.name(tok, inner)?
        } else if matches!(tok.as_str(), "not" | "-" | "!") {
            Expr::Not(Box::new(self.expression(Some("-"), inner + 1)?))
        } else if tok == "\\" {
            self.binder(Binder::Lambda, &tok, inner)?
        } else if matches!(tok.as_str(), "some" | "exists" | "exist") {
            self.binder(Binder::Exists, &tok, inner)?
        } else if matches!(tok.as_str(), "all" | "forall") {
            self.binder(Binder::All, &tok, inner)?
        } else if tok == "iota" {
            self.binder(Binder::Iota, &tok, inner)?
        } else if tok == "(" {
            let e = self.expression(None, inner + 1)?;
            self.expect(")")?;
            e
        } else {
            self.pos -= 1;
            return Err(self.refuse(format!("an expression was expected, not {tok:?}")));
        })
    }

    /// `handle_variable`, at stack depth `frames`: a name, applied to its
    /// arguments when a `(` follows.
    fn name(&mut self, tok: String, frames: usize) -> Result<Expr, Refusal> {
        self.frame(frames + NAME_FRAMES)?;
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
        self.arguments(head, frames)
    }

    /// The arguments of `f` after its `(`, through the `)`, read by a
    /// function at stack depth `frames`.
    fn arguments(&mut self, f: Expr, frames: usize) -> Result<Expr, Refusal> {
        let mut e = Expr::Apply(
            Box::new(f),
            Box::new(self.expression(Some(APPLY), frames + 1)?),
        );
        while self.peek() == Some(",") {
            self.pos += 1;
            e = Expr::Apply(
                Box::new(e),
                Box::new(self.expression(Some(APPLY), frames + 1)?),
            );
        }
        self.expect(")")?;
        Ok(e)
    }

    /// `handle_quant` or `handle_lambda`, at stack depth `frames`: the
    /// variables after a binder, its optional dot and its body.
    fn binder(&mut self, binder: Binder, tok: &str, frames: usize) -> Result<Expr, Refusal> {
        if self.peek().is_none() {
            return Err(self.refuse("a variable and an expression were expected after a binder"));
        }
        let mut vars = vec![self.variable(frames + 1)?];
        loop {
            match self.peek() {
                None => return Err(self.refuse("an expression was expected where the text ended")),
                Some(".") if self.pos + 1 >= self.toks.len() => {
                    return Err(self.refuse("an expression was expected where the text ended"))
                }
                Some(t) if is_name(t) => vars.push(self.variable(frames + 1)?),
                Some(_) => break,
            }
        }
        if self.peek() == Some(".") {
            self.pos += 1;
        }
        let mut body = self.expression(Some(tok), frames + 1)?;
        while let Some(v) = vars.pop() {
            body = Expr::Bind(binder, v, Box::new(body));
        }
        Ok(body)
    }

    /// `get_next_token_variable`, at stack depth `frames`: a variable to
    /// bind, any token but a constant's name.
    fn variable(&mut self, frames: usize) -> Result<String, Refusal> {
        self.frame(frames + NAME_FRAMES)?;
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

    /// `attempt_adjuncts`, at stack depth `frames`: equations, applications
    /// and connectives that bind tighter than `ctx`, until none is added.
    fn adjuncts(&mut self, mut e: Expr, ctx: Option<&str>, frames: usize) -> Result<Expr, Refusal> {
        // Each attempt is a function called from this one.
        let attempt = frames + 1;
        loop {
            let before = self.pos;
            if let Some(tok) = self.peek().map(str::to_string) {
                if matches!(tok.as_str(), "=" | "==" | "!=") && Self::has_priority(&tok, ctx) {
                    self.pos += 1;
                    let right = self.expression(Some(&tok), attempt + 1)?;
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
                    return Err(self.refuse(
                        "only a predicate, an application or a lambda may take arguments",
                    ));
                }
                self.pos += 1;
                e = self.arguments(e, attempt)?;
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
                let right = self.expression(Some(&tok), attempt + 1)?;
                e = Expr::Binary(op, Box::new(e), Box::new(right));
            }
            if self.pos == before {
                return Ok(e);
            }
        }
    }
}

/// The Python frames `simplify` takes to walk `e`: four for each
/// connective, negation and equation (the method, `visit_structured`,
/// `visit` and a lambda), three for each binder, one for each application.
fn simplify_frames(e: &Expr) -> usize {
    match e {
        Expr::Name(_) => 1,
        Expr::Apply(f, a) => 1 + simplify_frames(f).max(simplify_frames(a)),
        Expr::Not(x) => 4 + simplify_frames(x),
        Expr::Binary(_, a, b) | Expr::Equal(a, b) => 4 + simplify_frames(a).max(simplify_frames(b)),
        Expr::Bind(_, _, body) => 3 + simplify_frames(body),
    }
}

/// Refuses `φ0 ↔ φ1` when simplifying it for the prover passes Python's
/// recursion limit, as it does in the public code (the biconditional is one
/// more connective above both). Each formula comes as read and as
/// simplified: the public code simplifies the one, then the other.
pub(super) fn too_deep_for_the_prover(formulas: [(&Expr, &Expr); 2]) -> Option<String> {
    let deepest = formulas
        .iter()
        .map(|(read, simplified)| simplify_frames(read).max(simplify_frames(simplified)))
        .max()
        .unwrap_or(0);
    (SIMPLIFY_BASE + 4 + deepest > RECURSION_LIMIT).then(|| TOO_DEEP.to_string())
}

/// Beta-reduced as the library's `simplify` reduces: every lambda applied
/// to an argument is replaced by its body with the argument put in.
pub(super) fn simplify(e: &Expr) -> Expr {
    match e {
        Expr::Name(_) => e.clone(),
        Expr::Apply(f, a) => {
            let (f, a) = (simplify(f), simplify(a));
            match f {
                Expr::Bind(Binder::Lambda, v, body) => simplify(&replace(&body, &v, &a)),
                f => Expr::Apply(Box::new(f), Box::new(a)),
            }
        }
        Expr::Not(x) => Expr::Not(Box::new(simplify(x))),
        Expr::Binary(op, a, b) => Expr::Binary(*op, Box::new(simplify(a)), Box::new(simplify(b))),
        Expr::Equal(a, b) => Expr::Equal(Box::new(simplify(a)), Box::new(simplify(b))),
        Expr::Bind(b, v, body) => Expr::Bind(*b, v.clone(), Box::new(simplify(body))),
    }
}

/// The variables free in `e`: names that may be bound (not constants)
/// that no binder above them binds.
fn free(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => {
            if kind(n) != NameKind::Constant && !out.contains(n) {
                out.push(n.clone());
            }
        }
        Expr::Apply(a, b) | Expr::Binary(_, a, b) | Expr::Equal(a, b) => {
            free(a, out);
            free(b, out);
        }
        Expr::Not(x) => free(x, out),
        Expr::Bind(_, v, body) => {
            let mut inner = Vec::new();
            free(body, &mut inner);
            for n in inner {
                if n != *v && !out.contains(&n) {
                    out.push(n);
                }
            }
        }
    }
}

/// Every name in `e`, bound or not.
fn names(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => out.push(n.clone()),
        Expr::Apply(a, b) | Expr::Binary(_, a, b) | Expr::Equal(a, b) => {
            names(a, out);
            names(b, out);
        }
        Expr::Not(x) => names(x, out),
        Expr::Bind(_, v, body) => {
            out.push(v.clone());
            names(body, out);
        }
    }
}

/// `e` with `with` put in for the free occurrences of `v`, renaming a
/// binder that would capture a variable of `with` (as the library does,
/// to a fresh `z` name).
fn replace(e: &Expr, v: &str, with: &Expr) -> Expr {
    match e {
        Expr::Name(n) if n == v => with.clone(),
        Expr::Name(_) => e.clone(),
        Expr::Apply(a, b) => {
            Expr::Apply(Box::new(replace(a, v, with)), Box::new(replace(b, v, with)))
        }
        Expr::Binary(op, a, b) => Expr::Binary(
            *op,
            Box::new(replace(a, v, with)),
            Box::new(replace(b, v, with)),
        ),
        Expr::Equal(a, b) => {
            Expr::Equal(Box::new(replace(a, v, with)), Box::new(replace(b, v, with)))
        }
        Expr::Not(x) => Expr::Not(Box::new(replace(x, v, with))),
        Expr::Bind(_, x, _) if x == v => e.clone(),
        Expr::Bind(b, x, body) => {
            let mut captured = Vec::new();
            free(with, &mut captured);
            if !captured.contains(x) {
                return Expr::Bind(*b, x.clone(), Box::new(replace(body, v, with)));
            }
            let mut taken = Vec::new();
            names(body, &mut taken);
            names(with, &mut taken);
            let fresh = (1..)
                .map(|i| format!("z{i}"))
                .find(|z| !taken.contains(z) && z != v)
                .unwrap_or_default();
            let renamed = replace(body, x, &Expr::Name(fresh.clone()));
            Expr::Bind(*b, fresh, Box::new(replace(&renamed, v, with)))
        }
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
        // An argument takes no equation outside parentheses.
        assert!(shape("pred1(a = b)").starts_with("refused"));
        assert!(shape("pred1((a = b))").starts_with("Apply"));
    }

    #[test]
    fn lambdas_are_reduced_without_capture() {
        let reduced = |t: &str| format!("{:?}", simplify(&parse(t).unwrap()));
        assert_eq!(reduced(r"(\x.pred1(x))(p3)"), reduced("pred1(p3)"));
        assert_eq!(
            reduced(r"(\x y.pred2(x,y))(p1,p2)"),
            reduced("pred2(p1,p2)")
        );
        // The binder that would capture the argument's x is renamed.
        assert_eq!(
            reduced(r"(\y.all x.pred2(x,y))(x)"),
            reduced("all z1.pred2(z1,x)")
        );
    }

    #[test]
    fn python_s_recursion_limit_is_where_the_public_code_measured_it() {
        let parens = |k: usize| format!("{}p1{}", "(".repeat(k), ")".repeat(k));
        assert!(parse(&parens(321)).is_ok());
        assert!(parse(&parens(322)).is_err());
        let quant = |k: usize| format!("{}pred1(x1)", "all x1.".repeat(k));
        assert!(parse(&quant(320)).is_ok());
        assert!(parse(&quant(321)).is_err());
        let nested = |k: usize| format!("{}p2{}", "(p1 & ".repeat(k), ")".repeat(k));
        assert!(parse(&nested(160)).is_ok());
        assert!(parse(&nested(161)).is_err());
        let p1 = parse("p1").unwrap();
        let too_deep = |k: usize| {
            let negs = parse(&format!("{}p1", "-".repeat(k))).unwrap();
            too_deep_for_the_prover([(&p1, &p1), (&negs, &simplify(&negs))]).is_some()
        };
        assert!(!too_deep(241));
        assert!(too_deep(242));
    }
}
