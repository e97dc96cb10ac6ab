//! DFA construction, minimisation, metrics and shortest distinguishing words.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_automata::{AutomatonError, Dfa};
use autoeval_syntax::{parse_regex_exact, Mode};

const SIGMA: [char; 2] = ['0', '1'];

fn dfa(text: &str) -> Dfa {
    let r = parse_regex_exact(text, Mode::Lenient, &SIGMA).unwrap();
    Dfa::from_regex(&r, &SIGMA, 10_000).unwrap()
}

#[test]
fn membership() {
    let d = dfa("(01*)*0");
    for (w, ok) in [
        ("0", true),
        ("00", true),
        ("0110", true),
        ("1", false),
        ("", false),
        ("01", false),
    ] {
        assert_eq!(d.accepts(w), ok, "{w}");
    }
    assert!(!d.accepts("2"));
}

#[test]
fn minimal_dfa_shape_ignores_the_dead_state() {
    // 0*: one accepting state looping on 0; the sink for 1 is not counted.
    let s = dfa("0*").minimize().shape();
    assert_eq!((s.states, s.edges), (1, 1));
    // (0|1)*: one state, two loops.
    assert_eq!(dfa("(0*1*)*").minimize().shape().edges, 2);
    // 01: three live states in a chain.
    let s = dfa("01").minimize().shape();
    assert_eq!((s.states, s.edges, s.density), (3, 2, 0.3));
    // Minimising keeps the language.
    let d = dfa("(0*0*)*1(1*)*");
    let m = d.minimize();
    assert!(m.len() <= d.len());
    assert!(d.distinguish(&m).is_none());
}

#[test]
fn shortest_distinguishing_words() {
    let cases = [
        ("0*", "1*", "0"),
        ("(00)*", "0(00)*", ""),
        ("0*1", "0*11", "1"),
        ("(01)*", "(01)*0*", "0"),
    ];
    for (a, b, word) in cases {
        let d = dfa(a)
            .distinguish(&dfa(b))
            .unwrap_or_else(|| panic!("{a} vs {b}"));
        assert_eq!(d.word, word, "{a} vs {b}");
        assert_eq!(d.in_first, dfa(a).accepts(word));
    }
    assert!(dfa("(0*)*").distinguish(&dfa("0*")).is_none());
}

#[test]
fn budgets_and_alphabets_are_enforced() {
    let r = parse_regex_exact(
        "(0|1)*1(0|1)(0|1)(0|1)(0|1)(0|1)(0|1)(0|1)(0|1)",
        Mode::Lenient,
        &SIGMA,
    )
    .unwrap();
    assert_eq!(
        Dfa::from_regex(&r, &SIGMA, 64).unwrap_err(),
        AutomatonError::TooLarge(64)
    );
    let r = parse_regex_exact("012", Mode::Lenient, &['0', '1', '2']).unwrap();
    assert_eq!(
        Dfa::from_regex(&r, &SIGMA, 64).unwrap_err(),
        AutomatonError::UnknownSymbol('2')
    );
}

#[test]
fn a_construction_past_its_deadline_stops() {
    let r = parse_regex_exact(
        "(0|1)*1(0|1)(0|1)(0|1)(0|1)(0|1)(0|1)(0|1)(0|1)",
        Mode::Lenient,
        &SIGMA,
    )
    .unwrap();
    let limit = std::time::Duration::from_millis(5);
    // A deadline already passed: not one more state is built.
    let passed = std::time::Instant::now();
    assert_eq!(
        Dfa::from_regex_by(&r, &SIGMA, 1_000_000, Some((passed, limit))).unwrap_err(),
        AutomatonError::OutOfTime(limit)
    );
    // A deadline far off changes nothing.
    let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    let built = Dfa::from_regex_by(&r, &SIGMA, 1_000_000, Some((far, limit))).unwrap();
    assert_eq!(
        built.len(),
        Dfa::from_regex(&r, &SIGMA, 1_000_000).unwrap().len()
    );
}
