//! The order a run `--until decided` draws its items in: by dataset and
//! complexity value, each stratum shuffled by a stream of the run's seed,
//! the dataset's name and the complexity value, so the same seed gives
//! the same waves on every machine, and a resumed run the waves it began
//! with.

use crate::RunPlan;
use autoeval_generate::rng::Rng;
use autoeval_generate::Item;
use autoeval_sequential::procedure::{DatasetPlan, StratumPlan};
use std::collections::BTreeMap;

/// The plan's `items` in the order the waves draw them, datasets in the
/// plan's order.
pub fn draw_order(plan: &RunPlan, items: &[Item]) -> Vec<DatasetPlan> {
    let datasets = plan
        .datasets
        .iter()
        .map(|kind| {
            let mut strata: BTreeMap<u32, Vec<String>> = BTreeMap::new();
            for item in items.iter().filter(|i| i.dataset == *kind) {
                strata
                    .entry(item.complexity())
                    .or_default()
                    .push(item.id.clone());
            }
            let strata = strata
                .into_iter()
                .map(|(complexity, items)| StratumPlan { complexity, items })
                .collect();
            DatasetPlan::new(kind.name().to_string(), strata, 0)
        })
        .collect();
    shuffled_strata(datasets, plan.seed)
}

/// `datasets` with each stratum sorted by id and then shuffled by the
/// stream of (`seed`, dataset, complexity value), and the strata's turns
/// interleaved by the stream of (`seed`, dataset): the order does not
/// depend on the order the items came in, and it is one uniformly random
/// order of each dataset's items.
pub fn shuffled_strata(mut datasets: Vec<DatasetPlan>, seed: u64) -> Vec<DatasetPlan> {
    for dataset in &mut datasets {
        let tag = format!("draw:{}", dataset.name);
        for stratum in &mut dataset.strata {
            stratum.items.sort();
            let mut rng = Rng::new(seed, &tag, u64::from(stratum.complexity));
            let order = rng.sample_indices(stratum.items.len(), stratum.items.len());
            stratum.items = order.iter().map(|&i| stratum.items[i].clone()).collect();
        }
        let mut rng = Rng::new(seed, &format!("turns:{}", dataset.name), 0);
        dataset.interleave(rng.below(usize::MAX) as u64);
    }
    datasets
}
