//! Where a run stands: which tasks are still to do, given what is recorded.

use autoeval_proto::{ResultRecord, TranslateTask, UnitKey};
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
/// [`TranslateTask::next_round`] continues from that round's φ; any other
/// unit is finished. Nothing recorded is asked again.
pub fn pending_tasks(initial: Vec<TranslateTask>, recorded: &[ResultRecord]) -> Pending {
    let mut last: HashMap<UnitKey, &ResultRecord> = HashMap::new();
    for r in recorded {
        let entry = last.entry(r.unit()).or_insert(r);
        if r.round > entry.round {
            *entry = r;
        }
    }
    let mut pending = Pending::default();
    for task in initial {
        match last.get(&task.unit()) {
            None => pending.tasks.push(task),
            Some(r) => match task.after(r) {
                Some(next) => pending.tasks.push(next),
                None => pending.finished_units += 1,
            },
        }
    }
    pending
}
