//! What `--until decided` is likely to draw, before anything is sent: the
//! items at which the procedure's own intervals would decide a level near
//! a baseline accuracy, and the order of two models a given difference
//! apart. Each figure runs the confidence sequence over a stream whose
//! values have exactly the assumed shares, spread evenly, so it is the
//! procedure's bound at that shape, not an approximation of it.

use crate::procedure::Design;
use crate::sequence::Estimator;

/// The outcome shares of a stream: `(value, share)` pairs summing to 1.
type Shape = [(f64, f64)];

/// Items the procedure's sequence at level `alpha` over a population of
/// `population` values shaped `shape` draws, in the waves `design` sets,
/// until `done` says it decides; `None` when even the whole population
/// does not.
fn items_until(
    design: &Design,
    shape: &Shape,
    (alpha, aim): (f64, Option<f64>),
    population: usize,
    done: impl Fn(&mut dyn Estimator) -> bool,
) -> Option<usize> {
    let mut sequence = design.method.start(&[population], alpha, aim);
    let mut drawn = 0usize;
    let mut seen = vec![0usize; shape.len()];
    while drawn < population {
        let take = design
            .wave_size(drawn, population, 1)
            .min(population - drawn);
        sequence.begin_wave(&[take]);
        for _ in 0..take {
            drawn += 1;
            // The value furthest behind its share comes next: an even spread.
            let (k, _) = shape
                .iter()
                .enumerate()
                .map(|(k, (_, share))| (k, share * drawn as f64 - seen[k] as f64))
                .fold((0, f64::MIN), |best, c| if c.1 > best.1 { c } else { best });
            seen[k] += 1;
            sequence.observe(0, Some(shape[k].0));
        }
        if drawn < population && done(sequence.as_mut()) {
            return Some(drawn);
        }
    }
    None
}

/// Items at which a level near `baseline` (a share in (0, 1)) is decided
/// to `design`'s precision at its α, out of `population`.
pub fn items_for_level(design: &Design, baseline: f64, population: usize) -> Option<usize> {
    let shape = [(1.0, baseline), (0.0, 1.0 - baseline)];
    let aimed = (design.alpha, Some(design.precision));
    items_until(design, &shape, aimed, population, |e| {
        e.interval().half_width() <= design.precision
    })
}

/// Items at which two models near `baseline`, `difference` apart and
/// wrong independently of each other, are ordered by `design`'s method
/// with α split over `pairs` pairs, out of `population`.
pub fn items_for_order(
    design: &Design,
    baseline: f64,
    difference: f64,
    pairs: usize,
    population: usize,
) -> Option<usize> {
    let (a, b) = (
        (baseline + difference / 2.0).clamp(0.0, 1.0),
        (baseline - difference / 2.0).clamp(0.0, 1.0),
    );
    // A pair's value is (x_a − x_b + 1) / 2.
    let shape = [
        (1.0, a * (1.0 - b)),
        (0.0, b * (1.0 - a)),
        (0.5, a * b + (1.0 - a) * (1.0 - b)),
    ];
    let alpha = design.alpha / pairs.max(1) as f64;
    items_until(design, &shape, (alpha, None), population, |e| {
        match e.evidence() {
            // The first pair the family decides needs 2·pairs/α (e-Holm).
            Some((up, down)) => up.max(down) >= 2.0 / alpha,
            None => {
                let i = e.interval();
                i.lower > 0.5 || i.upper < 0.5
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wider_precision_and_larger_differences_need_fewer_items() {
        let design = Design::default();
        let at = |precision| Design {
            precision,
            ..Design::default()
        };
        let tight = items_for_level(&at(0.02), 0.5, 100_000).unwrap();
        let loose = items_for_level(&at(0.05), 0.5, 100_000).unwrap();
        assert!(loose < tight, "{loose} vs {tight}");
        let near = items_for_order(&design, 0.7, 0.03, 1, 100_000).unwrap();
        let far = items_for_order(&design, 0.7, 0.2, 1, 100_000).unwrap();
        assert!(far < near, "{far} vs {near}");
        // A fixed-time interval of ±2 pp at 50% needs 2,401 items; the
        // anytime-valid one more.
        assert!(tight > 2_401, "{tight}");
        // No difference is never ordered before the plan is spent.
        assert_eq!(items_for_order(&design, 0.7, 0.0, 1, 5_000), None);
    }
}
