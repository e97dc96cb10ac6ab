//! Reading an LLM judge's answer (metric A4): the last answer marker wins.

use serde::{Deserialize, Serialize};

/// What a judge said about φ0 ≡ φ1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// It says they are equivalent.
    Yes,
    /// It says they are not.
    No,
    /// No yes or no could be read.
    Unparseable,
}

fn word(w: &str) -> Option<Judgement> {
    let w: String = w
        .chars()
        .filter(|c| c.is_alphabetic())
        .collect::<String>()
        .to_lowercase();
    match w.as_str() {
        "yes" => Some(Judgement::Yes),
        "no" => Some(Judgement::No),
        _ => None,
    }
}

/// Reads the judgement after the last `[Answer]` (or `Answer:`) marker; an
/// answer that is only "yes" or "no" counts too. Whole words only: "not" or
/// "know" are not "no".
pub fn parse_judgement(text: &str) -> Judgement {
    // The markers are ASCII: lowercasing only ASCII keeps every byte where
    // it is, so a marker's end found here is its end in `text` too.
    let lower = text.to_ascii_lowercase();
    let marker = ["[answer]", "answer:", "answer"]
        .iter()
        .filter_map(|m| lower.rfind(m).map(|i| i + m.len()))
        .max();
    let tail = match marker {
        Some(at) => &text[at..],
        None => text,
    };
    let mut words = tail
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphabetic));
    match (marker, words.next()) {
        (Some(_), Some(first)) => word(first).unwrap_or(Judgement::Unparseable),
        (None, Some(only)) if words.next().is_none() => {
            word(only).unwrap_or(Judgement::Unparseable)
        }
        _ => Judgement::Unparseable,
    }
}
