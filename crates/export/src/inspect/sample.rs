//! One work unit as an Inspect sample and its summary.

use super::RunInfo;
use autoeval_prompts::{Family, Shots};
use autoeval_proto::{DatasetKind, NextRound, ResultRecord, Verdict};
use serde_json::{json, Map, Value};

/// A model spec as Inspect names models, `provider/model`: the spec's first
/// `:` becomes `/`, and a built-in model is `autoeval/{spec}`.
pub(super) fn inspect_model(spec: &str) -> String {
    match spec.split_once(':') {
        Some((provider, model)) if !provider.starts_with("reference") => {
            format!("{provider}/{model}")
        }
        _ => format!("autoeval/{spec}"),
    }
}

/// The sample of one unit (its records, rounds in order) and its summary.
pub(super) fn sample(unit: &[ResultRecord], info: &RunInfo) -> (Value, Value) {
    let first = &unit[0];
    let last = &unit[unit.len() - 1];
    let model = inspect_model(&first.model);
    let messages = messages(unit, info, &model);
    let mut scores = scores(unit, info.rounds);
    judge_scores(unit, info, &mut scores);
    let metadata = metadata(unit);
    let (prompt_tokens, completion_tokens) = unit.iter().fold((0, 0), |(p, c), r| {
        (p + r.usage.prompt_tokens, c + r.usage.completion_tokens)
    });
    let reasoning_tokens: u64 = unit.iter().map(|r| r.usage.reasoning_tokens).sum();
    let mut usage = json!({
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    });
    if reasoning_tokens > 0 {
        usage["reasoning_tokens"] = json!(reasoning_tokens);
    }
    if let Some(cost) = total_cost(unit) {
        usage["total_cost"] = json!(cost);
    }
    let seconds = unit.iter().map(|r| r.latency_ms).sum::<f64>() / 1e3;
    let answer = last.raw_answer.clone().unwrap_or_default();
    let summary = json!({
        "id": first.id,
        "epoch": first.repeat + 1,
        "input": first.phi0,
        "target": first.phi0,
        "metadata": metadata,
        "scores": scores,
        "model_usage": {model.clone(): usage},
        "total_time": seconds,
        "completed": true,
        "message_count": messages.len(),
    });
    let mut sample = summary.clone();
    if let Value::Object(fields) = &mut sample {
        fields.remove("completed");
        fields.remove("message_count");
        fields.insert("messages".into(), Value::Array(messages));
        fields.insert(
            "output".into(),
            json!({
                "model": model,
                "choices": [{
                    "message": {"role": "assistant", "content": answer, "source": "generate", "model": model},
                    "stop_reason": stop_reason(last),
                }],
                "completion": answer,
            }),
        );
    }
    (sample, summary)
}

/// The calls of every round as sent and answered: the informalization, then
/// in its fresh context the autoformalization; the prompts are rebuilt
/// from the run's templates exactly as the run built them.
fn messages(unit: &[ResultRecord], info: &RunInfo, model: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let user = |text: String| json!({"role": "user", "content": text, "source": "input"});
    let assistant = |text: &str| json!({"role": "assistant", "content": text, "source": "generate", "model": model});
    for r in unit {
        let (Ok(dataset), Ok(shots)) =
            (r.dataset.parse::<DatasetKind>(), r.prompt.parse::<Shots>())
        else {
            break;
        };
        let family = Family::from(dataset);
        let alphabet = info
            .alphabets
            .get(&r.dataset)
            .map_or(&[][..], Vec::as_slice);
        let input = r.input.as_deref().unwrap_or(&r.phi0);
        let asked = info.templates.informalize(family, input, shots, alphabet);
        out.push(user(asked.map_or_else(
            |e| format!("(prompt not rebuilt: {e})"),
            |p| p.text,
        )));
        let Some(english) = &r.english else { break };
        out.push(assistant(english));
        let asked = info
            .templates
            .autoformalize(family, input, english, shots, alphabet);
        out.push(user(asked.map_or_else(
            |e| format!("(prompt not rebuilt: {e})"),
            |p| p.text,
        )));
        let Some(answer) = &r.raw_answer else { break };
        out.push(assistant(answer));
    }
    out
}

