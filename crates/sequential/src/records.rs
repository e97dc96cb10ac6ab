//! What a run's records say of each item for the procedure: per model, the
//! share of the item's units compliant and accurate at the decided round,
//! by the summary's own rule (`autoeval_metrics::unit_outcome`): a unit
//! that stopped before the round failed it, one an infrastructure failure
//! ended says nothing.

use crate::procedure::{DatasetPlan, ItemOutcome, StratumPlan};
use autoeval_metrics::compare::unit_outcome;
use autoeval_proto::{ResultRecord, Verdict};
use std::collections::{BTreeMap, HashMap};

/// Each unit of an item and model, by (prompt, repeat): its verdict per round.
type Units = HashMap<(String, u32), BTreeMap<u32, Verdict>>;

/// The records of a run, folded by unit.
#[derive(Default)]
pub struct ItemOutcomes {
    /// By (item, model), each unit's verdict per round.
    units: HashMap<(String, String), Units>,
    /// Each item's dataset and complexity.
    items: BTreeMap<String, (String, u32)>,
}

impl ItemOutcomes {
    /// Takes in one record.
    pub fn add(&mut self, r: &ResultRecord) {
        self.items
            .entry(r.id.clone())
            .or_insert_with(|| (r.dataset.clone(), r.complexity));
        self.units
            .entry((r.id.clone(), r.model.clone()))
            .or_default()
            .entry((r.prompt.clone(), r.repeat))
            .or_default()
            .insert(r.round, r.verdict);
    }

    /// The outcome of `model`'s units of `item` at `round`: the shares of
    /// them compliant and accurate among those measured; `None` when no
    /// unit of it is recorded.
    pub fn outcome(&self, model: &str, item: &str, round: u32) -> Option<ItemOutcome> {
        let units = self.units.get(&(item.to_string(), model.to_string()))?;
        let (mut measured, mut compliant, mut accurate) = (0u32, 0u32, 0u32);
        for verdicts in units.values() {
            if let Some((c, a)) = unit_outcome(verdicts, round) {
                measured += 1;
                compliant += u32::from(c);
                accurate += u32::from(a);
            }
        }
        let share = |k: u32| (measured > 0).then(|| f64::from(k) / f64::from(measured));
        Some(ItemOutcome {
            compliant: share(compliant),
            accurate: share(accurate),
        })
    }

    /// The models recorded, in name order.
    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = self.units.keys().map(|(_, m)| m.clone()).collect();
        models.sort();
        models.dedup();
        models
    }

    /// Every item recorded, by dataset and complexity, each stratum in id
    /// order: the population a finished run's records describe.
    pub fn population(&self) -> Vec<DatasetPlan> {
        let mut datasets: BTreeMap<&str, BTreeMap<u32, Vec<String>>> = BTreeMap::new();
        for (id, (dataset, complexity)) in &self.items {
            datasets
                .entry(dataset)
                .or_default()
                .entry(*complexity)
                .or_default()
                .push(id.clone());
        }
        datasets
            .into_iter()
            .map(|(name, strata)| {
                let strata = strata
                    .into_iter()
                    .map(|(complexity, items)| StratumPlan { complexity, items })
                    .collect();
                DatasetPlan::new(name.to_string(), strata, 0)
            })
            .collect()
    }
}
