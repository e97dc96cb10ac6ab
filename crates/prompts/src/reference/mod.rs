//! What the public implementation that produced the paper's numbers puts in
//! its prompts: φ0 as its logic library (nltk) prints it, and the names of
//! φ0 in the order its statistics hold them. Used by the `reference` prompt set.

mod pyset;

use autoeval_syntax::{Formula, Quantifier};
use pyset::PySet;

/// φ0 as that implementation's parser builds it: binary connectives nested
/// to the left, one variable per quantifier, names as individual variables
/// (`x1`, `p3`: a letter other than `e`, then digits; or `e` and digits)
/// or constants (every other name).
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Var(String),
    Const(String),
    /// A predicate applied to its arguments (curried there, one at a time).
    App(String, Vec<Node>),
    Not(Box<Node>),
    Binary(Op, Box<Node>, Box<Node>),
    Quant(Quantifier, String, Box<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Implies,
    Iff,
    Xor,
}

/// A name as that parser reads it, after its lowercasing.
fn term(name: &str) -> Node {
    let name = name.to_lowercase();
    let mut chars = name.chars();
    let first = chars.next();
    let rest_digits = chars.all(|c| c.is_ascii_digit());
    let variable = rest_digits && first.is_some_and(|c| c.is_ascii_lowercase());
    if variable {
        Node::Var(name)
    } else {
        Node::Const(name)
    }
}

fn node(f: &Formula) -> Node {
    match f {
        Formula::Atom { name, args } if args.is_empty() => term(name),
        Formula::Atom { name, args } => Node::App(
            name.to_lowercase(),
            args.iter().map(|a| term(&a.text())).collect(),
        ),
        // Only an answer read the public way has equations; a later round's
        // prompt names their sides as it names a predicate's arguments.
        Formula::Equal(a, b) => {
            Node::App("=".into(), vec![term(&a.to_string()), term(&b.to_string())])
        }
        Formula::Not(a) => Node::Not(Box::new(node(a))),
        Formula::Group(a) => node(a),
        Formula::And(xs) => chain(Op::And, xs),
        Formula::Or(xs) => chain(Op::Or, xs),
        Formula::Implies(a, b) => Node::Binary(Op::Implies, Box::new(node(a)), Box::new(node(b))),
        Formula::Iff(a, b) => Node::Binary(Op::Iff, Box::new(node(a)), Box::new(node(b))),
        Formula::Xor(a, b) => Node::Binary(Op::Xor, Box::new(node(a)), Box::new(node(b))),
        Formula::Quant { q, vars, body } => vars.iter().rev().fold(node(body), |inner, v| {
            Node::Quant(*q, v.to_lowercase(), Box::new(inner))
        }),
    }
}

/// `a ∧ b ∧ c` as the parser nests it: `((a ∧ b) ∧ c)`.
fn chain(op: Op, xs: &[Formula]) -> Node {
    let mut nodes = xs.iter().map(node);
    let Some(first) = nodes.next() else {
        return Node::Const(String::new());
    };
    nodes.fold(first, |acc, x| Node::Binary(op, Box::new(acc), Box::new(x)))
}

/// The parser's `free()`: variables not bound by an enclosing quantifier,
/// as a set built by the same unions and differences.
fn free(n: &Node) -> PySet {
    match n {
        Node::Var(v) => PySet::of([v.as_str()]),
        Node::Const(_) => PySet::default(),
        Node::Quant(_, v, body) => free(body).difference(&PySet::of([v.as_str()])),
        Node::Not(a) => PySet::default().union(&free(a)),
        Node::Binary(_, a, b) => PySet::default().union(&free(a)).union(&free(b)),
        Node::App(_, args) => {
            // Curried: ((p a) b) is free(p a) | free(b), each from an empty set.
            let mut acc = PySet::default();
            for a in args {
                acc = PySet::default().union(&acc).union(&free(a));
            }
            acc
        }
    }
}

/// The public implementation's statistics of a formula: its objects (a
/// set, so in set order), its quantified variables and its predicates.
#[derive(Default)]
struct Stats {
    objects: PySet,
    quantified: PySet,
    predicates: Vec<String>,
    first_order: bool,
}

impl Stats {
    fn of(f: &Formula) -> Stats {
        let mut s = Stats::default();
        s.parse(&node(f));
        s
    }

    fn parse(&mut self, n: &Node) {
        // `objects.update(list(expression.variables()))` at every node.
        let variables = free(n).union(&PySet::default());
        let listed: Vec<String> = variables.iter().map(String::from).collect();
        for v in &listed {
            self.objects.add(v);
        }
        match n {
            Node::Var(_) => {}
            Node::Const(c) => self.objects.add(c),
            Node::App(name, args) => {
                let params: Vec<String> = (0..args.len()).map(|i| format!("?p{i}")).collect();
                let p = format!("{name}({})", params.join(","));
                if !self.predicates.contains(&p) {
                    self.predicates.push(p);
                }
                self.first_order = true;
                for a in args {
                    if let Node::Var(x) | Node::Const(x) = a {
                        self.objects.add(x);
                    }
                }
            }
            Node::Quant(_, v, body) => {
                self.quantified.add(v);
                self.first_order = true;
                self.parse(body);
            }
            Node::Not(a) => self.parse(a),
            Node::Binary(_, a, b) => {
                self.parse(a);
                self.parse(b);
            }
        }
    }
}

