//! The verify loop: a bundle's answers proved on blocking threads as the
//! CPU allows, stored in one step, the next rounds sent on, and then the
//! bundle acknowledged.

use crate::outage::{through_outage, OUTAGE_HOLD};
use crate::serve::{open, panic_message, serve, Ended, Opened, Settle};
use crate::stage::{Stages, Step, Verify, Watch};
use crate::transport::{Delivery, Inbox, Incoming, Outbox, RecordStore, StoreError};
use crate::Shutdown;
use autoeval_proto::{ResultRecord, TranslateTask, Verdict, VerifyTask};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// What one verify loop works with.
struct Context<O, St, S, R, W> {
    outbox: Arc<O>,
    stages: Arc<St>,
    store: Arc<R>,
    watch: Arc<W>,
    /// One permit per check that may run at once; closed at shutdown.
    cpu: Arc<Semaphore>,
    /// Stops waiting out a store outage.
    shutdown: Shutdown,
    stage: PhantomData<fn() -> S>,
}

/// What the verify loop serves with.
pub struct VerifyLoop<O, St, R, W> {
    /// Where next rounds go: the translators.
    pub outbox: Arc<O>,
    /// Each run's verify stage.
    pub stages: Arc<St>,
    /// Where rounds are stored before their delivery is acknowledged.
    pub store: Arc<R>,
    /// What the loop reports as it goes.
    pub watch: Arc<W>,
    /// Checks run at once.
    pub jobs: usize,
}

/// Serves `inbox` until it ends or `shutdown`: at most `jobs` checks at
/// once; each delivery's rounds are stored in `store`, the next rounds sent
/// to `outbox`, and only then is it acknowledged.
pub async fn serve_verify<I, O, St, S, R, W>(
    inbox: &mut I,
    with: VerifyLoop<O, St, R, W>,
    shutdown: Shutdown,
) -> Ended
where
    I: Inbox<VerifyTask>,
    O: Outbox<TranslateTask>,
    St: Stages<S>,
    S: Verify,
    R: RecordStore,
    W: Watch,
{
    let VerifyLoop {
        outbox,
        stages,
        store,
        watch,
        jobs,
    } = with;
    let cx = Arc::new(Context {
        outbox,
        stages,
        store,
        watch,
        cpu: Arc::new(Semaphore::new(jobs.max(1))),
        shutdown: shutdown.clone(),
        stage: PhantomData,
    });
    let cpu = cx.cpu.clone();
    serve(
        inbox,
        shutdown,
        move || cpu.close(),
        move |incoming| handle(incoming, cx.clone()),
    )
    .await
}

async fn handle<D, O, St, S, R, W>(
    incoming: Incoming<D, VerifyTask>,
    cx: Arc<Context<O, St, S, R, W>>,
) where
    D: Delivery,
    O: Outbox<TranslateTask>,
    St: Stages<S>,
    S: Verify,
    R: RecordStore,
    W: Watch,
{
    let watch = cx.watch.as_ref();
    let Some(Opened {
        delivery,
        tasks: bundle,
        run,
        stage,
    }) = open(incoming, cx.stages.as_ref(), Step::Verify, watch).await
    else {
        return;
    };
    let rounds = bundle.first().map_or(1, |t| t.task.rounds);
    let checks = bundle.into_iter().map(|task| {
        let (cx, stage, run) = (&cx, stage.clone(), run.as_str());
        async move {
            let field = task.task.round_key();
            let held = cx.watch.taken(Step::Verify, run, &field);
            let Ok(permit) = cx.cpu.clone().acquire_owned().await else {
                return (None, held);
            };
            let asked = task.task.clone();
            let started = Instant::now();
            let kept = task.clone();
            let proved = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                stage.verify(task)
            })
            .await;
            let record = proved.unwrap_or_else(|e| failed_check(&kept, &panic_message(e)));
            cx.watch.verified(run, &record, started.elapsed());
            (Some((asked, record)), held)
        }
    });
    let proved = futures_util::future::join_all(checks).await;
    let mut settle = Settle::new(watch);
    let mut done = Vec::with_capacity(proved.len());
    let mut whole = true;
    for (p, held) in proved {
        match p {
            Some(x) => done.push(x),
            None => whole = false,
        }
        settle.add(held, "acked");
    }
    if !whole {
        let _ = delivery.requeue().await;
        return settle.all("requeued");
    }
    let (asked, records): (Vec<TranslateTask>, Vec<ResultRecord>) = done.into_iter().unzip();
    let started = Instant::now();
    // A store away for a moment is waited for, holding the delivery, so its
    // delivery attempts are not spent on an outage.
    let (stored, retried) = through_outage(&cx.shutdown, OUTAGE_HOLD, || {
        cx.store.record_all(&run, &records, rounds)
    })
    .await;
    let new = match stored {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot record results; returning their bundle");
            watch.store_failed(&e);
            let _ = delivery.requeue().await;
            return settle.all("requeued");
        }
    };
    watch.recorded(&run, &records, &new, started.elapsed());
    // After a failed try, a write may have landed unseen: the rounds it
    // stored go on from the store, as for a delivery given back.
    let again = retried || delivery.redelivered();
    let (next, _) = through_outage(&cx.shutdown, OUTAGE_HOLD, || {
        next_rounds(&*cx.store, &run, &asked, &records, &new, again)
    })
    .await;
    let next = match next {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read stored rounds; returning their bundle");
            watch.store_failed(&e);
            let _ = delivery.requeue().await;
            return settle.all("requeued");
        }
    };
    if !next.is_empty() {
        if let Err(e) = cx.outbox.send(&run, next).await {
            tracing::warn!(error = %e, "cannot send the next rounds; returning their bundle");
            let _ = delivery.requeue().await;
            return settle.all("requeued");
        }
    }
    match delivery.ack().await {
        Ok(()) => {
            let newly_ended = asked
                .iter()
                .zip(&records)
                .zip(&new)
                .filter(|((t, r), new)| **new && t.after(r).is_none())
                .count();
            for _ in 0..newly_ended {
                watch.unit_ended();
            }
            settle.each();
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot acknowledge a bundle; it will be delivered again");
            settle.all("requeued");
        }
    }
}

/// The next rounds this delivery sends: only those of rounds it recorded
/// itself, so that two copies of a task never both go on. A delivery given
/// back (its process may have died between storing and sending) goes on
/// from the round as stored, whichever copy stored it.
async fn next_rounds<R: RecordStore>(
    store: &R,
    run: &str,
    asked: &[TranslateTask],
    records: &[ResultRecord],
    new: &[bool],
    again: bool,
) -> Result<Vec<TranslateTask>, StoreError> {
    let mut next = Vec::new();
    for ((task, record), &new) in asked.iter().zip(records).zip(new) {
        if new {
            next.extend(task.after(record));
        } else if again {
            if let Some(stored) = store.stored(run, &task.unit(), task.round).await? {
                next.extend(task.after(&stored));
            }
        }
    }
    Ok(next)
}

/// The record of a check that failed outside the verifier's own handling
/// (a panic): a verifier error, so that the unit is settled and the loop goes on.
fn failed_check(task: &VerifyTask, why: &str) -> ResultRecord {
    tracing::error!(why, "the verify stage failed");
    ResultRecord {
        verdict: Verdict::VerifierError,
        reason: Some(format!("the verify stage failed: {why}")),
        ..ResultRecord::of_round(&task.task, &task.translation)
    }
}
