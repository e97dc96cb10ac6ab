//! Formulas and regular expressions in a controlled English.
//!
//! Every connective says how many operands follow, so the sentences need no
//! brackets and read back unambiguously:
//!
//! * `proposition p1`; `predicate pred3 holds for the 2 objects p5 and x1`
//! * `it is not the case that S`
//! * `all of the following 2 statements hold: S1; S2`
//! * `at least one of the following 2 statements holds: S1; S2`
//! * `if S1, then S2`; `the following 2 statements are equivalent: S1; S2`;
//!   `exactly one of the following 2 statements holds: S1; S2`
//! * `for every x1, S`; `for some x1, S` (one variable per phrase)
//! * regexes: `the symbol 0`, `the empty string`,
//!   `the sequence of 3 parts: R1; R2; R3`, `one of 2 alternatives: R1; R2`,
//!   `zero or more repetitions of R`, `one or more repetitions of R`,
//!   `optionally R`

use autoeval_syntax::{Formula, Quantifier, Regex};

fn number_words(n: usize) -> String {
    n.to_string()
}

fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A formula in controlled English.
pub fn describe_formula(f: &Formula) -> String {
    match f {
        Formula::Atom { name, args } if args.is_empty() => format!("proposition {name}"),
        Formula::Atom { name, args } => {
            let noun = if args.len() == 1 { "object" } else { "objects" };
            format!(
                "predicate {name} holds for the {} {noun} {}",
                number_words(args.len()),
                list(
                    &args
                        .iter()
                        .map(|a| a.text().into_owned())
                        .collect::<Vec<_>>()
                )
            )
        }
        // Only an answer read the public way has equations; the built-in
        // model never writes one, so its reading needs none.
        Formula::Equal(a, b) => format!("object {a} is object {b}"),
        Formula::Group(x) => describe_formula(x),
        Formula::Not(x) => format!("it is not the case that {}", describe_formula(x)),
        Formula::And(xs) => statements("all of the following", "statements hold", xs),
        Formula::Or(xs) => statements("at least one of the following", "statements holds", xs),
        Formula::Xor(a, b) => {
            statements_pair("exactly one of the following", "statements holds", a, b)
        }
        Formula::Iff(a, b) => statements_pair("the following", "statements are equivalent", a, b),
        Formula::Implies(a, b) => {
            format!("if {}, then {}", describe_formula(a), describe_formula(b))
        }
        Formula::Quant { q, vars, body } => {
            let word = match q {
                Quantifier::Forall => "every",
                Quantifier::Exists => "some",
            };
            let prefix: String = vars.iter().map(|v| format!("for {word} {v}, ")).collect();
            format!("{prefix}{}", describe_formula(body))
        }
    }
}

fn statements(before: &str, after: &str, xs: &[Formula]) -> String {
    let parts: Vec<String> = xs.iter().map(describe_formula).collect();
    format!(
        "{before} {} {after}: {}",
        number_words(xs.len()),
        parts.join("; ")
    )
}

fn statements_pair(before: &str, after: &str, a: &Formula, b: &Formula) -> String {
    format!(
        "{before} 2 {after}: {}; {}",
        describe_formula(a),
        describe_formula(b)
    )
}

/// A regular expression in controlled English.
pub fn describe_regex(r: &Regex) -> String {
    match r {
        Regex::Symbol(c) => format!("the symbol {c}"),
        Regex::Epsilon => "the empty string".into(),
        Regex::Group(x) => describe_regex(x),
        Regex::Concat(xs) => {
            let parts: Vec<String> = xs.iter().map(describe_regex).collect();
            format!(
                "the sequence of {} parts: {}",
                number_words(xs.len()),
                parts.join("; ")
            )
        }
        Regex::Union(xs) => {
            let parts: Vec<String> = xs.iter().map(describe_regex).collect();
            format!(
                "one of {} alternatives: {}",
                number_words(xs.len()),
                parts.join("; ")
            )
        }
        Regex::Star(x) => format!("zero or more repetitions of {}", describe_regex(x)),
        Regex::Plus(x) => format!("one or more repetitions of {}", describe_regex(x)),
        Regex::Optional(x) => format!("optionally {}", describe_regex(x)),
    }
}
