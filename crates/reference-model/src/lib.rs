//! The built-in `reference` model: a deterministic translator from formulas
//! into a controlled English that names every symbol ([`english`]), and a
//! reader of that English back into formulas ([`read`]). Its round trip is
//! exact for every dataset type, so with no API key the whole harness can be
//! run and must score 100%.

pub mod english;
pub mod noise;
pub mod read;

pub use autoeval_models::provider::Builtin;
use autoeval_syntax::{
    alphabet, canonical, parse_formula_exact, parse_regex_exact, print, Mode, ParseError, Style,
};
pub use read::ReadError;
use std::sync::Arc;

/// Decides whether two formulas of a kind (`plogic`, `fol` or `regex`) are
/// equivalent, `None` when it cannot: how the model answers the A4 question.
/// It is passed in, so the model itself needs no prover.
pub type Judge = Arc<dyn Fn(&str, &str, &str) -> Option<bool> + Send + Sync>;

/// True for the A4 question (two formulas to compare), which needs a [`Judge`].
pub fn is_judge_prompt(prompt: &str) -> bool {
    section(prompt, "[FORMULA 1]").is_some() && section(prompt, "[FORMULA 2]").is_some()
}

/// Informalization: the formula (or regex, when `regex`) in controlled English.
pub fn informalize(text: &str, regex: bool) -> Result<String, ParseError> {
    if regex {
        let r = parse_regex_exact(text, Mode::Lenient, &alphabet(36))?;
        Ok(english::describe_regex(&r))
    } else {
        let f = parse_formula_exact(text, Mode::Lenient)?;
        Ok(english::describe_formula(&f))
    }
}

/// Autoformalization: the formula (or regex) that controlled English describes.
pub fn autoformalize(description: &str, regex: bool) -> Result<String, ReadError> {
    if regex {
        Ok(print::regex(&read::read_regex(description)?))
    } else {
        Ok(print::formula(
            &canonical(&read::read_formula(description)?),
            Style::Unicode,
        ))
    }
}

/// The A4 question, answered by `judge`: an explanation, then `[Answer] yes|no`.
fn judge_answer(prompt: &str, a: &str, b: &str, judge: Option<&Judge>) -> String {
    let lower = prompt.to_lowercase();
    let kind = if lower.contains("regular expression") || lower.contains("two regex") {
        "regex"
    } else if lower.contains("first-order") {
        "fol"
    } else {
        "plogic"
    };
    let Some(judge) = judge else {
        return "I cannot compare formulas: this model was given no judge.".into();
    };
    match judge(kind, a, b) {
        Some(true) => "A formal check shows the two formulas are equivalent.\n[Answer] yes".into(),
        Some(false) => "A formal check finds a case where they differ.\n[Answer] no".into(),
        None => "I could not decide.".into(),
    }
}

