//! Metric A4: how well a model judges equivalence, scored against the
//! formal verdicts. "Equivalent" is the positive class. Unparseable answers
//! and API failures are counted apart and left out of the confusion matrix.

use autoeval_proto::JudgeRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A judge's confusion matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Said yes, and they are equivalent.
    pub tp: usize,
    /// Said yes, and they are not.
    pub fp: usize,
    /// Said no, and they are not.
    pub tn: usize,
    /// Said no, and they are equivalent.
    pub fn_: usize,
    /// No yes or no could be read.
    pub unparseable: usize,
    /// The judge could not be asked.
    pub api_failures: usize,
}

fn ratio(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl Confusion {
    /// Adds one judgement.
    pub fn add(&mut self, r: &JudgeRecord) {
        match (r.judgement.as_deref(), r.task.equivalent) {
            (Some("yes"), true) => self.tp += 1,
            (Some("yes"), false) => self.fp += 1,
            (Some("no"), false) => self.tn += 1,
            (Some("no"), true) => self.fn_ += 1,
            (Some(_), _) => self.unparseable += 1,
            (None, _) => self.api_failures += 1,
        }
    }

    /// Adds another matrix's counts to this one.
    pub fn merge(&mut self, other: &Confusion) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.tn += other.tn;
        self.fn_ += other.fn_;
        self.unparseable += other.unparseable;
        self.api_failures += other.api_failures;
    }

    /// TP / (TP + FP).
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    /// TP / (TP + FN).
    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// TN / (TN + FP).
    pub fn tnr(&self) -> Option<f64> {
        ratio(self.tn, self.tn + self.fp)
    }

    /// 2TP / (2TP + FP + FN).
    pub fn f1(&self) -> Option<f64> {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// Judgements in the matrix.
    pub fn scored(&self) -> usize {
        self.tp + self.fp + self.tn + self.fn_
    }
}

/// Confusion matrices by (dataset, judge, style) and complexity.
pub fn confusion_by_complexity(
    records: &[JudgeRecord],
) -> BTreeMap<(String, String, String), BTreeMap<u32, Confusion>> {
    let mut out: BTreeMap<_, BTreeMap<u32, Confusion>> = BTreeMap::new();
    for r in records {
        out.entry((
            r.task.dataset.clone(),
            r.task.judge.clone(),
            r.task.style.clone(),
        ))
        .or_default()
        .entry(r.task.complexity)
        .or_default()
        .add(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(said: Option<&str>, equivalent: bool) -> JudgeRecord {
        JudgeRecord {
            judgement: said.map(String::from),
            ..JudgeRecord::from(autoeval_proto::JudgeTask {
                equivalent,
                ..Default::default()
            })
        }
    }

    #[test]
    fn scores_follow_their_definitions() {
        let mut c = Confusion::default();
        for r in [
            j(Some("yes"), true),
            j(Some("yes"), true),
            j(Some("yes"), false),
            j(Some("no"), false),
            j(Some("no"), true),
            j(Some("unparseable"), true),
            j(None, false),
        ] {
            c.add(&r);
        }
        assert_eq!(
            (c.tp, c.fp, c.tn, c.fn_, c.unparseable, c.api_failures),
            (2, 1, 1, 1, 1, 1)
        );
        assert_eq!(c.precision(), Some(2.0 / 3.0));
        assert_eq!(c.recall(), Some(2.0 / 3.0));
        assert_eq!(c.tnr(), Some(0.5));
        assert_eq!(c.f1(), Some(4.0 / 6.0));
    }
}
