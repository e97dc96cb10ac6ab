//! One machine's run: the stages connected by in-process queues, with
//! bounded concurrency per stage, recording each round as it finishes.

use crate::message::{TranslateTask, VerifyTask};
use crate::queue::{LocalQueue, Queue};
use crate::stages::{translate, verify, Stages};
use crate::store::{ResultStore, StoreError};
use autoeval_proto::ResultRecord;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Workers per stage.
#[derive(Clone, Copy, Debug)]
pub struct Concurrency {
    /// Round trips in flight (model calls are bounded again per backend).
    pub translate: usize,
    /// Verifier threads.
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
    /// Seconds spent appending records to the store.
    pub record_s: f64,
    /// Wall-clock seconds of the whole drive.
    pub wall_s: f64,
    /// Records written.
    pub records: usize,
}

#[derive(Default)]
struct Clock {
    translate: AtomicU64,
    verify: AtomicU64,
    record: AtomicU64,
    records: AtomicUsize,
}

fn add(counter: &AtomicU64, since: Instant) {
    counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// Runs `tasks` (and the later rounds they lead to) to the end, appending
/// each round's record to `store` as soon as it is proved. A store that
/// fails stops the run with its error; everything recorded before stays.
/// A backend that halts (see [`Stages::halted`]) stops the run early: no
/// new task is started, calls already made are recorded, and tasks never
/// sent stay pending for the next run.
pub async fn drive(
    tasks: Vec<TranslateTask>,
    stages: Arc<Stages>,
    store: Arc<dyn ResultStore>,
    observer: Arc<dyn Observer>,
    concurrency: Concurrency,
) -> Result<StageTimes, StoreError> {
    let started = Instant::now();
    let to_translate = Arc::new(LocalQueue::<TranslateTask>::default());
    let to_verify = Arc::new(LocalQueue::<VerifyTask>::default());
    let outstanding = Arc::new(AtomicUsize::new(tasks.len()));
    let clock = Arc::new(Clock::default());
    let failure: Arc<Mutex<Option<StoreError>>> = Arc::default();
    if tasks.is_empty() {
        return Ok(StageTimes::default());
    }
    for t in tasks {
        // An unbounded queue that nobody has closed yet accepts every push.
        let _ = to_translate.push(t).await;
    }
    let mut workers = tokio::task::JoinSet::new();
    let translators = Arc::new(AtomicUsize::new(concurrency.translate.max(1)));
    for _ in 0..concurrency.translate.max(1) {
        let (tq, vq, stages, observer, clock, translators) = (
            to_translate.clone(),
            to_verify.clone(),
            stages.clone(),
            observer.clone(),
            clock.clone(),
            translators.clone(),
        );
        workers.spawn(async move {
            while let Some(task) = tq.pop().await {
                if stages.halted().is_some() {
                    // Closing lets the other translators drain the queue and stop.
                    tq.close();
                    break;
                }
                let t0 = Instant::now();
                let done = translate(task, &stages).await;
                add(&clock.translate, t0);
                let unsent =
                    done.translation.api_failure.is_some() && done.translation.attempts == 0;
                if unsent && stages.halted().is_some() {
                    // Never sent: it stays pending rather than counting as a failure.
                    tq.close();
                    continue;
                }
                observer.translated(&done);
                if vq.push(done).await.is_err() {
                    break;
                }
            }
            // Once every translator has stopped (a halt), the verifiers drain and stop too.
            if translators.fetch_sub(1, Ordering::AcqRel) == 1 {
                vq.close();
            }
        });
    }
    for _ in 0..concurrency.verify.max(1) {
        let (tq, vq, stages, store, observer, clock, outstanding, failure) = (
            to_translate.clone(),
            to_verify.clone(),
            stages.clone(),
            store.clone(),
            observer.clone(),
            clock.clone(),
            outstanding.clone(),
            failure.clone(),
        );
        workers.spawn(async move {
            while let Some(message) = vq.pop().await {
                let (st, sto, clk) = (stages.clone(), store.clone(), clock.clone());
                let joined = tokio::task::spawn_blocking(move || {
                    let t0 = Instant::now();
                    let (record, next) = verify(message, &st);
                    add(&clk.verify, t0);
                    let t1 = Instant::now();
                    let stored = sto.append(&record);
                    add(&clk.record, t1);
                    (record, next, stored)
                })
                .await;
                let (record, next, stored) = match joined {
                    Ok(x) => x,
                    Err(e) => (
                        ResultRecord::default(),
                        None,
                        Err(StoreError(format!("the verifier thread failed: {e}"))),
                    ),
                };
                if let Err(e) = stored {
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                    tq.close();
                    vq.close();
                    break;
                }
                clock.records.fetch_add(1, Ordering::Relaxed);
                observer.recorded(&record);
                let more = match next {
                    Some(task) => tq.push(task).await.is_ok(),
                    None => false,
                };
                if !more && outstanding.fetch_sub(1, Ordering::AcqRel) == 1 {
                    tq.close();
                    vq.close();
                }
            }
        });
    }
    while workers.join_next().await.is_some() {}
    if let Some(e) = failure.lock().ok().and_then(|mut f| f.take()) {
        return Err(e);
    }
    let secs = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
    Ok(StageTimes {
        translate_s: secs(&clock.translate),
        verify_s: secs(&clock.verify),
        record_s: secs(&clock.record),
        wall_s: started.elapsed().as_secs_f64(),
        records: clock.records.load(Ordering::Relaxed),
    })
}
