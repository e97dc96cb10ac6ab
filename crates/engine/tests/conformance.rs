//! The engine's promises, over the in-process transport: a task delivered
//! twice is recorded once; only the delivery that recorded a round sends
//! the next; shutdown gives back work not begun; a panic settles its own
//! task and the loop goes on; poison is dead-lettered with its reason; a
//! halted backend leaves what it never sent pending.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_engine::local::{local_queue, LocalInbox, LocalOutbox, MemoryStore};
use autoeval_engine::{
    serve_translate, serve_verify, Fixed, NoAdmission, NoWatch, RecordStore, ShutdownHandle,
    Translate, Verify,
};
use autoeval_proto::wire::TaskItem;
use autoeval_proto::{
    DatasetKind, Reading, ResultRecord, RoundTrip, Shots, TranslateTask, Verdict, VerifyTask,
};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const RUN: &str = "conformance";

fn task(id: usize, input: &str, rounds: u32) -> TranslateTask {
    TranslateTask {
        item: TaskItem {
            id: format!("plogic-0-0-{id}"),
            dataset: DatasetKind::Plogic,
            batch: 0,
            complexity: 1,
            fs: input.into(),
            metrics: Vec::new(),
        },
        alphabet: String::new(),
        model: "m".into(),
        prompt: Shots::ZeroShot,
        repeat: 0,
        round: 1,
        rounds,
        input: input.into(),
    }
}

fn answered(task: TranslateTask) -> VerifyTask {
    let phi = Some(task.input.clone());
    VerifyTask {
        task,
        translation: RoundTrip {
            strict: Reading {
                phi1: phi,
                non_compliance: None,
            },
            attempts: 1,
            ..RoundTrip::default()
        },
    }
}

/// Echoes the formula; panics on `panic`; halts after `halt_after` calls.
#[derive(Default)]
struct Echo {
    calls: AtomicUsize,
    halt_after: Option<usize>,
    halted: AtomicBool,
}

impl Translate for Echo {
    async fn translate(&self, task: TranslateTask) -> VerifyTask {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if task.input == "panic" {
            panic!("the stage broke");
        }
        if self.halt_after.is_some_and(|h| n >= h) {
            self.halted.store(true, Ordering::SeqCst);
        }
        answered(task)
    }

    fn halted(&self) -> Option<String> {
        self.halted
            .load(Ordering::SeqCst)
            .then(|| "stopped: nothing listens".to_string())
    }
}

/// Equivalent unless the answer is `no`; panics on `boom`.
struct Judge;

impl Verify for Judge {
    fn verify(&self, task: VerifyTask) -> ResultRecord {
        let phi1 = task.translation.strict.phi1.clone();
        if phi1.as_deref() == Some("boom") {
            panic!("the prover broke");
        }
        let t = &task.task;
        ResultRecord {
            id: t.item.id.clone(),
            model: t.model.clone(),
            prompt: t.prompt.name().into(),
            round: t.round,
            repeat: t.repeat,
            verdict: if phi1.as_deref() == Some("no") {
                Verdict::NotEquivalent
            } else {
                Verdict::Equivalent
            },
            phi1,
            ..ResultRecord::default()
        }
    }
}

async fn records(store: &MemoryStore) -> Vec<ResultRecord> {
    let mut all = Vec::new();
    store.scan(RUN, |r| all.push(r)).await.unwrap();
    all
}

