//! What the loops run and whom they tell: the stages (built per run), the
//! admission of paid work (caps, halts), and a watch on every task.

use crate::transport::StoreError;
use autoeval_proto::{
    JudgeKey, JudgeRecord, ResultRecord, RoundKey, RoundTrip, TranslateTask, VerifyTask,
};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// Stage one: a model translates a formula to English and, in a fresh context, back.
pub trait Translate: Send + Sync + 'static {
    /// I then A for one task; a failed call is recorded in the answer, never an error.
    fn translate(&self, task: TranslateTask) -> impl Future<Output = VerifyTask> + Send;
    /// Why the run must stop, when a model's backend halted (every attempt
    /// failed the same way: nothing listens, the key is refused).
    fn halted(&self) -> Option<String>;
    /// Whether this stage was given `model`: a task naming another is never
    /// called, but refused with [`Translate::refusal`].
    fn serves(&self, _model: &str) -> bool {
        true
    }
    /// Why a task naming `model`, which this stage was not given, is refused.
    fn refusal(&self, model: &str) -> String {
        format!("this stage was not given model {model}")
    }
    /// Whether calls to `model` wait for provider batches (hours, not seconds).
    fn batched(&self, _model: &str) -> bool {
        false
    }
}

/// Stage two: proves one answer against φ0; runs on a blocking thread.
pub trait Verify: Send + Sync + 'static {
    /// The round's record.
    fn verify(&self, task: VerifyTask) -> ResultRecord;
}

/// The A4 question: a judge model says whether φ0 ≡ φ1.
pub trait Judge: Send + Sync + 'static {
    /// Asks about the pair in `question` and fills in the judgement, or the
    /// API failure; `None` when it was never sent because the judge halted.
    fn ask(&self, question: JudgeRecord) -> impl Future<Output = Option<JudgeRecord>> + Send;
    /// Why the judge cannot be asked, when its backend halted.
    fn halted(&self) -> Option<String>;
}

/// The judges of each run, each a model spec asked in one style.
pub trait Judges: Send + Sync + 'static {
    /// What a judge is.
    type Judge: Judge;
    /// The judge `judge` of `run`.
    fn judge(
        &self,
        run: &str,
        judge: &JudgeKey,
    ) -> impl Future<Output = Result<Arc<Self::Judge>, SetupError>> + Send;
}

/// The same judge for every run and name (one machine asks one judge at a time).
pub struct OneJudge<J>(pub Arc<J>);

impl<J: Judge> Judges for OneJudge<J> {
    type Judge = J;
    async fn judge(&self, _run: &str, _judge: &JudgeKey) -> Result<Arc<J>, SetupError> {
        Ok(self.0.clone())
    }
}

/// Why a run's stage cannot be built.
#[derive(Debug, Clone, Error)]
#[error("{message}")]
pub struct SetupError {
    /// What is wrong.
    pub message: String,
    /// Whether it may pass (its settings could not be read just now): the
    /// delivery goes back; otherwise it is dead-lettered with the message.
    pub transient: bool,
}

/// Each run's stage: one machine has one; a fleet worker builds one per run
/// from the settings the coordinator registered.
pub trait Stages<S>: Send + Sync + 'static {
    /// The stage of `run`.
    fn stage(&self, run: &str) -> impl Future<Output = Result<Arc<S>, SetupError>> + Send;
}

/// The same stage for every run.
pub struct Fixed<S>(pub Arc<S>);

impl<S: Send + Sync + 'static> Stages<S> for Fixed<S> {
    async fn stage(&self, _run: &str) -> Result<Arc<S>, SetupError> {
        Ok(self.0.clone())
    }
}

/// Whether a task of a paused run starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// It starts.
    Go,
    /// It was set aside until the run is resumed.
    Parked,
    /// It could not be set aside: its delivery goes back.
    Return,
}

/// What paid work is admitted: a run's caps and what a halt leaves.
pub trait Admission: Send + Sync + 'static {
    /// Whether `run` has a cap, so that its tasks are charged and may be set aside.
    fn capped(&self, run: &str) -> impl Future<Output = bool> + Send;
    /// Just before the task of `round` of a capped run starts.
    fn start(&self, run: &str, round: &RoundKey) -> impl Future<Output = Start> + Send;
    /// Charges a capped run what a round trip paid.
    fn charge(&self, run: &str, paid: &RoundTrip) -> impl Future<Output = ()> + Send;
    /// A backend halted with `why`: keeps the tasks of `rounds` that were never
    /// sent, so that they stay pending, and stops the run. An error gives
    /// their delivery back.
    fn halt(
        &self,
        run: &str,
        why: &str,
        rounds: &[RoundKey],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// No caps; a halt leaves the unsent tasks where they are (pending in the run's records).
pub struct NoAdmission;

impl Admission for NoAdmission {
    async fn capped(&self, _run: &str) -> bool {
        false
    }
    async fn start(&self, _run: &str, _round: &RoundKey) -> Start {
        Start::Go
    }
    async fn charge(&self, _run: &str, _paid: &RoundTrip) {}
    async fn halt(&self, _run: &str, _why: &str, _rounds: &[RoundKey]) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The stage a task is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// I then A.
    Translate,
    /// Proving.
    Verify,
    /// The A4 question.
    Judge,
}

impl Step {
    /// The name in metrics and logs.
    pub fn name(self) -> &'static str {
        match self {
            Step::Translate => "translate",
            Step::Verify => "verify",
            Step::Judge => "judge",
        }
    }
}

/// Told of every task, for progress, metrics and the held-task count.
pub trait Watch: Send + Sync + 'static {
    /// Kept while a task is in hand; given back to [`Watch::settled`].
    type Held: Send + 'static;
    /// The task of `round` of `run` arrived in a delivery.
    fn taken(&self, step: Step, run: &str, round: &RoundKey) -> Self::Held;
    /// Its delivery was settled: `acked`, `requeued`, `dead_lettered`, `parked` or `pending`.
    fn settled(&self, held: Self::Held, how: &'static str);
    /// A delivery of `units` tasks was refused or dead-lettered before any was taken.
    fn refused(&self, _step: Step, _units: usize, _how: &'static str) {}
    /// A task of `run` came back from the model after `busy`.
    fn translated(&self, _run: &str, _task: &VerifyTask, _busy: Duration) {}
    /// A round of `run` was proved in `busy`.
    fn verified(&self, _run: &str, _record: &ResultRecord, _busy: Duration) {}
    /// Rounds of `run` were stored in `busy`; `new` says which were not stored before.
    fn recorded(&self, _run: &str, _records: &[ResultRecord], _new: &[bool], _busy: Duration) {}
    /// A unit reached its end here: its last round was newly recorded, or a
    /// halt left it pending.
    fn unit_ended(&self) {}
    /// The store failed; the delivery went back.
    fn store_failed(&self, _error: &StoreError) {}
    /// A backend halted the run with `why`.
    fn halted(&self, _run: &str, _why: &str) {}
}

/// Tells no one.
pub struct NoWatch;

impl Watch for NoWatch {
    type Held = ();
    fn taken(&self, _step: Step, _run: &str, _round: &RoundKey) {}
    fn settled(&self, _held: (), _how: &'static str) {}
}
