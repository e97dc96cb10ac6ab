//! How a command shows its work: `--quiet` and `--plain`, declared once and
//! flattened into every command that shows progress.

use autoeval_progress::Display;
use indicatif::ProgressBar;
use std::time::Duration;

/// How a command shows its progress.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Print nothing but what the command made (where its report or output
    /// is) and errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Log lines instead of bars, even on a terminal (a command without
    /// progress lines then shows none).
    #[arg(long)]
    pub plain: bool,
}

impl OutputArgs {
    /// Bars on a terminal, log lines every `log_every` seconds otherwise.
    pub fn display(&self, log_every: u64) -> Display {
        Display::choose(
            self.quiet,
            self.plain,
            Duration::from_secs(log_every.max(1)),
        )
    }

    /// The bar `make` makes, or a hidden one when no bar is drawn.
    pub fn bar(&self, make: impl FnOnce() -> ProgressBar) -> ProgressBar {
        if self.quiet || self.plain {
            ProgressBar::hidden()
        } else {
            make()
        }
    }
}