/// Waits until `ready` holds, checking as work lands (never a fixed sleep as the test's verdict).
async fn until(mut ready: impl FnMut() -> bool) {
    for _ in 0..10_000 {
        if ready() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("the condition did not hold in time");
}

struct Verifier {
    to_verify: LocalOutbox<VerifyTask>,
    translate_in: LocalInbox<TranslateTask>,
    store: Arc<MemoryStore>,
    stop: ShutdownHandle,
    serving: tokio::task::JoinHandle<LocalInbox<VerifyTask>>,
}

/// A verify loop over in-process queues, with what it sends next kept in `translate_in`.
fn verifier(jobs: usize) -> Verifier {
    let (to_verify, mut verify_in) = local_queue::<VerifyTask>();
    let (to_translate, translate_in) = local_queue::<TranslateTask>();
    let store = Arc::new(MemoryStore::default());
    let stop = ShutdownHandle::new();
    let (s, shutdown) = (store.clone(), stop.subscribe());
    let serving = tokio::spawn(async move {
        serve_verify(
            &mut verify_in,
            Arc::new(to_translate),
            Arc::new(Fixed(Arc::new(Judge))),
            s,
            Arc::new(NoWatch),
            jobs,
            shutdown,
        )
        .await;
        verify_in
    });
    Verifier {
        to_verify,
        translate_in,
        store,
        stop,
        serving,
    }
}

#[tokio::test]
async fn a_redelivered_task_is_recorded_once_and_goes_on_once() {
    let mut v = verifier(2);
    let bundle = vec![answered(task(0, "p", 2)), answered(task(1, "no", 2))];
    use autoeval_engine::Outbox;
    v.to_verify.send(RUN, bundle.clone()).await.unwrap();
    // A second copy, not flagged as redelivered (a duplicate publish).
    v.to_verify.send(RUN, bundle.clone()).await.unwrap();
    let store = v.store.clone();
    until(|| futures_now(records(&store)).is_some_and(|r| r.len() == 2)).await;
    // Both copies settled: the next rounds sent are those of the first copy only.
    let mut sent = Vec::new();
    until(|| {
        sent.extend(v.translate_in.drain());
        !sent.is_empty()
    })
    .await;
    v.stop.signal();
    v.serving.await.unwrap();
    sent.extend(v.translate_in.drain());
    let next: Vec<&TranslateTask> = sent.iter().flat_map(|(_, t)| t).collect();
    assert_eq!(
        next.len(),
        1,
        "one next round, from the copy that recorded it: {next:?}"
    );
    assert_eq!(
        (next[0].item.id.as_str(), next[0].round),
        ("plogic-0-0-0", 2)
    );
    assert_eq!(records(&v.store).await.len(), 2, "each round stored once");
}

#[tokio::test]
async fn a_delivery_given_back_goes_on_from_the_round_as_stored() {
    let mut v = verifier(1);
    let first = answered(task(0, "p", 2));
    // Stored by an earlier copy whose process died before it sent the next round.
    v.store
        .record_all(RUN, &[Judge.verify(first.clone())], 2)
        .await
        .unwrap();
    // This copy answers differently; the stored verdict decides.
    let mut other = first.clone();
    other.translation.strict.phi1 = Some("no".into());
    v.to_verify.redeliver(RUN, vec![other]).unwrap();
    let mut sent = Vec::new();
    until(|| {
        sent.extend(v.translate_in.drain());
        !sent.is_empty()
    })
    .await;
    v.stop.signal();
    v.serving.await.unwrap();
    let next: Vec<&TranslateTask> = sent.iter().flat_map(|(_, t)| t).collect();
    assert_eq!(next.len(), 1);
    assert_eq!((next[0].round, next[0].input.as_str()), (2, "p"));
}

#[tokio::test]
async fn poison_is_dead_lettered_with_its_reason() {
    let v = verifier(1);
    v.to_verify
        .send_poison(RUN, "undecodable message: 3 bytes")
        .unwrap();
    use autoeval_engine::Outbox;
    v.to_verify
        .send(RUN, vec![answered(task(0, "p", 1))])
        .await
        .unwrap();
    let store = v.store.clone();
    until(|| futures_now(records(&store)).is_some_and(|r| r.len() == 1)).await;
    v.stop.signal();
    let inbox = v.serving.await.unwrap();
    let dead = inbox.dead_letters();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].reason, "undecodable message: 3 bytes");
}

#[tokio::test]
async fn a_panic_settles_its_own_task_and_the_loop_goes_on() {
    let v = verifier(2);
    use autoeval_engine::Outbox;
    let mut boom = answered(task(0, "p", 1));
    boom.translation.strict.phi1 = Some("boom".into());
    v.to_verify
        .send(RUN, vec![boom, answered(task(1, "p", 1))])
        .await
        .unwrap();
    v.to_verify
        .send(RUN, vec![answered(task(2, "p", 1))])
        .await
        .unwrap();
    let store = v.store.clone();
    until(|| futures_now(records(&store)).is_some_and(|r| r.len() == 3)).await;
    v.stop.signal();
    v.serving.await.unwrap();
    let all = records(&v.store).await;
    let broken: Vec<_> = all
        .iter()
        .filter(|r| r.verdict == Verdict::VerifierError)
        .collect();
    assert_eq!(broken.len(), 1);
    assert_eq!(broken[0].id, "plogic-0-0-0");
    assert!(broken[0]
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("the prover broke")));
    // The translate side: a panic becomes that task's failure, the others go on.
    let (to_translate, mut translate_in) = local_queue::<TranslateTask>();
    let (to_verify, mut verify_in) = local_queue::<VerifyTask>();
    to_translate
        .send(RUN, vec![task(0, "panic", 1), task(1, "p", 1)])
        .await
        .unwrap();
    let stop = ShutdownHandle::new();
    let shutdown = stop.subscribe();
    let serving = tokio::spawn(async move {
        serve_translate(
            &mut translate_in,
            Arc::new(to_verify),
            Arc::new(Fixed(Arc::new(Echo::default()))),
            Arc::new(NoAdmission),
            Arc::new(NoWatch),
            4,
            shutdown,
        )
        .await
    });
    let mut out = Vec::new();
    until(|| {
        out.extend(verify_in.drain());
        !out.is_empty()
    })
    .await;
    stop.signal();
    serving.await.unwrap();
    let done: Vec<&VerifyTask> = out.iter().flat_map(|(_, t)| t).collect();
    assert_eq!(done.len(), 2);
    assert!(done[0]
        .translation
        .api_failure
        .as_deref()
        .is_some_and(|f| f.contains("the stage broke")));
    assert!(done[1].translation.api_failure.is_none());
}

