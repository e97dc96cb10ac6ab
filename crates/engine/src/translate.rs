//! The translate loop: each task of a bundle on a slot of its own; the
//! answers go on in one send, and the bundle is acknowledged after it.

use crate::serve::{open, refuse, serve, Ended, Opened, Settle};
use crate::stage::{Admission, Stages, Start, Step, Translate, Watch};
use crate::transport::{Delivery, Inbox, Incoming, Outbox};
use crate::Shutdown;
use autoeval_proto::{RoundKey, RoundTrip, TranslateTask, VerifyTask};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// What one translate loop works with.
struct Context<O, St, S, A, W> {
    outbox: Arc<O>,
    stages: Arc<St>,
    admission: Arc<A>,
    watch: Arc<W>,
    /// One permit per task that may run at once; closed at shutdown.
    slots: Arc<Semaphore>,
    /// Seen after a slot is had, so that a slot freed after the signal starts nothing.
    shutdown: Shutdown,
    stage: PhantomData<fn() -> S>,
}

/// What became of one task of a bundle.
enum Outcome {
    /// Translated: handed on to the verifiers.
    Done(Box<VerifyTask>),
    /// Set aside while its run is paused.
    Parked,
    /// Not begun (shutdown), or not set aside: its bundle goes back.
    Return,
    /// Never sent because a backend halted: it stays pending.
    Unsent(RoundKey),
}

/// Serves `inbox` until it ends or `shutdown`: at most `slots` tasks run at
/// once; each delivery is acknowledged after its answers are sent to
/// `outbox`. Tasks not yet begun at shutdown go back with their bundles.
#[allow(clippy::too_many_arguments)]
pub async fn serve_translate<I, O, St, S, A, W>(
    inbox: &mut I,
    outbox: Arc<O>,
    stages: Arc<St>,
    admission: Arc<A>,
    watch: Arc<W>,
    slots: usize,
    shutdown: Shutdown,
) -> Ended
where
    I: Inbox<TranslateTask>,
    O: Outbox<VerifyTask>,
    St: Stages<S>,
    S: Translate,
    A: Admission,
    W: Watch,
{
    let cx = Arc::new(Context {
        outbox,
        stages,
        admission,
        watch,
        slots: Arc::new(Semaphore::new(slots.max(1))),
        shutdown: shutdown.clone(),
        stage: PhantomData,
    });
    let slots = cx.slots.clone();
    serve(
        inbox,
        shutdown,
        move || slots.close(),
        move |incoming| handle(incoming, cx.clone()),
    )
    .await
}

/// Translates a bundle, each task on its own slot; hands the answers on and acknowledges.
async fn handle<D, O, St, S, A, W>(
    incoming: Incoming<D, TranslateTask>,
    cx: Arc<Context<O, St, S, A, W>>,
) where
    D: Delivery,
    O: Outbox<VerifyTask>,
    St: Stages<S>,
    S: Translate,
    A: Admission,
    W: Watch,
{
    let watch = cx.watch.as_ref();
    let Some(Opened {
        delivery,
        tasks: bundle,
        run,
        stage,
    }) = open(incoming, cx.stages.as_ref(), Step::Translate, watch).await
    else {
        return;
    };
    // A task naming a model this process was not given is never called: a
    // message must not choose where a key goes.
    if let Some(task) = bundle.iter().find(|t| !stage.serves(&t.model)) {
        let reason = stage.refusal(&task.model);
        refuse(delivery, &reason, bundle.len(), Step::Translate, watch).await;
        return;
    }
    // Only a run with a cap is charged, and only its tasks are ever set aside.
    let capped = cx.admission.capped(&run).await;
    let each = bundle.into_iter().map(|task| {
        let (cx, stage, run) = (&cx, &stage, run.as_str());
        async move {
            let field = task.round_key();
            let held = cx.watch.taken(Step::Translate, run, &field);
            let Ok(_slot) = cx.slots.acquire().await else {
                return (Outcome::Return, held);
            };
            if cx.shutdown.is_signalled() {
                return (Outcome::Return, held);
            }
            if stage.halted().is_some() {
                return (Outcome::Unsent(field), held);
            }
            if capped {
                match cx.admission.start(run, &field).await {
                    Start::Go => {}
                    Start::Parked => return (Outcome::Parked, held),
                    Start::Return => return (Outcome::Return, held),
                }
            }
            let started = Instant::now();
            let done = translate_caught(stage.clone(), task).await;
            if done.translation.never_sent() && stage.halted().is_some() {
                return (Outcome::Unsent(field), held);
            }
            cx.watch.translated(run, &done, started.elapsed());
            if capped {
                cx.admission.charge(run, &done.translation).await;
            }
            (Outcome::Done(Box::new(done)), held)
        }
    });
    let finished = futures_util::future::join_all(each).await;
    let mut settle = Settle::new(watch);
    let (mut done, mut unsent) = (Vec::new(), Vec::new());
    let mut whole = true;
    for (outcome, held) in finished {
        let how = match outcome {
            Outcome::Done(v) => {
                done.push(*v);
                "acked"
            }
            Outcome::Parked => "parked",
            Outcome::Return => {
                whole = false;
                "requeued"
            }
            Outcome::Unsent(field) => {
                unsent.push(field);
                "pending"
            }
        };
        settle.add(held, how);
    }
    // The answers are cached: whoever gets the bundle again does not pay again.
    if !whole {
        let _ = delivery.requeue().await;
        return settle.all("requeued");
    }
    if !unsent.is_empty() {
        let why = stage.halted().unwrap_or_default();
        watch.halted(&run, &why);
        if let Err(e) = cx.admission.halt(&run, &why, &unsent).await {
            tracing::warn!(error = %e, "cannot keep the tasks a halt left; returning their bundle");
            let _ = delivery.requeue().await;
            return settle.all("requeued");
        }
    }
    if !done.is_empty() {
        if let Err(e) = cx.outbox.send(&run, done).await {
            tracing::warn!(error = %e, "cannot hand on a bundle's translations; returning it");
            let _ = delivery.requeue().await;
            return settle.all("requeued");
        }
    }
    match delivery.ack().await {
        Ok(()) => {
            for _ in &unsent {
                watch.unit_ended();
            }
            settle.each();
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot settle a bundle; it will be delivered again");
            settle.all("requeued");
        }
    }
}

/// Runs the stage on `task`; a panic becomes that task's failure, recorded
/// as such, and the loop goes on.
async fn translate_caught<S: Translate>(stage: Arc<S>, task: TranslateTask) -> VerifyTask {
    let kept = task.clone();
    match tokio::spawn(async move { stage.translate(task).await }).await {
        Ok(done) => done,
        Err(e) => {
            let why = crate::serve::panic_message(e);
            tracing::error!(why, "the translate stage failed");
            VerifyTask {
                task: kept,
                translation: RoundTrip {
                    api_failure: Some(format!("the translate stage failed: {why}")),
                    ..RoundTrip::default()
                },
            }
        }
    }
}
