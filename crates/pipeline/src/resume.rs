//! Where a run stands: which tasks are still to do, given what is recorded.

use crate::message::TranslateTask;
use autoeval_proto::{ResultRecord, UnitKey, Verdict};
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
/// record starts at round one; a unit whose last recorded round was
/// equivalent and is below its round count continues from that round's φ;
/// any other unit is finished. Nothing recorded is asked again.
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
            Some(r) if r.verdict == Verdict::Equivalent && r.round < task.rounds => {
                let input = r.phi1.clone().unwrap_or_else(|| task.input.clone());
                pending.tasks.push(TranslateTask {
                    round: r.round + 1,
                    input,
                    ..task
                });
            }
            Some(_) => pending.finished_units += 1,
        }
    }
    pending
}
