//! Reading an LLM judge's answer (metric A4) as the public implementation does.

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

/// Reads a judge's answer as the public implementation that produced the
/// paper's A4 numbers does (`check_answer` in its `llm_verifier.py`): the
/// answer lowercased, the text from the last "answer" on, and there "yes"
/// or "no" found anywhere, as substrings; exactly one of them is the
/// judgement. So "[Answer] The answer is no" is no, "Answer: they are not
/// equivalent" is no ("not" holds "no"), and "[Answer] yes, there is no
/// difference" or an answer without "answer" are unparseable.
pub fn parse_judgement(text: &str) -> Judgement {
    // The slice is taken of the lowercased text itself, never of `text`:
    // lowercasing can change a character's length.
    let lower = text.to_lowercase();
    let Some(at) = lower.rfind("answer") else {
        return Judgement::Unparseable;
    };
    let tail = &lower[at..];
    match (tail.contains("yes"), tail.contains("no")) {
        (true, false) => Judgement::Yes,
        (false, true) => Judgement::No,
        _ => Judgement::Unparseable,
    }
}
