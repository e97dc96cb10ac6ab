//! The in-process transport: queues of bundles between the loops of one
//! process, a store of records in memory, and [`run_local`], which drives
//! both loops over them until every unit has ended.

mod judge;

pub use judge::{judge_local, Judged};

use crate::stage::{Fixed, NoAdmission, Step, Translate, Verify, Watch};
use crate::transport::{
    Delivery, Inbox, Incoming, Outbox, RecordStore, StoreError, TransportError,
};
use crate::{serve_translate, serve_verify, ShutdownHandle, TranslateLoop, VerifyLoop};
use autoeval_proto::fleet::{bundles, BUNDLE_SIZE};
use autoeval_proto::{ResultRecord, TranslateTask, UnitKey, VerifyTask};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// One message between loops: a bundle of one run, or poison.
struct Parcel<T> {
    run: String,
    tasks: Result<Vec<T>, String>,
    redelivered: bool,
}

/// A delivery set apart, with why.
#[derive(Clone, Debug)]
pub struct DeadLetter {
    /// The run it belonged to.
    pub run: String,
    /// Why it was refused.
    pub reason: String,
    /// The tasks it carried (none for poison).
    pub tasks: usize,
}

type DeadLetters = Arc<Mutex<Vec<DeadLetter>>>;

/// The sending side of an in-process queue; cheap to clone.
pub struct LocalOutbox<T> {
    tx: mpsc::UnboundedSender<Parcel<T>>,
}

impl<T> Clone for LocalOutbox<T> {
    fn clone(&self) -> Self {
        LocalOutbox {
            tx: self.tx.clone(),
        }
    }
}

/// The receiving side of an in-process queue.
pub struct LocalInbox<T> {
    rx: mpsc::UnboundedReceiver<Parcel<T>>,
    tx: mpsc::UnboundedSender<Parcel<T>>,
    dead: DeadLetters,
}

/// An unbounded in-process queue of bundles.
pub fn local_queue<T>() -> (LocalOutbox<T>, LocalInbox<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        LocalOutbox { tx: tx.clone() },
        LocalInbox {
            rx,
            tx,
            dead: DeadLetters::default(),
        },
    )
}

impl<T: Send + 'static> LocalOutbox<T> {
    fn push(&self, parcel: Parcel<T>) -> Result<(), TransportError> {
        self.tx
            .send(parcel)
            .map_err(|_| TransportError("the in-process queue is gone".into()))
    }

    /// Sends `tasks` as if they were delivered before (a transport's redelivery).
    pub fn redeliver(&self, run: &str, tasks: Vec<T>) -> Result<(), TransportError> {
        self.push(Parcel {
            run: run.to_string(),
            tasks: Ok(tasks),
            redelivered: true,
        })
    }

    /// Sends a message whose body cannot be read, saying why.
    pub fn send_poison(&self, run: &str, why: &str) -> Result<(), TransportError> {
        self.push(Parcel {
            run: run.to_string(),
            tasks: Err(why.to_string()),
            redelivered: false,
        })
    }
}

impl<T: Send + 'static> Outbox<T> for LocalOutbox<T> {
    async fn send(&self, run: &str, tasks: Vec<T>) -> Result<(), TransportError> {
        self.push(Parcel {
            run: run.to_string(),
            tasks: Ok(tasks),
            redelivered: false,
        })
    }
}

impl<T> LocalInbox<T> {
    /// The deliveries refused so far.
    pub fn dead_letters(&self) -> Vec<DeadLetter> {
        self.dead.lock().map(|d| d.clone()).unwrap_or_default()
    }

    /// Takes what waits in the queue without serving it: (run, tasks) per bundle.
    pub fn drain(&mut self) -> Vec<(String, Vec<T>)> {
        let mut out = Vec::new();
        while let Ok(p) = self.rx.try_recv() {
            if let Ok(tasks) = p.tasks {
                out.push((p.run, tasks));
            }
        }
        out
    }
}

