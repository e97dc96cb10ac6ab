//! The tests of the suite, each generic over the transport: a task
//! delivered twice is recorded once and goes on once; a delivery given back
//! goes on from the round as stored; poison is dead-lettered with its
//! reason; a panic settles its own task and the loop goes on; shutdown
//! gives back work not begun; a halted backend leaves the rest pending.

use super::Transport;
use autoeval_engine::{
    serve_translate, serve_verify, Fixed, RecordStore, ShutdownHandle, Step, Translate,
    TranslateLoop, Verify, VerifyLoop, Watch,
};
use autoeval_proto::wire::TaskItem;
use autoeval_proto::{
    DatasetKind, Reading, ResultRecord, RoundTrip, Shots, TranslateTask, Verdict, VerifyTask,
};
use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Task `id` of `model`, its formula `input`, of `rounds` rounds.
fn task(model: &str, id: usize, input: &str, rounds: u32) -> TranslateTask {
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
        model: model.into(),
        prompt: Shots::ZeroShot,
        repeat: 0,
        round: 1,
        rounds,
        input: input.into(),
    }
}

/// The task answered with its own formula.
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

const HALTED: &str = "stopped: nothing listens";

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
        self.halted.load(Ordering::SeqCst).then(|| HALTED.into())
    }
}

/// A stage whose calls wait until it is opened.
#[derive(Default)]
struct Slow {
    started: AtomicUsize,
    open: AtomicBool,
}

impl Translate for Slow {
    async fn translate(&self, task: TranslateTask) -> VerifyTask {
        self.started.fetch_add(1, Ordering::SeqCst);
        while !self.open.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        answered(task)
    }

    fn halted(&self) -> Option<String> {
        None
    }
}

/// Equivalent unless the answer is `no`; panics on `boom`.
struct Prover;

impl Verify for Prover {
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

/// Counts how each task was settled, and the deliveries refused whole.
#[derive(Default)]
struct Counts {
    settled: Mutex<HashMap<&'static str, usize>>,
    refused: AtomicUsize,
}

impl Counts {
    fn settled(&self, how: &str) -> usize {
        let s = self.settled.lock().unwrap_or_else(|e| e.into_inner());
        s.get(how).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        let s = self.settled.lock().unwrap_or_else(|e| e.into_inner());
        s.values().sum()
    }
}

impl Watch for Counts {
    type Held = ();
    fn taken(&self, _step: Step, _run: &str, _round: &autoeval_proto::RoundKey) {}

    fn settled(&self, _held: (), how: &'static str) {
        let mut s = self.settled.lock().unwrap_or_else(|e| e.into_inner());
        *s.entry(how).or_default() += 1;
    }

