//! The run directory's chains of rounds checked whole, and mended: a unit
//! whose round r is missing while a later one is recorded has its later
//! rounds forgotten, so that the run goes on from round r like any unit
//! whose chain stopped there.

use crate::{for_each_record, results_exist, JsonlStore, StoreError};
use autoeval_proto::chains::{unit_digest, BrokenChain, ChainCheck};
use autoeval_proto::ResultRecord;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The units of the results at `path` whose chain has a gap: one pass to
/// count each unit's rounds, a second over the few broken ones.
pub fn broken_chains(path: &Path) -> Result<Vec<BrokenChain>, StoreError> {
    if !results_exist(path) {
        return Ok(Vec::new());
    }
    let mut check = ChainCheck::default();
    for_each_record(path, |r| check.add(&r))?;
    let broken = check.broken();
    if broken.is_empty() {
        return Ok(Vec::new());
    }
    let mut rounds: HashMap<u64, Vec<ResultRecord>> = HashMap::new();
    for_each_record(path, |r| {
        let unit = unit_digest(&r.unit());
        if broken.contains(&unit) {
            rounds.entry(unit).or_default().push(r);
        }
    })?;
    let mut chains: Vec<BrokenChain> = rounds.into_values().filter_map(BrokenChain::of).collect();
    chains.sort_by_key(|c| c.unit.to_string());
    Ok(chains)
}

impl JsonlStore {
    /// Forgets the rounds recorded after each chain's gap, so that the run
    /// redoes the chain from its missing round; returns the chains mended.
    pub fn mend_chains(&self) -> Result<Vec<BrokenChain>, StoreError> {
        let chains = broken_chains(self.path())?;
        let after: HashSet<_> = chains
            .iter()
            .flat_map(|c| c.after.iter().map(ResultRecord::round_key))
            .collect();
        self.forget(&after)?;
        Ok(chains)
    }
}

/// Mends the chains of the results at `path` (see
/// [`JsonlStore::mend_chains`]), opening the file only when one is broken.
pub fn mend_chains_at(path: &Path) -> Result<Vec<BrokenChain>, StoreError> {
    if broken_chains(path)?.is_empty() {
        return Ok(Vec::new());
    }
    JsonlStore::open(path)?.mend_chains()
}

/// `chains` named for a message: the first few units, each with its
/// missing round, and how many more.
pub fn name_chains(chains: &[BrokenChain]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = chains
        .iter()
        .take(SHOWN)
        .map(|c| format!("{} (round {} missing)", c.unit, c.missing))
        .collect();
    if chains.len() > SHOWN {
        named.push(format!("{} more", chains.len() - SHOWN));
    }
    named.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_is_found_and_the_rounds_after_it_are_forgotten() {
        let dir = std::env::temp_dir().join(format!("chains-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.jsonl");
        let _ = std::fs::remove_file(&path);
        let log = JsonlStore::open(&path).unwrap();
        let round = |id: &str, n: u32| ResultRecord {
            id: id.into(),
            round: n,
            ..ResultRecord::default()
        };
        for r in [
            round("a", 1),
            round("a", 3),
            round("a", 4),
            round("b", 1),
            round("b", 2),
        ] {
            log.append(&r).unwrap();
        }
        let found = broken_chains(&path).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].unit.clone(), found[0].missing),
            (round("a", 2).unit(), 2)
        );
        assert!(name_chains(&found).contains("(round 2 missing)"));
        let mended = log.mend_chains().unwrap();
        assert_eq!(mended, found);
        let mut left = Vec::new();
        for_each_record(&path, |r| left.push((r.id, r.round))).unwrap();
        left.sort();
        let want: Vec<(String, u32)> = vec![("a".into(), 1), ("b".into(), 1), ("b".into(), 2)];
        assert_eq!(left, want);
        assert!(broken_chains(&path).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
