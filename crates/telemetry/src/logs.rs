//! Logs of every binary: to stderr, filtered by one variable, `AUTOEVAL_LOG`
//! (tracing's filter syntax, e.g. `info,lapin=warn`).

use std::io::IsTerminal;

/// The variable every binary reads its log filter from.
pub const LOG_FILTER_VAR: &str = "AUTOEVAL_LOG";

/// Sends logs to stderr, filtered by `AUTOEVAL_LOG` or else by `default`
/// with the broker client's own logs off (each of its failures reaches our
/// code, which says it once with its cause; `AUTOEVAL_LOG=lapin=debug`
/// shows them);
/// colour codes only where a person reads them (a terminal, and `NO_COLOR`
/// unset or empty), never in a log file.
pub fn init_logs(default: &str) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env(LOG_FILTER_VAR)
                .unwrap_or_else(|_| format!("{default},lapin=off").into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .init();
}
