//! The evaluation as stages: [`plan`] turns a run's settings into translate
//! tasks; [`translate`] runs I then A for one task; [`verify`] proves the
//! answer against φ0 and yields the result record and, for (A∘I)^n, the next
//! round's task. The stages are plain functions of their input message, so
//! the one-machine run ([`drive`]) and the fleet's workers call the same
//! code; the queues between them and the store of results are traits
//! ([`Queue`], [`ResultStore`]) with in-process implementations here.

mod driver;
mod message;
mod plan;
mod queue;
mod resume;
mod settings;
mod stages;
mod store;

pub use autoeval_translate::{Local, SettingsError, StageSettings, Translator};
pub use driver::{drive, Concurrency, Observer, StageTimes};
pub use message::{shots_name, task_item, TranslateTask, VerifyTask};
pub use plan::{generate_items, initial_tasks, BatchShortfall, PlanError, RunPlan};
pub use queue::{LocalQueue, Queue, QueueClosed};
pub use resume::{pending_tasks, Pending};
pub use settings::{stages, verifier_settings};
pub use stages::{translate, verify, CopyPolicy, Stages};
pub use store::{MemoryStore, ResultStore, StoreError};