/// Per round r up to `rounds`: `verdict_rN` and `lenient_rN` (the verdict's
/// name, `stopped` for a unit an earlier round ended), and `a2_rN`,
/// `a3_rN` (1 or 0) wherever the round is in A2's and A3's denominators:
/// not after an API failure or verifier error, and as a failure once the
/// unit stopped.
fn scores(unit: &[ResultRecord], rounds: u32) -> Map<String, Value> {
    let mut out = Map::new();
    let mut stopped = false;
    let last_round = unit.iter().map(|r| r.round).max().unwrap_or(0).max(rounds);
    for round in 1..=last_round {
        let key = |name: &str| format!("{name}_r{round}");
        match unit.iter().find(|r| r.round == round) {
            Some(r) => {
                out.insert(
                    key("verdict"),
                    json!({"value": r.verdict.name(), "answer": r.phi1, "explanation": r.reason}),
                );
                let lenient = r.lenient_reading();
                out.insert(
                    key("lenient"),
                    json!({"value": lenient.verdict.name(), "answer": lenient.phi1, "explanation": lenient.reason}),
                );
                if r.verdict.is_infrastructure_failure() {
                    break;
                }
                let counted = [
                    ("a2", r.verdict.is_compliant()),
                    ("a3", r.verdict == Verdict::Equivalent),
                ];
                for (metric, yes) in counted {
                    out.insert(key(metric), json!({"value": u8::from(yes)}));
                }
                stopped = NextRound::ends(r, rounds);
            }
            None if stopped => {
                for metric in ["verdict", "lenient"] {
                    out.insert(key(metric), json!({"value": "stopped"}));
                }
                for metric in ["a2", "a3"] {
                    out.insert(key(metric), json!({"value": 0}));
                }
            }
            None => break,
        }
    }
    out
}

/// Each judgement of a round of `unit`, as the score `a4_rN_STYLE:JUDGE`:
/// its cell of A4's confusion matrix, the judgement and the judge's reply.
fn judge_scores(unit: &[ResultRecord], info: &RunInfo, out: &mut Map<String, Value>) {
    for r in unit {
        for j in info.judgements.get(&r.round_key()).into_iter().flatten() {
            out.insert(
                super::judge_score_name(j),
                json!({
                    "value": autoeval_metrics::judge::Cell::of(j).name(),
                    "answer": j.judgement,
                    "explanation": j.answer.clone().or_else(|| j.api_failure.clone()),
                    "metadata": {
                        "judge": j.task.judge,
                        "style": j.task.style,
                        "equivalent": j.task.equivalent,
                        "non_compliant": j.task.non_compliant,
                    },
                }),
            );
        }
    }
}

/// The item's metrics, and what the records add: batch, tokens, cost,
/// latency, the copy check and each round's reading and evidence.
fn metadata(unit: &[ResultRecord]) -> Map<String, Value> {
    let first = &unit[0];
    let mut out = first.metrics.clone();
    out.insert("complexity".into(), json!(first.complexity));
    out.insert("batch".into(), json!(first.batch));
    out.insert("copied".into(), json!(unit.iter().any(|r| r.copied)));
    out.insert("cost".into(), json!(total_cost(unit)));
    out.insert(
        "latency_ms".into(),
        json!(unit.iter().map(|r| r.latency_ms).sum::<f64>()),
    );
    out.insert("prompt_set".into(), json!(first.prompt_set));
    let rounds: Vec<Value> = unit
        .iter()
        .map(|r| {
            json!({
                "round": r.round,
                "verdict": r.verdict.name(),
                "phi1": r.phi1,
                "reason": r.reason,
                "method": r.method,
                "counterexample": r.counterexample,
                "finish_reasons": r.finish_reasons,
                "prompt_tokens": r.usage.prompt_tokens,
                "completion_tokens": r.usage.completion_tokens,
                "cost": r.cost,
                "latency_ms": r.latency_ms,
                "verify_ms": r.verify_ms,
                "reference_verdict": r.reference_verdict.map(|v| v.name()),
            })
        })
        .collect();
    out.insert("rounds".into(), Value::Array(rounds));
    out
}

/// The unit's cost in USD, when every round's is known.
fn total_cost(unit: &[ResultRecord]) -> Option<f64> {
    unit.iter().map(|r| r.cost).sum()
}

/// Why the last call stopped, in Inspect's words (its `StopReason`), from the tool's own.
fn stop_reason(r: &ResultRecord) -> &'static str {
    use autoeval_models::Finish;
    match r.finish_reasons.last().map(|f| Finish::from_name(f)) {
        Some(Finish::Truncated) => "max_tokens",
        Some(Finish::Filtered) => "content_filter",
        _ => "stop",
    }
}
