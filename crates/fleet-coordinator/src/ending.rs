//! How a fleet run that did not finish ends: paused at a cap, or left to
//! the fleet by an operator who stopped following it.

use autoeval_redis_store::Budget;

/// Exit status of a run paused at its budget (EX_TEMPFAIL: try again later).
pub const EXIT_PAUSED: u8 = 75;

/// A fleet run stopped at its budget, not failed: `resume` continues it.
#[derive(Debug)]
pub struct Paused {
    /// The run.
    pub run: String,
    /// Why.
    pub why: String,
    /// Units with a final outcome.
    pub done: u64,
    /// Units in the run.
    pub units: usize,
    /// Its directory.
    pub dir: String,
    /// Caps that would let it go on, as flags.
    pub more: String,
    /// Whether the run is a fleet's (resumed through it).
    pub fleet: bool,
}

impl std::fmt::Display for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run {} is paused: {}; {} of {} units are done. Continue it with `autoeval resume {}{} {}` (or caps of your choosing)",
            self.run,
            self.why,
            self.done,
            self.units,
            self.dir,
            if self.fleet { " --fleet" } else { "" },
            self.more
        )
    }
}

/// Caps for the whole run at twice the rate spent so far (`done` of
/// `units` cost what `budget` spent; units differ in cost, and the first
/// done may be the cheap ones), and never less than twice the caps it has,
/// as the flags of `resume`: a hint that works when pasted.
pub fn raised_caps(budget: &Budget, done: u64, units: usize) -> String {
    let whole = if done == 0 {
        2.0
    } else {
        (units as f64 / done as f64).max(1.0) * 2.0
    };
    let usd = |cap: f64| (2.0 * cap).max(budget.spent_usd * whole).max(0.01);
    let tokens = |cap: u64| {
        ((2 * cap) as f64)
            .max(budget.spent_tokens as f64 * whole)
            .ceil() as u64
    };
    match (budget.cap_usd, budget.cap_tokens) {
        (Some(u), Some(t)) => format!("--budget-usd {:.2} --budget-tokens {}", usd(u), tokens(t)),
        (None, Some(t)) => format!("--budget-tokens {}", tokens(t)),
        (Some(u), None) => format!("--budget-usd {:.2}", usd(u)),
        (None, None) => format!("--budget-usd {:.2}", usd(0.0).max(1.0)),
    }
}

impl std::error::Error for Paused {}

/// Exit status of a coordinator stopped with Ctrl-C (128 + SIGINT).
pub const EXIT_DETACHED: u8 = 130;

/// The coordinator stopped following a run (Ctrl-C); the fleet goes on with it.
#[derive(Debug)]
pub struct Detached {
    /// The run.
    pub run: String,
    /// Its directory.
    pub dir: String,
}

impl std::fmt::Display for Detached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stopped following run {}; the fleet goes on with it. The same command attaches again and writes the report at the end; `autoeval status {} --fleet` shows where it is",
            self.run, self.dir
        )
    }
}

impl std::error::Error for Detached {}
