//! How far the misses missed: the distribution of paper 003's closeness
//! scores over the compliant but non-equivalent round-1 answers, per
//! dataset and model, so a near miss and a wild one are told apart.

use autoeval_proto::Closeness;

/// Quartiles of one score over a group's misses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quartiles {
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
}

/// The closeness of one (dataset, model)'s misses.
#[derive(Clone, Debug, PartialEq)]
pub struct Misses {
    /// Dataset name.
    pub dataset: String,
    /// Model spec.
    pub model: String,
    /// Misses scored.
    pub n: usize,
    /// LE quartiles.
    pub le: Option<Quartiles>,
    /// Smatch++ quartiles.
    pub smatch: Option<Quartiles>,
    /// BLEU quartiles.
    pub bleu: Option<Quartiles>,
    /// Misses per LE fifth: [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1].
    pub le_histogram: [usize; 5],
}

/// Quartiles by linear interpolation between order statistics (type 7).
pub fn quartiles(values: &mut [f64]) -> Option<Quartiles> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let at = |p: f64| {
        let h = p * (values.len() - 1) as f64;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        values[lo] + (h - lo as f64) * (values[hi] - values[lo])
    };
    Some(Quartiles {
        q1: at(0.25),
        median: at(0.5),
        q3: at(0.75),
    })
}

/// The closeness of one (dataset, model)'s round-1 misses, from their scores.
pub fn misses_of(dataset: &str, model: &str, scores: &[Closeness]) -> Misses {
    let column = |get: fn(&Closeness) -> Option<f64>| {
        quartiles(&mut scores.iter().filter_map(get).collect::<Vec<_>>())
    };
    let mut le_histogram = [0; 5];
    for le in scores.iter().filter_map(|c| c.le) {
        le_histogram[((le * 5.0) as usize).min(4)] += 1;
    }
    Misses {
        dataset: dataset.to_string(),
        model: model.to_string(),
        n: scores.len(),
        le: column(|c| c.le),
        smatch: column(|c| c.smatch),
        bleu: column(|c| Some(c.bleu)),
        le_histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_by_hand() {
        // 1 2 3 4: positions 0.75, 1.5, 2.25 → 1.75, 2.5, 3.25.
        let q = quartiles(&mut [4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((q.q1, q.median, q.q3), (1.75, 2.5, 3.25));
        assert_eq!(quartiles(&mut []), None);
    }

    #[test]
    fn the_scores_of_misses_give_their_quartiles_and_fifths() {
        let le = |x| Closeness {
            le: Some(x),
            ..Closeness::default()
        };
        let row = misses_of("fol", "m", &[le(0.5), le(0.9)]);
        assert_eq!(
            (row.dataset.as_str(), row.model.as_str(), row.n),
            ("fol", "m", 2)
        );
        assert_eq!(row.le_histogram, [0, 0, 1, 0, 1]);
        assert_eq!(row.le.unwrap().median, 0.7);
        assert_eq!(row.smatch, None, "no Smatch++ score given");
    }
}
