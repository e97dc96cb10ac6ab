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
    let p = parse_regex("The regex is:\n```\n(01*)\n```", Mode::Strict, &alphabet(2)).unwrap();
    assert_eq!(p.source, Source::CodeBlock);
    assert_eq!(print::regex(&p.value), "(01*)");
    assert_eq!(
        print::regex(&parse("Answer: 0 1*", Mode::Strict).unwrap()),
        "01*"
    );
    assert_eq!(
        print::regex(&parse("`(1*)0*`.", Mode::Strict).unwrap()),
        "(1*)0*"
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