#[tokio::test]
async fn shutdown_gives_back_work_not_begun() {
    let (to_translate, mut translate_in) = local_queue::<TranslateTask>();
    let (to_verify, mut verify_in) = local_queue::<VerifyTask>();
    use autoeval_engine::Outbox;
    // Sixteen tasks in one bundle, one slot: shutdown comes while most wait for it.
    let tasks: Vec<TranslateTask> = (0..16).map(|i| task(i, "p", 1)).collect();
    to_translate.send(RUN, tasks).await.unwrap();
    let stage = Arc::new(Slow::default());
    let stop = ShutdownHandle::new();
    let shutdown = stop.subscribe();
    let s = stage.clone();
    let serving = tokio::spawn(async move {
        serve_translate(
            &mut translate_in,
            Arc::new(to_verify),
            Arc::new(Fixed(s)),
            Arc::new(NoAdmission),
            Arc::new(NoWatch),
            1,
            shutdown,
        )
        .await;
        translate_in
    });
    until(|| stage.started.load(Ordering::SeqCst) >= 1).await;
    stop.signal();
    stage.release.notify_waiters();
    stage.open.store(true, Ordering::SeqCst);
    let mut translate_in = serving.await.unwrap();
    let back: Vec<(String, Vec<TranslateTask>)> = translate_in.drain();
    assert_eq!(back.len(), 1, "the bundle went back whole");
    assert_eq!(back[0].1.len(), 16);
    assert!(
        verify_in.drain().is_empty(),
        "nothing was handed on from a bundle given back"
    );
    assert!(
        stage.started.load(Ordering::SeqCst) < 16,
        "tasks not begun were not begun"
    );
}

/// A stage whose calls wait until released.
#[derive(Default)]
struct Slow {
    started: AtomicUsize,
    open: AtomicBool,
    release: tokio::sync::Notify,
}

impl Translate for Slow {
    async fn translate(&self, task: TranslateTask) -> VerifyTask {
        self.started.fetch_add(1, Ordering::SeqCst);
        while !self.open.load(Ordering::SeqCst) {
            tokio::select! {
                _ = self.release.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
        }
        answered(task)
    }
    fn halted(&self) -> Option<String> {
        None
    }
}

#[tokio::test]
async fn a_halted_backend_leaves_the_rest_pending() {
    let (to_translate, mut translate_in) = local_queue::<TranslateTask>();
    let (to_verify, mut verify_in) = local_queue::<VerifyTask>();
    use autoeval_engine::Outbox;
    let tasks: Vec<TranslateTask> = (0..10).map(|i| task(i, "p", 1)).collect();
    to_translate.send(RUN, tasks).await.unwrap();
    let stage = Arc::new(Echo {
        halt_after: Some(3),
        ..Echo::default()
    });
    let stop = ShutdownHandle::new();
    let shutdown = stop.subscribe();
    let s = stage.clone();
    let serving = tokio::spawn(async move {
        serve_translate(
            &mut translate_in,
            Arc::new(to_verify),
            Arc::new(Fixed(s)),
            Arc::new(NoAdmission),
            Arc::new(NoWatch),
            1,
            shutdown,
        )
        .await;
        translate_in
    });
    let mut out = Vec::new();
    until(|| {
        out.extend(verify_in.drain());
        !out.is_empty()
    })
    .await;
    stop.signal();
    let mut translate_in = serving.await.unwrap();
    let done: usize = out.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(done, 3, "the calls made before the halt go on");
    assert_eq!(
        stage.calls.load(Ordering::SeqCst),
        3,
        "no call after the halt"
    );
    assert!(
        translate_in.drain().is_empty(),
        "the rest stay pending, not queued again"
    );
}

/// The value of a future that is ready now (the in-memory store's are).
fn futures_now<F: std::future::Future>(f: F) -> Option<F::Output> {
    let waker = futures_util_noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

fn futures_util_noop_waker() -> std::task::Waker {
    std::task::Waker::noop().clone()
}
