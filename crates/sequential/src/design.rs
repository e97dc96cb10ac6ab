//! What a run `--until decided` is asked, with which method and waves, and
//! the plan it draws from.

use crate::method::Method;
use serde::{Deserialize, Serialize};

/// What `--until decided` is asked to decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Decide {
    /// Each model's compliance and accuracy per dataset, to the precision.
    Accuracy,
    /// The order of every pair of models per dataset.
    Order,
    /// Both.
    #[default]
    Both,
    /// The best model per dataset by accuracy, and its margin over each other.
    Best,
}

impl Decide {
    /// Whether the levels (A2, A3 to the precision) are asked.
    pub fn levels(self) -> bool {
        matches!(self, Decide::Accuracy | Decide::Both)
    }

    /// Whether pairs' orders are asked (all of them, or those the best needs).
    pub fn pairs(self) -> bool {
        self != Decide::Accuracy
    }

    /// What it asks, in words.
    pub fn asked(self) -> &'static str {
        match self {
            Decide::Accuracy => "A2 and A3 per model",
            Decide::Order => "the order of every pair",
            Decide::Both => "A2 and A3 per model and the order of every pair",
            Decide::Best => "the best model by A3",
        }
    }
}

/// The procedure's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// Each level's intervals miss with probability at most this; the
    /// family of pair orders errs anywhere with probability at most this.
    pub alpha: f64,
    /// The half-width a level is decided at, as a fraction.
    pub precision: f64,
    /// What is to be decided.
    pub decide: Decide,
    /// How intervals and orders are made.
    #[serde(default = "bernstein")]
    pub method: Method,
    /// A stratum's least share of a wave, as a fraction of its proportional
    /// share (a method that splits waves among strata).
    pub min_share: f64,
    /// A dataset's first wave, as a fraction of its items.
    pub first_wave: f64,
    /// Each later wave, as a fraction of the dataset's items drawn so far.
    pub growth: f64,
    /// The fewest items a wave draws (a run sets it so that a wave keeps
    /// its concurrency busy).
    #[serde(default)]
    pub min_wave: usize,
    /// Waves handed out beyond the one being run, each chosen before the
    /// waves ahead of it are observed: on the fleet the next wave is queued
    /// while the last finishes. (A design written before there was a choice
    /// ran one at a time.)
    #[serde(default)]
    pub ahead: usize,
}

/// The method of a design written before there was a choice.
fn bernstein() -> Method {
    Method::Bernstein
}

impl Design {
    /// The items of a dataset's next wave, `drawn` of its `total` items
    /// drawn so far over `strata` strata: a twentieth of what was drawn,
    /// so that a question decided after a wave, with the wave handed out
    /// ahead of it still to come, drew past its decision under a tenth of
    /// what it used (a method that splits waves among strata: at least two
    /// per stratum).
    pub fn wave_size(&self, drawn: usize, total: usize, strata: usize) -> usize {
        let size = if drawn == 0 {
            self.first_wave * total as f64
        } else {
            self.growth * drawn as f64
        };
        let least = if self.method.bets() {
            self.min_wave.max(1)
        } else {
            2 * strata
        };
        (size.ceil() as usize).max(least)
    }

    /// The procedure betting replaced, asked the same: the stratified
    /// empirical-Bernstein sequence, Bonferroni over pairs, a first wave of
    /// 1%, each later one a quarter of what was drawn, one at a time.
    pub fn bernstein(&self) -> Design {
        Design {
            method: Method::Bernstein,
            first_wave: 0.01,
            growth: 0.25,
            min_wave: 0,
            ahead: 0,
            ..self.clone()
        }
    }

    /// The settings in one line: what is asked, to which precision when
    /// levels are, at which α.
    pub fn line(&self) -> String {
        let precision = if self.decide.levels() {
            format!(", to ±{:.1} pp", 100.0 * self.precision)
        } else {
            String::new()
        };
        format!("{}{precision} at α = {}", self.decide.asked(), self.alpha)
    }
}

impl Default for Design {
    fn default() -> Self {
        Design {
            alpha: 0.05,
            precision: 0.02,
            decide: Decide::Both,
            method: Method::Betting,
            min_share: 0.5,
            first_wave: 0.0,
            growth: 0.05,
            min_wave: 4,
            ahead: 1,
        }
    }
}

/// One dataset of the plan: its strata, each holding its items in the
/// order they are to be drawn, and the order the strata take turns in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetPlan {
    /// The dataset's name.
    pub name: String,
    /// Its strata (one per complexity value).
    pub strata: Vec<StratumPlan>,
    /// The stratum of each successive draw: a uniformly random interleaving
    /// ([`DatasetPlan::interleave`]), so that with each stratum shuffled the
    /// draws are one uniformly random order of the dataset's items.
    #[serde(default)]
    pub turns: Vec<usize>,
}

impl DatasetPlan {
    /// A plan of these strata, their turns interleaved from `seed`.
    pub fn new(name: String, strata: Vec<StratumPlan>, seed: u64) -> DatasetPlan {
        let mut plan = DatasetPlan {
            name,
            strata,
            turns: Vec::new(),
        };
        plan.interleave(seed);
        plan
    }

    /// Items it holds.
    pub fn len(&self) -> usize {
        self.strata.iter().map(|s| s.items.len()).sum()
    }

    /// Whether it holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets the strata's turns to a uniformly random interleaving, shuffled
    /// (Fisher–Yates) by a stream of `seed`.
    pub fn interleave(&mut self, seed: u64) {
        let mut turns: Vec<usize> = self
            .strata
            .iter()
            .enumerate()
            .flat_map(|(h, s)| std::iter::repeat_n(h, s.items.len()))
            .collect();
        let mut stream = SplitMix(seed);
        for i in (1..turns.len()).rev() {
            let j = (stream.next() % (i as u64 + 1)) as usize;
            turns.swap(i, j);
        }
        self.turns = turns;
    }
}

/// SplitMix64: a small, well-mixed stream for the interleaving.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// One stratum of a dataset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StratumPlan {
    /// The complexity value its items share.
    pub complexity: u32,
    /// Its items' ids, in draw order.
    pub items: Vec<String>,
}
