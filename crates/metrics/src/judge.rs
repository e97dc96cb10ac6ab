//! Metric A4: how well a model judges equivalence, scored against the
//! formal verdicts, as App. L and Fig. 20 count it. "Equivalent" is the
//! positive class. Pairs whose φ1 is non-compliant (Fig. 20's
//! "incompliant") are asked too and counted in their own columns; answers
//! with no yes or no (Tables 19–20's IP and IN) are counted by label, and
//! leave the usual F1 but count as wrong in the strict one; API failures are
//! counted apart.

use autoeval_proto::JudgeRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A judge's confusion matrix, with Fig. 20's and Tables 19–20's columns.
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
    /// No yes or no could be read, and they are equivalent (IP).
    #[serde(default)]
    pub unanswered_positive: usize,
    /// No yes or no could be read, and they are not (IN).
    #[serde(default)]
    pub unanswered_negative: usize,
    /// φ1 was non-compliant, and the judge said yes.
    #[serde(default)]
    pub non_compliant_yes: usize,
    /// φ1 was non-compliant, and the judge said no.
    #[serde(default)]
    pub non_compliant_no: usize,
    /// φ1 was non-compliant, and no yes or no could be read.
    #[serde(default)]
    pub non_compliant_unanswered: usize,
    /// The judge could not be asked.
    pub api_failures: usize,
}

/// Where one judgement falls in a [`Confusion`] matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Said yes, and they are equivalent.
    Tp,
    /// Said yes, and they are not.
    Fp,
    /// Said no, and they are not.
    Tn,
    /// Said no, and they are equivalent.
    Fn,
    /// No yes or no, and they are equivalent.
    UnansweredPositive,
    /// No yes or no, and they are not.
    UnansweredNegative,
    /// φ1 non-compliant, and the judge said yes.
    NonCompliantYes,
    /// φ1 non-compliant, and the judge said no.
    NonCompliantNo,
    /// φ1 non-compliant, and no yes or no.
    NonCompliantUnanswered,
    /// The judge could not be asked.
    ApiFailure,
}

impl Cell {
    /// The cell of judgement `r`.
    pub fn of(r: &JudgeRecord) -> Cell {
        let said = match r.judgement.as_deref() {
            None => return Cell::ApiFailure,
            Some("yes") => Some(true),
            Some("no") => Some(false),
            Some(_) => None,
        };
        match (r.task.non_compliant, said, r.task.equivalent) {
            (true, Some(true), _) => Cell::NonCompliantYes,
            (true, Some(false), _) => Cell::NonCompliantNo,
            (true, None, _) => Cell::NonCompliantUnanswered,
            (false, Some(true), true) => Cell::Tp,
            (false, Some(true), false) => Cell::Fp,
            (false, Some(false), false) => Cell::Tn,
            (false, Some(false), true) => Cell::Fn,
            (false, None, true) => Cell::UnansweredPositive,
            (false, None, false) => Cell::UnansweredNegative,
        }
    }

    /// Its short name: `tp`, `fp`, `tn`, `fn`, `unanswered_positive`, …, `api_failure`.
    pub fn name(self) -> &'static str {
        match self {
            Cell::Tp => "tp",
            Cell::Fp => "fp",
            Cell::Tn => "tn",
            Cell::Fn => "fn",
            Cell::UnansweredPositive => "unanswered_positive",
            Cell::UnansweredNegative => "unanswered_negative",
            Cell::NonCompliantYes => "non_compliant_yes",
            Cell::NonCompliantNo => "non_compliant_no",
            Cell::NonCompliantUnanswered => "non_compliant_unanswered",
            Cell::ApiFailure => "api_failure",
        }
    }
}

