//! Confidence sequences and tests by betting (Waudby-Smith & Ramdas,
//! "Estimating means of bounded random variables by betting", JRSS-B 2023),
//! computed as the reference implementation (`confseq`'s `hedged_cs` and
//! `betting_mart`) computes them, so that the two agree to the grid:
//!
//! - a gambler bets against each candidate mean m on every observation
//!   x ∈ [0, 1], with the predictable plug-in bet λ_t (the same for every
//!   m), truncated at c/μ_t so that no bet can lose more than c of the
//!   capital; two gamblers bet on x above and below m, and the hedged
//!   capital is the larger of θK⁺ and (1−θ)K⁻;
//! - by Ville's inequality, the capital of the true mean passes 1/α with
//!   probability at most α, ever: the candidates whose capital stays at
//!   most 1/α form a confidence sequence, valid at every t at once;
//! - sampling without replacement from a population of N, the gamblers
//!   bet against the mean of what is left, μ_t = (N·m − S_{t−1})/(N − t + 1),
//!   and the interval closes on the population's mean when all is drawn.
//!
//! [`SignTest`] is the same gamble at m = ½ on a paired difference
//! d ∈ {−1, 0, +1} read as (d + 1)/2: an e-process for "the first model is
//! no better", and one for "no worse". [`e_bh`] combines the e-values of a
//! family of hypotheses under any dependence between them.

/// Bets past this share of the capital are never made (`trunc_scale`).
const TRUNCATION: f64 = 0.5;

/// Candidate means on the grid: i/BREAKS for i = 0..=BREAKS.
pub const BREAKS: u32 = 1000;

/// The running estimates the predictable plug-in bet is made from.
#[derive(Clone, Debug)]
struct PlugIn {
    t: u64,
    sum: f64,
    squares: f64,
    variance: f64,
}

impl PlugIn {
    fn new() -> PlugIn {
        PlugIn {
            t: 0,
            sum: 0.0,
            squares: 0.0,
            variance: 0.25,
        }
    }

    /// The bet on the next observation at level `alpha`: the
    /// predictable-mixture empirical-Bernstein rule,
    /// √(2 ln(1/α) / (t ln(1+t) σ̂²_{t−1})).
    fn bet(&self, alpha: f64) -> f64 {
        let t = (self.t + 1) as f64;
        let bet = (2.0 * (1.0 / alpha).ln() / (t * (1.0 + t).ln() * self.variance)).sqrt();
        if bet.is_nan() {
            0.0
        } else {
            bet
        }
    }

    /// Takes in `x`: a regularised mean and variance that include it.
    fn observe(&mut self, x: f64) {
        self.t += 1;
        self.sum += x;
        let t = self.t as f64;
        let mean = ((0.5 + self.sum) / (t + 1.0)).min(1.0);
        self.squares += (x - mean).powi(2);
        self.variance = (0.25 + self.squares) / (t + 1.0);
    }
}

/// The mean the gamblers bet against at the next observation, for the
/// candidate population mean `m`: `m` itself with replacement, the mean
/// of what is left without. `None` where no population is left with that
/// mean (the candidate is then refuted for good).
fn target(m: f64, population: Option<u64>, drawn: u64, sum: f64) -> Option<f64> {
    let Some(n) = population else {
        return Some(m);
    };
    let left = n.checked_sub(drawn).filter(|&l| l > 0)? as f64;
    let mu = (n as f64 * m - sum) / left;
    (0.0..=1.0).contains(&mu).then_some(mu)
}

/// One gamble's factors on `x` against `mu`, with bets `up` and `down`.
fn factors(x: f64, mu: f64, up: f64, down: f64) -> (f64, f64) {
    let up = up.min(TRUNCATION / mu);
    let down = down.min(TRUNCATION / (1.0 - mu));
    (1.0 + up * (x - mu), 1.0 - down * (x - mu))
}

/// The hedged-capital confidence sequence of the mean of observations in
/// [0, 1], with or without replacement, as `confseq.betting.hedged_cs`
/// computes it with its defaults (θ = ½, c = ½, 1000 breaks, the running
/// intersection).
#[derive(Clone, Debug)]
pub struct HedgedSequence {
    alpha: f64,
    theta: f64,
    population: Option<u64>,
    plug_in: PlugIn,
    /// K⁺ and K⁻ of each candidate on the grid; `None` once refuted for good.
    capital: Vec<Option<(f64, f64)>>,
    bounds: (f64, f64),
}

