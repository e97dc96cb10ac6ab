//! Dataset generation for the benchmark (paper Algorithm 1, App. B and D).
//!
//! [`generate_batch`] expands the dataset's grammar level by level
//! ([`algorithm1`] as the public implementation does, or the tool's own
//! [`expand`]), groups the leaves by the complexity metric (operators for
//! logic, generation level for regular expressions), and for every metric
//! value draws `per_bucket` distinct formulas with a uniformly random
//! vocabulary. Metrics are computed on the emitted formula, except `depth`,
//! the level its leaf was found at. The same seed
//! gives the same bytes on every machine.

pub mod algorithm1;
pub mod diversity;
pub mod expand;
pub mod grammar;
mod instantiate;
pub mod leaves;
pub mod metrics;
pub mod perturb;
pub mod reference;
pub mod rng;
pub mod vocab;

use autoeval_syntax::{alphabet, print, Style};
use instantiate::Built;
pub use metrics::Metrics;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use thiserror::Error;

pub use autoeval_proto::DatasetKind;

/// Every setting of a generation run; defaults are the paper's Table 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetConfig {
    /// Which dataset.
    pub kind: DatasetKind,
    /// Seed of the whole run; batch `b` uses its own stream derived from it.
    pub seed: u64,
    /// Levels of the grammar tree (Table 1: depth).
    pub depth: usize,
    /// Branching factor n (Table 1: n).
    pub branching: usize,
    /// Items per complexity value (Table 1: sample_count).
    pub per_bucket: usize,
    /// Propositions p1…pN (Table 1: num_propositions).
    pub num_propositions: usize,
    /// Objects (Table 1: num_objects).
    pub num_objects: usize,
    /// Predicates per formula (Table 1: num_predicates).
    pub num_predicates: usize,
    /// Smallest predicate arity (Table 1: min_predicate_arity).
    pub min_arity: usize,
    /// Largest predicate arity (Table 1: max_predicate_arity).
    pub max_arity: usize,
    /// Chance that an argument inside a quantifier's scope is a bound variable (Table 1).
    pub free_variable_prob: f64,
    /// Most quantified variables per formula; `None` is unlimited (Table 1: ∞).
    pub max_free_variables: Option<usize>,
    /// Regex alphabet size: symbols 0…n−1 (Table 1: alphabet_size).
    pub alphabet_size: usize,
    /// Literals per k-SAT clause.
    pub clause_width: usize,
    /// Closed leaves drawn from each closable form of the grammar tree under
    /// [`Sampling::PreferNewTrees`] (Algorithm 1 takes `branching` of them).
    pub closings: usize,
    /// How leaves are completed and drawn into buckets.
    #[serde(default)]
    pub sampling: Sampling,
    /// Attempts to find a new distinct formula for one slot of a bucket.
    pub tries_per_slot: usize,
}

impl DatasetConfig {
    /// Table 1's settings for `kind`.
    pub fn table1(kind: DatasetKind) -> DatasetConfig {
        DatasetConfig {
            kind,
            seed: 0,
            depth: 40,
            branching: 200,
            per_bucket: 50,
            num_propositions: 12,
            num_objects: 12,
            num_predicates: 8,
            min_arity: 1,
            max_arity: 2,
            free_variable_prob: 0.25,
            max_free_variables: None,
            alphabet_size: 2,
            clause_width: 3,
            closings: 4,
            sampling: Sampling::PreferNewTrees,
            tries_per_slot: 100,
        }
    }

    /// Table 1's settings generated exactly as the public implementation of
    /// Algorithm 1 generates them.
    pub fn algorithm1(kind: DatasetKind) -> DatasetConfig {
        DatasetConfig {
            sampling: Sampling::Algorithm1,
            ..DatasetConfig::table1(kind)
        }
    }

    /// Refuses settings that cannot produce a dataset, saying which to change.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |what: &str| Err(ConfigError(what.to_string()));
        if self.depth == 0 || self.branching == 0 || self.per_bucket == 0 {
            return bad("depth, branching and per-bucket must be at least 1");
        }
        if self.num_propositions == 0 || self.num_objects == 0 || self.num_predicates == 0 {
            return bad("num-propositions, num-objects and num-predicates must be at least 1");
        }
        if self.min_arity == 0 || self.min_arity > self.max_arity {
            return bad("predicate arities need 1 <= min-arity <= max-arity");
        }
        if self.kind == DatasetKind::FolEnglish && self.max_arity > vocab::max_verb_arity() {
            return Err(ConfigError(format!(
                "the English verb list has verbs of arity up to {}; lower --max-arity",
                vocab::max_verb_arity()
            )));
        }
        if self.kind == DatasetKind::FolEnglish && self.num_objects > vocab::person_names().len() {
            return Err(ConfigError(format!(
                "at most {} person names are available; lower --num-objects",
                vocab::person_names().len()
            )));
        }
        if !(0.0..=1.0).contains(&self.free_variable_prob) {
            return bad("free-variable-prob must be between 0 and 1");
        }
        if !(1..=36).contains(&self.alphabet_size) {
            return bad("alphabet-size must be between 1 and 36");
        }
        if self.clause_width == 0 {
            return bad("clause-width must be at least 1");
        }
        if self.closings == 0 || self.tries_per_slot == 0 {
            return bad("closings and tries-per-slot must be at least 1");
        }
        Ok(())
    }

    /// The regex alphabet `{0, …, alphabet_size − 1}`.
    pub fn alphabet(&self) -> Vec<char> {
        alphabet(self.alphabet_size)
    }
}

