//! Regular expressions compared as languages, and the public
//! implementation's verdict on the same answer.

use crate::{Counterexample, Method, Outcome, Settings, Verdict};
use autoeval_automata::Dfa;
use autoeval_syntax::{parse_regex, parse_regex_exact, print, public, Mode};

/// Checks two regular expressions for equality of their languages.
pub fn check_regex(phi0: &str, phi1: &str, settings: &Settings) -> Outcome {
    let any_symbol: Vec<char> = ('0'..='9').chain('a'..='z').chain('A'..='Z').collect();
    let r0 = match parse_regex_exact(phi0, Mode::Lenient, &any_symbol) {
        Ok(r) => r,
        Err(e) => {
            return Outcome::because(
                Verdict::VerifierError,
                Method::Parser,
                format!("φ0 does not parse: {e}"),
            )
        }
    };
    let mut alphabet = settings.alphabet.clone();
    alphabet.extend(r0.symbols());
    alphabet.sort_unstable();
    alphabet.dedup();
    let read = if settings.public_regex_reading {
        public::read_regex(phi1)
    } else {
        parse_regex(phi1, settings.mode, &alphabet).map(|p| p.value)
    };
    let r1 = match read {
        Ok(r) => r,
        Err(e) => return Outcome::because(Verdict::NonCompliant, Method::Parser, e.to_string()),
    };
    // Under the public reading any character is a symbol: the languages
    // are compared over every symbol either expression uses.
    alphabet.extend(r1.symbols());
    alphabet.sort_unstable();
    alphabet.dedup();
    if print::regex(&r0) == print::regex(&r1) {
        return Outcome::new(Verdict::Equivalent, Method::Syntactic);
    }
    // Both automata are built within the check's time limit, like a proof.
    let limit = std::time::Duration::from_millis(u64::from(settings.limits.timeout_ms));
    let deadline =
        (settings.limits.timeout_ms > 0).then(|| (std::time::Instant::now() + limit, limit));
    let build = |r| Dfa::from_regex_by(r, &alphabet, settings.max_dfa_states, deadline);
    let (d0, d1) = match (build(&r0), build(&r1)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            // The automaton outgrew its state budget or its time: a
            // resource limit, like a timeout.
            return Outcome::because(Verdict::Timeout, Method::Automata, e.to_string());
        }
    };
    match d0.distinguish(&d1) {
        None => Outcome::new(Verdict::Equivalent, Method::Automata),
        Some(d) => Outcome {
            counterexample: Some(Counterexample::Word {
                word: d.word,
                accepted_by: if d.in_first { "phi0" } else { "phi1" }.into(),
            }),
            ..Outcome::new(Verdict::NotEquivalent, Method::Automata)
        },
    }
}

/// The public implementation's verdict on a regular-expression answer
/// (its minimal automata compared by shape alone,
/// [`public::reg2dfa::shape_equal`]), when it is not `ours`: a case its
/// published numbers got wrong. `None` when they agree, when `ours` is no
/// verdict on equivalence, or when the public check met an error or
/// outgrew its bounds.
pub fn public_regex_verdict(phi0: &str, answer: &str, ours: Verdict) -> Option<Verdict> {
    if !matches!(ours, Verdict::Equivalent | Verdict::NotEquivalent) {
        return None;
    }
    let public = match public::reg2dfa::shape_equal(phi0, answer) {
        Ok(true) => Verdict::Equivalent,
        Ok(false) => Verdict::NotEquivalent,
        Err(_) => return None,
    };
    (public != ours).then_some(public)
}
