//! What the commands share, so that no command imports another: the
//! one-machine run and its end, the report, provers and item generation.

pub mod items;
pub mod provers;
pub mod report;
pub mod run;
