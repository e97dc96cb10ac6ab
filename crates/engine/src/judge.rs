//! The judge loop: each A4 question of a delivery on a slot of its own; the
//! judgements are stored once, and only then is the delivery acknowledged.

use crate::serve::{panic_message, refuse, serve, Ended, Settle};
use crate::stage::{Judge, Judges, Step, Watch};
use crate::transport::{Delivery, Inbox, Incoming, JudgementStore};
use crate::Shutdown;
use autoeval_proto::fleet::judged_pair;
use autoeval_proto::{JudgeKey, JudgeRecord, JudgeTask};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// What one judge loop works with.
struct Context<J, R, W> {
    judges: Arc<J>,
    store: Arc<R>,
    watch: Arc<W>,
    /// One permit per question that may be asked at once; closed at shutdown.
    slots: Arc<Semaphore>,
    /// Seen after a slot is had, so that a slot freed after the signal asks nothing.
    shutdown: Shutdown,
}

/// What became of one question.
enum Outcome {
    /// Answered (or its call failed, which is an answer too): stored.
    Judged,
    /// Not begun (shutdown), or the store failed: its delivery goes back.
    Return,
    /// Never sent because the judge halted: it stays to ask.
    Unsent(String),
}

/// Serves `inbox` until it ends or `shutdown`: at most `slots` questions
/// asked at once; each judgement is stored in `store` before its delivery is
/// acknowledged. A question whose judge halted before asking goes back.
pub async fn serve_judge<I, J, R, W>(
    inbox: &mut I,
    judges: Arc<J>,
    store: Arc<R>,
    watch: Arc<W>,
    slots: usize,
    shutdown: Shutdown,
) -> Ended
where
    I: Inbox<JudgeTask>,
    J: Judges,
    R: JudgementStore,
    W: Watch,
{
    let cx = Arc::new(Context {
        judges,
        store,
        watch,
        slots: Arc::new(Semaphore::new(slots.max(1))),
        shutdown: shutdown.clone(),
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

async fn handle<D, J, R, W>(incoming: Incoming<D, JudgeTask>, cx: Arc<Context<J, R, W>>)
where
    D: Delivery,
    J: Judges,
    R: JudgementStore,
    W: Watch,
{
    let Incoming {
        delivery,
        tasks,
        units,
    } = incoming;
    let watch = cx.watch.as_ref();
    let questions = match tasks {
        Ok(q) => q,
        Err(reason) => return refuse(delivery, &reason, units, Step::Judge, watch).await,
    };
    let run = delivery.run().to_string();
    let mut settle = Settle::new(watch);
    let (mut whole, mut halted, mut refused) = (true, None, None);
    for task in questions {
        let question = JudgeRecord::from(task);
        let judge_id = question.task.judge_key();
        let held = watch.taken(Step::Judge, &run, &judged_pair(&question));
        let outcome = match cx.judges.judge(&run, &judge_id).await {
            Ok(judge) => match cx.slots.acquire().await {
                Ok(_slot) if !cx.shutdown.is_signalled() => {
                    ask_and_store(&cx, &run, &judge_id, judge, question).await
                }
                _ => Outcome::Return,
            },
            Err(e) if e.transient => {
                tracing::warn!(error = %e, "cannot build the run's judge; returning the question");
                Outcome::Return
            }
            Err(e) => {
                refused = Some(e.message);
                Outcome::Return
            }
        };
        let how = match outcome {
            Outcome::Judged => "acked",
            Outcome::Return => {
                whole = false;
                "requeued"
            }
            Outcome::Unsent(why) => {
                halted = Some(why);
                whole = false;
                "pending"
            }
        };
        settle.add(held, how);
    }
    if let Some(reason) = refused {
        tracing::warn!(reason, run, "refusing a delivery");
        return match delivery.dead_letter(&reason).await {
            Ok(()) => settle.all("dead_lettered"),
            Err(e) => {
                tracing::warn!(error = %e, "cannot dead-letter a delivery");
                settle.all("requeued")
            }
        };
    }
    if let Some(why) = &halted {
        watch.halted(&run, why);
    }
    // The store keeps a pair's first judgement: one asked again is not recorded twice.
    if !whole {
        let _ = delivery.requeue().await;
        return settle.all(if halted.is_some() {
            "pending"
        } else {
            "requeued"
        });
    }
    match delivery.ack().await {
        Ok(()) => settle.each(),
        Err(e) => {
            tracing::warn!(error = %e, "cannot settle a question; it will be delivered again");
            settle.all("requeued");
        }
    }
}

/// Asks one question (a panic is that question's API failure) and stores the judgement.
async fn ask_and_store<J, R, W>(
    cx: &Context<J, R, W>,
    run: &str,
    judge_id: &JudgeKey,
    judge: Arc<J::Judge>,
    question: JudgeRecord,
) -> Outcome
where
    J: Judges,
    R: JudgementStore,
    W: Watch,
{
    let kept = question.clone();
    let asking = judge.clone();
    let answered = match tokio::spawn(async move { asking.ask(question).await }).await {
        Ok(Some(j)) => j,
        Ok(None) => return Outcome::Unsent(judge.halted().unwrap_or_default()),
        Err(e) => {
            let why = panic_message(e);
            tracing::error!(why, "the judge stage failed");
            JudgeRecord {
                api_failure: Some(format!("the judge stage failed: {why}")),
                ..kept
            }
        }
    };
    match cx.store.record_judgement(run, judge_id, &answered).await {
        Ok(_) => Outcome::Judged,
        Err(e) => {
            tracing::warn!(error = %e, "cannot record a judgement; returning its question");
            cx.watch.store_failed(&e);
            Outcome::Return
        }
    }
}
