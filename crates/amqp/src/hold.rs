//! How much a consumer holds and for how long: the prefetch that keeps its
//! slots busy, and how long the last task in hand may wait, which the
//! broker's consumer timeout bounds (it takes a delivery back once it has
//! been held past it). One computation for the LLM worker and the verifier.

use std::time::Duration;

/// The prefetch (in messages) of a consumer that works on `concurrency`
/// tasks at once from messages of `bundle` tasks each.
///
/// A bundle is acknowledged only when its last task is handed on, so one
/// slow task keeps its bundle in hand while its other tasks' slots go to
/// the next bundle. Twice the concurrency in tasks, plus one bundle, keeps
/// every slot busy unless more than half the tasks in hand are held up by
/// a slower one; a worker never runs more than `concurrency` at once.
/// Unbundled (`bundle` 1), the prefetch is the concurrency itself.
pub fn prefetch_for(concurrency: usize, bundle: usize) -> u16 {
    let concurrency = concurrency.max(1);
    let messages = match bundle {
        0 | 1 => concurrency,
        n => (2 * concurrency).div_ceil(n) + 1,
    };
    messages.min(usize::from(u16::MAX)) as u16
}

/// What a consumer works through: messages of `bundle` tasks, each task
/// `steps` steps (a verifier's strict and lenient check), `slots` steps at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InHand {
    /// Tasks in a message.
    pub bundle: usize,
    /// Steps one task takes, one slot each.
    pub steps: usize,
    /// Steps run at once.
    pub slots: usize,
}

impl InHand {
    /// The turns the last step in hand waits when `prefetch` messages are
    /// held: it runs behind every other step in hand.
    pub fn turns(&self, prefetch: u16) -> u32 {
        let steps = usize::from(prefetch) * self.bundle.max(1) * self.steps.max(1);
        u32::try_from(steps.div_ceil(self.slots.max(1))).unwrap_or(u32::MAX)
    }

    /// The longest a message waits in hand when `prefetch` are held and a
    /// step takes at most `step`.
    pub fn longest_hold(&self, prefetch: u16, step: Duration) -> Duration {
        step.saturating_mul(self.turns(prefetch))
    }

    /// The largest prefetch up to `wanted` (at least 1) whose longest hold
    /// is below `consumer_timeout`.
    pub fn fitting_prefetch(&self, wanted: u16, step: Duration, consumer_timeout: Duration) -> u16 {
        (1..=wanted.max(1))
            .rev()
            .find(|&p| self.longest_hold(p, step) < consumer_timeout)
            .unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundled_prefetch_keeps_the_slots_busy_without_hoarding() {
        assert_eq!(prefetch_for(32, 1), 32, "unbundled: the concurrency itself");
        // 64 slots, bundles of 16: 9 bundles, 144 tasks in hand.
        assert_eq!(prefetch_for(64, 16), 9);
        assert_eq!(prefetch_for(4, 16), 2);
        assert_eq!(prefetch_for(0, 16), 2);
        for (c, n) in [(1, 8), (7, 8), (64, 16), (256, 16), (100, 3)] {
            let in_hand = usize::from(prefetch_for(c, n)) * n;
            assert!(in_hand >= 2 * c + n && in_hand < 2 * c + 2 * n, "{c} {n}");
        }
    }

    /// A verifier's hand: bundles of 16 tasks, two readings each, on 2 provers.
    const VERIFIER: InHand = InHand {
        bundle: 16,
        steps: 2,
        slots: 2,
    };

    #[test]
    fn a_bundle_waits_behind_every_step_in_hand() {
        // 9 bundles × 16 tasks × 2 readings on 2 provers: 144 turns.
        let hold = VERIFIER.longest_hold(9, Duration::from_secs(20));
        assert_eq!(hold, Duration::from_secs(144 * 20));
        assert!(hold > Duration::from_secs(1800), "overruns 30 minutes");
        // An LLM worker's hand: one call-pair a task, 64 slots, 9 bundles.
        let worker = InHand {
            bundle: 16,
            steps: 1,
            slots: 64,
        };
        assert_eq!(
            worker.turns(prefetch_for(64, 16)),
            3,
            "144 tasks / 64 slots"
        );
    }

    #[test]
    fn the_prefetch_is_lowered_until_the_hold_fits() {
        let timeout = Duration::from_secs(1800);
        let step = Duration::from_secs(20);
        let p = VERIFIER.fitting_prefetch(9, step, timeout);
        assert!(VERIFIER.longest_hold(p, step) < timeout);
        assert!(VERIFIER.longest_hold(p + 1, step) >= timeout);
        assert_eq!(p, 5, "5 × 16 × 2 / 2 × 20 s = 1,600 s");
        assert_eq!(
            VERIFIER.fitting_prefetch(9, Duration::from_secs(10), timeout),
            9
        );
        let one_prover = InHand {
            slots: 1,
            ..VERIFIER
        };
        assert_eq!(
            one_prover.fitting_prefetch(9, Duration::from_secs(3600), timeout),
            1
        );
    }
}