/// A bundle taken from a [`LocalInbox`]; given back, it goes to the queue's end.
pub struct LocalDelivery<T> {
    run: String,
    kept: Vec<T>,
    redelivered: bool,
    tx: mpsc::UnboundedSender<Parcel<T>>,
    dead: DeadLetters,
}

impl<T: Send + Sync + 'static> Delivery for LocalDelivery<T> {
    fn run(&self) -> &str {
        &self.run
    }

    fn redelivered(&self) -> bool {
        self.redelivered
    }

    async fn ack(self) -> Result<(), TransportError> {
        Ok(())
    }

    async fn requeue(self) -> Result<(), TransportError> {
        self.tx
            .send(Parcel {
                run: self.run,
                tasks: Ok(self.kept),
                redelivered: true,
            })
            .map_err(|_| TransportError("the in-process queue is gone".into()))
    }

    async fn dead_letter(self, reason: &str) -> Result<(), TransportError> {
        if let Ok(mut d) = self.dead.lock() {
            d.push(DeadLetter {
                run: self.run,
                reason: reason.to_string(),
                tasks: self.kept.len(),
            });
        }
        Ok(())
    }
}

impl<T: Clone + Send + Sync + 'static> Inbox<T> for LocalInbox<T> {
    type Delivery = LocalDelivery<T>;

    async fn next(&mut self) -> Option<Result<Incoming<LocalDelivery<T>, T>, TransportError>> {
        let parcel = self.rx.recv().await?;
        let kept = parcel.tasks.clone().unwrap_or_default();
        Some(Ok(Incoming {
            units: kept.len(),
            delivery: LocalDelivery {
                run: parcel.run,
                kept,
                redelivered: parcel.redelivered,
                tx: self.tx.clone(),
                dead: self.dead.clone(),
            },
            tasks: parcel.tasks,
        }))
    }
}

/// Each record by (run, unit, round).
type Rounds = HashMap<(String, UnitKey, u32), ResultRecord>;

/// Records kept in memory, each (run, unit, round) once.
#[derive(Default)]
pub struct MemoryStore {
    records: Mutex<Rounds>,
}

impl MemoryStore {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Rounds>, StoreError> {
        self.records
            .lock()
            .map_err(|e| StoreError::fatal(e.to_string()))
    }
}

impl RecordStore for MemoryStore {
    async fn record_all(
        &self,
        run: &str,
        records: &[ResultRecord],
        _rounds: u32,
    ) -> Result<Vec<bool>, StoreError> {
        let mut all = self.lock()?;
        Ok(records
            .iter()
            .map(|r| {
                let key = (run.to_string(), r.unit(), r.round);
                let new = !all.contains_key(&key);
                all.entry(key).or_insert_with(|| r.clone());
                new
            })
            .collect())
    }

    async fn stored(
        &self,
        run: &str,
        unit: &UnitKey,
        round: u32,
    ) -> Result<Option<ResultRecord>, StoreError> {
        Ok(self
            .lock()?
            .get(&(run.to_string(), unit.clone(), round))
            .cloned())
    }

    async fn scan(
        &self,
        run: &str,
        mut each: impl FnMut(ResultRecord) + Send,
    ) -> Result<(), StoreError> {
        let mine: Vec<ResultRecord> = self
            .lock()?
            .iter()
            .filter(|((r, _, _), _)| r == run)
            .map(|(_, rec)| rec.clone())
            .collect();
        mine.into_iter().for_each(&mut each);
        Ok(())
    }
}

/// Workers per stage of a one-machine run.
#[derive(Clone, Copy, Debug)]
pub struct Concurrency {
    /// Round trips in flight (model calls are bounded again per backend).
    pub translate: usize,
    /// Checks at once, each on a blocking thread.
    pub verify: usize,
}

/// Hears of progress; the command line draws bars from it.
pub trait Observer: Send + Sync {
    /// A task came back from the model.
    fn translated(&self, _task: &VerifyTask) {}
    /// A round was recorded.
    fn recorded(&self, _record: &ResultRecord) {}
}

