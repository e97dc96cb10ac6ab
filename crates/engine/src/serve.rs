//! What both loops share: taking deliveries until the inbox ends or
//! shutdown, refusing poison, and settling a bundle's tasks together.

use crate::stage::{Stages, Step, Watch};
use crate::transport::{Delivery, Inbox, Incoming, TransportError};
use crate::Shutdown;
use std::future::Future;
use std::sync::Arc;
use tokio::task::JoinSet;

/// Why a loop returned.
#[derive(Debug)]
pub enum Ended {
    /// Shutdown was signalled; the work begun was finished.
    Shutdown,
    /// The inbox failed: subscribe again.
    Lost(TransportError),
    /// The inbox ended (closed, or the transport ended the subscription).
    Closed,
}

/// Takes deliveries from `inbox` and handles each as a task of its own,
/// until the inbox ends or shutdown; then waits for what is in hand.
/// `on_shutdown` runs once the signal is seen (it closes the slots, so that
/// work not begun goes back).
pub(crate) async fn serve<I, T, F, Fut>(
    inbox: &mut I,
    mut shutdown: Shutdown,
    on_shutdown: impl FnOnce(),
    mut handle: F,
) -> Ended
where
    I: Inbox<T>,
    F: FnMut(Incoming<I::Delivery, T>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut in_hand = JoinSet::new();
    let mut on_shutdown = Some(on_shutdown);
    let ended = loop {
        if shutdown.is_signalled() {
            break Ended::Shutdown;
        }
        let next = tokio::select! {
            n = inbox.next() => n,
            _ = shutdown.signalled() => break Ended::Shutdown,
        };
        match next {
            Some(Ok(incoming)) => {
                in_hand.spawn(handle(incoming));
            }
            Some(Err(e)) => break Ended::Lost(e),
            None => break Ended::Closed,
        }
        while in_hand.try_join_next().is_some() {}
    };
    if matches!(ended, Ended::Shutdown) {
        if let Some(f) = on_shutdown.take() {
            f();
        }
    }
    // Deliveries begun are finished (or given back) before the loop returns.
    while in_hand.join_next().await.is_some() {}
    ended
}

/// Dead-letters a delivery with `reason`, counted once per task its headers name.
pub(crate) async fn refuse<D: Delivery, W: Watch>(
    delivery: D,
    reason: &str,
    units: usize,
    step: Step,
    watch: &W,
) {
    tracing::warn!(reason, run = delivery.run(), "refusing a delivery");
    match delivery.dead_letter(reason).await {
        Ok(()) => watch.refused(step, units.max(1), "dead_lettered"),
        Err(e) => {
            tracing::warn!(error = %e, "cannot dead-letter a delivery");
            watch.refused(step, units.max(1), "requeued");
        }
    }
}

/// A delivery whose tasks were read and whose run's stage was built.
pub(crate) struct Opened<D, T, S> {
    pub(crate) delivery: D,
    pub(crate) tasks: Vec<T>,
    pub(crate) run: String,
    pub(crate) stage: Arc<S>,
}

/// Reads a delivery's tasks and builds its run's stage. A delivery that
/// cannot be done is settled here: poison and a stage that cannot be built
/// are dead-lettered with why; a stage that may build later sends it back.
pub(crate) async fn open<D, T, St, S, W>(
    incoming: Incoming<D, T>,
    stages: &St,
    step: Step,
    watch: &W,
) -> Option<Opened<D, T, S>>
where
    D: Delivery,
    St: Stages<S>,
    W: Watch,
{
    let Incoming {
        delivery,
        tasks,
        units,
    } = incoming;
    let tasks = match tasks {
        Ok(t) => t,
        Err(reason) => {
            refuse(delivery, &reason, units, step, watch).await;
            return None;
        }
    };
    let run = delivery.run().to_string();
    match stages.stage(&run).await {
        Ok(stage) => Some(Opened {
            delivery,
            tasks,
            run,
            stage,
        }),
        Err(e) if e.transient => {
            tracing::warn!(error = %e, "cannot build the run's stage; returning the bundle");
            let _ = delivery.requeue().await;
            watch.refused(step, units, "requeued");
            None
        }
        Err(e) => {
            refuse(delivery, &e.message, units, step, watch).await;
            None
        }
    }
}

/// The tasks of one delivery, settled together once it is.
pub(crate) struct Settle<'w, W: Watch> {
    watch: &'w W,
    held: Vec<(W::Held, &'static str)>,
}

impl<'w, W: Watch> Settle<'w, W> {
    pub(crate) fn new(watch: &'w W) -> Self {
        Settle {
            watch,
            held: Vec::new(),
        }
    }

    /// A task that will settle as `how` if its delivery is acknowledged.
    pub(crate) fn add(&mut self, held: W::Held, how: &'static str) {
        self.held.push((held, how));
    }

    /// The delivery was acknowledged: each task as it ended.
    pub(crate) fn each(self) {
        for (held, how) in self.held {
            self.watch.settled(held, how);
        }
    }

    /// The delivery went back (or was refused): every task alike.
    pub(crate) fn all(self, how: &'static str) {
        for (held, _) in self.held {
            self.watch.settled(held, how);
        }
    }
}

/// What a panicked task said.
pub(crate) fn panic_message(e: tokio::task::JoinError) -> String {
    match e.try_into_panic() {
        Ok(p) => p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into()),
        Err(e) => e.to_string(),
    }
}
