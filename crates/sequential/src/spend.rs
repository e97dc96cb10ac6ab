//! What a run `--until decided` paid beside what its full plan would have:
//! model calls, tokens and cost at list prices. The plan's figures are
//! extrapolated per model from what each paid per unit it ran, since every
//! model's plan is the same units and a model's units cost alike on
//! average; with one round a unit the calls are exact.

use autoeval_proto::ResultRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one model's rounds paid.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ModelSpend {
    /// Units begun (their first rounds).
    units: u64,
    /// Rounds recorded.
    rounds: u64,
    /// Rounds whose calls the response cache answered.
    cached: u64,
    /// Prompt plus completion tokens paid.
    tokens: u64,
    /// Cost paid in USD; `None` once a round is unpriced.
    usd: Option<f64>,
}

/// Each model's spend, folded from the records.
#[derive(Default)]
pub struct SpendByModel(BTreeMap<String, ModelSpend>);

impl SpendByModel {
    /// Takes in one record.
    pub fn add(&mut self, r: &ResultRecord) {
        let m = self.0.entry(r.model.clone()).or_insert(ModelSpend {
            usd: Some(0.0),
            ..ModelSpend::default()
        });
        m.units += u64::from(r.round == 1);
        m.rounds += 1;
        if r.cached {
            m.cached += 1;
            return;
        }
        m.tokens += r.usage.prompt_tokens + r.usage.completion_tokens;
        m.usd = m.usd.zip(r.cost).map(|(a, b)| a + b);
    }

    /// The run's spend beside its plan's, each model's plan being
    /// `plan_units_per_model` units.
    pub fn beside_plan(&self, plan_units_per_model: usize) -> Spend {
        let plan = plan_units_per_model as f64;
        // A model's figure for its whole plan, at its rate per unit so far.
        let scale = |used: f64, m: &ModelSpend| used / m.units.max(1) as f64 * plan;
        let mut spend = Spend {
            usd: Some(0.0),
            plan_usd: Some(0.0),
            ..Spend::default()
        };
        for m in self.0.values() {
            // Two calls a round: the translation and the translation back.
            spend.calls += 2 * (m.rounds - m.cached);
            spend.plan_calls += scale(2.0 * m.rounds as f64, m).round() as u64;
            spend.tokens += m.tokens;
            spend.plan_tokens += scale(m.tokens as f64, m).round() as u64;
            spend.usd = spend.usd.zip(m.usd).map(|(a, b)| a + b);
            spend.plan_usd = spend.plan_usd.zip(m.usd).map(|(a, b)| a + scale(b, m));
        }
        spend
    }
}

/// Calls, tokens and cost the run paid, beside its full plan's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Model calls made (the response cache's answers not counted).
    pub calls: u64,
    /// Model calls the full plan makes (exact with one round a unit, else
    /// at the rounds per unit seen).
    pub plan_calls: u64,
    /// Tokens paid.
    pub tokens: u64,
    /// Tokens the full plan would pay.
    pub plan_tokens: u64,
    /// Cost paid in USD at list prices; `None` when a model is unpriced.
    pub usd: Option<f64>,
    /// What the full plan would cost in USD at list prices.
    pub plan_usd: Option<f64>,
}

impl Spend {
    /// One line: calls, tokens and cost beside the plan's.
    pub fn line(&self) -> String {
        let share = |a: f64, b: f64| {
            if b > 0.0 {
                format!(" ({:.1}%)", 100.0 * a / b)
            } else {
                String::new()
            }
        };
        let cost = match (self.usd, self.plan_usd) {
            (Some(usd), Some(plan)) => format!(
                "${usd:.4} of the plan's ${plan:.4} at list prices{}",
                share(usd, plan)
            ),
            _ => "cost unpriced (a model has no list price)".to_string(),
        };
        format!(
            "{} calls of the plan's {}{}; {} tokens of {}; {cost}",
            self.calls,
            self.plan_calls,
            share(self.calls as f64, self.plan_calls as f64),
            self.tokens,
            self.plan_tokens,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(model: &str, round: u32, tokens: u64, cost: Option<f64>) -> ResultRecord {
        let mut r = ResultRecord {
            model: model.into(),
            round,
            cost,
            ..ResultRecord::default()
        };
        r.usage.prompt_tokens = tokens;
        r
    }

    #[test]
    fn the_plans_spend_is_each_models_rate_per_unit_times_its_plan() {
        let mut by = SpendByModel::default();
        // Model a: 2 units of one round, 10 tokens and $0.01 each.
        for _ in 0..2 {
            by.add(&record("a", 1, 10, Some(0.01)));
        }
        // Model b: 1 unit of two rounds, 30 tokens and $0.03 a round.
        by.add(&record("b", 1, 30, Some(0.03)));
        by.add(&record("b", 2, 30, Some(0.03)));
        let spend = by.beside_plan(10);
        assert_eq!(spend.calls, 2 * 4);
        // a: 2 calls a unit × 10; b: 4 calls a unit × 10.
        assert_eq!(spend.plan_calls, 20 + 40);
        assert_eq!(spend.tokens, 20 + 60);
        assert_eq!(spend.plan_tokens, 100 + 600);
        assert!((spend.usd.unwrap() - 0.08).abs() < 1e-12);
        assert!((spend.plan_usd.unwrap() - (0.1 + 0.6)).abs() < 1e-12);
        assert!(spend.line().starts_with("8 calls of the plan's 60 (13.3%)"));
        by.add(&record("c", 1, 5, None));
        let unpriced = by.beside_plan(10);
        assert_eq!((unpriced.usd, unpriced.plan_usd), (None, None));
        assert!(unpriced
            .line()
            .ends_with("cost unpriced (a model has no list price)"));
    }
}