fn ratio(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl Confusion {
    /// Adds one judgement.
    pub fn add(&mut self, r: &JudgeRecord) {
        let slot = match Cell::of(r) {
            Cell::Tp => &mut self.tp,
            Cell::Fp => &mut self.fp,
            Cell::Tn => &mut self.tn,
            Cell::Fn => &mut self.fn_,
            Cell::UnansweredPositive => &mut self.unanswered_positive,
            Cell::UnansweredNegative => &mut self.unanswered_negative,
            Cell::NonCompliantYes => &mut self.non_compliant_yes,
            Cell::NonCompliantNo => &mut self.non_compliant_no,
            Cell::NonCompliantUnanswered => &mut self.non_compliant_unanswered,
            Cell::ApiFailure => &mut self.api_failures,
        };
        *slot += 1;
    }

    /// Adds another matrix's counts to this one.
    pub fn merge(&mut self, other: &Confusion) {
        self.tp += other.tp;
        self.fp += other.fp;
        self.tn += other.tn;
        self.fn_ += other.fn_;
        self.unanswered_positive += other.unanswered_positive;
        self.unanswered_negative += other.unanswered_negative;
        self.non_compliant_yes += other.non_compliant_yes;
        self.non_compliant_no += other.non_compliant_no;
        self.non_compliant_unanswered += other.non_compliant_unanswered;
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

    /// 2TP / (2TP + FP + FN), over the answered pairs of compliant φ1.
    pub fn f1(&self) -> Option<f64> {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// F1 with every unanswered pair counted as wrong: an unanswered
    /// positive as a false negative, an unanswered negative as a false positive.
    pub fn f1_unanswered_wrong(&self) -> Option<f64> {
        ratio(
            2 * self.tp,
            2 * self.tp + self.fp + self.fn_ + self.unanswered_positive + self.unanswered_negative,
        )
    }

    /// Judgements in the matrix: answered pairs of compliant φ1.
    pub fn scored(&self) -> usize {
        self.tp + self.fp + self.tn + self.fn_
    }

    /// Pairs the judge replied to (API failures aside), non-compliant φ1 included.
    pub fn asked(&self) -> usize {
        self.scored()
            + self.unanswered_positive
            + self.unanswered_negative
            + self.non_compliant_pairs()
    }

    /// Pairs whose φ1 was non-compliant (Fig. 20's "incompliant").
    pub fn non_compliant_pairs(&self) -> usize {
        self.non_compliant_yes + self.non_compliant_no + self.non_compliant_unanswered
    }

    /// Share of the pairs asked that got a yes or a no.
    pub fn coverage(&self) -> Option<f64> {
        let unanswered =
            self.unanswered_positive + self.unanswered_negative + self.non_compliant_unanswered;
        ratio(self.asked() - unanswered, self.asked())
    }

    /// Positive labels: compliant φ1 proved equivalent.
    pub fn positives(&self) -> usize {
        self.tp + self.fn_ + self.unanswered_positive
    }

    /// Negative labels: compliant φ1 proved not equivalent.
    pub fn negatives(&self) -> usize {
        self.fp + self.tn + self.unanswered_negative
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
            (
                c.tp,
                c.fp,
                c.tn,
                c.fn_,
                c.unanswered_positive,
                c.api_failures
            ),
            (2, 1, 1, 1, 1, 1)
        );
        assert_eq!(c.precision(), Some(2.0 / 3.0));
        assert_eq!(c.recall(), Some(2.0 / 3.0));
        assert_eq!(c.tnr(), Some(0.5));
        assert_eq!(c.f1(), Some(4.0 / 6.0));
        // The unanswered positive counts as a false negative: 4 / (4 + 1 + 1 + 1).
        assert_eq!(c.f1_unanswered_wrong(), Some(4.0 / 7.0));
        // Asked 6 (the API failure was not), answered 5.
        assert_eq!((c.asked(), c.coverage()), (6, Some(5.0 / 6.0)));
        // A non-compliant φ1 is counted in its own columns, not in the matrix.
        let mut nc = j(Some("yes"), false);
        nc.task.non_compliant = true;
        c.add(&nc);
        assert_eq!((c.non_compliant_yes, c.scored(), c.asked()), (1, 5, 7));
        assert_eq!(c.f1(), Some(4.0 / 6.0));
    }
}
