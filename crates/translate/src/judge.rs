//! A4 as a library call: ask a judge model whether φ0 ≡ φ1 and read its
//! yes or no. `autoeval judge` and the fleet's LLM workers both ask through
//! [`ask`], so a judgement means the same wherever it was made.

use autoeval_llm_client::{Backend, CallError};
use autoeval_models::{Sample, Stage};
use autoeval_prompts::{parse_judgement, Family, JudgeStyle, Judgement, Templates};
use autoeval_proto::JudgeRecord;

/// The judging style a record names (`cot` or `yesno`).
pub fn judge_style(name: &str) -> Option<JudgeStyle> {
    match name {
        "cot" => Some(JudgeStyle::Cot),
        "yesno" => Some(JudgeStyle::Yesno),
        _ => None,
    }
}

/// Asks `backend` about the pair in `j` and fills in its judgement and
/// answer, or the API failure. `None` when the call was never sent because
/// the backend halted (the pair stays to do).
pub async fn ask(
    backend: &Backend,
    templates: &Templates,
    mut j: JudgeRecord,
) -> Option<JudgeRecord> {
    // A question this build cannot ask is answered with why, never asked in a guessed form.
    let (Some(family), Some(style)) = (
        Family::of_dataset(&j.task.dataset),
        judge_style(&j.task.style),
    ) else {
        j.api_failure = Some(format!(
            "cannot ask about dataset {:?} in style {:?}: expected ksat, plogic, fol, fol-english or regex, and cot or yesno",
            j.task.dataset, j.task.style
        ));
        return Some(j);
    };
    let prompt = templates.judge(family, &j.task.phi0, &j.task.phi1, style);
    // The judged pair and the judging style make the sample: one pair's
    // judgement is never another's cached reply.
    let sample = Sample {
        unit: format!("{}|{}", j.task.unit(), j.task.style),
        round: j.task.round,
        stage: Stage::Judge,
    };
    match backend.chat(&prompt.text, &sample).await {
        Err(CallError::Halted { .. }) => return None,
        Ok(reply) => {
            // A reply cut at the token cap is no answer, whatever its text
            // holds so far: the public implementation refused any finish
            // reason but "stop" and left the pair unanswered.
            let cut = reply.too_long
                || reply
                    .finish_reason
                    .is_some_and(autoeval_models::Finish::is_truncation);
            let verdict = match parse_judgement(&reply.text) {
                _ if cut => "unparseable",
                Judgement::Yes => "yes",
                Judgement::No => "no",
                Judgement::Unparseable => "unparseable",
            };
            j.judgement = Some(verdict.into());
            j.answer = Some(reply.text);
        }
        Err(e) => j.api_failure = Some(e.to_string()),
    }
    Some(j)
}

/// A judge model with its prompts: the A4 stage the engine's judge loop asks.
pub struct Judging {
    /// The judge's backend.
    pub backend: std::sync::Arc<Backend>,
    /// The prompts the question is asked with.
    pub templates: std::sync::Arc<Templates>,
}

impl autoeval_engine::Judge for Judging {
    async fn ask(&self, question: JudgeRecord) -> Option<JudgeRecord> {
        ask(&self.backend, &self.templates, question).await
    }

    fn halted(&self) -> Option<String> {
        self.backend.halt().map(|h| h.line("the judge"))
    }
}
