//! How long a verifier may hold a bundle without losing it: the broker
//! takes a delivery back once it has been held past its consumer timeout.

use autoeval_proto::fleet::BUNDLE_SIZE;
use std::time::Duration;

/// Checks one task may need: its strict and its lenient reading.
const READINGS: usize = 2;

/// The longest a bundle waits in hand when `prefetch` bundles are held and
/// `jobs` checks of at most `check` each run at once: its last check waits
/// behind every other check in hand.
pub fn longest_hold(prefetch: u16, jobs: usize, check: Duration) -> Duration {
    let checks = usize::from(prefetch) * BUNDLE_SIZE * READINGS;
    let turns = u32::try_from(checks.div_ceil(jobs.max(1))).unwrap_or(u32::MAX);
    check.saturating_mul(turns)
}

/// The largest prefetch up to `wanted` (at least 1) whose longest hold is
/// below `consumer_timeout`.
pub fn fitting_prefetch(
    wanted: u16,
    jobs: usize,
    check: Duration,
    consumer_timeout: Duration,
) -> u16 {
    (1..=wanted.max(1))
        .rev()
        .find(|&p| longest_hold(p, jobs, check) < consumer_timeout)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_waits_behind_every_check_in_hand() {
        // 9 bundles of 16 tasks, two readings each, on 2 provers: 144 turns.
        let hold = longest_hold(9, 2, Duration::from_secs(20));
        assert_eq!(hold, Duration::from_secs(144 * 20));
        assert!(
            hold > Duration::from_secs(1800),
            "the issue's case overruns 30 minutes"
        );
    }

    #[test]
    fn the_prefetch_is_lowered_until_the_hold_fits() {
        let timeout = Duration::from_secs(1800);
        let p = fitting_prefetch(9, 2, Duration::from_secs(20), timeout);
        assert!(longest_hold(p, 2, Duration::from_secs(20)) < timeout);
        assert!(longest_hold(p + 1, 2, Duration::from_secs(20)) >= timeout);
        assert_eq!(p, 5, "5 × 16 × 2 / 2 × 20 s = 1,600 s");
        assert_eq!(fitting_prefetch(9, 2, Duration::from_secs(10), timeout), 9);
        assert_eq!(
            fitting_prefetch(9, 1, Duration::from_secs(3600), timeout),
            1
        );
    }
}
