//! One thread that kills prover processes whose deadline has passed.

use std::collections::{HashMap, HashSet};
use std::process::Child;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

#[derive(Default)]
struct State {
    armed: HashMap<u64, (Instant, Arc<Mutex<Child>>)>,
    killed: HashSet<u64>,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

/// Kills armed processes at their deadlines; stops when dropped.
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Watchdog {
    pub(crate) fn start() -> Watchdog {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let worker = shared.clone();
        std::thread::Builder::new()
            .name("prover-watchdog".into())
            .spawn(move || watch(&worker))
            .expect("the prover watchdog thread must start");
        Watchdog { shared }
    }

    /// Kill `child` unless disarmed before `deadline`.
    pub(crate) fn arm(&self, id: u64, deadline: Instant, child: Arc<Mutex<Child>>) {
        lock(&self.shared.state).armed.insert(id, (deadline, child));
        self.shared.changed.notify_one();
    }

    /// Stops watching `id`; true when it was already killed.
    pub(crate) fn disarm(&self, id: u64) -> bool {
        let mut state = lock(&self.shared.state);
        state.armed.remove(&id);
        state.killed.remove(&id)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.changed.notify_one();
    }
}

fn watch(shared: &Shared) {
    let mut state = lock(&shared.state);
    loop {
        if state.stop {
            return;
        }
        let now = Instant::now();
        let due: Vec<u64> = state
            .armed
            .iter()
            .filter(|(_, (deadline, _))| *deadline <= now)
            .map(|(&id, _)| id)
            .collect();
        for id in due {
            if let Some((_, child)) = state.armed.remove(&id) {
                let _ = child.lock().unwrap_or_else(|e| e.into_inner()).kill();
                tracing::warn!(id, "killed a prover process that overran its deadline");
                state.killed.insert(id);
            }
        }
        let next = state.armed.values().map(|(d, _)| *d).min();
        state = match next {
            Some(deadline) => {
                let wait = deadline.saturating_duration_since(Instant::now());
                shared
                    .changed
                    .wait_timeout(state, wait)
                    .map(|(s, _)| s)
                    .unwrap_or_else(|e| e.into_inner().0)
            }
            None => shared
                .changed
                .wait(state)
                .unwrap_or_else(|e| e.into_inner()),
        };
    }
}
