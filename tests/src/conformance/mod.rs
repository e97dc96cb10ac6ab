//! The engine's conformance suite: one set of tests of the loops' promises,
//! run over every transport. A [`Transport`] gives the loops their queues
//! and store and lets a test put work in and see what came out; the tests
//! in [`suite`] know nothing else of it.
//!
//! - In-process ([`local::InProcess`]): the queues and store of one machine.
//! - RabbitMQ and Redis ([`fleet::Fleet`]): the fleet's, each test on
//!   queues and a run of its own.

pub mod fleet;
pub mod local;
pub mod suite;

use autoeval_engine::{Admission, Inbox, Outbox, RecordStore};
use autoeval_proto::{TranslateTask, VerifyTask};
use std::future::Future;
use std::sync::Arc;

/// Queues, a store and an admission for the loops, with the means to feed
/// them and to read what they did.
pub trait Transport: Send + Sync + Sized + 'static {
    /// The verify loop's inbox.
    type VerifyIn: Inbox<VerifyTask>;
    /// The translate loop's inbox.
    type TranslateIn: Inbox<TranslateTask>;
    /// Where the verify loop sends next rounds.
    type ToTranslate: Outbox<TranslateTask>;
    /// Where the translate loop sends answers.
    type ToVerify: Outbox<VerifyTask>;
    /// The record store.
    type Store: RecordStore;
    /// What the translate loop admits (caps, halts).
    type Admit: Admission;

    /// A transport of its own for the test `name`.
    fn open(name: &str) -> impl Future<Output = Self> + Send;
    /// The run its tasks belong to.
    fn run(&self) -> &str;
    /// The model its tasks name (their queue follows from it).
    fn model(&self) -> &str;
    /// The record store.
    fn store(&self) -> Arc<Self::Store>;
    /// The translate loop's admission.
    fn admission(&self) -> Arc<Self::Admit>;
    /// Puts `tasks` in the verify inbox; `redelivered`: as if a delivery
    /// of them had been given back before.
    fn put_verify(
        &self,
        tasks: Vec<VerifyTask>,
        redelivered: bool,
    ) -> impl Future<Output = ()> + Send;
    /// Puts `tasks` in the translate inbox.
    fn put_translate(&self, tasks: Vec<TranslateTask>) -> impl Future<Output = ()> + Send;
    /// Puts a delivery in the verify inbox whose body cannot be read; the
    /// dead letter's reason will contain what this returns.
    fn put_poison(&self) -> impl Future<Output = String> + Send;
    /// The verify loop's inbox and outbox.
    fn verify_ends(&self) -> impl Future<Output = (Self::VerifyIn, Arc<Self::ToTranslate>)> + Send;
    /// The translate loop's inbox and outbox.
    fn translate_ends(
        &self,
    ) -> impl Future<Output = (Self::TranslateIn, Arc<Self::ToVerify>)> + Send;
    /// A loop's inbox back once its loop ended: what it did not settle goes back.
    fn verify_ended(&self, inbox: Self::VerifyIn) -> impl Future<Output = ()> + Send;
    /// The same for the translate loop.
    fn translate_ended(&self, inbox: Self::TranslateIn) -> impl Future<Output = ()> + Send;
    /// Takes what waits in the translate inbox now (sent on, or given back).
    fn take_translate(&self) -> impl Future<Output = Vec<TranslateTask>> + Send;
    /// Takes what waits in the verify inbox now.
    fn take_verify(&self) -> impl Future<Output = Vec<VerifyTask>> + Send;
    /// The reasons of the run's dead letters.
    fn dead_letters(&self) -> impl Future<Output = Vec<String>> + Send;
    /// The tasks (`<unit>#<round>`) a halt set aside for later, when the
    /// transport keeps such a list; `None` where pending means "not recorded".
    fn set_aside(&self) -> impl Future<Output = Option<Vec<String>>> + Send;
    /// Removes what the test left behind.
    fn close(self) -> impl Future<Output = ()> + Send;
}
