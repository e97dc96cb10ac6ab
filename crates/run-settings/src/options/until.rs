//! When a run stops drawing: when its plan is spent, or once what it was
//! asked to decide is decided (docs/METRICS.md, "Deciding with fewer calls").

use super::within;
use autoeval_sequential::{Decide, Design};
use serde::{Deserialize, Serialize};

/// When the run stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Until {
    /// Every unit of the plan is run.
    #[default]
    Spent,
    /// Items are drawn in waves until what `--decide` names is decided.
    Decided,
}

/// When the run stops, and what it decides on the way.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct UntilArgs {
    /// Run the whole plan (`spent`), or draw its items in waves and stop
    /// once what --decide names is decided (`decided`).
    #[arg(long, value_enum, default_value_t = Until::Spent)]
    pub until: Until,
    /// What is decided, to which precision, at which error.
    #[command(flatten)]
    #[serde(flatten)]
    pub decide: DecideArgs,
}

/// What a decided run decides, to which precision, at which error; also
/// what `bench-decided` replays.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DecideArgs {
    /// What --until decided decides per dataset: each model's compliance
    /// and accuracy to --precision (`accuracy`), the order of every pair of
    /// models (`order`), `both`, or the best model by accuracy and its
    /// margin over each other (`best`, the fewest items).
    #[arg(long, value_enum, default_value_t = Decide::Both)]
    pub decide: Decide,
    /// The half-width, in percentage points, at which a model's compliance
    /// and accuracy count as decided.
    #[arg(long, default_value_t = 2.0, value_parser = within(0.1_f64, 50.0))]
    pub precision: f64,
    /// The error --until decided allows: each level's interval misses its
    /// truth, and the family of pair orders errs anywhere, with probability
    /// at most this.
    #[arg(long, default_value_t = 0.05, value_parser = within(0.001_f64, 0.5))]
    pub alpha: f64,
}

impl UntilArgs {
    /// The sequential procedure's design, when the run stops once decided.
    pub fn design(&self) -> Option<Design> {
        (self.until == Until::Decided).then(|| self.decide.design())
    }
}

impl DecideArgs {
    /// The sequential procedure's design.
    pub fn design(&self) -> Design {
        Design {
            alpha: self.alpha,
            precision: self.precision / 100.0,
            decide: self.decide,
            ..Design::default()
        }
    }
}