    fn refused(&self, _step: Step, _units: usize, _how: &'static str) {
        self.refused.fetch_add(1, Ordering::SeqCst);
    }
}

/// Waits until `ready` holds, looking as work lands; fails after a minute.
async fn until<F, Fut>(what: &str, mut ready: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready().await {
        assert!(Instant::now() < deadline, "{what}: not within a minute");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn records<T: Transport>(t: &T) -> Vec<ResultRecord> {
    let mut all = Vec::new();
    t.store()
        .scan(t.run(), |r| all.push(r))
        .await
        .expect("the records");
    all
}

/// A verify loop over the transport, `jobs` checks at once; stopped by the handle.
fn verifying<T: Transport>(
    t: &Arc<T>,
    jobs: usize,
    watch: &Arc<Counts>,
) -> (ShutdownHandle, tokio::task::JoinHandle<()>) {
    let stop = ShutdownHandle::new();
    let (t, watch, shutdown) = (t.clone(), watch.clone(), stop.subscribe());
    let serving = tokio::spawn(async move {
        let (mut inbox, outbox) = t.verify_ends().await;
        let with = VerifyLoop {
            outbox,
            stages: Arc::new(Fixed(Arc::new(Prover))),
            store: t.store(),
            watch,
            jobs,
        };
        serve_verify(&mut inbox, with, shutdown).await;
        t.verify_ended(inbox).await;
    });
    (stop, serving)
}

/// A translate loop over the transport through `stage`, `slots` at once.
fn translating<T: Transport, S: Translate>(
    t: &Arc<T>,
    stage: &Arc<S>,
    slots: usize,
    watch: &Arc<Counts>,
) -> (ShutdownHandle, tokio::task::JoinHandle<()>) {
    let stop = ShutdownHandle::new();
    let (t, stage, watch, shutdown) = (t.clone(), stage.clone(), watch.clone(), stop.subscribe());
    let serving = tokio::spawn(async move {
        let (mut inbox, outbox) = t.translate_ends().await;
        let with = TranslateLoop {
            outbox,
            stages: Arc::new(Fixed(stage)),
            admission: t.admission(),
            watch,
            custody: Arc::new(autoeval_engine::NoCustody),
            slots,
        };
        serve_translate(&mut inbox, with, shutdown).await;
        t.translate_ended(inbox).await;
    });
    (stop, serving)
}

/// Closes the transport; its leftovers are removed even when the test failed.
async fn close<T: Transport>(t: Arc<T>) {
    if let Ok(t) = Arc::try_unwrap(t) {
        t.close().await;
    }
}

/// A bundle delivered twice (a duplicate publish) is stored once, and only
/// the copy that stored a round sends the next one.
pub async fn a_redelivered_task_is_recorded_once_and_goes_on_once<T: Transport>() {
    let t = Arc::new(T::open("once").await);
    let m = t.model().to_string();
    let bundle = vec![
        answered(task(&m, 0, "p", 2)),
        answered(task(&m, 1, "no", 2)),
    ];
    t.put_verify(bundle.clone(), false).await;
    t.put_verify(bundle, false).await;
    let watch = Arc::new(Counts::default());
    let (stop, serving) = verifying(&t, 2, &watch);
    until("both copies settled", || async {
        watch.settled("acked") == 4
    })
    .await;
    stop.signal();
    serving.await.expect("the loop ends");
    let next = t.take_translate().await;
    let stored = records(&*t).await;
    close(t).await;
    assert_eq!(
        next.len(),
        1,
        "one next round, from the copy that stored it: {next:?}"
    );
    assert_eq!(
        (next[0].item.id.as_str(), next[0].round),
        ("plogic-0-0-0", 2)
    );
    assert_eq!(stored.len(), 2, "each round stored once");
}

/// A delivery given back after its round was stored goes on from the
/// stored round, not from its own (differing) answer.
pub async fn a_delivery_given_back_goes_on_from_the_round_as_stored<T: Transport>() {
    let t = Arc::new(T::open("given-back").await);
    let first = answered(task(t.model(), 0, "p", 2));
    // Stored by an earlier copy whose process died before it sent the next round.
    t.store()
        .record_all(t.run(), &[Prover.verify(first.clone())], 2)
        .await
        .expect("stored");
    let mut other = first;
    other.translation.strict.phi1 = Some("no".into());
    t.put_verify(vec![other], true).await;
    let watch = Arc::new(Counts::default());
    let (stop, serving) = verifying(&t, 1, &watch);
    until("the copy settled", || async { watch.settled("acked") == 1 }).await;
    stop.signal();
    serving.await.expect("the loop ends");
    let next = t.take_translate().await;
    let stored = records(&*t).await;
    close(t).await;
    assert_eq!(next.len(), 1, "{next:?}");
    assert_eq!((next[0].round, next[0].input.as_str()), (2, "p"));
    assert_eq!(stored.len(), 1);
    assert_eq!(
        stored[0].verdict,
        Verdict::Equivalent,
        "the stored round stands"
    );
}

/// A delivery whose body cannot be read goes to the dead letters with why;
/// the loop goes on.
pub async fn poison_is_dead_lettered_with_its_reason<T: Transport>() {
    let t = Arc::new(T::open("poison").await);
    let reason = t.put_poison().await;
    t.put_verify(vec![answered(task(t.model(), 0, "p", 1))], false)
        .await;
    let watch = Arc::new(Counts::default());
    let (stop, serving) = verifying(&t, 1, &watch);
    until("the poison refused and the task stored", || async {
        watch.refused.load(Ordering::SeqCst) == 1 && watch.settled("acked") == 1
    })
    .await;
    stop.signal();
    serving.await.expect("the loop ends");
    // The broker routes a refused delivery to the dead letters on its own
    // time, after the refusal is sent; a read gives back what it saw on its
    // own time too, so the letters waited for are the ones checked.
    let seen = std::sync::Mutex::new(Vec::new());
    until("the poison among the dead letters", || async {
        let dead = t.dead_letters().await;
        let found = !dead.is_empty();
        *seen.lock().unwrap_or_else(|e| e.into_inner()) = dead;
        found
    })
    .await;
    let dead = seen.into_inner().unwrap_or_else(|e| e.into_inner());
    let stored = records(&*t).await;
    close(t).await;
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(dead[0].contains(&reason), "{dead:?} names {reason:?}");
    assert_eq!(stored.len(), 1);
}

/// A panic in the prover or the model stage becomes that task's failure,
/// recorded as such; the other tasks and deliveries go on.
pub async fn a_panic_settles_its_own_task_and_the_loop_goes_on<T: Transport>() {
    let t = Arc::new(T::open("panic").await);
    let m = t.model().to_string();
    let mut boom = answered(task(&m, 0, "p", 1));
    boom.translation.strict.phi1 = Some("boom".into());
    t.put_verify(vec![boom, answered(task(&m, 1, "p", 1))], false)
        .await;
    t.put_verify(vec![answered(task(&m, 2, "p", 1))], false)
        .await;
    let watch = Arc::new(Counts::default());
    let (stop, serving) = verifying(&t, 2, &watch);
    until("three rounds settled", || async {
        watch.settled("acked") == 3
    })
    .await;
    stop.signal();
    serving.await.expect("the loop ends");
    let stored = records(&*t).await;

    t.put_translate(vec![task(&m, 3, "panic", 1), task(&m, 4, "p", 1)])
        .await;
    let watch = Arc::new(Counts::default());
    let (stop, serving) = translating(&t, &Arc::new(Echo::default()), 4, &watch);
    until("both tasks settled", || async {
        watch.settled("acked") == 2
    })
    .await;
    stop.signal();
    serving.await.expect("the loop ends");
    let answered = t.take_verify().await;
    close(t).await;

    assert_eq!(stored.len(), 3);
    let broken: Vec<_> = stored
        .iter()
        .filter(|r| r.verdict == Verdict::VerifierError)
        .collect();
    assert_eq!(broken.len(), 1, "{stored:?}");
    assert_eq!(broken[0].id, "plogic-0-0-0");
    assert!(broken[0]
        .reason
        .as_deref()
        .is_some_and(|r| r.contains("the prover broke")));
    assert_eq!(answered.len(), 2);
    for a in &answered {
        let failure = a.translation.api_failure.as_deref();
        if a.task.input == "panic" {
            assert!(
                failure.is_some_and(|f| f.contains("the stage broke")),
                "{a:?}"
            );
        } else {
            assert_eq!(failure, None);
        }
    }
}

/// At shutdown the tasks under way finish and the deliveries whose tasks
/// were not all begun go back whole; nothing of them is sent on.
pub async fn shutdown_gives_back_work_not_begun<T: Transport>() {
    let t = Arc::new(T::open("shutdown").await);
    let m = t.model().to_string();
    t.put_translate((0..16).map(|i| task(&m, i, "p", 1)).collect())
        .await;
    let stage = Arc::new(Slow::default());
    let watch = Arc::new(Counts::default());
    let (stop, serving) = translating(&t, &stage, 1, &watch);
    until("a task begun", || async {
        stage.started.load(Ordering::SeqCst) >= 1
    })
    .await;
    stop.signal();
    stage.open.store(true, Ordering::SeqCst);
    serving.await.expect("the loop ends");
    let back = t.take_translate().await;
    let sent = t.take_verify().await;
    close(t).await;
    let started = stage.started.load(Ordering::SeqCst);
    // A delivery whose every task had begun finished and went on; every
    // other went back whole, the tasks it had begun included.
    let mut ids: Vec<String> = back.iter().map(|t| t.item.id.clone()).collect();
    ids.extend(sent.iter().map(|v| v.task.item.id.clone()));
    ids.sort_unstable();
    let mut all: Vec<String> = (0..16).map(|i| format!("plogic-0-0-{i}")).collect();
    all.sort_unstable();
    assert_eq!(ids, all, "every task went back or on, once");
    assert!(sent.len() <= started, "only tasks begun went on: {sent:?}");
    assert!(started < 16, "tasks not begun were not begun");
    assert!(back.len() > sent.len(), "the work not begun went back");
}

/// A backend that halts stops the calls: those made go on, the rest are
/// neither called nor queued again, but left pending.
pub async fn a_halted_backend_leaves_the_rest_pending<T: Transport>() {
    let t = Arc::new(T::open("halt").await);
    let m = t.model().to_string();
    let tasks: Vec<TranslateTask> = (0..10).map(|i| task(&m, i, "p", 1)).collect();
    let fields: BTreeSet<String> = tasks.iter().map(|t| t.round_key().to_string()).collect();
    t.put_translate(tasks).await;
    let stage = Arc::new(Echo {
        halt_after: Some(3),
        ..Echo::default()
    });
    let watch = Arc::new(Counts::default());
    let (stop, serving) = translating(&t, &stage, 1, &watch);
    until("every task settled", || async { watch.total() == 10 }).await;
    stop.signal();
    serving.await.expect("the loop ends");
    let sent = t.take_verify().await;
    let queued = t.take_translate().await;
    let set_aside = t.set_aside().await;
    close(t).await;
    assert_eq!(sent.len(), 3, "the calls made before the halt go on");
    assert_eq!(
        stage.calls.load(Ordering::SeqCst),
        3,
        "no call after the halt"
    );
    assert!(
        queued.is_empty(),
        "the rest are not queued again: {queued:?}"
    );
    assert_eq!(watch.settled("pending"), 7);
    if let Some(aside) = set_aside {
        let sent: BTreeSet<String> = sent
            .iter()
            .map(|v| v.task.round_key().to_string())
            .collect();
        let pending: BTreeSet<String> = fields.difference(&sent).cloned().collect();
        assert_eq!(aside.into_iter().collect::<BTreeSet<_>>(), pending);
    }
}