/// Where the time went: busy seconds summed over each stage's workers, and the wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    /// Seconds spent in translate (model calls, prompt building, parsing φ1).
    pub translate_s: f64,
    /// Seconds spent proving.
    pub verify_s: f64,
    /// Seconds spent storing records.
    pub record_s: f64,
    /// Wall-clock seconds of the whole drive.
    pub wall_s: f64,
    /// Records written.
    pub records: usize,
}

impl StageTimes {
    /// These times and `later`'s, as one drive's (a run `--until decided`
    /// drives one wave at a time).
    pub fn plus(&self, later: &StageTimes) -> StageTimes {
        StageTimes {
            translate_s: self.translate_s + later.translate_s,
            verify_s: self.verify_s + later.verify_s,
            record_s: self.record_s + later.record_s,
            wall_s: self.wall_s + later.wall_s,
            records: self.records + later.records,
        }
    }
}

/// The watch of a one-machine run: progress, times, and its end.
struct LocalWatch {
    observer: Arc<dyn Observer>,
    /// Units begun and not ended, plus one while the feeder feeds.
    outstanding: AtomicUsize,
    /// Told each time a unit ends.
    ended: tokio::sync::Notify,
    done: ShutdownHandle,
    failure: Mutex<Option<StoreError>>,
    translate_ns: AtomicU64,
    verify_ns: AtomicU64,
    record_ns: AtomicU64,
    records: AtomicUsize,
}

fn add(counter: &AtomicU64, busy: Duration) {
    counter.fetch_add(busy.as_nanos() as u64, Ordering::Relaxed);
}

impl Watch for LocalWatch {
    type Held = ();
    fn taken(&self, _step: Step, _run: &str, _round: &autoeval_proto::RoundKey) {}
    fn settled(&self, _held: (), _how: &'static str) {}

    fn translated(&self, _run: &str, task: &VerifyTask, busy: Duration) {
        add(&self.translate_ns, busy);
        self.observer.translated(task);
    }

    fn verified(&self, _run: &str, _record: &ResultRecord, busy: Duration) {
        add(&self.verify_ns, busy);
    }

    fn recorded(&self, _run: &str, records: &[ResultRecord], new: &[bool], busy: Duration) {
        add(&self.record_ns, busy);
        for (r, _) in records.iter().zip(new).filter(|(_, n)| **n) {
            self.records.fetch_add(1, Ordering::Relaxed);
            self.observer.recorded(r);
        }
    }

    fn unit_ended(&self) {
        if self.outstanding.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.signal();
        }
        self.ended.notify_waiters();
    }

    fn store_failed(&self, error: &StoreError) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert_with(|| error.clone());
        }
        self.done.signal();
        self.ended.notify_waiters();
    }
}

/// Units a one-machine run has begun and not ended, at most (or, with more
/// round trips in flight, twice their number): tasks are made and
/// fed as units end, so memory holds this many units' work, not the run's.
pub const UNITS_IN_FLIGHT: usize = 4096;

