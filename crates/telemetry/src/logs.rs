//! Logs of every binary: to stderr, filtered by one variable, `AUTOEVAL_LOG`
//! (tracing's filter syntax, e.g. `info,lapin=warn`), with a warning that
//! repeats (every retry during an outage) said once per [`REPEAT_EVERY`].

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tracing::callsite::Identifier;
use tracing::subscriber::Interest;
use tracing::{Level, Metadata};
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The variable every binary reads its log filter from.
pub const LOG_FILTER_VAR: &str = "AUTOEVAL_LOG";

/// How often the same warning (or error) is let through while it repeats.
pub const REPEAT_EVERY: Duration = Duration::from_secs(10);

/// Sends logs to stderr, filtered by `AUTOEVAL_LOG` or else by `default`
/// with the broker client's own logs off (each of its failures reaches our
/// code, which says it once with its cause; `AUTOEVAL_LOG=lapin=debug`
/// shows them);
/// colour codes only where a person reads them (a terminal, and `NO_COLOR`
/// unset or empty), never in a log file.
pub fn init_logs(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(LOG_FILTER_VAR)
        .unwrap_or_else(|_| format!("{default},lapin=off").into());
    let output = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_filter(Repeats::new(REPEAT_EVERY));
    tracing_subscriber::registry()
        .with(filter)
        .with(output)
        .init();
}

/// Lets a warning or error from one place in the code through once per
/// `every`; the first let through after some were held back is preceded by
/// a line saying how many.
pub struct Repeats {
    every: Duration,
    /// Per call site: when one was last let through, and how many since were not.
    seen: Mutex<HashMap<Identifier, (Instant, u64)>>,
}

impl Repeats {
    /// Lets each warning through at most once per `every`.
    pub fn new(every: Duration) -> Repeats {
        Repeats {
            every,
            seen: Mutex::default(),
        }
    }

    /// Whether an event from `meta`'s call site goes through now, and how
    /// many from there were held back before it.
    pub fn pass(&self, meta: &Metadata<'_>) -> (bool, u64) {
        self.pass_at(meta, Instant::now())
    }

    /// [`Repeats::pass`] at `now`.
    fn pass_at(&self, meta: &Metadata<'_>, now: Instant) -> (bool, u64) {
        if !meta.is_event() || *meta.level() > Level::WARN {
            return (true, 0);
        }
        let Ok(mut seen) = self.seen.lock() else {
            return (true, 0);
        };
        match seen.get_mut(&meta.callsite()) {
            Some((last, held)) if now.duration_since(*last) < self.every => {
                *held += 1;
                (false, 0)
            }
            Some((last, held)) => {
                let before = *held;
                *last = now;
                *held = 0;
                (true, before)
            }
            None => {
                seen.insert(meta.callsite(), (now, 0));
                (true, 0)
            }
        }
    }
}

impl<S> Filter<S> for Repeats {
    fn enabled(&self, meta: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        let (through, held) = self.pass(meta);
        if held > 0 {
            eprintln!(
                "({held} more like the next line in the last {} s held back)",
                self.every.as_secs()
            );
        }
        through
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        // Warnings are asked about each time; the rest always pass.
        if meta.is_event() && *meta.level() <= Level::WARN {
            Interest::sometimes()
        } else {
            Interest::always()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_warning_goes_through_once_per_period_and_counts_what_it_held() {
        let repeats = Repeats::new(Duration::from_secs(10));
        let start = Instant::now();
        // The same call site every second for 25 s.
        let passed: Vec<(bool, u64)> = (0..25)
            .map(|s| repeats.pass_at(warning_here(), start + Duration::from_secs(s)))
            .collect();
        let through: Vec<(usize, u64)> = passed
            .iter()
            .enumerate()
            .filter(|(_, (t, _))| *t)
            .map(|(at, (_, held))| (at, *held))
            .collect();
        // At 0 s, then 10 s on with the 9 held in between, then 20 s on.
        assert_eq!(through, vec![(0, 0), (10, 9), (20, 9)]);
        // An info line is never held back.
        assert_eq!(repeats.pass_at(info_here(), start), (true, 0));
        assert_eq!(repeats.pass_at(info_here(), start), (true, 0));
    }

    fn warning_here() -> &'static Metadata<'static> {
        struct Here;
        impl tracing::callsite::Callsite for Here {
            fn set_interest(&self, _: Interest) {}
            fn metadata(&self) -> &Metadata<'_> {
                &WARNING
            }
        }
        static HERE: Here = Here;
        static WARNING: Metadata<'static> = tracing::metadata! {
            name: "a warning",
            target: "test",
            level: Level::WARN,
            fields: &[],
            callsite: &HERE,
            kind: tracing::metadata::Kind::EVENT,
        };
        &WARNING
    }

    fn info_here() -> &'static Metadata<'static> {
        struct Here;
        impl tracing::callsite::Callsite for Here {
            fn set_interest(&self, _: Interest) {}
            fn metadata(&self) -> &Metadata<'_> {
                &INFO
            }
        }
        static HERE: Here = Here;
        static INFO: Metadata<'static> = tracing::metadata! {
            name: "an info",
            target: "test",
            level: Level::INFO,
            fields: &[],
            callsite: &HERE,
            kind: tracing::metadata::Kind::EVENT,
        };
        &INFO
    }
}
