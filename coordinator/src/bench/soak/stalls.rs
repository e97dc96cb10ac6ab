//! The longest time a soak's run went without progress: its directory's
//! results (the coordinator appends each round as it arrives) read every
//! 100 ms on a thread of their own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Watches a run's results grow.
pub(super) struct Stalls {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Duration>,
}

impl Stalls {
    /// Starts watching `results`.
    pub(super) fn watch(results: PathBuf) -> Stalls {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut length, mut since, mut longest) = (0, Instant::now(), Duration::ZERO);
            while !stopped.load(Ordering::Relaxed) {
                let now = std::fs::metadata(&results).map_or(0, |m| m.len());
                if now > length {
                    longest = longest.max(since.elapsed());
                    (length, since) = (now, Instant::now());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            longest
        });
        Stalls { stop, thread }
    }

    /// Stops watching; the longest time between two growths of the results.
    pub(super) fn longest(self) -> Duration {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}
