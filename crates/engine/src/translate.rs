//! The translate loop: each task of a bundle on a slot of its own; the
//! answers go on in one send, and the bundle is acknowledged after it. A
//! task whose model is batched is kept in custody instead and goes on in
//! the background (its answers sent alone), so that its delivery is not
//! held for the hours a batch takes; tasks whose keeper died are adopted.

use crate::custody::Custody;
use crate::serve::{open, refuse, serve, Ended, Opened, Settle};
use crate::stage::{Admission, Stages, Start, Step, Translate, Watch};
use crate::transport::{Delivery, Inbox, Incoming, Outbox};
use crate::Shutdown;
use autoeval_proto::{RoundKey, RoundTrip, TranslateTask, VerifyTask};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// How often a process looks for kept tasks whose keeper died.
pub const ADOPT_EVERY: Duration = Duration::from_secs(5);

/// What one translate loop works with.
struct Context<O, St, S, A, W, C> {
    outbox: Arc<O>,
    stages: Arc<St>,
    admission: Arc<A>,
    watch: Arc<W>,
    custody: Arc<C>,
    /// One permit per task that may run at once; closed at shutdown.
    slots: Arc<Semaphore>,
    /// One permit per task kept in custody and carried on here.
    kept: Arc<Semaphore>,
    /// Set once the loop ended (shutdown, or its connection lost): a kept
    /// task whose answers cannot be sent is given up for adoption.
    ended: std::sync::atomic::AtomicBool,
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
    /// Kept in custody: it goes on in the background.
    Kept,
}

/// What the translate loop serves with.
pub struct TranslateLoop<O, St, A, W, C> {
    /// Where translated tasks go: the verifiers.
    pub outbox: Arc<O>,
    /// Each run's translate stage.
    pub stages: Arc<St>,
    /// Whether a run's tasks may be sent (its caps and halts).
    pub admission: Arc<A>,
    /// What the loop reports as it goes.
    pub watch: Arc<W>,
    /// Where tasks of batched models are kept while their batches run.
    pub custody: Arc<C>,
    /// Tasks run at once.
    pub slots: usize,
}

/// Serves `inbox` until it ends or `shutdown`: at most `slots` tasks run at
/// once; each delivery is acknowledged after its answers are sent to
/// `outbox`. Tasks not yet begun at shutdown go back with their bundles.
/// With `custody` enabled, tasks of batched models are kept there and
/// carried on in the background (at most its capacity at once), and tasks
/// whose keeper died are adopted every [`ADOPT_EVERY`].
pub async fn serve_translate<I, O, St, S, A, W, C>(
    inbox: &mut I,
    with: TranslateLoop<O, St, A, W, C>,
    shutdown: Shutdown,
) -> Ended
where
    I: Inbox<TranslateTask>,
    O: Outbox<VerifyTask>,
    St: Stages<S>,
    S: Translate,
    A: Admission,
    W: Watch,
    C: Custody,
{
    let TranslateLoop {
        outbox,
        stages,
        admission,
        watch,
        custody,
        slots,
    } = with;
    let cx = Arc::new(Context {
        outbox,
        stages,
        admission,
        watch,
        kept: Arc::new(Semaphore::new(custody.capacity())),
        custody,
        ended: std::sync::atomic::AtomicBool::new(false),
        slots: Arc::new(Semaphore::new(slots.max(1))),
        shutdown: shutdown.clone(),
        stage: PhantomData,
    });
    let adopting = cx
        .custody
        .enabled()
        .then(|| tokio::spawn(adopt(cx.clone())));
    let slots = cx.slots.clone();
    let served = {
        let cx = cx.clone();
        serve(
            inbox,
            shutdown,
            move || slots.close(),
            move |incoming| handle(incoming, cx.clone()),
        )
        .await
    };
    cx.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Some(a) = adopting {
        a.abort();
    }
    served
}

/// Translates a bundle, each task on its own slot; hands the answers on and acknowledges.
async fn handle<D, O, St, S, A, W, C>(
    incoming: Incoming<D, TranslateTask>,
    cx: Arc<Context<O, St, S, A, W, C>>,
) where
    D: Delivery,
    O: Outbox<VerifyTask>,
    St: Stages<S>,
    S: Translate,
    A: Admission,
    W: Watch,
    C: Custody,
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
    let each = bundle
        .into_iter()
        .map(|task| cx.translate_one(&stage, &run, capped, task));
    let finished = futures_util::future::join_all(each).await;
    cx.settle_bundle(delivery, &run, stage.as_ref(), finished)
        .await;
}

