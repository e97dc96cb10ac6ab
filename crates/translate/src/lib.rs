//! One round trip (A∘I)(φ0) as a library call: the model informalizes φ0
//! (I), then autoformalizes its own English in a fresh context (A); the
//! answer is read in both declared modes, strict (the paper's) and lenient. Everything a result line needs is recorded:
//! the English, the raw answer, φ1 or why it does not parse, the copy check,
//! tokens, cost, latency, attempts, and an API failure if there was one.
//! [`judge`] asks a judge model the A4 question the same way.

pub mod judge;
mod settings;
mod stage;

pub use autoeval_llm_client::Backend;
pub use autoeval_prompts::{PromptSet, Templates};
pub use autoeval_proto::{Reading, RoundTrip, TranslateTask, VerifyTask};
pub use settings::{
    build_backend, default_task_budget, prices_at, CopyPolicy, Local, SettingsError, StageBackends,
    StageSettings,
};
pub use stage::{translate, Translator};

use autoeval_llm_client::{CallError, Reply};
use autoeval_models::{Finish, Sample, Stage};
use autoeval_prompts::{copy_check, Family, Shots};
use autoeval_syntax::{canonical, parse_formula, parse_regex, print, Mode, Style};

/// Reads `answer` in `mode` for a dataset of `family`.
pub fn read_answer(answer: &str, family: Family, mode: Mode, alphabet: &[char]) -> Reading {
    reading(if family == Family::Regex {
        parse_regex(answer, mode, alphabet).map(|p| print::regex(&p.value))
    } else {
        parse_formula(answer, mode).map(|p| print::formula(&canonical(&p.value), Style::Unicode))
    })
}

/// φ1 printed, or why the answer gives none.
fn reading(parsed: Result<String, autoeval_syntax::ParseError>) -> Reading {
    match parsed {
        Ok(phi1) => Reading {
            phi1: Some(phi1),
            non_compliance: None,
        },
        Err(e) => Reading {
            phi1: None,
            non_compliance: Some(e.to_string()),
        },
    }
}

/// Reads `answer` as the public implementation that produced the paper's
/// numbers does ([`autoeval_syntax::public`]): no extraction, the whole
/// answer lowercased with its newlines dropped (so prose or a code fence
/// around the formula leaves it unreadable), then one formula by its logic
/// library's tokens, precedence and quantifier scope, refused where its
/// prover refuses `φ0 ↔ φ1` (a predicate of two arities, a name both a
/// predicate and an object, a proposition named `u`–`z`); for a regular
/// expression, its spaces and backslashes dropped and every other character
/// but `*`, `|`, `(` and `)` a symbol, in the item's alphabet or not.
pub fn read_answer_as_reference(answer: &str, phi0: &str, family: Family) -> Reading {
    use autoeval_syntax::public;
    if family == Family::Regex {
        return reading(public::read_regex(answer).map(|r| public::reg2dfa::print(&r)));
    }
    let phi1 = match public::read_pair(phi0, answer) {
        Ok((_, phi1)) => Ok(phi1),
        Err(public::PairError::Phi1(e)) => Err(e),
        // φ0 the public code cannot read is the verifier's to report; the
        // answer is shown as read alone.
        Err(public::PairError::Phi0(_)) => public::read_formula(answer),
    };
    reading(phi1.map(|f| print::formula(&canonical(&f), Style::Unicode)))
}

/// How a round trip is asked.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// Prompt family of the item's dataset.
    pub family: Family,
    /// The ground truth.
    pub phi0: &'a str,
    /// Zero- or few-shot.
    pub shots: Shots,
    /// Regex alphabet.
    pub alphabet: &'a [char],
    /// The work unit this round belongs to, as the cache tells samples apart
    /// (item id, model, prompt style, repeat).
    pub unit: String,
    /// Round r of (A∘I)^n, from 1.
    pub round: u32,
}

