//! The end-to-end tests build as one binary, but each module was written
//! to run alone: one stops the broker, another counts a queue's messages,
//! another sets this process's environment. A test waits for its module's
//! turn: tests of one module run together (as many as the harness runs at
//! once), tests of two modules never do.

use std::sync::{Condvar, Mutex, MutexGuard, Once};

/// Which module has the turn, and how many of its tests are running.
struct Turns {
    module: Option<String>,
    running: usize,
}

static TURNS: Mutex<Turns> = Mutex::new(Turns {
    module: None,
    running: 0,
});
static CHANGED: Condvar = Condvar::new();
static SWEPT: Once = Once::new();

/// A test's hold on its module's turn, given up when dropped (also when
/// the test panics).
#[must_use = "the turn lasts as long as the value"]
pub struct Turn(());

/// Waits until the module of `module_path` (the test's `module_path!()`)
/// has the turn, and holds it for the caller.
pub fn turn(module_path: &str) -> Turn {
    SWEPT.call_once(crate::sweep::leftover_queues);
    let module = top_module(module_path).to_string();
    let mut turns = lock();
    while turns.module.as_ref().is_some_and(|m| *m != module) {
        turns = CHANGED
            .wait(turns)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    turns.module = Some(module);
    turns.running += 1;
    Turn(())
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut turns = lock();
        turns.running -= 1;
        if turns.running == 0 {
            turns.module = None;
            CHANGED.notify_all();
        }
    }
}

fn lock() -> MutexGuard<'static, Turns> {
    TURNS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The test file a module path is in: `e2e::conformance::in_process` is
/// `conformance`'s.
fn top_module(module_path: &str) -> &str {
    module_path.split("::").nth(1).unwrap_or(module_path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn tests_of_one_module_share_the_turn_and_two_modules_never_run_together() {
        assert_eq!(top_module("e2e::conformance::in_process"), "conformance");
        // Two holds of one module at once: the second does not wait.
        let first = turn("e2e::one");
        let second = turn("e2e::one::inner");
        drop((first, second));
        let inside: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let inside = inside.clone();
                std::thread::spawn(move || {
                    let mine = i % 2;
                    let _turn = turn(["e2e::a", "e2e::b::inner"][mine]);
                    inside[mine].fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(30));
                    let other = inside[1 - mine].load(Ordering::SeqCst);
                    inside[mine].fetch_sub(1, Ordering::SeqCst);
                    other
                })
            })
            .collect();
        for t in threads {
            let other = t.join().expect("the thread ends");
            assert_eq!(other, 0, "a test ran while another module's did");
        }
        assert!(
            lock().module.is_none(),
            "the turn is free once every test ended"
        );
    }
}
