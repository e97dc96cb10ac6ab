//! How a wave's items are shared among a dataset's strata.
//!
//! The rule: every stratum with items left first gets its minimum share,
//! `min_share` of what proportional allocation would give it (at least one
//! item, so every stratum's mean stays estimable and its bet keeps pace);
//! the rest of the wave goes in proportion to each stratum's weight times
//! the spread of its values in the quantity still undecided whose interval
//! is widest (Neyman's allocation, which narrows that interval fastest); no
//! stratum gets more than it has left. The split is deterministic, so the
//! same outcomes give the same waves.

/// What the allocation knows of one stratum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StratumShare {
    /// Its share of the dataset's items in the plan.
    pub weight: f64,
    /// Items it has not drawn yet.
    pub left: usize,
    /// The standard deviation of its values in the quantity being narrowed.
    pub spread: f64,
}

/// Items of each stratum in a wave of `wave` items (fewer when fewer are left).
pub fn allocate(wave: usize, strata: &[StratumShare], min_share: f64) -> Vec<usize> {
    let left: usize = strata.iter().map(|s| s.left).sum();
    if wave >= left {
        return strata.iter().map(|s| s.left).collect();
    }
    let active_weight: f64 = strata.iter().filter(|s| s.left > 0).map(|s| s.weight).sum();
    let mut counts: Vec<usize> = strata
        .iter()
        .map(|s| {
            if s.left == 0 {
                return 0;
            }
            let share = min_share * wave as f64 * s.weight / active_weight.max(f64::MIN_POSITIVE);
            (share.floor() as usize).max(1).min(s.left)
        })
        .collect();
    let mut rest = wave.saturating_sub(counts.iter().sum());
    // Water-filling: strata that fill up drop out and the rest is shared again.
    while rest > 0 {
        let open: Vec<usize> = (0..strata.len())
            .filter(|&h| counts[h] < strata[h].left)
            .collect();
        if open.is_empty() {
            break;
        }
        let demand = |h: usize| strata[h].weight * strata[h].spread.max(1e-3);
        let total: f64 = open.iter().map(|&h| demand(h)).sum();
        let wanted: Vec<(usize, f64)> = open
            .iter()
            .map(|&h| (h, rest as f64 * demand(h) / total))
            .collect();
        let mut given = 0;
        let mut remainders = Vec::new();
        for &(h, want) in &wanted {
            let room = strata[h].left - counts[h];
            let take = (want.floor() as usize).min(room);
            counts[h] += take;
            given += take;
            if counts[h] < strata[h].left {
                remainders.push((h, want - want.floor()));
            }
        }
        // Largest remainders first, ties to the earlier stratum.
        remainders.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        for (h, _) in remainders {
            if given >= rest {
                break;
            }
            counts[h] += 1;
            given += 1;
        }
        rest -= given.min(rest);
        if given == 0 {
            break;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(weight: f64, left: usize, spread: f64) -> StratumShare {
        StratumShare {
            weight,
            left,
            spread,
        }
    }

    #[test]
    fn a_wave_is_shared_whole_with_every_stratum_at_its_minimum() {
        let strata = [
            share(0.5, 100, 0.0),
            share(0.25, 100, 0.5),
            share(0.25, 100, 0.5),
        ];
        let counts = allocate(40, &strata, 0.5);
        assert_eq!(counts.iter().sum::<usize>(), 40);
        // Minimums 10, 5, 5; the other 20 go to the spread strata alone.
        assert_eq!(counts[0], 10);
        assert!(counts[1] >= 5 && counts[2] >= 5, "{counts:?}");
    }

    #[test]
    fn no_stratum_is_given_more_than_it_has_left() {
        let strata = [share(0.5, 3, 0.5), share(0.5, 100, 0.1)];
        let counts = allocate(50, &strata, 0.5);
        assert_eq!(counts, vec![3, 47]);
        assert_eq!(allocate(500, &strata, 0.5), vec![3, 100]);
    }
}
