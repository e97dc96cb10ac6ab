//! Statistics of the benchmark: A2 and A3 summaries of a run's records
//! ([`summary`]), A4 judge scores ([`judge`]), breaking complexity
//! ([`breaking`]), and A1 here. Metric A1 compares scores on ∀uto∃val with
//! scores on another benchmark across models: Pearson's ρ with its
//! two-sided p-value, and the predictive power of Def. 5.1,
//! P(x1 ≥ x2 | y1 ≥ y2), estimated over ordered pairs of models.

pub mod breaking;
pub mod closeness;
pub mod compare;
pub mod judge;
pub mod paired;
pub mod summary;

use statrs::distribution::{ContinuousCDF, StudentsT};
use thiserror::Error;

/// Why a statistic cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StatsError {
    /// Fewer than three paired scores.
    #[error("need at least 3 models with both scores, got {0}")]
    TooFew(usize),
    /// One side has no spread, so ρ is undefined.
    #[error("the {0} scores are all equal, so the correlation is undefined")]
    NoVariance(&'static str),
}

/// Pearson's correlation and its two-sided p-value (t-test with n − 2 degrees of freedom).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Correlation {
    /// ρ.
    pub rho: f64,
    /// Probability of |ρ| at least this large if there were no correlation.
    pub p_value: f64,
    /// Number of pairs.
    pub n: usize,
}

/// Pearson's ρ of `xs` and `ys`, with its p-value.
pub fn pearson(xs: &[f64], ys: &[f64]) -> Result<Correlation, StatsError> {
    let n = xs.len().min(ys.len());
    if n < 3 {
        return Err(StatsError::TooFew(n));
    }
    let mean = |v: &[f64]| v[..n].iter().sum::<f64>() / n as f64;
    let (mx, my) = (mean(xs), mean(ys));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (xs[i] - mx, ys[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 {
        return Err(StatsError::NoVariance("first"));
    }
    if syy == 0.0 {
        return Err(StatsError::NoVariance("second"));
    }
    let rho = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let df = (n - 2) as f64;
    let p_value = if rho.abs() >= 1.0 {
        0.0
    } else {
        let t = rho * (df / (1.0 - rho * rho)).sqrt();
        match StudentsT::new(0.0, 1.0, df) {
            Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
            Err(_) => f64::NAN,
        }
    };
    Ok(Correlation { rho, p_value, n })
}

/// The benchmark our scores are compared with (A1), which sets the
/// complexity cut-off of our side as the paper does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compared {
    /// FOLIO-style comparisons (App. K.4, Table 8): 6 operators, as FOLIO's
    /// premises rarely have more.
    Folio,
    /// LogiEval (Tables 10–11): 30 operators.
    LogiEval,
    /// HumanEval against regular expressions (App. K.4): CFG depth 7.
    HumanEval,
}

impl Compared {
    /// Every comparison, in the order `--help` lists them.
    pub const ALL: [Compared; 3] = [Compared::Folio, Compared::LogiEval, Compared::HumanEval];

    /// The paper's comparison for a dataset: HumanEval for regexes, FOLIO for logic.
    pub fn default_for(dataset: &str) -> Compared {
        if dataset == "regex" {
            Compared::HumanEval
        } else {
            Compared::Folio
        }
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Compared::Folio => "folio",
            Compared::LogiEval => "logieval",
            Compared::HumanEval => "humaneval",
        }
    }

    /// The highest complexity counted on our side.
    pub fn max_complexity(self) -> u32 {
        match self {
            Compared::Folio => 6,
            Compared::LogiEval => 30,
            Compared::HumanEval => 7,
        }
    }

    /// Where the cut-off comes from, as output names it.
    pub fn basis(self) -> &'static str {
        match self {
            Compared::Folio => "the FOLIO-style comparison's cut-off (App. K.4)",
            Compared::LogiEval => "LogiEval's cut-off (Tables 10–11)",
            Compared::HumanEval => "HumanEval's cut-off (App. K.4)",
        }
    }
}

impl std::str::FromStr for Compared {
    type Err = String;
    fn from_str(s: &str) -> Result<Compared, String> {
        Compared::ALL
            .into_iter()
            .find(|c| c.name() == s.to_ascii_lowercase())
            .ok_or_else(|| {
                format!("unknown benchmark {s:?}; expected folio, logieval or humaneval")
            })
    }
}

/// A1's complexity cut-off on our side, and what chose it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cutoff {
    /// The highest complexity counted.
    pub max_complexity: u32,
    /// What chose it: a compared benchmark, or `--max-complexity`.
    pub basis: String,
}

impl Cutoff {
    /// The cut-off for `dataset`: `explicit` when given, else the compared
    /// benchmark's (the paper's for the dataset when none is named).
    pub fn of(dataset: &str, compared: Option<Compared>, explicit: Option<u32>) -> Cutoff {
        match explicit {
            Some(max_complexity) => Cutoff {
                max_complexity,
                basis: "--max-complexity".into(),
            },
            None => {
                let c = compared.unwrap_or_else(|| Compared::default_for(dataset));
                Cutoff {
                    max_complexity: c.max_complexity(),
                    basis: c.basis().into(),
                }
            }
        }
    }
}

impl std::fmt::Display for Cutoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "complexity <= {}, {}", self.max_complexity, self.basis)
    }
}

/// ∀uto∃val's score per model as App. K.4 computes it for A1: accuracy on
/// one dataset, zero-shot, round 1, over items of complexity at most
/// `max_complexity`, with infrastructure failures left out, from the run's
/// summary (its zero-shot round-1 groups' rows).
pub fn conditional_accuracy(
    summary: &summary::Summary,
    dataset: &str,
    max_complexity: u32,
) -> std::collections::BTreeMap<String, f64> {
    let mut by: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for g in summary
        .groups
        .iter()
        .filter(|g| g.key.dataset == dataset && g.key.prompt == "zero-shot" && g.key.round == 1)
    {
        for row in g.rows.iter().filter(|r| r.complexity <= max_complexity) {
            let e = by.entry(g.key.model.clone()).or_default();
            e.0 += row.counts.get(autoeval_proto::Verdict::Equivalent);
            // Round 1 has no stopped units: measured is every round but the infrastructure's.
            e.1 += row.counts.measured();
        }
    }
    by.into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(m, (eq, n))| (m, eq as f64 / n as f64))
        .collect()
}

/// Def. 5.1 estimated by maximum likelihood: among ordered pairs of distinct
/// models with `y_i ≥ y_j`, the share that also have `x_i ≥ x_j`. Returns
/// (probability, pairs with both, pairs with the condition).
pub fn predictive_power(xs: &[f64], ys: &[f64]) -> Option<(f64, usize, usize)> {
    let n = xs.len().min(ys.len());
    let (mut both, mut given) = (0, 0);
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            if ys[i] >= ys[j] {
                given += 1;
                both += (xs[i] >= xs[j]) as usize;
            }
        }
    }
    (given > 0).then(|| (both as f64 / given as f64, both, given))
}
