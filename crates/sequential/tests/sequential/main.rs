//! The procedure on synthetic plans whose every outcome is fixed, so the
//! plan's own mean is the truth an interval must cover, and only the draw
//! order is random. The truths are plain averages over all items, computed
//! here without the crate.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_generate::rng::Rng;
use autoeval_sequential::procedure::{DatasetPlan, ItemOutcome, Measure, StratumPlan};
use autoeval_sequential::{Decide, Design, Method, Procedure};

/// A plan: per model, each item's outcome (1 accurate, 0 not), by stratum.
struct Population {
    /// outcomes[model][stratum][item]
    outcomes: Vec<Vec<Vec<f64>>>,
}

impl Population {
    /// `strata` strata of `per` items; model m is accurate on an item of
    /// stratum h with chance `1 − slopes[m]·(h + 1)`, drawn once.
    fn new(strata: usize, per: usize, slopes: &[f64], seed: u64) -> Population {
        let mut rng = Rng::new(seed, "population", 0);
        let outcomes = slopes
            .iter()
            .map(|slope| {
                (0..strata)
                    .map(|h| {
                        let p = (1.0 - slope * (h + 1) as f64).clamp(0.0, 1.0);
                        (0..per)
                            .map(|_| f64::from(u8::from(rng.chance(p))))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Population { outcomes }
    }

    /// Model `copy` given model `of`'s outcomes, each stratum shuffled:
    /// the same accuracy in every stratum, other items right.
    fn with_twin(mut self, of: usize, seed: u64) -> Population {
        let mut rng = Rng::new(seed, "twin", 0);
        let twin = self.outcomes[of]
            .iter()
            .map(|stratum| {
                let order = rng.sample_indices(stratum.len(), stratum.len());
                order.iter().map(|&i| stratum[i]).collect()
            })
            .collect();
        self.outcomes.push(twin);
        self
    }

    /// The mean of model `m` over every item: the truth of its accuracy.
    fn truth(&self, m: usize) -> f64 {
        let all: Vec<f64> = self.outcomes[m].iter().flatten().copied().collect();
        all.iter().sum::<f64>() / all.len() as f64
    }

    /// The plan, each stratum in an order drawn from `seed`.
    fn plan(&self, seed: u64) -> Vec<DatasetPlan> {
        let mut rng = Rng::new(seed, "order", 0);
        let strata = self.outcomes[0]
            .iter()
            .enumerate()
            .map(|(h, items)| StratumPlan {
                complexity: h as u32 + 1,
                items: rng
                    .sample_indices(items.len(), items.len())
                    .into_iter()
                    .map(|i| format!("{h}:{i}"))
                    .collect(),
            })
            .collect();
        vec![DatasetPlan::new("synthetic".into(), strata, seed)]
    }

    fn outcome(&self, m: usize, item: &str) -> ItemOutcome {
        let (h, i) = item.split_once(':').unwrap();
        let x = self.outcomes[m][h.parse::<usize>().unwrap()][i.parse::<usize>().unwrap()];
        ItemOutcome {
            compliant: Some(1.0),
            accurate: Some(x),
        }
    }
}

/// What one run of the procedure came to.
struct RunEnd {
    /// Per quantity (by index): whether its interval ever missed the truth.
    missed: Vec<bool>,
    /// Pairs ordered against the truth (or ordered at all when tied).
    wrong_pairs: usize,
    /// Items drawn, and the plan's.
    drawn: (usize, usize),
}

fn run(population: &Population, design: &Design, seed: u64) -> RunEnd {
    let models = population.outcomes.len();
    let mut procedure = Procedure::new(design.clone(), models, population.plan(seed));
    let truth = |measure: &Measure| match *measure {
        Measure::Level { model, .. } => (population.truth(model), population.truth(model)),
        Measure::Order { first, second } => {
            let d = population.truth(first) - population.truth(second);
            (d, d)
        }
    };
    let mut missed = vec![false; procedure.quantities().len()];
    procedure.run_on(
        |m, item| population.outcome(m, item),
        |procedure| {
            for (q, miss) in procedure.quantities().iter().zip(&mut missed) {
                let (t, _) = truth(&q.measure);
                // Compliance is 1 everywhere here.
                let t = match q.measure {
                    Measure::Level {
                        level: autoeval_sequential::procedure::Level::Compliance,
                        ..
                    } => 1.0,
                    _ => t,
                };
                if !q.interval.contains(t)
                    && (q.interval.lower - t).abs() > 1e-9
                    && (q.interval.upper - t).abs() > 1e-9
                {
                    *miss = true;
                }
            }
        },
    );
    let wrong_pairs = procedure
        .quantities()
        .iter()
        .filter(|q| matches!(q.measure, Measure::Order { .. }))
        .filter(|q| {
            let (d, _) = truth(&q.measure);
            match q.order() {
                Some(std::cmp::Ordering::Greater) => d <= 0.0,
                Some(std::cmp::Ordering::Less) => d >= 0.0,
                _ => false,
            }
        })
        .count();
    RunEnd {
        missed,
        wrong_pairs,
        drawn: procedure.items_drawn(0),
    }
}

#[test]
fn every_interval_covers_the_plans_mean_at_every_wave_in_all_but_alpha_of_runs() {
    let population = Population::new(10, 150, &[0.005, 0.02, 0.04, 0.07], 7);
    let betting = Design {
        precision: 0.02,
        ..Design::default()
    };
    for design in [betting.clone(), betting.bernstein()] {
        covers_in_all_but_alpha(&population, &design);
    }
}

/// Runs `design` 300 times over `population` and holds its coverage and orders.
fn covers_in_all_but_alpha(population: &Population, design: &Design) {
    let runs = 300;
    let ends: Vec<RunEnd> = (0..runs).map(|s| run(population, design, s)).collect();
    let quantities = ends[0].missed.len();
    for q in 0..quantities {
        let misses = ends.iter().filter(|e| e.missed[q]).count();
        assert!(
            misses as f64 <= design.alpha * runs as f64,
            "quantity {q} missed in {misses} of {runs} runs"
        );
    }
    let wrong = ends.iter().filter(|e| e.wrong_pairs > 0).count();
    assert!(
        wrong as f64 <= design.alpha * runs as f64,
        "{wrong} runs ordered a pair wrongly"
    );
    let mut drawn: Vec<usize> = ends.iter().map(|e| e.drawn.0).collect();
    drawn.sort_unstable();
    let (median, plan) = (drawn[runs as usize / 2], ends[0].drawn.1);
    eprintln!(
        "{:?}: items drawn: median {median} of {plan}; p90 {}",
        design.method,
        drawn[runs as usize * 9 / 10]
    );
}

#[test]
fn peeking_at_a_fixed_sample_test_orders_two_equal_models_far_more_often_than_alpha() {
    // Model 1 is model 0's twin: the same accuracy in every stratum.
    let population = Population::new(10, 150, &[0.03], 11).with_twin(0, 12);
    assert_eq!(population.truth(0), population.truth(1));
    let design = Design {
        decide: Decide::Order,
        ..Design::default()
    };
    let naive_design = Design {
        method: Method::Naive,
        ..design.bernstein()
    };
    let runs = 300;
    let ordered = |ends: &[RunEnd]| ends.iter().filter(|e| e.wrong_pairs > 0).count();
    let naive: Vec<RunEnd> = (0..runs)
        .map(|s| run(&population, &naive_design, s))
        .collect();
    let valid: Vec<RunEnd> = (0..runs).map(|s| run(&population, &design, s)).collect();
    let (naive, valid) = (ordered(&naive), ordered(&valid));
    eprintln!("equal models ordered: naive {naive} of {runs}, confidence sequence {valid}");
    // At most α in expectation: allow the binomial's own spread (three
    // standard deviations) over 300 runs, far below what the naive reaches.
    let (n, a) = (runs as f64, design.alpha);
    let allowed = a * n + 3.0 * (n * a * (1.0 - a)).sqrt();
    assert!(valid as f64 <= allowed, "valid ordered {valid} of {runs}");
    assert!(
        naive as f64 > 2.0 * design.alpha * runs as f64,
        "naive ordered {naive} of {runs}"
    );
}

#[test]
fn models_far_apart_are_ordered_after_a_fraction_of_the_plan() {
    let population = Population::new(10, 150, &[0.0, 0.05, 0.1], 3);
    let design = Design {
        decide: Decide::Order,
        ..Design::default()
    };
    let end = run(&population, &design, 1);
    assert_eq!(end.wrong_pairs, 0);
    assert!(end.drawn.0 * 4 < end.drawn.1, "drew {:?}", end.drawn);
}

#[test]
fn the_best_is_found_with_fewer_items_than_the_full_order() {
    // Model 0 is clearly best; models 1 and 2 are close to each other.
    let population = Population::new(10, 150, &[0.0, 0.04, 0.045], 5);
    let at = |decide| Design {
        decide,
        ..Design::default()
    };
    let (best, order) = (at(Decide::Best), at(Decide::Order));
    let models = population.outcomes.len();
    let mut used = (0, 0);
    for seed in 0..20 {
        let mut p = Procedure::new(best.clone(), models, population.plan(seed));
        p.run_on(|m, item| population.outcome(m, item), |_| {});
        assert_eq!(p.best(0), Some(0), "seed {seed}");
        used.0 += p.answers();
        let mut p = Procedure::new(order.clone(), models, population.plan(seed));
        p.run_on(|m, item| population.outcome(m, item), |_| {});
        used.1 += p.answers();
    }
    assert!(
        used.0 < used.1,
        "best {} answers, the order {}",
        used.0,
        used.1
    );
}

#[test]
fn a_question_decided_with_a_wave_in_flight_records_it_and_takes_its_answers_in() {
    let population = Population::new(10, 150, &[0.0, 0.05, 0.1], 3);
    let design = Design {
        decide: Decide::Order,
        ..Design::default()
    };
    let mut p = Procedure::new(design, 3, population.plan(1));
    let mut waves: std::collections::VecDeque<_> = p.hand_out().into();
    assert_eq!(waves.len(), 2, "one wave runs while the next is queued");
    assert!(p.hand_out().is_empty(), "no third before the first is seen");
    // Per pair: the differences of the items both its models answered.
    let mut differences = vec![Vec::new(); p.quantities().len()];
    let mut observed = 0;
    let mut decided_in_flight = 0;
    while let Some(wave) = waves.pop_front() {
        let before: Vec<_> = p.quantities().iter().map(|q| q.decided).collect();
        p.observe(&wave, |m, item| population.outcome(m, item));
        let part = &wave.parts[0];
        observed += part.items.len();
        let in_flight: usize = waves.iter().map(|w| w.parts[0].items.len()).sum();
        for (i, q) in p.quantities().iter().enumerate() {
            let Measure::Order { first, second } = q.measure else {
                continue;
            };
            if part.models.contains(&first) && part.models.contains(&second) {
                for (_, item) in &part.items {
                    let (a, b) = (
                        population.outcome(first, item).accurate.unwrap(),
                        population.outcome(second, item).accurate.unwrap(),
                    );
                    differences[i].push(a - b);
                }
            }
            if let (None, Some(d)) = (before[i], q.decided) {
                assert_eq!((d.items, d.in_flight), (observed, in_flight));
                decided_in_flight += usize::from(in_flight > 0 && !d.spent);
            }
        }
        waves.extend(p.hand_out());
    }
    assert!(
        decided_in_flight > 0,
        "no pair was decided with a wave in flight"
    );
    // Every answer drawn counts in a pair's figure, those drawn past its decision too.
    for (q, values) in p.quantities().iter().zip(&differences) {
        if let (Measure::Order { .. }, Some(d)) = (q.measure, q.decided) {
            assert!(values.len() >= d.items + d.in_flight);
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            assert!(
                (q.estimate - mean).abs() < 1e-9,
                "{} against {mean}",
                q.estimate
            );
        }
    }
}
