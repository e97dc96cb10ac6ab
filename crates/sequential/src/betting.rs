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
//! On a paired difference d ∈ {−1, 0, +1} read as (d + 1)/2, the two
//! gamblers of m = ½ are e-processes for "the first model is no better"
//! and "no worse" ([`HedgedSequence::evidence`]).

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

    /// The bet of a gambler against a mean `aim` away from the truth, on
    /// the variance so far: ε/(σ̂² + ε²), what grows the capital of such a
    /// candidate fastest (the Kelly bet of the aGRAPA rule at m = μ̂ − ε).
    fn aimed(&self, aim: f64) -> f64 {
        aim / (self.variance + aim * aim)
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

/// One gamble's factors on `x` against `mu`, with bets `up` and `down`,
/// neither risking more than `c` of the capital.
fn factors(x: f64, mu: f64, up: f64, down: f64, c: f64) -> (f64, f64) {
    let up = up.min(c / mu);
    let down = down.min(c / (1.0 - mu));
    (1.0 + up * (x - mu), 1.0 - down * (x - mu))
}

/// One candidate mean's two gamblers: their capital now and the most
/// each has ever held (the running intersection of the sequence is the
/// set of candidates whose peaks stay below the threshold).
#[derive(Clone, Copy, Debug)]
struct Gamblers {
    plus: f64,
    minus: f64,
    peak_plus: f64,
    peak_minus: f64,
}

impl Gamblers {
    const START: Gamblers = Gamblers {
        plus: 1.0,
        minus: 1.0,
        peak_plus: 1.0,
        peak_minus: 1.0,
    };

    /// Both gamblers' capital times these factors.
    fn times(self, (up, down): (f64, f64)) -> Gamblers {
        let (plus, minus) = (self.plus * up, self.minus * down);
        Gamblers {
            plus,
            minus,
            peak_plus: self.peak_plus.max(plus),
            peak_minus: self.peak_minus.max(minus),
        }
    }

    /// The candidate settled for good by the draws: the gambler on the
    /// side the draws already prove wins everything.
    fn settled(self, above: bool) -> Gamblers {
        let mut g = self;
        if above {
            g.peak_plus = f64::INFINITY;
        } else {
            g.peak_minus = f64::INFINITY;
        }
        g
    }

    /// The hedged peak: the larger of θ·K⁺ and (1−θ)·K⁻ at their highest.
    fn hedged_peak(&self, theta: f64) -> f64 {
        (theta * self.peak_plus).max((1.0 - theta) * self.peak_minus)
    }
}

/// The hedged-capital confidence sequence of the mean of observations in
/// [0, 1], with or without replacement, as `confseq.betting.hedged_cs`
/// computes it (θ = ½, 1000 breaks, the running intersection; the
/// truncation c = ½ unless [`HedgedSequence::with_truncation`] says).
///
/// It is read at its own level α or at any larger one (a narrower
/// interval): a candidate whose capital ever passed 1/α can stand at no
/// level it is read at, and is dropped. The candidate m = ½ is followed
/// to the end whatever happens to it: its two gamblers are the e-processes
/// of "the mean is at most ½" and "at least ½" ([`HedgedSequence::evidence`]).
#[derive(Clone, Debug)]
pub struct HedgedSequence {
    alpha: f64,
    theta: f64,
    truncation: f64,
    /// The half-width the bets aim to reach, if any (else the predictable
    /// mixture's bets).
    aim: Option<f64>,
    population: Option<u64>,
    plug_in: PlugIn,
    /// The gamblers of each candidate on the grid; `None` once refuted at α.
    grid: Vec<Option<Gamblers>>,
    /// The first and last grid index that may still stand.
    span: (usize, usize),
    /// The gamblers of m = ½.
    half: Gamblers,
}

impl HedgedSequence {
    /// A sequence at level `alpha` for draws with replacement (`None`) or
    /// without, from a population of `population`.
    pub fn new(alpha: f64, population: Option<u64>) -> HedgedSequence {
        HedgedSequence {
            alpha,
            theta: 0.5,
            truncation: TRUNCATION,
            aim: None,
            population,
            plug_in: PlugIn::new(),
            grid: vec![Some(Gamblers::START); BREAKS as usize + 1],
            span: (0, BREAKS as usize),
            half: Gamblers::START,
        }
    }

    /// The same sequence with no bet past `c` of the capital (`trunc_scale`, in (0, 1]).
    pub fn with_truncation(mut self, c: f64) -> HedgedSequence {
        self.truncation = c.clamp(f64::MIN_POSITIVE, 1.0);
        self
    }

    /// The same sequence betting to reach a half-width of `aim` fastest
    /// (every candidate with the same bet, so the capital still falls as
    /// the candidate rises, and one e-process serves every candidate on
    /// one side).
    pub fn aimed_at(mut self, aim: f64) -> HedgedSequence {
        self.aim = Some(aim);
        self
    }

    /// Observations taken so far.
    pub fn drawn(&self) -> u64 {
        self.plug_in.t
    }

    /// Whether every value of its population has been drawn (never, with replacement).
    pub fn complete(&self) -> bool {
        self.population.is_some_and(|n| self.plug_in.t >= n)
    }

    /// The mean of the observations so far (½ before any).
    pub fn mean(&self) -> f64 {
        if self.plug_in.t == 0 {
            0.5
        } else {
            self.plug_in.sum / self.plug_in.t as f64
        }
    }

    /// Takes in the next observation, in [0, 1].
    pub fn push(&mut self, x: f64) {
        let x = x.clamp(0.0, 1.0);
        let (drawn, sum) = (self.plug_in.t, self.plug_in.sum);
        let (up, down) = match self.aim {
            Some(aim) => (self.plug_in.aimed(aim), self.plug_in.aimed(aim)),
            None => (
                self.plug_in.bet(self.alpha * self.theta),
                self.plug_in.bet(self.alpha * (1.0 - self.theta)),
            ),
        };
        let (c, theta, refuted) = (self.truncation, self.theta, 1.0 / self.alpha);
        let step = 1.0 / f64::from(BREAKS);
        for i in self.span.0..=self.span.1 {
            let Some(gamblers) = self.grid[i] else {
                continue;
            };
            self.grid[i] = target(i as f64 * step, self.population, drawn, sum)
                .map(|mu| gamblers.times(factors(x, mu, up, down, c)))
                .filter(|g| g.hedged_peak(theta) <= refuted);
        }
        while self.span.0 < self.span.1 && self.grid[self.span.0].is_none() {
            self.span.0 += 1;
        }
        while self.span.1 > self.span.0 && self.grid[self.span.1].is_none() {
            self.span.1 -= 1;
        }
        self.half = match target(0.5, self.population, drawn, sum) {
            Some(mu) => self.half.times(factors(x, mu, up, down, c)),
            // No population with mean ½ is left: the draws alone settle
            // which side the mean is on.
            None => {
                let n = self.population.unwrap_or(0) as f64;
                self.half.settled(sum > 0.5 * n)
            }
        };
        self.plug_in.observe(x);
    }

    /// A draw that can never be observed: the population it was drawn
    /// from shrinks by one (without replacement; nothing with).
    pub fn skip(&mut self) {
        if let Some(n) = &mut self.population {
            *n = n.saturating_sub(1).max(self.plug_in.t);
        }
    }

    /// The interval at the sequence's level α: every step's, intersected.
    pub fn interval(&self) -> (f64, f64) {
        self.interval_at(self.alpha)
    }

    /// The interval at level `level` (at least the sequence's α): the
    /// candidates whose hedged capital never passed 1/level, padded by a
    /// break, within what the draws alone prove.
    pub fn interval_at(&self, level: f64) -> (f64, f64) {
        let threshold = 1.0 / level.max(self.alpha);
        let theta = self.theta;
        let stands = |i: &usize| self.grid[*i].is_some_and(|g| g.hedged_peak(theta) <= threshold);
        let step = 1.0 / f64::from(BREAKS);
        let first = (self.span.0..=self.span.1).find(stands);
        let last = (self.span.0..=self.span.1).rev().find(stands);
        let (mut lower, mut upper) = match (first, last) {
            (Some(first), Some(last)) => (
                (first as f64 * step - step).max(0.0),
                (last as f64 * step + step).min(1.0),
            ),
            _ => (0.0, 1.0),
        };
        if let Some(n) = self.population {
            let (t, sum) = (self.plug_in.t as f64, self.plug_in.sum);
            lower = lower.max(sum / n as f64);
            upper = upper.min(1.0 - (t - sum) / n as f64);
        }
        (lower, upper.max(lower))
    }

    /// The e-values, at their highest so far, against "the mean is at most
    /// ½" and against "the mean is at least ½": each gambler's capital at
    /// m = ½, which no bet can make pass 1/a with probability over a
    /// under its null (the capital of any mean on the null's side is at
    /// least as large, and is a test martingale).
    pub fn evidence(&self) -> (f64, f64) {
        (self.half.peak_plus, self.half.peak_minus)
    }
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
            let (k_plus, k_minus) = (cs.half.plus, cs.half.minus);
            assert!((k_plus / plus - 1.0).abs() < 1e-9, "{k_plus} {plus}");
            assert!((k_minus / minus - 1.0).abs() < 1e-9, "{k_minus} {minus}");
            // The grid's candidate ½ is the same gamble, until refuted.
            if let Some(g) = cs.grid[(BREAKS / 2) as usize] {
                assert_eq!((g.plus, g.minus), (k_plus, k_minus));
            }
            assert_eq!(cs.evidence().0, k_plus, "K⁺ at ½ is at its highest yet");
        }
    }

    #[test]
    fn without_replacement_the_draws_alone_can_settle_the_sign() {
        // Of 10 pairs, 6 first wins ((d+1)/2 = 1): the mean is above ½
        // whatever the 4 left are.
        let mut cs = HedgedSequence::new(0.05, Some(10));
        for _ in 0..6 {
            cs.push(1.0);
        }
        assert!(cs.evidence().0.is_finite(), "still a gamble after 6 of 10");
        cs.push(0.0);
        assert_eq!(cs.evidence().0, f64::INFINITY);
        assert!(cs.interval().0 > 0.5, "{:?}", cs.interval());
        // And 6 first losses settle it below.
        let mut cs = HedgedSequence::new(0.05, Some(10));
        for _ in 0..7 {
            cs.push(0.0);
        }
        assert_eq!(cs.evidence().1, f64::INFINITY);
        assert!(cs.interval().1 < 0.5, "{:?}", cs.interval());
    }

    #[test]
    fn a_larger_level_reads_a_narrower_interval_of_the_same_bets() {
        let mut cs = HedgedSequence::new(0.01, Some(200));
        for x in fixed().into_iter().take(60) {
            cs.push(x);
        }
        let (wide, narrow) = (cs.interval(), cs.interval_at(0.1));
        assert!(
            wide.0 <= narrow.0 && narrow.1 <= wide.1,
            "{wide:?} {narrow:?}"
        );
        assert!(narrow.1 - narrow.0 < wide.1 - wide.0, "{wide:?} {narrow:?}");
        // Below its own level it reads at its own.
        assert_eq!(cs.interval_at(0.001), wide);
    }

    #[test]
    fn a_draw_never_observed_shrinks_the_population() {
        let mut cs = HedgedSequence::new(0.05, Some(4));
        cs.push(1.0);
        cs.skip();
        cs.push(1.0);
        cs.push(1.0);
        // Three of what are now three: the mean is known.
        assert_eq!(cs.interval(), (1.0, 1.0));
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
