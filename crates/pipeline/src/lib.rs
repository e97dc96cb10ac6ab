//! A run's plan and where it stands, with no transport of their own:
//! [`plan`] turns a run's settings into items and first-round tasks, and
//! [`pending_tasks`] says what is left of a run given its records, and
//! [`draw_order`] the order a run `--until decided` draws its items in. The
//! stages are `autoeval-translate`'s and `autoeval-verify-stage`'s; the
//! loops that run them over queues and stores are `autoeval-engine`'s.

mod order;
mod plan;
mod resume;

pub use order::{draw_order, shuffled_strata};
pub use plan::{
    generate_items, initial_tasks, item_batches, task_item, BatchShortfall, ItemBatch, PlanError,
    RunPlan,
};
pub use resume::{pending_tasks, Pending, RecordedUnits};