/// [`answer`] as `reference-judge-noisy:RATE`: the A4 answer is flipped
/// (yes ↔ no) for `rate` of the questions, chosen by a hash of the prompt;
/// every other prompt is answered as [`answer`] does.
pub fn answer_judge_noisy(prompt: &str, rate: f64, judge: Option<&Judge>) -> String {
    let reply = answer(prompt, judge);
    let h = prompt.bytes().fold(0x84222325_cbf29ce4u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let flip = ((h >> 11) as f64 / (1u64 << 53) as f64) < rate;
    match (
        flip,
        reply.strip_suffix("[Answer] yes"),
        reply.strip_suffix("[Answer] no"),
    ) {
        (true, Some(head), _) => format!("{head}[Answer] no"),
        (true, _, Some(head)) => format!("{head}[Answer] yes"),
        _ => reply,
    }
}

/// [`answer`] as `reference-chatty:RATE`: for `rate` of the
/// autoformalization prompts (by a hash of the prompt) the right formula is
/// dressed as models often dress it: in a sentence, in ASCII notation, or as
/// an equation. Strict reading refuses all three; lenient reading accepts
/// the first two and refuses the equation as ambiguous.
pub fn answer_chatty(prompt: &str, rate: f64, judge: Option<&Judge>) -> String {
    let reply = answer(prompt, judge);
    if section(prompt, "[NL DESCRIPTION]").is_none() || reply.starts_with("I cannot") {
        return reply;
    }
    let h = prompt.bytes().fold(0x2325_cbf2_9ce4_8422u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    if ((h >> 11) as f64 / (1u64 << 53) as f64) >= rate {
        return reply;
    }
    let regex = prompt.to_lowercase().contains("regular expression");
    match (h % 3, regex) {
        (0, _) => format!("The formula that matches the description is {reply}."),
        (1, false) => reply.replace('∧', "&").replace('∨', "|").replace('¬', "~"),
        (1, true) => format!("Regex: `{reply}`"),
        _ => format!("φ1 = {reply}"),
    }
}

/// The text of the last block a line `marker` opens (tags in any case, as
/// prompt sets write `[FORMULA 1]` or `[Formula 1]`), up to the next blank
/// line; or, where the tag opens a line with text after it (the public
/// implementation's judge prompt: `[Formula 1] (p1 ∧ p2)`), that text and
/// the lines after it up to a blank line or the next tag.
fn section<'a>(prompt: &'a str, marker: &str) -> Option<&'a str> {
    let (mut start, mut inline) = (None, false);
    let mut at = 0;
    for line in prompt.split_inclusive('\n') {
        let trimmed = line.trim();
        let opens = trimmed
            .get(..marker.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(marker));
        if opens {
            let lead = line.len() - line.trim_start().len();
            inline = trimmed.len() > marker.len();
            start = Some(if inline {
                at + lead + marker.len()
            } else {
                at + line.len()
            });
        }
        at += line.len();
    }
    let rest = prompt[start?..].trim_start_matches([' ', '\n', '\r']);
    let mut end = rest.find("\n\n").unwrap_or(rest.len());
    // The next tag ends an inline block.
    if let Some(tag) = rest[..end].find("\n[").filter(|_| inline) {
        end = tag;
    }
    Some(rest[..end].trim())
}

/// The model's reply to one of the benchmark's prompts: it finds the
/// formula after `[FORMULA]` (informalization) or the description after
/// `[NL DESCRIPTION]` (autoformalization) and translates it. A prompt it
/// cannot read gets an answer that says so, as a model's would. The A4
/// question goes to `judge`.
pub fn answer(prompt: &str, judge: Option<&Judge>) -> String {
    answer_noisy(prompt, 0.0, judge)
}

/// The reply of the built-in model `builtin` to `prompt`: the one place
/// that says how each plays, for the in-process backend and the mock
/// server alike.
pub fn answer_as(builtin: Builtin, prompt: &str, judge: Option<&Judge>) -> String {
    match builtin {
        Builtin::Exact => answer(prompt, judge),
        Builtin::Noisy(rate) => answer_noisy(prompt, rate, judge),
        Builtin::Chatty(rate) => answer_chatty(prompt, rate, judge),
        Builtin::JudgeNoisy(rate) => answer_judge_noisy(prompt, rate, judge),
    }
}

/// [`answer`] as `reference-noisy:RATE`: informalizations of the chosen
/// items describe a formula with one injected error ([`noise::injection`]).
pub fn answer_noisy(prompt: &str, rate: f64, judge: Option<&Judge>) -> String {
    let regex = prompt.to_lowercase().contains("regular expression");
    if let (Some(a), Some(b)) = (
        section(prompt, "[FORMULA 1]"),
        section(prompt, "[FORMULA 2]"),
    ) {
        return judge_answer(prompt, a, b, judge);
    }
    let reply = if let Some(description) = section(prompt, "[NL DESCRIPTION]") {
        autoformalize(description, regex).map_err(|e| e.to_string())
    } else if let Some(formula) = section(prompt, "[FORMULA]") {
        match noise::injection(formula, regex, rate) {
            Some(injected) => informalize(&injected.formula, regex),
            None => informalize(formula, regex),
        }
        .map_err(|e| e.to_string())
    } else {
        Err("the prompt has neither [FORMULA] nor [NL DESCRIPTION]".to_string())
    };
    reply.unwrap_or_else(|e| format!("I cannot answer this: {e}"))
}
