//! The public implementation's regular-expression verdict, as
//! `public::reg2dfa` gives it, held to that code's own verdicts on the
//! oracle corpus's regular-expression answers (`tests/reference-oracle`):
//! the same verdict where it decided, an error where it met one.

use autoeval_syntax::public::reg2dfa::shape_equal;
use serde_json::Value;

#[test]
fn the_public_regex_verdict_is_reproduced_on_every_corpus_answer() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference-oracle/answers/corpus.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let (mut same, mut wrong) = (0, Vec::new());
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        if case["dataset"] != "regex" {
            continue;
        }
        let field = |k: &str| case[k].as_str().unwrap();
        let public = case["public_result"]["is_equivalent"].as_bool();
        let ours = shape_equal(field("phi0"), field("answer"));
        match (public, &ours) {
            (Some(p), Ok(o)) if p == *o => same += 1,
            (None, Err(_)) => same += 1,
            _ => wrong.push(format!("{}: public {public:?}, ours {ours:?}", field("id"))),
        }
    }
    println!("{same} regex answers decided as the public code decided them");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(same, 81);
}

/// A run reads a regex answer with `reg2dfa::read` and records it printed
/// by `reg2dfa::print`: the reading fails exactly where reg2dfa's own
/// construction does, denotes the language reg2dfa built, and its printing
/// reads back to an expression printed the same.
#[test]
fn the_public_reading_of_every_corpus_answer_prints_back_to_itself() {
    use autoeval_syntax::public::reg2dfa::{language_equal, print, read};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference-oracle/answers/corpus.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut read_back = 0;
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        if case["dataset"] != "regex" {
            continue;
        }
        let answer = case["answer"].as_str().unwrap();
        let id = case["id"].as_str().unwrap();
        match (read(answer), shape_equal(answer, answer)) {
            (Err(_), Err(_)) => {}
            (Ok(r), Ok(_)) => {
                let printed = print(&r);
                let again = read(&printed).map(|r| print(&r));
                assert_eq!(again.as_ref(), Ok(&printed), "{id}: {r:?}");
                assert_eq!(
                    language_equal(&printed, answer),
                    Ok(true),
                    "{id}: {printed}"
                );
                read_back += 1;
            }
            (ours, theirs) => panic!("{id}: read {ours:?}, reg2dfa {theirs:?}"),
        }
    }
    println!("{read_back} regex answers read and printed back");
    assert!(read_back > 60, "{read_back}");
}
