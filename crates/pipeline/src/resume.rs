//! Where a run stands: which tasks are still to do, given what is recorded.

use autoeval_proto::chains::unit_digest;
use autoeval_proto::{NextRound, ResultRecord, TranslateTask};
use std::collections::HashMap;

/// The tasks still to run, and what is already done.
#[derive(Debug, Default)]
pub struct Pending {
    /// Tasks to send: round one of new units, or the next round of a chain.
    pub tasks: Vec<TranslateTask>,
    /// Units whose every expected round is recorded.
    pub finished_units: usize,
}

/// The tasks of `initial` still to do given `recorded`: a unit with no
/// record starts at round one; a unit whose last recorded round goes on by
/// the rule of [`NextRound::after`] continues from that round's φ; any other
/// unit is finished. Nothing recorded is asked again.
pub fn pending_tasks(initial: Vec<TranslateTask>, recorded: &[ResultRecord]) -> Pending {
    let mut units = RecordedUnits::new(initial.first().map_or(1, |t| t.rounds));
    for r in recorded {
        units.add(r);
    }
    let mut pending = Pending::default();
    for task in initial {
        match units.next(task) {
            Some(next) => pending.tasks.push(next),
            None => pending.finished_units += 1,
        }
    }
    pending
}

/// Where each recorded unit stands, kept compactly so that a run resumed
/// holds a few bytes per unit, not its records: the last round recorded,
/// and the φ the next round translates when the unit goes on.
#[derive(Debug, Default)]
pub struct RecordedUnits {
    last: HashMap<u64, (u32, Option<Box<str>>)>,
    rounds: u32,
}

impl RecordedUnits {
    /// Nothing recorded yet, in a plan of `rounds` rounds.
    pub fn new(rounds: u32) -> RecordedUnits {
        RecordedUnits {
            last: HashMap::new(),
            rounds,
        }
    }

    /// Takes in one recorded round.
    pub fn add(&mut self, r: &ResultRecord) {
        let goes_on = NextRound::after(r, self.rounds).map(|next| Box::from(next.input));
        let entry = self.last.entry(unit_digest(&r.unit())).or_insert((0, None));
        if r.round > entry.0 {
            *entry = (r.round, goes_on);
        }
    }

    /// Units recorded to their end.
    pub fn finished(&self) -> usize {
        self.last
            .values()
            .filter(|(_, next)| next.is_none())
            .count()
    }

    /// What `initial`'s unit still needs: round one when nothing is
    /// recorded, the next round of a chain that goes on, `None` when finished.
    pub fn next(&self, initial: TranslateTask) -> Option<TranslateTask> {
        match self.last.get(&unit_digest(&initial.unit())) {
            None => Some(initial),
            Some((_, None)) => None,
            Some((round, Some(phi))) => Some(TranslateTask {
                round: round + 1,
                input: phi.to_string(),
                ..initial
            }),
        }
    }
}
