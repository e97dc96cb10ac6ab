//! Deciding with fewer calls. A run `--until decided` draws the plan's items
//! in waves and stops drawing once what it was asked to decide is decided:
//! each model's compliance and accuracy to a precision, and the order of
//! every pair of models, or the best model. The intervals are confidence sequences, valid at
//! every wave at once, for the plan's own mean (a finite population sampled
//! without replacement), so looking after each wave costs no validity.
//!
//! - [`sequence`]: intervals, and the empirical-Bernstein confidence
//!   sequence of one stratified mean (the method betting replaced).
//! - [`betting`]: confidence sequences and e-processes by betting, as the
//!   reference implementation computes them.
//! - [`pooled`]: a dataset's mean by betting, its items drawn in one
//!   uniform order.
//! - [`family`]: the pairs' orders, controlled by e-Holm.
//! - [`method`]: betting, or for comparison the empirical-Bernstein
//!   sequence and the naive interval.
//! - [`design`]: what is asked, the waves, the plan.
//! - [`allocate`]: how many items of each stratum the next wave draws.
//! - [`procedure`]: the quantities, the waves and the decisions.
//! - [`decisions`]: what was decided, as written and printed.
//! - [`foresee`]: the items a plan is likely to need, for `--dry-run`.
//! - [`records`]: what a run's records say of each item.
//! - [`oracle`]: the fixed-time oracle, the limit the price is judged against.
//! - [`simulate`]: the procedure replayed over a finished run's records.
//! - [`naive`]: the fixed-sample interval a naive implementation peeks at,
//!   kept to show by simulation why it is not used.
//!
//! The crate does no I/O: the run feeds it outcomes and asks it for waves.

pub mod allocate;
pub mod betting;
pub mod decisions;
pub mod design;
pub mod family;
pub mod foresee;
pub mod method;
pub mod naive;
pub mod oracle;
pub mod pooled;
pub mod procedure;
pub mod records;
pub mod sequence;
pub mod simulate;
pub mod spend;

pub use decisions::{Decisions, Names};
pub use design::{Decide, Design};
pub use method::Method;
pub use procedure::{Procedure, Wave};
pub use sequence::{Interval, StratifiedSequence};