/// Runs `tasks` of `run` (and the later rounds they lead to) to the end on
/// this machine: the translate and verify loops over in-process queues,
/// each round stored in `store` as soon as it is proved. The tasks are
/// drawn lazily (on a thread of their own, as they may be generated on the
/// way), at most [`UNITS_IN_FLIGHT`] units ahead of the units ended (more
/// when more round trips are in flight). A
/// store that fails stops the run with its error; everything stored before
/// stays. A backend that halts stops the run early: no new task is started,
/// calls already made are recorded, and tasks never sent stay pending.
pub async fn run_local<T: Translate, V: Verify, R: RecordStore, I>(
    run: &str,
    tasks: I,
    translator: Arc<T>,
    verifier: Arc<V>,
    store: Arc<R>,
    observer: Arc<dyn Observer>,
    concurrency: Concurrency,
) -> Result<StageTimes, StoreError>
where
    I: IntoIterator<Item = TranslateTask>,
    I::IntoIter: Send + 'static,
{
    let started = Instant::now();
    let watch = Arc::new(LocalWatch {
        observer,
        // One for the feeder, which lets go once every task is fed.
        outstanding: AtomicUsize::new(1),
        ended: tokio::sync::Notify::new(),
        done: ShutdownHandle::new(),
        failure: Mutex::default(),
        translate_ns: AtomicU64::default(),
        verify_ns: AtomicU64::default(),
        record_ns: AtomicU64::default(),
        records: AtomicUsize::default(),
    });
    let (to_translate, mut translate_inbox) = local_queue::<TranslateTask>();
    let (to_verify, mut verify_inbox) = local_queue::<VerifyTask>();
    let in_flight = UNITS_IN_FLIGHT.max(2 * concurrency.translate);
    let feeding = feed(
        run,
        tasks.into_iter(),
        in_flight,
        to_translate.clone(),
        watch.clone(),
        translator.clone(),
    );
    let translate_with = TranslateLoop {
        outbox: Arc::new(to_verify),
        stages: Arc::new(Fixed(translator)),
        admission: Arc::new(NoAdmission),
        watch: watch.clone(),
        // One machine waits for its batches in place: nothing to hand over.
        custody: Arc::new(crate::NoCustody),
        slots: concurrency.translate,
    };
    let translating = serve_translate(&mut translate_inbox, translate_with, watch.done.subscribe());
    let verify_with = VerifyLoop {
        outbox: Arc::new(to_translate),
        stages: Arc::new(Fixed(verifier)),
        store,
        watch: watch.clone(),
        jobs: concurrency.verify,
    };
    let verifying = serve_verify(&mut verify_inbox, verify_with, watch.done.subscribe());
    let (fed, _, _) = tokio::join!(feeding, translating, verifying);
    if let Some(e) = watch.failure.lock().ok().and_then(|mut f| f.take()) {
        return Err(e);
    }
    fed?;
    let secs = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
    Ok(StageTimes {
        translate_s: secs(&watch.translate_ns),
        verify_s: secs(&watch.verify_ns),
        record_s: secs(&watch.record_ns),
        wall_s: started.elapsed().as_secs_f64(),
        records: watch.records.load(Ordering::Relaxed),
    })
}

/// Tasks drawn on their own thread and handed over in chunks of this many.
const CHUNK: usize = 256;

/// Feeds `tasks` to the translate queue in bundles, keeping at most
/// `in_flight` units begun and not ended; stops early when the run
/// ends otherwise (a failed store) or a backend halted.
async fn feed<T: Translate>(
    run: &str,
    tasks: impl Iterator<Item = TranslateTask> + Send + 'static,
    in_flight: usize,
    to_translate: LocalOutbox<TranslateTask>,
    watch: Arc<LocalWatch>,
    translator: Arc<T>,
) -> Result<(), StoreError> {
    let (tx, mut rx) = mpsc::channel::<Vec<TranslateTask>>(2);
    let drawing = std::thread::spawn(move || {
        let mut tasks = tasks;
        loop {
            let chunk: Vec<TranslateTask> = tasks.by_ref().take(CHUNK).collect();
            if chunk.is_empty() || tx.blocking_send(chunk).is_err() {
                return;
            }
        }
    });
    let stopped = watch.done.subscribe();
    let mut fed = Ok(());
    while let Some(chunk) = rx.recv().await {
        if stopped.is_signalled() || translator.halted().is_some() {
            break;
        }
        loop {
            // Registered before the count is read, so that no ending is missed.
            let ended = watch.ended.notified();
            if watch.outstanding.load(Ordering::Acquire) <= in_flight || stopped.is_signalled() {
                break;
            }
            ended.await;
        }
        if stopped.is_signalled() || translator.halted().is_some() {
            break;
        }
        watch.outstanding.fetch_add(chunk.len(), Ordering::AcqRel);
        let grouped = bundles(chunk, |t| (t.model.clone(), t.unit().shard()), BUNDLE_SIZE);
        for bundle in grouped {
            if let Err(e) = to_translate.send(run, bundle).await {
                fed = Err(StoreError::fatal(e.0));
            }
        }
        if fed.is_err() {
            break;
        }
    }
    // The thread drawing tasks ends once nothing more is taken from it.
    drop(rx);
    let _ = tokio::task::spawn_blocking(move || drawing.join()).await;
    watch.unit_ended();
    fed
}
