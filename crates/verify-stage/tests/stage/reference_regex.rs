//! Under the `reference` prompt set a regular-expression answer is read as
//! the public implementation reads it (any character but `*`, `|`, `(` and
//! `)` a symbol), decided by its language, and where the public check's
//! verdict (automata compared by shape alone) is not the round's, the record
//! carries it and the summary counts it as `reference_disagrees`.

use crate::common;

use autoeval_generate::DatasetKind;
use autoeval_prompts::{Family, PromptSet, Shots};
use autoeval_proto::wire::TaskItem;
use autoeval_proto::{ResultRecord, RoundTrip, TranslateTask, Verdict, VerifyTask};
use autoeval_verify_stage::verify;

const PHI0: &str = "(0*)";

/// The round that answered `answer` to φ0 = `(0*)`, read and proved under `set`.
fn round(answer: &str, set: PromptSet) -> ResultRecord {
    let reading = match set {
        PromptSet::Reference => {
            autoeval_translate::read_answer_as_reference(answer, PHI0, Family::Regex)
        }
        _ => autoeval_translate::read_answer(
            answer,
            Family::Regex,
            autoeval_syntax::Mode::Strict,
            &['0', '1'],
        ),
    };
    let task = TranslateTask {
        item: TaskItem {
            id: "regex-0-0-0".into(),
            dataset: DatasetKind::Regex,
            batch: 0,
            complexity: 3,
            fs: PHI0.into(),
            metrics: Vec::new(),
        },
        alphabet: "01".into(),
        model: "mock".into(),
        prompt: Shots::ZeroShot,
        repeat: 0,
        round: 1,
        rounds: 1,
        input: PHI0.into(),
    };
    let translation = RoundTrip {
        raw_answer: Some(answer.into()),
        strict: reading.clone(),
        lenient: reading,
        ..RoundTrip::default()
    };
    let stage = common::stage_for(set);
    verify(VerifyTask { task, translation }, &stage)
}

#[test]
fn a_regex_answer_is_read_the_public_way_and_the_public_checks_mistake_is_counted() {
    let reference = |answer| round(answer, PromptSet::Reference);
    // The public check sees one shape in `(1*)` and `(0*)`: its mistake.
    let swapped = reference("(1*)");
    assert_eq!(swapped.verdict, Verdict::NotEquivalent);
    assert_eq!(swapped.reference_verdict, Some(Verdict::Equivalent));
    // Prose is an expression over its letters: compliant, and wrong.
    let prose = reference("zero or more 0s");
    assert_eq!(prose.phi1.as_deref(), Some("zeroormore0s"));
    assert_eq!(prose.verdict, Verdict::NotEquivalent);
    // `+` is a symbol there, not "one or more".
    let plus = reference("0+");
    assert_eq!(plus.verdict, Verdict::NotEquivalent, "{plus:?}");
    // The same language, written otherwise: both agree.
    let same = reference("((0)*)|()");
    assert_eq!(same.verdict, Verdict::Equivalent, "{same:?}");
    assert_eq!(same.reference_verdict, None);
    // What reg2dfa refuses is non-compliant, with its reason.
    let refused = reference("0**");
    assert_eq!(refused.verdict, Verdict::NonCompliant);
    assert!(refused.reason.as_deref().unwrap().contains("asterisk"));
    assert_eq!(refused.reference_verdict, None);
    // Under the paper's set the tool's own reading stands alone.
    let paper = round("(1*)", PromptSet::Paper);
    assert_eq!(paper.verdict, Verdict::NotEquivalent);
    assert_eq!(paper.reference_verdict, None);

    let summary = autoeval_metrics::summary::summarize(&[swapped, prose, plus, same, refused]);
    let group = &summary.groups[0];
    assert_eq!(group.reference_disagrees, 1);
    assert_eq!(group.counts.get(Verdict::NonCompliant), 1);
}
