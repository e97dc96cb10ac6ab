//! The evaluation's domain steps, with no transport of their own: [`plan`]
//! turns a run's settings into items and first-round tasks; [`verify`]
//! proves an answer against φ0 and yields the round's record;
//! [`pending_tasks`] says what is left of a run given its records; and
//! [`checks`] proves a stream of check requests in parallel. The loops
//! that run the stages over queues and stores are `autoeval-engine`'s.

pub mod checks;
mod plan;
mod resume;
mod settings;
mod stages;

pub use plan::{
    generate_items, initial_tasks, item_batches, task_item, BatchShortfall, ItemBatch, PlanError,
    RunPlan,
};
pub use resume::{pending_tasks, Pending, RecordedUnits};
pub use settings::VerifySettings;
pub use stages::{verify, VerifyStage};
