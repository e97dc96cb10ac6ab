//! A1 against another benchmark's scores: the flags `report` and
//! `correlate` share, declared once.

use autoeval_metrics::{Compared, Cutoff};
use std::path::PathBuf;

/// Which scores A1 correlates with ours, and where our side is cut off.
#[derive(clap::Args, Debug)]
pub struct A1Args {
    /// CSV of another benchmark's scores: model,score (a header row is allowed).
    #[arg(long)]
    pub other: Option<PathBuf>,
    /// The dataset whose scores are correlated (ksat, plogic, fol,
    /// fol-english, regex) [report's default: each dataset of the run].
    #[arg(long, value_enum)]
    pub dataset: Option<autoeval_proto::DatasetKind>,
    /// The benchmark compared with, which sets the complexity cut-off as the paper does:
    /// folio (6 operators, App. K.4), logieval (30, Tables 10–11), humaneval (regex depth 7)
    /// [default: folio for logic, humaneval for regexes].
    #[arg(long)]
    pub compared_with: Option<Compared>,
    /// Highest complexity counted, overriding --compared-with's cut-off.
    #[arg(long)]
    pub max_complexity: Option<u32>,
}

impl A1Args {
    /// Our side's cut-off on `dataset`.
    pub fn cutoff(&self, dataset: &str) -> Cutoff {
        Cutoff::of(dataset, self.compared_with, self.max_complexity)
    }
}