/// φ0's names as the public implementation's prompts list them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceNames {
    /// Objects (or propositions) that no quantifier binds, in set order.
    pub objects: Vec<String>,
    /// `name(?p0,?p1)` per predicate, sorted.
    pub predicates: Vec<String>,
    /// The quantified variables, sorted.
    pub variables: Vec<String>,
    /// True when φ0 has a predicate or a quantifier.
    pub first_order: bool,
}

/// The names of `f` as the public implementation lists them.
pub fn names(f: &Formula) -> ReferenceNames {
    let s = Stats::of(f);
    let mut predicates = s.predicates.clone();
    predicates.sort();
    let mut variables: Vec<String> = s.quantified.iter().map(String::from).collect();
    variables.sort();
    ReferenceNames {
        objects: s
            .objects
            .iter()
            .filter(|o| !s.quantified.contains(o))
            .map(String::from)
            .collect(),
        predicates,
        variables,
        first_order: s.first_order,
    }
}

/// `f` as the public implementation prints it: every binary connective in
/// parentheses, runs of one connective flattened, neighbouring quantifiers
/// of one kind merged (`∀ x1 x2.`), arguments joined by `,`, `v` for
/// disjunction, everything lowercase.
pub fn print(f: &Formula) -> String {
    let mut out = String::new();
    write(&node(f), &mut out);
    out
}

fn symbol(op: Op) -> &'static str {
    match op {
        Op::And => "∧",
        Op::Or => "v",
        Op::Implies => "->",
        Op::Iff => "<->",
        Op::Xor => "xor",
    }
}

fn write(n: &Node, out: &mut String) {
    match n {
        Node::Var(x) | Node::Const(x) => out.push_str(x),
        Node::App(name, args) => {
            out.push_str(name);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(a, out);
            }
            out.push(')');
        }
        Node::Not(a) => {
            out.push('¬');
            write(a, out);
        }
        Node::Binary(op, ..) => {
            out.push('(');
            write_run(n, *op, out);
            out.push(')');
        }
        Node::Quant(q, ..) => {
            out.push_str(match q {
                Quantifier::Forall => "∀",
                Quantifier::Exists => "∃",
            });
            let mut body = n;
            while let Node::Quant(inner, v, b) = body {
                if inner != q {
                    break;
                }
                out.push(' ');
                out.push_str(v);
                body = b;
            }
            out.push('.');
            write(body, out);
        }
    }
}

/// The operands of a run of `op`, each of another kind written whole.
fn write_run(n: &Node, op: Op, out: &mut String) {
    match n {
        Node::Binary(o, a, b) if *o == op => {
            write_run(a, op, out);
            out.push(' ');
            out.push_str(symbol(op));
            out.push(' ');
            write_run(b, op, out);
        }
        other => write(other, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, Mode};

    fn formula(text: &str) -> Formula {
        parse_formula_exact(text, Mode::Lenient).unwrap()
    }

    #[test]
    fn formulas_print_as_the_public_implementation_prints_them() {
        for (text, printed) in [
            (
                "((p11 ∨ p3 ∨ p7) ∧ (¬p8 ∨ ¬p8 ∨ p10) ∧ (p4 ∨ ¬p3 ∨ p9))",
                "((p11 v p3 v p7) ∧ (¬p8 v ¬p8 v p10) ∧ (p4 v ¬p3 v p9))",
            ),
            ("(p1 ∧ (p2 ∧ p3))", "(p1 ∧ p2 ∧ p3)"),
            (
                "∀ x1.∀ x2.((¬pred1(x1) ∨ ¬pred8(p5, p12)) ∧ pred5(p7, x2))",
                "∀ x1 x2.((¬pred1(x1) v ¬pred8(p5,p12)) ∧ pred5(p7,x2))",
            ),
            (
                "∀ x1.∃ x2.¬((¬Issue(Dillan, Keifer) ∨ ¬Grunt(x2, x2)) ∧ ¬Issue(Keifer, Jalen))",
                "∀ x1.∃ x2.¬((¬issue(dillan,keifer) v ¬grunt(x2,x2)) ∧ ¬issue(keifer,jalen))",
            ),
        ] {
            assert_eq!(print(&formula(text)), printed, "{text}");
        }
    }

    #[test]
    fn names_are_listed_as_the_public_implementation_lists_them() {
        // Orders of the public implementation's own prompts for these items.
        let ksat = names(&formula(
            "((p11 ∨ p3 ∨ p7) ∧ (¬p8 ∨ ¬p8 ∨ p10) ∧ (p4 ∨ ¬p3 ∨ p9))",
        ));
        assert_eq!(ksat.objects, ["p10", "p4", "p7", "p8", "p3", "p11", "p9"]);
        assert!(!ksat.first_order);
        let fol = names(&formula(
            "∀ x1 x2.((¬pred1(x1) ∨ ¬pred1(p9) ∨ ¬pred8(p5, p12)) ∧ pred5(p7, x2))",
        ));
        assert_eq!(fol.objects, ["p5", "p12", "p7", "p9"]);
        assert_eq!(
            fol.predicates,
            ["pred1(?p0)", "pred5(?p0,?p1)", "pred8(?p0,?p1)"]
        );
        assert_eq!(fol.variables, ["x1", "x2"]);
        assert!(fol.first_order);
    }
}
