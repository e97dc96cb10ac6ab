//! The evaluation's stage loops, written once. A translate loop takes
//! bundles of [`TranslateTask`]s from an [`Inbox`], runs each on a slot of
//! its own through a [`Translate`] stage and sends the answers on through an
//! [`Outbox`]; a verify loop takes bundles of [`VerifyTask`]s, proves each
//! through a [`Verify`] stage off the async runtime, stores the rounds in a
//! [`RecordStore`] and sends the next rounds of (A∘I)^n back to translate.
//! A delivery is acknowledged only once everything it led to is stored or
//! sent; work not begun at [`Shutdown`] goes back.
//!
//! The transports are traits. One machine runs the loops over in-process
//! channels and a file of records ([`local`]); the fleet runs the same loops
//! over RabbitMQ and Redis (the `amqp` and `redis-store` crates).
//!
//! [`TranslateTask`]: autoeval_proto::TranslateTask
//! [`VerifyTask`]: autoeval_proto::VerifyTask

pub mod budget;
mod custody;
mod judge;
pub mod local;
mod outage;
mod serve;
mod shutdown;
mod stage;
mod translate;
mod transport;
mod verify;

pub use custody::{Custody, NoCustody};
pub use judge::serve_judge;
pub use outage::{while_store_away, OUTAGE_HOLD};
pub use serve::Ended;
pub use shutdown::{Shutdown, ShutdownHandle};
pub use stage::{
    Admission, Fixed, Judge, Judges, NoAdmission, NoWatch, OneJudge, SetupError, Stages, Start,
    Step, Translate, Verify, Watch,
};
pub use translate::{serve_translate, TranslateLoop};
pub use transport::{
    Delivery, Inbox, Incoming, JudgementStore, Outbox, RecordStore, StoreError, TransportError,
};
pub use verify::{serve_verify, VerifyLoop};