impl HedgedSequence {
    /// A sequence at level `alpha` for draws with replacement (`None`) or
    /// without, from a population of `population`.
    pub fn new(alpha: f64, population: Option<u64>) -> HedgedSequence {
        HedgedSequence {
            alpha,
            theta: 0.5,
            population,
            plug_in: PlugIn::new(),
            capital: vec![Some((1.0, 1.0)); BREAKS as usize + 1],
            bounds: (0.0, 1.0),
        }
    }

    /// Observations taken so far.
    pub fn drawn(&self) -> u64 {
        self.plug_in.t
    }

    /// Takes in the next observation, in [0, 1].
    pub fn push(&mut self, x: f64) {
        let (drawn, sum) = (self.plug_in.t, self.plug_in.sum);
        let up = self.plug_in.bet(self.alpha * self.theta);
        let down = self.plug_in.bet(self.alpha * (1.0 - self.theta));
        for (i, slot) in self.capital.iter_mut().enumerate() {
            let Some((plus, minus)) = *slot else {
                continue;
            };
            let m = i as f64 * (1.0 / f64::from(BREAKS));
            *slot = target(m, self.population, drawn, sum).map(|mu| {
                let (f_plus, f_minus) = factors(x, mu, up, down);
                (plus * f_plus, minus * f_minus)
            });
        }
        self.plug_in.observe(x);
        let (lower, upper) = self.raw_bounds();
        self.bounds = (self.bounds.0.max(lower), self.bounds.1.min(upper));
    }

    /// Whether the candidate at grid index `i` still stands: its hedged
    /// capital at most 1/α.
    fn stands(&self, i: usize) -> bool {
        self.capital[i].is_some_and(|(plus, minus)| {
            (self.theta * plus).max((1.0 - self.theta) * minus) <= 1.0 / self.alpha
        })
    }

    /// This step's interval before the running intersection: the standing
    /// candidates padded by a break, and what the draws alone prove.
    fn raw_bounds(&self) -> (f64, f64) {
        let step = 1.0 / f64::from(BREAKS);
        let grid = |i: usize| i as f64 * step;
        let first = (0..self.capital.len()).find(|&i| self.stands(i));
        let last = (0..self.capital.len()).rev().find(|&i| self.stands(i));
        let (mut lower, mut upper) = match (first, last) {
            (Some(first), Some(last)) => {
                ((grid(first) - step).max(0.0), (grid(last) + step).min(1.0))
            }
            _ => (0.0, 1.0),
        };
        if let Some(n) = self.population {
            let (t, sum) = (self.plug_in.t as f64, self.plug_in.sum);
            lower = lower.max(sum / n as f64);
            upper = upper.min(1.0 - (t - sum) / n as f64);
        }
        (lower, upper)
    }

    /// The interval: every step's, intersected.
    pub fn interval(&self) -> (f64, f64) {
        self.bounds
    }
}

/// An e-process for the sign of a paired difference d ∈ {−1, 0, +1}:
/// the capital of betting that its mean is above 0 ([`SignTest::above`]),
/// and of betting that it is below ([`SignTest::below`]), each with the
/// plug-in bet at level α (not halved: each is a one-sided test). Either
/// passing 1/α rejects, with error at most α, its null ("no above", "no
/// below") at that moment or any later one.
#[derive(Clone, Debug)]
pub struct SignTest {
    alpha: f64,
    population: Option<u64>,
    plug_in: PlugIn,
    above: f64,
    below: f64,
}

impl SignTest {
    /// A test at level `alpha`, on pairs drawn with replacement (`None`) or
    /// without, from a population of `population` pairs.
    pub fn new(alpha: f64, population: Option<u64>) -> SignTest {
        SignTest {
            alpha,
            population,
            plug_in: PlugIn::new(),
            above: 1.0,
            below: 1.0,
        }
    }

