//! No input makes the parsers panic, overflow the stack or run away.

use autoeval_syntax::{
    alphabet, canonical, parse_formula, parse_regex, print, Formula, Mode, Quantifier, Style,
};
use proptest::prelude::*;

/// Characters that formulas and answers are made of, to reach deep parser paths.
fn formula_soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "(", ")", "¬", "∧", "∨", "∀", "∃", "→", "↔", "⊕", " ", ".", ",", ":", "p1", "x1", "pred1",
        "v", "and", "or", "not", "all", "exists", "~", "&", "|", "-", "->", "<->", "```", "\n",
        "=", "*", "0", "1", "+", "?", "ε", "\\land", "\\", "Formula:", "`",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        for mode in [Mode::Strict, Mode::Lenient] {
            let _ = parse_formula(&text, mode);
            let _ = parse_regex(&text, mode, &alphabet(2));
        }
    }

    #[test]
    fn formula_soup_never_panics_and_round_trips(text in formula_soup()) {
        for mode in [Mode::Strict, Mode::Lenient] {
            if let Ok(parsed) = parse_formula(&text, mode) {
                // Whatever parses prints to text that parses to the same meaning-bearing tree.
                let c = canonical(&parsed.value);
                let printed = print::formula(&c, Style::Unicode);
                let again = parse_formula(&printed, Mode::Lenient).unwrap().value;
                prop_assert_eq!(canonical(&again), c);
            }
            let _ = parse_regex(&text, mode, &alphabet(2));
        }
    }
}

fn arb_formula() -> impl Strategy<Value = Formula> {
    let atom = prop_oneof![
        (1..5u8).prop_map(|i| Formula::prop(format!("p{i}"))),
        (
            1..3u8,
            prop::collection::vec(prop::sample::select(vec!["p1", "x1", "x2", "Alice"]), 1..3)
        )
            .prop_map(|(i, args)| Formula::pred(format!("pred{i}"), &args)),
    ];
    atom.prop_recursive(6, 40, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Formula::negate),
            inner.clone().prop_map(Formula::group),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::Or),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Formula::Iff(Box::new(a), Box::new(b))),
            (any::<bool>(), inner).prop_map(|(all, body)| Formula::Quant {
                q: if all {
                    Quantifier::Forall
                } else {
                    Quantifier::Exists
                },
                vars: vec!["x1".into()],
                body: Box::new(body),
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn canonical_form_prints_and_parses_back_exactly(f in arb_formula()) {
        let c = canonical(&f);
        for style in [Style::Unicode, Style::Ascii, Style::Reference] {
            let text = print::formula(&c, style);
            let back = parse_formula(&text, Mode::Lenient).unwrap().value;
            prop_assert_eq!(&back, &c, "{}", text);
        }
        // Printing any tree adds the parentheses its meaning needs.
        let text = print::formula(&f, Style::Unicode);
        let back = parse_formula(&text, Mode::Lenient).unwrap().value;
        prop_assert_eq!(canonical(&back), c);
    }
}

#[test]
fn deep_regexes_are_refused_not_a_crash() {
    let deep = format!("{}0{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(parse_regex(&deep, Mode::Lenient, &alphabet(2)).is_err());
    let stars = format!("0{}", "*".repeat(100_000));
    assert!(parse_regex(&stars, Mode::Lenient, &alphabet(2)).is_err());
}
