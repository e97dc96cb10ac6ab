//! Deciding with fewer calls. A run `--until decided` draws the plan's items
//! in waves and stops drawing once what it was asked to decide is decided:
//! each model's compliance and accuracy to a precision, and the order of
//! every pair of models. The intervals are confidence sequences, valid at
//! every wave at once, for the plan's own mean (a finite population sampled
//! without replacement), so looking after each wave costs no validity.
//!
//! - [`sequence`]: the confidence sequence of one stratified mean.
//! - [`betting`]: confidence sequences and tests by betting, and e-BH, as
//!   the reference implementation computes them.
//! - [`allocate`]: how many items of each stratum the next wave draws.
//! - [`procedure`]: the quantities, the waves and the decisions.
//! - [`decisions`]: what was decided, as written and printed.
//! - [`foresee`]: the items a plan is likely to need, for `--dry-run`.
//! - [`records`]: what a run's records say of each item.
//! - [`simulate`]: the procedure replayed over a finished run's records.
//! - [`naive`]: the fixed-sample interval a naive implementation peeks at,
//!   kept to show by simulation why it is not used.
//!
//! The crate does no I/O: the run feeds it outcomes and asks it for waves.

pub mod allocate;
pub mod betting;
pub mod decisions;
pub mod foresee;
pub mod naive;
pub mod procedure;
pub mod records;
pub mod sequence;
pub mod simulate;
pub mod spend;

pub use decisions::{Decisions, Names};
pub use procedure::{Decide, Design, Procedure, Wave};
pub use sequence::{Interval, StratifiedSequence};