    /// Takes in the next difference, −1, 0 or +1.
    pub fn push(&mut self, d: i8) {
        let x = (f64::from(d) + 1.0) / 2.0;
        let bet = self.plug_in.bet(self.alpha);
        let mu = target(0.5, self.population, self.plug_in.t, self.plug_in.sum);
        match mu {
            Some(mu) => {
                let (up, down) = factors(x, mu, bet, bet);
                self.above *= up;
                self.below *= down;
            }
            // No population with a mean difference of 0 is left: the draws
            // alone settle the sign, above when they already sum past half
            // of the whole population (the rest would need a mean below 0).
            None => {
                let n = self.population.unwrap_or(0) as f64;
                let ahead = self.plug_in.sum > 0.5 * n;
                let (won, lost) = if ahead {
                    (&mut self.above, &mut self.below)
                } else {
                    (&mut self.below, &mut self.above)
                };
                *won = f64::INFINITY;
                *lost = 0.0;
            }
        }
        self.plug_in.observe(x);
    }

    /// The e-value against "the mean difference is at most 0".
    pub fn above(&self) -> f64 {
        self.above
    }

    /// The e-value against "the mean difference is at least 0".
    pub fn below(&self) -> f64 {
        self.below
    }
}

/// e-BH (Wang & Ramdas 2022) at level `alpha`: which of the hypotheses
/// whose e-values are `e` are rejected, the false discovery rate at most
/// α under any dependence. The k* largest are rejected, k* the largest k
/// with e_(k) ≥ K/(kα).
pub fn e_bh(e: &[f64], alpha: f64) -> Vec<bool> {
    let k = e.len();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| e[b].total_cmp(&e[a]));
    let cut = (1..=k)
        .filter(|&r| e[order[r - 1]] >= k as f64 / (r as f64 * alpha))
        .max()
        .unwrap_or(0);
    let mut rejected = vec![false; k];
    for &i in &order[..cut] {
        rejected[i] = true;
    }
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,1,1,1,0,1,1,0,1,1 repeated: the sequence the golden values of
    /// the reference implementation were printed for.
    fn fixed() -> Vec<f64> {
        (0..100)
            .map(|i| if (i * 7) % 10 < 8 { 1.0 } else { 0.0 })
            .collect()
    }

    /// `confseq.betting.hedged_cs(x, alpha=0.05, N=…)` at t = 1..=20, then
    /// at 50 and 100, as confseq 0.0.11 printed them.
    const WITH: [(f64, f64); 20] = [
        (0.000, 1.000),
        (0.034, 1.000),
        (0.171, 1.000),
        (0.248, 1.000),
        (0.248, 1.000),
        (0.262, 1.000),
        (0.317, 1.000),
        (0.317, 1.000),
        (0.317, 1.000),
        (0.360, 1.000),
        (0.397, 1.000),
        (0.430, 1.000),
        (0.460, 1.000),
        (0.487, 1.000),
        (0.487, 1.000),
        (0.487, 1.000),
        (0.495, 1.000),
        (0.495, 0.992),
        (0.495, 0.992),
        (0.497, 0.992),
    ];
    const WITHOUT: [(f64, f64); 20] = [
        (0.010, 1.000),
        (0.038, 1.000),
        (0.179, 1.000),
        (0.259, 1.000),
        (0.259, 0.990),
        (0.277, 0.990),
        (0.333, 0.990),
        (0.333, 0.980),
        (0.334, 0.980),
        (0.379, 0.980),
        (0.418, 0.980),
        (0.452, 0.980),
        (0.483, 0.980),
        (0.510, 0.980),
        (0.510, 0.970),
        (0.510, 0.970),
        (0.520, 0.970),
        (0.520, 0.960),
        (0.520, 0.960),
        (0.528, 0.960),
    ];

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6
    }

    #[test]
    fn the_hedged_sequence_is_the_reference_implementations_to_the_grid() {
        for (population, golden, at_50, at_100) in [
            (None, WITH, (0.621, 0.944), (0.672, 0.917)),
            (Some(100), WITHOUT, (0.665, 0.900), (0.800, 0.800)),
        ] {
            let mut cs = HedgedSequence::new(0.05, population);
            for (t, x) in fixed().into_iter().enumerate() {
                cs.push(x);
                let got = cs.interval();
                if t < 20 {
                    assert!(close(got, golden[t]), "{population:?} t={}: {got:?}", t + 1);
                }
                if t + 1 == 50 {
                    assert!(close(got, at_50), "{population:?} t=50: {got:?}");
                }
            }
            assert!(
                close(cs.interval(), at_100),
                "{population:?} t=100: {:?}",
                cs.interval()
            );
        }
    }

    #[test]
    fn the_capital_of_one_candidate_is_the_reference_implementations() {
        // `betting_mart(x[:20], 0.5, theta=1)` and `theta=0`: K⁺ and K⁻ at m = ½.
        for (population, plus, minus) in [
            (None, 38.100360736963516, 9.515077750480852e-05),
            (Some(100), 76.36798889786161, 6.231380313018036e-05),
        ] {
            let mut cs = HedgedSequence::new(0.05, population);
            for x in fixed().into_iter().take(20) {
                cs.push(x);
            }
            let (k_plus, k_minus) = cs.capital[(BREAKS / 2) as usize].unwrap();
            assert!((k_plus / plus - 1.0).abs() < 1e-9, "{k_plus} {plus}");
            assert!((k_minus / minus - 1.0).abs() < 1e-9, "{k_minus} {minus}");
        }
    }

    #[test]
    fn the_sign_test_is_the_reference_implementations_capital() {
        // `betting_mart((d+1)/2, 0.5, alpha=0.05, theta=1)` and `theta=0`.
        let pattern = [1, 1, 0, -1, 1, 1, -1, 1, 0, 1];
        let mut test = SignTest::new(0.05, None);
        let mut at = Vec::new();
        for i in 0..30 {
            test.push(pattern[i % 10]);
            at.push((test.above(), test.below()));
        }
        assert!((at[0].0 - 1.5).abs() < 1e-12 && (at[0].1 - 0.5).abs() < 1e-12);
        assert!((at[19].0 / 7.5722394853 - 1.0).abs() < 1e-9, "{:?}", at[19]);
        assert!(
            (at[19].1 / 1.760651958e-03 - 1.0).abs() < 1e-8,
            "{:?}",
            at[19]
        );
        assert!((at[29].0 / 19.000060773 - 1.0).abs() < 1e-9, "{:?}", at[29]);
        assert!(at[29].0 < 20.0, "not yet past 1/α at 30 pairs");
    }

    #[test]
    fn without_replacement_the_draws_alone_can_settle_the_sign() {
        // Of 10 pairs, 6 first wins: the mean difference is above 0,
        // whatever the 4 left are.
        let mut test = SignTest::new(0.05, Some(10));
        for _ in 0..6 {
            test.push(1);
        }
        assert!(test.above().is_finite(), "still a gamble after 6 of 10");
        test.push(-1);
        assert_eq!((test.above(), test.below()), (f64::INFINITY, 0.0));
        // And 6 first losses settle it below.
        let mut test = SignTest::new(0.05, Some(10));
        for _ in 0..7 {
            test.push(-1);
        }
        assert_eq!((test.above(), test.below()), (0.0, f64::INFINITY));
    }

    #[test]
    fn e_bh_rejects_as_its_definition_says() {
        let e = [50.0, 30.0, 12.0, 8.0, 2.0, 1.0, 0.5, 0.2];
        let at = |alpha| -> Vec<f64> {
            e_bh(&e, alpha)
                .iter()
                .zip(e)
                .filter(|(r, _)| **r)
                .map(|(_, v)| v)
                .collect()
        };
        assert_eq!(at(0.2), [50.0, 30.0]);
        assert!(at(0.1).is_empty());
        // Order does not matter.
        let shuffled = [2.0, 50.0, 0.2, 30.0];
        assert_eq!(e_bh(&shuffled, 0.1), [false, true, false, true]);
    }

    #[test]
    fn without_replacement_the_interval_closes_on_the_population_mean() {
        let population: Vec<f64> = (0..40).map(|i| f64::from(i % 3 == 0)).collect();
        let mean = population.iter().sum::<f64>() / 40.0;
        let mut cs = HedgedSequence::new(0.05, Some(40));
        for x in &population {
            cs.push(*x);
            let (l, u) = cs.interval();
            assert!(l <= mean + 1e-12 && mean <= u + 1e-12, "{l} {mean} {u}");
        }
        let (l, u) = cs.interval();
        assert!(
            (l - mean).abs() < 1e-9 && (u - mean).abs() < 1e-9,
            "{l} {u}"
        );
    }
}
