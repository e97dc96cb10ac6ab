//! [`judge_local`]: the judge loop over an in-process queue, until every
//! question is answered or the judge halts.

use super::local_queue;
use crate::stage::{Judge, OneJudge, Step, Watch};
use crate::transport::{JudgementStore, Outbox, StoreError};
use crate::{serve_judge, ShutdownHandle};
use autoeval_proto::{JudgeRecord, JudgeTask};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How a one-machine judging ended.
#[derive(Debug, Default)]
pub struct Judged {
    /// Why the judge halted, when it did: the questions not sent stay to ask.
    pub halted: Option<String>,
    /// Why the store failed, when it did.
    pub failure: Option<StoreError>,
}

/// The watch of a one-machine judging: its end, and a tick per question.
struct JudgeWatch {
    outstanding: AtomicUsize,
    done: ShutdownHandle,
    ended: Mutex<Judged>,
    tick: Box<dyn Fn() + Send + Sync>,
}

impl JudgeWatch {
    fn end_with(&self, f: impl FnOnce(&mut Judged)) {
        if let Ok(mut e) = self.ended.lock() {
            f(&mut e);
        }
        self.done.signal();
    }
}

impl Watch for JudgeWatch {
    type Held = ();
    fn taken(&self, _step: Step, _run: &str, _round: &autoeval_proto::RoundKey) {}

    fn settled(&self, _held: (), how: &'static str) {
        if how == "acked" {
            (self.tick)();
            if self.outstanding.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.done.signal();
            }
        }
    }

    fn store_failed(&self, error: &StoreError) {
        self.end_with(|e| {
            e.failure.get_or_insert_with(|| error.clone());
        });
    }

    fn halted(&self, _run: &str, why: &str) {
        self.end_with(|e| {
            e.halted.get_or_insert_with(|| why.to_string());
        });
    }
}

/// Asks `judge` every question of `run` on this machine, `slots` at once,
/// each judgement stored in `store` as it comes; `tick` is told of each.
/// A judge that halts stops the judging: calls made are stored, and the
/// questions never sent stay to ask.
pub async fn judge_local<J: Judge, R: JudgementStore>(
    run: &str,
    questions: Vec<JudgeRecord>,
    judge: Arc<J>,
    store: Arc<R>,
    slots: usize,
    tick: impl Fn() + Send + Sync + 'static,
) -> Judged {
    if questions.is_empty() {
        return Judged::default();
    }
    let watch = Arc::new(JudgeWatch {
        outstanding: AtomicUsize::new(questions.len()),
        done: ShutdownHandle::new(),
        ended: Mutex::default(),
        tick: Box::new(tick),
    });
    let (to_judge, mut inbox) = local_queue::<JudgeTask>();
    for q in &questions {
        if let Err(e) = to_judge.send(run, vec![JudgeTask::from(q)]).await {
            return Judged {
                failure: Some(StoreError::fatal(e.0)),
                ..Judged::default()
            };
        }
    }
    serve_judge(
        &mut inbox,
        Arc::new(OneJudge(judge)),
        store,
        watch.clone(),
        slots,
        watch.done.subscribe(),
    )
    .await;
    watch
        .ended
        .lock()
        .map(|mut e| std::mem::take(&mut *e))
        .unwrap_or_default()
}
