//! Every denominator of docs/METRICS.md computed by hand on a crafted set of
//! records: API failures at rounds 1 and 2, a verifier error at round 3, a
//! prover that died during a check (a timeout), a truncated answer, and
//! units that stopped; over two batches, so that bands are checked too.

use autoeval_metrics::summary::{summarize, Counts, Group};
use autoeval_proto::{ResultRecord, Verdict, TRUNCATED};

use Verdict::{ApiFailure, Equivalent, NonCompliant, NotEquivalent, Timeout, VerifierError};

/// The units: (id, batch, verdict of each round asked).
fn units() -> Vec<(&'static str, u64, Vec<Verdict>)> {
    vec![
        ("u1", 0, vec![Equivalent, Equivalent, Equivalent]),
        ("u2", 0, vec![Equivalent, NotEquivalent]),
        ("u3", 0, vec![ApiFailure]),
        ("u4", 0, vec![Equivalent, ApiFailure]),
        // The prover process died during the check: out of memory.
        ("u5", 0, vec![Timeout]),
        // Cut at the token cap.
        ("u6", 1, vec![NonCompliant]),
        ("u7", 1, vec![Equivalent, Equivalent, VerifierError]),
        ("u8", 1, vec![Equivalent, Equivalent, NotEquivalent]),
    ]
}

fn records() -> Vec<ResultRecord> {
    let mut out = Vec::new();
    for (id, batch, verdicts) in units() {
        for (i, verdict) in verdicts.into_iter().enumerate() {
            let reason = match (id, verdict) {
                ("u5", _) => Some("the prover process died during the check (signal: 9)".into()),
                ("u6", _) => Some(TRUNCATED.to_string()),
                (_, ApiFailure) => Some("HTTP 500".into()),
                _ => None,
            };
            out.push(ResultRecord {
                id: id.into(),
                dataset: "plogic".into(),
                model: "m".into(),
                prompt: "zero-shot".into(),
                complexity: 3,
                batch,
                round: i as u32 + 1,
                verdict,
                reason,
                finish_reasons: if id == "u6" {
                    vec!["length".into()]
                } else {
                    vec!["stop".into(), "stop".into()]
                },
                ..ResultRecord::default()
            });
        }
    }
    out
}

/// (compliant, equivalent, denominator) at `round` over the units of
/// `batch` (all when `None`), by the definition, unit by unit: a unit
/// counts unless an infrastructure failure ended it at `round` or before; a
/// unit with no verdict at `round` stopped and is a failure.
fn by_definition(round: u32, batch: Option<u64>) -> (usize, usize, usize) {
    let (mut compliant, mut equivalent, mut n) = (0, 0, 0);
    for (_, b, verdicts) in units() {
        if batch.is_some_and(|want| want != b) {
            continue;
        }
        let upto = &verdicts[..verdicts.len().min(round as usize)];
        if upto.iter().any(|v| matches!(v, ApiFailure | VerifierError)) {
            continue;
        }
        n += 1;
        if let Some(v) = verdicts.get(round as usize - 1) {
            compliant += usize::from(matches!(v, Equivalent | NotEquivalent | Timeout));
            equivalent += usize::from(*v == Equivalent);
        }
    }
    (compliant, equivalent, n)
}

fn group(groups: &[Group], round: u32) -> &Group {
    groups.iter().find(|g| g.key.round == round).unwrap()
}

#[test]
fn each_round_counts_its_units_from_round_one_and_drops_them_where_the_infrastructure_failed() {
    let summary = summarize(&records());
    // By hand: round 1 has 8 units less u3's API failure; round 2 also
    // loses u4's, and counts u5 and u6 as stopped; round 3 also loses u7's
    // verifier error, and counts u2, u5 and u6 as stopped.
    let hand = [(1, 6, 5, 7, 0), (2, 4, 3, 6, 2), (3, 2, 1, 5, 3)];
    for (round, compliant, equivalent, n, stopped) in hand {
        assert_eq!(
            by_definition(round, None),
            (compliant, equivalent, n),
            "round {round}: the definition, unit by unit, agrees with the hand count"
        );
        let g = group(&summary.groups, round);
        let c: &Counts = &g.counts;
        assert_eq!(c.measured(), n, "round {round}: n");
        assert_eq!(c.stopped, stopped, "round {round}: stopped");
        assert_eq!(
            g.compliance,
            Some(compliant as f64 / n as f64),
            "round {round}: A2"
        );
        assert_eq!(
            g.accuracy,
            Some(equivalent as f64 / n as f64),
            "round {round}: A3"
        );
        // The row of the one complexity says the same.
        assert_eq!(g.rows.len(), 1);
        assert_eq!(g.rows[0].counts.measured(), n);
        assert_eq!(g.lenient_counts.measured(), n, "the lenient reading's n");
    }
    // A prover that died during a check stays in round 1's denominator.
    assert_eq!(group(&summary.groups, 1).counts.get(Timeout), 1);
    // The truncated answer is non-compliant and counted apart.
    assert_eq!(group(&summary.groups, 1).truncated, 1);
    assert_eq!(group(&summary.groups, 2).truncated, 0);
}

#[test]
fn bands_use_the_same_denominators_as_their_points() {
    let summary = summarize(&records());
    for round in 1..=3 {
        let row = &group(&summary.groups, round).rows[0];
        let shares: Vec<f64> = [0, 1]
            .into_iter()
            .map(|b| {
                let (_, eq, n) = by_definition(round, Some(b));
                eq as f64 / n as f64
            })
            .collect();
        let band = row.accuracy_band.unwrap();
        let (low, high) = (shares[0].min(shares[1]), shares[0].max(shares[1]));
        assert_eq!((band.low, band.high), (low, high), "round {round}");
        let point = row.accuracy.unwrap();
        assert!(
            low <= point && point <= high,
            "round {round}: {point} outside [{low}, {high}]"
        );
    }
}

#[test]
fn a_complexity_whose_units_all_stopped_still_has_its_row_at_later_rounds() {
    let mut records = records();
    // Two units of complexity 9 that stopped at round 1.
    for id in ["w1", "w2"] {
        records.push(ResultRecord {
            id: id.into(),
            dataset: "plogic".into(),
            model: "m".into(),
            prompt: "zero-shot".into(),
            complexity: 9,
            round: 1,
            verdict: NotEquivalent,
            ..ResultRecord::default()
        });
    }
    let summary = summarize(&records);
    let round2 = group(&summary.groups, 2);
    let row9 = round2.rows.iter().find(|r| r.complexity == 9).unwrap();
    assert_eq!((row9.counts.measured(), row9.accuracy), (2, Some(0.0)));
    assert_eq!(round2.counts.measured(), 6 + 2);
}
