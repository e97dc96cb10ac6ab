//! The in-process transport of one machine, for the conformance suite.

use super::Transport;
use autoeval_engine::local::{local_queue, LocalInbox, LocalOutbox, MemoryStore};
use autoeval_engine::{NoAdmission, Outbox};
use autoeval_proto::{TranslateTask, VerifyTask};
use std::sync::{Arc, Mutex};

/// Queues of one process and a store in memory.
pub struct InProcess {
    model: String,
    store: Arc<MemoryStore>,
    to_verify: LocalOutbox<VerifyTask>,
    to_translate: LocalOutbox<TranslateTask>,
    verify_in: Mutex<Option<LocalInbox<VerifyTask>>>,
    translate_in: Mutex<Option<LocalInbox<TranslateTask>>>,
}

const RUN: &str = "conformance";

fn take<T>(slot: &Mutex<Option<T>>) -> T {
    slot.lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .expect("the inbox is not in a loop")
}

fn put<T>(slot: &Mutex<Option<T>>, value: T) {
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
}

fn drain<T>(slot: &Mutex<Option<LocalInbox<T>>>) -> Vec<T> {
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    let inbox = guard.as_mut().expect("the inbox is not in a loop");
    inbox.drain().into_iter().flat_map(|(_, t)| t).collect()
}

impl Transport for InProcess {
    type VerifyIn = LocalInbox<VerifyTask>;
    type TranslateIn = LocalInbox<TranslateTask>;
    type ToTranslate = LocalOutbox<TranslateTask>;
    type ToVerify = LocalOutbox<VerifyTask>;
    type Store = MemoryStore;
    type Admit = NoAdmission;

    async fn open(name: &str) -> InProcess {
        let (to_verify, verify_in) = local_queue();
        let (to_translate, translate_in) = local_queue();
        InProcess {
            model: name.to_string(),
            store: Arc::new(MemoryStore::default()),
            to_verify,
            to_translate,
            verify_in: Mutex::new(Some(verify_in)),
            translate_in: Mutex::new(Some(translate_in)),
        }
    }

    fn run(&self) -> &str {
        RUN
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn store(&self) -> Arc<MemoryStore> {
        self.store.clone()
    }

    fn admission(&self) -> Arc<NoAdmission> {
        Arc::new(NoAdmission)
    }

    async fn put_verify(&self, tasks: Vec<VerifyTask>, redelivered: bool) {
        if redelivered {
            self.to_verify.redeliver(RUN, tasks).expect("queued");
        } else {
            self.to_verify.send(RUN, tasks).await.expect("queued");
        }
    }

    async fn put_translate(&self, tasks: Vec<TranslateTask>) {
        self.to_translate.send(RUN, tasks).await.expect("queued");
    }

    async fn put_poison(&self) -> String {
        let why = "undecodable message: 3 bytes";
        self.to_verify.send_poison(RUN, why).expect("queued");
        why.into()
    }

    async fn verify_ends(&self) -> (LocalInbox<VerifyTask>, Arc<LocalOutbox<TranslateTask>>) {
        (take(&self.verify_in), Arc::new(self.to_translate.clone()))
    }

    async fn translate_ends(&self) -> (LocalInbox<TranslateTask>, Arc<LocalOutbox<VerifyTask>>) {
        (take(&self.translate_in), Arc::new(self.to_verify.clone()))
    }

    async fn verify_ended(&self, inbox: LocalInbox<VerifyTask>) {
        put(&self.verify_in, inbox);
    }

    async fn translate_ended(&self, inbox: LocalInbox<TranslateTask>) {
        put(&self.translate_in, inbox);
    }

    async fn take_translate(&self) -> Vec<TranslateTask> {
        drain(&self.translate_in)
    }

    async fn take_verify(&self) -> Vec<VerifyTask> {
        drain(&self.verify_in)
    }

    async fn dead_letters(&self) -> Vec<String> {
        let guard = self.verify_in.lock().unwrap_or_else(|e| e.into_inner());
        let inbox = guard.as_ref().expect("the inbox is not in a loop");
        inbox.dead_letters().into_iter().map(|d| d.reason).collect()
    }

    async fn set_aside(&self) -> Option<Vec<String>> {
        None
    }

    async fn close(self) {}
}
