//! Whether every unit's chain of rounds is whole. Round r + 1 translates
//! round r's answer, so a unit whose round r is missing while a later round
//! is recorded has a gap: its measurement is wrong until the chain is redone
//! from round r. A run ends only with every chain whole.

use crate::{ResultRecord, UnitKey};
use std::collections::{HashMap, HashSet};

/// A unit's place in a 64-bit digest: the compact key of the chain check
/// and of the pipeline's record of where each unit stands. Two of a run's units share one with odds
/// below one in 10^7 for a hundred million units.
pub fn unit_digest(unit: &UnitKey) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    unit.hash(&mut h);
    h.finish()
}

/// Each unit's rounds counted as they are read, a few bytes per unit: a
/// chain is whole when it holds as many rounds as its highest (each round
/// is recorded once).
#[derive(Debug, Default)]
pub struct ChainCheck {
    held: HashMap<u64, (u32, u32)>,
}

impl ChainCheck {
    /// Takes in one recorded round.
    pub fn add(&mut self, r: &ResultRecord) {
        let (count, highest) = self.held.entry(unit_digest(&r.unit())).or_insert((0, 0));
        *count += 1;
        *highest = (*highest).max(r.round);
    }

    /// The digests of the units whose chain has a gap.
    pub fn broken(&self) -> HashSet<u64> {
        self.held
            .iter()
            .filter(|(_, (count, highest))| count < highest)
            .map(|(unit, _)| *unit)
            .collect()
    }
}

/// One unit's chain with a gap, and what redoing it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokenChain {
    /// The unit.
    pub unit: UnitKey,
    /// Its first round missing.
    pub missing: u32,
    /// The round before it, whose answer the missing round translates
    /// (`None` when round 1 is missing).
    pub before: Option<ResultRecord>,
    /// The rounds recorded after the gap: they translated an answer the
    /// run no longer holds, and are redone.
    pub after: Vec<ResultRecord>,
}

impl BrokenChain {
    /// The broken chain of one unit whose recorded rounds are `rounds`,
    /// or `None` when they make a whole chain.
    pub fn of(mut rounds: Vec<ResultRecord>) -> Option<BrokenChain> {
        rounds.sort_by_key(|r| r.round);
        let held: HashSet<u32> = rounds.iter().map(|r| r.round).collect();
        let missing = (1..).find(|n| !held.contains(n))?;
        let unit = rounds.first()?.unit();
        let before = rounds.iter().find(|r| r.round + 1 == missing).cloned();
        let after: Vec<ResultRecord> = rounds.into_iter().filter(|r| r.round > missing).collect();
        (!after.is_empty()).then_some(BrokenChain {
            unit,
            missing,
            before,
            after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(id: &str, n: u32) -> ResultRecord {
        ResultRecord {
            id: id.into(),
            round: n,
            ..ResultRecord::default()
        }
    }

    #[test]
    fn a_chain_is_broken_only_where_a_later_round_follows_a_missing_one() {
        let mut check = ChainCheck::default();
        for r in [
            round("a", 1),
            round("a", 2),
            round("b", 2),
            round("c", 1),
            round("c", 3),
        ] {
            check.add(&r);
        }
        let broken = check.broken();
        assert_eq!(broken.len(), 2);
        assert!(broken.contains(&unit_digest(&round("b", 1).unit())));
        assert!(broken.contains(&unit_digest(&round("c", 1).unit())));
        assert_eq!(BrokenChain::of(vec![round("a", 2), round("a", 1)]), None);
        let c = BrokenChain::of(vec![round("c", 3), round("c", 1)]).unwrap();
        assert_eq!((c.missing, c.before.map(|r| r.round)), (2, Some(1)));
        assert_eq!(c.after.iter().map(|r| r.round).collect::<Vec<_>>(), [3]);
        let b = BrokenChain::of(vec![round("b", 2)]).unwrap();
        assert_eq!((b.missing, b.before), (1, None));
    }
}