/// Adds a reply's accounting to `out`; `first` for the informalization call.
fn add(out: &mut RoundTrip, reply: &Reply, first: bool) {
    out.usage.prompt_tokens += reply.usage.prompt_tokens;
    out.usage.completion_tokens += reply.usage.completion_tokens;
    out.usage.reasoning_tokens += reply.usage.reasoning_tokens;
    if !reply.cached {
        out.paid_usage.prompt_tokens += reply.usage.prompt_tokens;
        out.paid_usage.completion_tokens += reply.usage.completion_tokens;
        out.paid_usage.reasoning_tokens += reply.usage.reasoning_tokens;
    }
    // Thinking's cost adds up where any call reported it.
    out.reasoning_cost = match (out.reasoning_cost, reply.reasoning_cost) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    // The cost is known only when every call's cost is.
    out.cost = if first {
        reply.cost
    } else {
        out.cost.zip(reply.cost).map(|(a, b)| a + b)
    };
    out.latency_ms += reply.latency_ms;
    out.attempts += reply.attempts;
    out.usage_estimated |= reply.usage_estimated;
}

/// Why an answer past the size limit is non-compliant.
pub const TOO_LONG: &str = "answer too long";

/// A round that ends without a formula to read, for `why`: non-compliant in both readings.
fn unreadable(mut out: RoundTrip, why: &str) -> RoundTrip {
    let reading = Reading {
        phi1: None,
        non_compliance: Some(why.to_string()),
    };
    out.strict = reading.clone();
    out.lenient = reading;
    out
}

/// Notes why the model stopped; true when it was cut at the token cap.
fn finished(out: &mut RoundTrip, reply: &Reply) -> bool {
    let finish = reply.finish_reason.unwrap_or(Finish::Unreported);
    out.finish_reasons.push(finish.name().to_string());
    finish.is_truncation()
}

fn failed(mut out: RoundTrip, e: CallError) -> RoundTrip {
    // The attempts of the failed call count too: `attempts` is what the server saw.
    out.attempts += e.attempts();
    out.halted = matches!(e, CallError::Halted { .. });
    out.api_failure = Some(e.to_string());
    out
}

/// Runs I then A for one item.
pub async fn round_trip(backend: &Backend, templates: &Templates, req: &Request<'_>) -> RoundTrip {
    let mut out = RoundTrip::default();
    let i = match templates.informalize(req.family, req.phi0, req.shots, req.alphabet) {
        Ok(p) => p,
        Err(e) => return failed(out, CallError::Setup(e.to_string())),
    };
    out.templates.push(i.template.clone());
    let sample = |stage| Sample {
        unit: req.unit.clone(),
        round: req.round,
        stage,
    };
    let english = match backend.chat(&i.text, &sample(Stage::Informalize)).await {
        Ok(r) => {
            out.cached = r.cached;
            add(&mut out, &r, true);
            if r.too_long {
                return unreadable(out, TOO_LONG);
            }
            if finished(&mut out, &r) {
                // English cut short is not asked back: its formula could
                // only be part of one, and the call would be paid for nothing.
                out.english = Some(r.text);
                return unreadable(out, autoeval_proto::TRUNCATED);
            }
            r.text
        }
        Err(e) => return failed(out, e),
    };
    let (phi0, text) = (req.phi0.to_string(), english.clone());
    out.copy_check = Some(off_runtime(english.len(), move || copy_check(&phi0, &text)).await);
    let a = match templates.autoformalize(req.family, req.phi0, &english, req.shots, req.alphabet) {
        Ok(p) => p,
        Err(e) => return failed(out, CallError::Setup(e.to_string())),
    };
    out.templates.push(a.template.clone());
    out.english = Some(english);
    let answer = match backend.chat(&a.text, &sample(Stage::Autoformalize)).await {
        Ok(r) => {
            out.cached &= r.cached;
            add(&mut out, &r, false);
            if r.too_long {
                return unreadable(out, TOO_LONG);
            }
            if finished(&mut out, &r) {
                out.raw_answer = Some(r.text);
                return unreadable(out, autoeval_proto::TRUNCATED);
            }
            r.text
        }
        Err(e) => return failed(out, e),
    };
    let (text, family, alphabet) = (answer.clone(), req.family, req.alphabet.to_vec());
    let phi0 = req.phi0.to_string();
    // The headline reading is the paper's strict one, or under the
    // reference prompt set the public implementation's own.
    let as_reference = templates.set() == autoeval_prompts::PromptSet::Reference;
    let (strict, lenient) = off_runtime(answer.len(), move || {
        let headline = if as_reference {
            read_answer_as_reference(&text, &phi0, family)
        } else {
            read_answer(&text, family, Mode::Strict, &alphabet)
        };
        (
            headline,
            read_answer(&text, family, Mode::Lenient, &alphabet),
        )
    })
    .await;
    out.strict = strict;
    out.lenient = lenient;
    out.raw_answer = Some(answer);
    out
}