/// How the generator completes closable forms and fills each bucket.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Sampling {
    /// Exactly the paper's Algorithm 1 as its public implementation runs it
    /// ([`algorithm1`]): each form is walked left to right, depth first,
    /// up to its n-th leaf, recording the children met on the way; each
    /// bucket's items are drawn uniformly from its leaves (line 15; regular
    /// expressions without replacement). Both protocols generate this way.
    #[serde(rename = "algorithm-1")]
    #[value(name = "algorithm-1")]
    Algorithm1,
    /// Four completions per closable form, and each bucket first prefers
    /// parse trees the batch does not hold yet: more distinct parse trees
    /// (App. M's diversity) than Algorithm 1 gives.
    #[default]
    PreferNewTrees,
}

impl Sampling {
    /// The name on the command line and in plans.
    pub fn name(self) -> &'static str {
        match self {
            Sampling::Algorithm1 => "algorithm-1",
            Sampling::PreferNewTrees => "prefer-new-trees",
        }
    }
}

impl std::str::FromStr for Sampling {
    type Err = String;
    fn from_str(s: &str) -> Result<Sampling, String> {
        [Sampling::Algorithm1, Sampling::PreferNewTrees]
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!("unknown sampling {s:?}; expected algorithm-1 or prefer-new-trees")
            })
    }
}

/// A setting that cannot produce a dataset.
#[derive(Debug, Clone, Error)]
#[error("invalid dataset settings: {0}")]
pub struct ConfigError(pub String);

/// One generated formula with its metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Unique and stable: `{dataset}-{seed}-{batch}-{index}`.
    pub id: String,
    /// Dataset name.
    pub dataset: DatasetKind,
    /// Batch number.
    pub batch: u64,
    /// Position within the batch.
    pub index: usize,
    /// The formula in the paper's Unicode form (regexes as derived).
    pub fs: String,
    /// Metrics of `fs`.
    #[serde(flatten)]
    pub metrics: Metrics,
}

impl Item {
    /// The value of the dataset's complexity metric.
    pub fn complexity(&self) -> u32 {
        match self.dataset {
            DatasetKind::Regex => self.metrics.depth,
            _ => self.metrics.num_operators.unwrap_or(0),
        }
    }
}

/// A complexity value that got fewer than `per_bucket` distinct items.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortfall {
    /// The complexity value.
    pub value: u32,
    /// Items wanted.
    pub wanted: usize,
    /// Distinct items found.
    pub got: usize,
}

/// The items of one batch and the buckets that came up short.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Items in bucket order.
    pub items: Vec<Item>,
    /// Buckets with fewer than `per_bucket` distinct items.
    pub shortfall: Vec<Shortfall>,
}

/// The complexity of a closed leaf found at generation level `level`: the
/// level for regular expressions, as the public implementation buckets
/// them; for logic the operators read off its symbols, which equal the
/// metric of every formula built from it, whatever the vocabulary.
fn leaf_complexity(template: &[u8], level: u32, kind: DatasetKind) -> u32 {
    use grammar::t;
    if kind == DatasetKind::Regex {
        return level;
    }
    let mut n = 0;
    for (i, &s) in template.iter().enumerate() {
        n += match s {
            t::AND | t::OR => 1,
            t::NOT => !matches!(template.get(i + 1), Some(&t::V) | Some(&t::P)) as u32,
            _ => 0,
        };
    }
    n
}

/// A k-SAT leaf with every literal's sign drawn afresh: the same as closing
/// its form again (the literal productions P → ¬v | v are the only closing
/// ones), which the operator count does not depend on.
fn redraw_literals(leaf: &[u8], rng: &mut rng::Rng) -> Vec<u8> {
    use grammar::t;
    let mut out = Vec::with_capacity(leaf.len() + 4);
    for &s in leaf {
        match s {
            t::NOT => {}
            t::V => {
                if rng.chance(0.5) {
                    out.push(t::NOT);
                }
                out.push(t::V);
            }
            other => out.push(other),
        }
    }
    out
}

