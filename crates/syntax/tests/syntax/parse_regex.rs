//! The regex parser on what LLMs write.

use autoeval_syntax::{alphabet, parse_regex, print, Mode, Reason, Regex, Source};

fn parse(text: &str, mode: Mode) -> Result<Regex, autoeval_syntax::ParseError> {
    parse_regex(text, mode, &alphabet(2)).map(|p| p.value)
}

#[test]
fn written_form_round_trips() {
    for text in ["0", "1*", "(0*1)*", "10*1", "((1)0*)", "(((0*01*))*0*1*)*"] {
        let r = parse(text, Mode::Strict).unwrap();
        assert_eq!(print::regex(&r), text);
    }
}

#[test]
fn answers_around_the_expression() {
    let p = parse_regex(
        "The regex is:\n```\n(01*)\n```",
        Mode::Lenient,
        &alphabet(2),
    )
    .unwrap();
    assert_eq!(p.source, Source::CodeBlock);
    assert_eq!(print::regex(&p.value), "(01*)");
    assert_eq!(
        print::regex(&parse("Answer: 0 1*", Mode::Lenient).unwrap()),
        "01*"
    );
    assert_eq!(
        print::regex(&parse("`(1*)0*`.", Mode::Lenient).unwrap()),
        "(1*)0*"
    );
    // A lone symbol mentioned in prose is not a second answer.
    assert_eq!(
        print::regex(&parse("Strings of the digit 1 then 0: 1*0", Mode::Lenient).unwrap()),
        "1*0"
    );
    // Strict reading takes the answer as it is, less one code fence.
    for text in [
        "The regex is:\n```\n(01*)\n```",
        "Answer: 0 1*",
        "`(1*)0*`.",
    ] {
        assert!(parse(text, Mode::Strict).is_err(), "{text}");
    }
    let p = parse_regex("```\n(01*)\n```", Mode::Strict, &alphabet(2)).unwrap();
    assert_eq!(p.source, Source::CodeBlock);
}

#[test]
fn two_different_expressions_or_an_equation_are_ambiguous() {
    for text in [
        "Either 01* or 10*",
        "0*1 = (0*)1",
        "```\n01*\n```\nor maybe\n```\n1*\n```",
    ] {
        let err = parse(text, Mode::Lenient).unwrap_err();
        assert!(matches!(err.reason, Reason::Ambiguous(_)), "{text}: {err}");
    }
    // The same expression twice is one answer.
    assert_eq!(
        print::regex(&parse("It is 01*, that is: 01*", Mode::Lenient).unwrap()),
        "01*"
    );
}

#[test]
fn strict_refuses_what_the_prompt_does_not_offer() {
    for text in ["0|1", "0+", "0?", "ε"] {
        let err = parse(text, Mode::Strict).unwrap_err();
        assert!(
            matches!(err.reason, Reason::OutsideVocabulary(_)),
            "{text}: {err}"
        );
        assert!(parse(text, Mode::Lenient).is_ok(), "{text}");
    }
}

#[test]
fn symbols_outside_the_alphabet_are_refused_with_a_reason() {
    let err = parse("0*2", Mode::Lenient).unwrap_err();
    assert!(err.to_string().contains("not in the alphabet"), "{err}");
    let err = parse("(01", Mode::Lenient).unwrap_err();
    assert!(err.to_string().contains("never closed"), "{err}");
    let err = parse("*0", Mode::Lenient).unwrap_err();
    assert!(err.to_string().contains("nothing before it"), "{err}");
}