/// Replies longer than this are read off the async runtime: the copy check
/// and the parser take time in proportion to them, and heartbeats and
/// health checks must not wait (the reply size limit bounds how long).
const READ_INLINE_BYTES: usize = 8 << 10;

/// Runs `work` on a thread of its own when the text it reads (`len` bytes)
/// is long, in place when it is short.
async fn off_runtime<T: Send + 'static>(
    len: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    if len <= READ_INLINE_BYTES {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        // A panic in the work is the task's: it settles as any panic does.
        Err(e) => std::panic::resume_unwind(
            e.try_into_panic()
                .unwrap_or_else(|e| Box::new(e.to_string())),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_reading_takes_the_whole_answer_as_one_formula_as_the_public_implementation_does(
    ) {
        let phi0 = "((p1 ∨ p2) ∧ ¬p3)";
        let read = |text: &str, family| read_answer_as_reference(text, phi0, family).phi1;
        let logic = Family::Propositional;
        assert_eq!(read("((p1 v p2) ∧ ¬p3)", logic).as_deref(), Some(phi0));
        assert_eq!(read("(P1 & P2)", logic).as_deref(), Some("(p1 ∧ p2)"));
        assert_eq!(read("[p1 | p2]", logic).as_deref(), Some("(p1 ∨ p2)"));
        // Newlines are dropped, not read as spaces: a fence stays glued on.
        assert_eq!(read("```\n(p1 ∧ p2)\n```", logic), None);
        assert_eq!(read("The formula is (p1 ∧ p2).", logic), None);
        // Its library's reading: `~` is no operator there, and `∨` needs spaces.
        assert_eq!(read("(~p1 | p2)", logic), None);
        assert_eq!(read("(p1∨p2)", logic), None);
        // A quantifier's scope ends at the first connective.
        let fol = Family::FirstOrder;
        let scoped = read_answer_as_reference(
            "∀ x1.pred1(x1) ∧ pred2(p1)",
            "∀ x1.(pred1(x1) ∧ pred2(p1))",
            fol,
        );
        assert_eq!(
            scoped.phi1.as_deref(),
            Some("((∀ x1.pred1(x1)) ∧ pred2(p1))")
        );
        // Its prover's refusals of φ0 ↔ φ1.
        let arity = read_answer_as_reference("pred1(p1)", "pred1(p1, p2)", fol);
        assert!(arity
            .non_compliance
            .unwrap()
            .contains("more than one arity"));
        // The strict reading refuses ASCII spellings the reference accepts.
        assert_eq!(
            read_answer("(p1 & p2)", logic, Mode::Strict, &[]).phi1,
            None
        );
        let regex = Family::Regex;
        assert_eq!(read(" (0 1)* ", regex).as_deref(), Some("(01)*"));
        // Every character but reg2dfa's operators is a symbol: prose is an
        // expression over its letters, `+` is no operator, and `**` is refused.
        assert_eq!(read("Ab+", regex).as_deref(), Some("Ab+"));
        assert_eq!(read("0|", regex).as_deref(), Some("0|()"));
        assert_eq!(read("(0*1))0", regex).as_deref(), Some("(0*1)"));
        assert!(read_answer_as_reference("0**", "0*", regex)
            .non_compliance
            .unwrap()
            .contains("asterisk"));
    }
}