/// The leaves of the dataset's grammar tree under `cfg`'s sampling.
fn grow(cfg: &DatasetConfig, rng: &mut rng::Rng) -> leaves::Leaves {
    let g = match cfg.kind {
        DatasetKind::Ksat => grammar::ksat(cfg.clause_width),
        DatasetKind::Plogic => grammar::propositional(),
        DatasetKind::Fol | DatasetKind::FolEnglish => grammar::first_order(),
        DatasetKind::Regex => grammar::regex(),
    };
    let max_quantifiers = cfg.max_free_variables.unwrap_or(usize::MAX);
    match cfg.sampling {
        Sampling::Algorithm1 => {
            let walk = algorithm1::Walk {
                depth: cfg.depth,
                n: cfg.branching,
                max_quantifiers,
            };
            algorithm1::leaves(&g, grammar::START, walk, rng)
        }
        Sampling::PreferNewTrees => {
            let expansion = expand::Expansion {
                depth: cfg.depth,
                branching: cfg.branching,
                closings: cfg.closings,
                max_quantifiers,
            };
            expand::leaves(&g, grammar::START, expansion, rng)
        }
    }
}

/// Generates batch number `batch` of the dataset described by `cfg`.
pub fn generate_batch(cfg: &DatasetConfig, batch: u64) -> Result<Batch, ConfigError> {
    cfg.validate()?;
    let mut rng = rng::Rng::new(cfg.seed, cfg.kind.name(), batch);
    let leaves = grow(cfg, &mut rng);
    let mut buckets: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, leaf) in leaves.iter().enumerate() {
        buckets
            .entry(leaf_complexity(leaf, leaves.level(i), cfg.kind))
            .or_default()
            .push(i);
    }
    let mut fill = Filling {
        cfg,
        batch,
        leaves: &leaves,
        alphabet: cfg.alphabet(),
        out: Batch::default(),
        seen: HashSet::new(),
        used_trees: HashSet::new(),
    };
    for (&value, members) in &buckets {
        let got = fill.bucket(members, &mut rng);
        if got < cfg.per_bucket {
            fill.out.shortfall.push(Shortfall {
                value,
                wanted: cfg.per_bucket,
                got,
            });
        }
    }
    Ok(fill.out)
}

/// The items of one batch as its buckets are filled.
struct Filling<'a> {
    cfg: &'a DatasetConfig,
    batch: u64,
    leaves: &'a leaves::Leaves,
    alphabet: Vec<char>,
    out: Batch,
    /// Formulas already in the batch: items are distinct.
    seen: HashSet<String>,
    /// Leaves already built into an item (prefer-new-trees only).
    used_trees: HashSet<Vec<u8>>,
}

impl Filling<'_> {
    /// Fills one bucket from the leaves `members`; returns the items added.
    fn bucket(&mut self, members: &[usize], rng: &mut rng::Rng) -> usize {
        let cfg = self.cfg;
        let mut got = 0;
        if cfg.kind == DatasetKind::Regex && cfg.sampling == Sampling::Algorithm1 {
            // The public code samples a regex bucket's leaves without
            // replacement, once, and keeps the new strings among them.
            for i in rng.sample_indices(members.len(), cfg.per_bucket) {
                let leaf = self.leaves.get(members[i]).to_vec();
                got += usize::from(self.add(&leaf, members[i], rng));
            }
            return got;
        }
        for _slot in 0..cfg.per_bucket {
            for attempt in 0..cfg.tries_per_slot {
                let at = *rng.pick(members);
                let mut leaf = self.leaves.get(at).to_vec();
                // Algorithm 1 builds the leaf drawn as it is.
                if cfg.kind == DatasetKind::Ksat && cfg.sampling == Sampling::PreferNewTrees {
                    leaf = redraw_literals(&leaf, rng);
                }
                // A parse tree not yet in the batch first (App. M's diversity);
                // a repeated tree with new vocabulary only when none is found.
                // Algorithm 1 draws uniformly.
                let prefer_new = cfg.sampling == Sampling::PreferNewTrees;
                if prefer_new && attempt < cfg.tries_per_slot / 2 && self.used_trees.contains(&leaf)
                {
                    continue;
                }
                if self.add(&leaf, at, rng) {
                    got += 1;
                    break;
                }
            }
        }
        got
    }

    /// Builds an item from `leaf` (leaf number `at`); false when the batch
    /// already holds its formula.
    fn add(&mut self, leaf: &[u8], at: usize, rng: &mut rng::Rng) -> bool {
        let cfg = self.cfg;
        let (fs, mut metrics) = match instantiate::build(leaf, cfg, &self.alphabet, rng) {
            Built::Logic(f) => (
                print::formula(&f, Style::Unicode),
                metrics::logic(&f, cfg.kind),
            ),
            Built::Regex(r) => (print::regex(&r), metrics::regex(&r, &self.alphabet)),
        };
        if !self.seen.insert(fs.clone()) {
            return false;
        }
        metrics.depth = self.leaves.level(at);
        self.used_trees.insert(leaf.to_vec());
        let index = self.out.items.len();
        self.out.items.push(Item {
            id: format!("{}-{}-{}-{}", cfg.kind.name(), cfg.seed, self.batch, index),
            dataset: cfg.kind,
            batch: self.batch,
            index,
            fs,
            metrics,
        });
        true
    }
}
