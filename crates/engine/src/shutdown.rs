//! Telling loops to stop: once signalled, a loop takes no new delivery,
//! finishes the work it has begun and gives back what it has not.

use tokio::sync::watch;

/// Signals every [`Shutdown`] made from it.
#[derive(Clone, Debug)]
pub struct ShutdownHandle(watch::Sender<bool>);

/// A loop's view of the shutdown signal.
#[derive(Clone, Debug)]
pub struct Shutdown(watch::Receiver<bool>);

impl ShutdownHandle {
    /// A new signal, not yet given.
    pub fn new() -> ShutdownHandle {
        ShutdownHandle(watch::channel(false).0)
    }

    /// A receiver of this signal.
    pub fn subscribe(&self) -> Shutdown {
        Shutdown(self.0.subscribe())
    }

    /// Tells every receiver to stop.
    pub fn signal(&self) {
        self.0.send_replace(true);
    }
}

impl Default for ShutdownHandle {
    fn default() -> ShutdownHandle {
        ShutdownHandle::new()
    }
}

impl Shutdown {
    /// A receiver that follows `rx` (true: stop), such as a SIGTERM watch.
    pub fn from_watch(rx: watch::Receiver<bool>) -> Shutdown {
        Shutdown(rx)
    }

    /// Whether the signal was given.
    pub fn is_signalled(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits for the signal; returns at once when it was given already.
    pub async fn signalled(&mut self) {
        // A dropped sender never signals: wait forever rather than stop.
        if self.0.wait_for(|s| *s).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
