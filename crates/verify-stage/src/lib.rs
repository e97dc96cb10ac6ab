//! The verify stage beside its verifier: [`verify`] proves an answer
//! against φ0 and yields the round's record ([`VerifyStage`], the engine's
//! `Verify`), built from a run's stage settings by [`verify_stage`] on
//! either mode; [`checks`] proves a stream of check requests in parallel.

pub mod checks;
mod settings;
mod stage;

pub use settings::{verifier, verify_stage};
pub use stage::{verify, VerifyStage, CHECKS_PER_TASK};