impl<O, St, S, A, W, C> Context<O, St, S, A, W, C>
where
    O: Outbox<VerifyTask>,
    St: Stages<S>,
    S: Translate,
    A: Admission,
    W: Watch,
    C: Custody,
{
    /// Takes one task of a bundle through its slot, its run's cap and the
    /// model: what became of it, and its hold on the watch (none once it is
    /// kept in custody, whose carrier settles it).
    async fn translate_one(
        self: &Arc<Self>,
        stage: &Arc<S>,
        run: &str,
        capped: bool,
        task: TranslateTask,
    ) -> (Outcome, Option<W::Held>) {
        let field = task.round_key();
        let held = self.watch.taken(Step::Translate, run, &field);
        let Ok(_slot) = self.slots.acquire().await else {
            return (Outcome::Return, Some(held));
        };
        if self.shutdown.is_signalled() {
            return (Outcome::Return, Some(held));
        }
        if stage.halted().is_some() {
            return (Outcome::Unsent(field), Some(held));
        }
        if capped {
            match self.admission.start(run, &field).await {
                Start::Go => {}
                Start::Parked => return (Outcome::Parked, Some(held)),
                Start::Return => return (Outcome::Return, Some(held)),
            }
        }
        if self.custody.enabled() && stage.batched(&task.model) {
            // Waits here (holding its slot) while the process carries its fill.
            let Ok(carrying) = self.kept.clone().acquire_owned().await else {
                return (Outcome::Return, Some(held));
            };
            if let Err(e) = self.custody.keep(run, &task).await {
                tracing::warn!(error = %e, "cannot keep a batched task; returning its bundle");
                return (Outcome::Return, Some(held));
            }
            let (cx, stage, run) = (self.clone(), stage.clone(), run.to_string());
            tokio::spawn(async move {
                carry_on(&cx, stage, &run, task, held).await;
                drop(carrying);
            });
            return (Outcome::Kept, None);
        }
        let started = Instant::now();
        let done = translate_caught(stage.clone(), task).await;
        if left_by_halt(&done.translation, stage.as_ref()) {
            return (Outcome::Unsent(field), Some(held));
        }
        self.watch.translated(run, &done, started.elapsed());
        if capped {
            self.admission.charge(run, &done.translation).await;
        }
        (Outcome::Done(Box::new(done)), Some(held))
    }

    /// Settles a bundle once each of its tasks ended: back whole if any task
    /// must go back; otherwise what a halt left is kept pending, the answers
    /// are sent on, and the delivery is acknowledged.
    async fn settle_bundle<D: Delivery>(
        &self,
        delivery: D,
        run: &str,
        stage: &S,
        finished: Vec<(Outcome, Option<W::Held>)>,
    ) {
        let watch = self.watch.as_ref();
        let mut settle = Settle::new(watch);
        let (mut done, mut unsent) = (Vec::new(), Vec::new());
        let mut whole = true;
        for (outcome, held) in finished {
            let Some(held) = held else {
                continue;
            };
            let how = match outcome {
                Outcome::Kept => "kept",
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
            watch.halted(run, &why);
            if let Err(e) = self.admission.halt(run, &why, &unsent).await {
                tracing::warn!(error = %e, "cannot keep the tasks a halt left; returning their bundle");
                let _ = delivery.requeue().await;
                return settle.all("requeued");
            }
        }
        if !done.is_empty() {
            if let Err(e) = self.outbox.send(run, done).await {
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
}

/// Carries a kept task to its end: translates it, sends its answers on
/// (trying again while the transport is away), and releases it from
/// custody; a halt leaves it pending. At shutdown it is left in custody,
/// for a process of the same model to adopt once this one's lease lapses.
async fn carry_on<O, St, S, A, W, C>(
    cx: &Context<O, St, S, A, W, C>,
    stage: Arc<S>,
    run: &str,
    task: TranslateTask,
    held: W::Held,
) where
    O: Outbox<VerifyTask>,
    S: Translate,
    A: Admission,
    W: Watch,
    C: Custody,
{
    let (field, model) = (task.round_key(), task.model.clone());
    let started = Instant::now();
    let done = translate_caught(stage.clone(), task).await;
    if left_by_halt(&done.translation, stage.as_ref()) {
        let why = stage.halted().unwrap_or_default();
        cx.watch.halted(run, &why);
        if let Err(e) = cx
            .admission
            .halt(run, &why, std::slice::from_ref(&field))
            .await
        {
            tracing::warn!(error = %e, "cannot keep the task a halt left; it stays in custody");
            return cx.watch.settled(held, "kept");
        }
        release(cx, run, &model, &field).await;
        cx.watch.unit_ended();
        return cx.watch.settled(held, "pending");
    }
    cx.watch.translated(run, &done, started.elapsed());
    // Not charged here: its calls were charged with their batches, by the
    // estimate when each was submitted and by the cost when it ended.
    let mut pause = Duration::from_millis(100);
    while let Err(e) = cx.outbox.send(run, vec![done.clone()]).await {
        if cx.shutdown.is_signalled() || cx.ended.load(std::sync::atomic::Ordering::SeqCst) {
            // Paid replies are cached: whoever adopts it pays nothing again.
            tracing::info!(round = %field, "the loop ended: a kept task is given up for adoption");
            if let Err(e) = cx.custody.abandon(run, &model, &field).await {
                tracing::warn!(error = %e, "cannot give up a kept task; it is adopted once this process's lease lapses");
            }
            return cx.watch.settled(held, "kept");
        }
        tracing::warn!(error = %e, "cannot hand on a kept task's translation; trying again");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(10));
    }
    release(cx, run, &model, &field).await;
    cx.watch.settled(held, "acked");
}

/// Releases a kept task; one that cannot be released is adopted again
/// later and its answers sent twice, which the store records once.
async fn release<O, St, S, A, W, C: Custody>(
    cx: &Context<O, St, S, A, W, C>,
    run: &str,
    model: &str,
    round: &RoundKey,
) {
    if let Err(e) = cx.custody.release(run, model, round).await {
        tracing::warn!(error = %e, %round, "cannot release a kept task");
    }
}

/// Every [`ADOPT_EVERY`], takes over kept tasks whose keeper died, as many
/// as this process has room for, and carries them on.
async fn adopt<O, St, S, A, W, C>(cx: Arc<Context<O, St, S, A, W, C>>)
where
    O: Outbox<VerifyTask>,
    St: Stages<S>,
    S: Translate,
    A: Admission,
    W: Watch,
    C: Custody,
{
    loop {
        tokio::time::sleep(ADOPT_EVERY).await;
        if cx.shutdown.is_signalled() {
            return;
        }
        let room = cx.kept.available_permits();
        if room == 0 {
            continue;
        }
        let adopted = match cx.custody.adopt(room).await {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(error = %e, "cannot look for kept tasks to adopt");
                continue;
            }
        };
        for (run, task) in adopted {
            let field = task.round_key();
            let stage = match cx.stages.stage(&run).await {
                Ok(s) => s,
                Err(e) if e.transient => {
                    // Redis away for a moment: the task stays kept, for the next look.
                    tracing::warn!(error = %e, %run, round = %field, "a kept task's run cannot be read now; left for adoption");
                    if let Err(e) = cx.custody.abandon(&run, &task.model, &field).await {
                        tracing::warn!(error = %e, "cannot give up a kept task; it is adopted once this process's lease lapses");
                    }
                    continue;
                }
                Err(e) => {
                    // A run that cannot be built again (gone, refused) is not carried on.
                    tracing::warn!(error = %e, %run, round = %field, "a kept task's run cannot be served; released");
                    release(&cx, &run, &task.model, &field).await;
                    continue;
                }
            };
            let Ok(carrying) = cx.kept.clone().acquire_owned().await else {
                return;
            };
            tracing::info!(%run, round = %field, "adopted a kept task whose keeper is gone");
            let held = cx.watch.taken(Step::Translate, &run, &field);
            let cx = cx.clone();
            tokio::spawn(async move {
                carry_on(&cx, stage, &run, task, held).await;
                drop(carrying);
            });
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

/// Whether a round trip stays pending because its backend halted: its call
/// was stopped by the halt, or never sent while the backend was halted.
fn left_by_halt<S: Translate>(translation: &RoundTrip, stage: &S) -> bool {
    translation.never_sent() && (translation.halted || stage.halted().is_some())
}
