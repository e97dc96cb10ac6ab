//! What a run `--until decided` decided, as `decided.json` holds it and the
//! terminal prints it.

use crate::procedure::{Design, Level, Measure, Procedure};
use crate::sequence::Interval;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The names the procedure's indices stand for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Names {
    /// Models, in the plan's order.
    pub models: Vec<String>,
    /// Datasets, in the plan's order.
    pub datasets: Vec<String>,
}

/// One quantity as decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Its dataset.
    pub dataset: String,
    /// `A2` or `A3` of a model, or `A3 difference` of a pair.
    pub what: String,
    /// The model, or the pair's first model.
    pub model: String,
    /// The pair's second model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
    /// Whether it was asked for.
    pub asked: bool,
    /// Its stratified estimate.
    pub estimate: f64,
    /// Its anytime-valid interval.
    pub interval: Interval,
    /// For a pair: `>`, `<`, `=` (tied over the whole plan) or `?` (undecided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// The wave it was decided after, if it was.
    pub decided_after_wave: Option<usize>,
    /// Its dataset's items observed by then: what the decision used.
    pub decided_after_items: Option<usize>,
    /// Its dataset's items in flight then (handed out, not yet observed):
    /// run and recorded all the same, and counted in its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight_items: Option<usize>,
    /// Decided only because the plan was spent: the full plan's own
    /// figure, exact for its items, silent about items beyond them.
    #[serde(default)]
    pub spent: bool,
    /// The level its interval is read at (a decided pair's: the level of
    /// its decision).
    #[serde(default)]
    pub level: f64,
}

/// A dataset's best model under `--decide best`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Best {
    /// The dataset.
    pub dataset: String,
    /// The best model, once decided.
    pub model: Option<String>,
}

/// Everything a run `--until decided` decided, and what it used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decisions {
    /// The procedure's settings.
    pub design: Design,
    /// Whether everything asked was decided (else the plan was spent first).
    pub all_decided: bool,
    /// Waves drawn.
    pub waves: usize,
    /// Item answers used (an item asked of a model).
    pub answers: usize,
    /// Item answers of the full plan.
    pub plan_answers: usize,
    /// Units used (item answers × prompt styles × repeats).
    pub units: usize,
    /// Units of the full plan.
    pub plan_units: usize,
    /// Each quantity.
    pub quantities: Vec<Decision>,
    /// Under `--decide best`, each dataset's best model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub best: Vec<Best>,
    /// Calls, tokens and cost used, beside the full plan's, when the
    /// records were read for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<crate::spend::Spend>,
}

impl Decisions {
    /// What `procedure` decided, with `names` for its indices and
    /// `units_per_answer` units (prompt styles × repeats) per item answer.
    pub fn of(procedure: &Procedure, names: &Names, units_per_answer: usize) -> Decisions {
        let name = |m: usize| {
            names
                .models
                .get(m)
                .cloned()
                .unwrap_or_else(|| m.to_string())
        };
        let quantities = procedure
            .quantities()
            .iter()
            .map(|q| {
                let (what, model, versus) = match q.measure {
                    Measure::Level { model, level } => (
                        match level {
                            Level::Compliance => "A2",
                            Level::Accuracy => "A3",
                        },
                        name(model),
                        None,
                    ),
                    Measure::Order { first, second } => {
                        ("A3 difference", name(first), Some(name(second)))
                    }
                };
                let order = versus.as_ref().map(|_| {
                    match q.order() {
                        Some(std::cmp::Ordering::Greater) => ">",
                        Some(std::cmp::Ordering::Less) => "<",
                        Some(std::cmp::Ordering::Equal) => "=",
                        None => "?",
                    }
                    .to_string()
                });
                Decision {
                    dataset: names
                        .datasets
                        .get(q.dataset)
                        .cloned()
                        .unwrap_or_else(|| q.dataset.to_string()),
                    what: what.to_string(),
                    model,
                    versus,
                    asked: q.asked,
                    estimate: q.estimate,
                    interval: q.interval,
                    order,
                    decided_after_wave: q.decided.map(|d| d.wave),
                    decided_after_items: q.decided.map(|d| d.items),
                    in_flight_items: q.decided.map(|d| d.in_flight),
                    spent: q.decided.is_some_and(|d| d.spent),
                    level: q.level,
                }
            })
            .collect();
        let plan_answers = procedure.plan_answers();
        let best = if procedure.design().decide == crate::Decide::Best {
            names
                .datasets
                .iter()
                .enumerate()
                .map(|(d, dataset)| Best {
                    dataset: dataset.clone(),
                    model: procedure.best(d).map(name),
                })
                .collect()
        } else {
            Vec::new()
        };
        Decisions {
            design: procedure.design().clone(),
            all_decided: procedure.finished(),
            waves: procedure.waves(),
            answers: procedure.answers(),
            plan_answers,
            units: procedure.answers() * units_per_answer,
            plan_units: plan_answers * units_per_answer,
            quantities,
            best,
            spend: None,
        }
    }

    /// The lines the terminal prints: what was decided, after how much,
    /// and about what.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        let share = self.units as f64 / self.plan_units.max(1) as f64;
        let spent = self
            .quantities
            .iter()
            .filter(|d| d.asked && d.spent)
            .count();
        let what = match (self.all_decided, spent) {
            (false, _) => "not everything asked (the plan was spent first)".to_string(),
            (true, 0) => "everything asked".to_string(),
            (true, n) => format!(
                "everything asked ({n} question{} only as the plan was spent)",
                if n == 1 { "" } else { "s" }
            ),
        };
        let _ = writeln!(
            out,
            "decided: {what} after {} wave{}, {} of the plan's {} units ({:.1}%)",
            self.waves,
            if self.waves == 1 { "" } else { "s" },
            self.units,
            self.plan_units,
            100.0 * share
        );
        let _ = writeln!(
            out,
            "  of what: each figure is the plan's own (its mean over the plan's items), its interval \
             holding it with probability {} at every wave at once, the pairs' orders all at once; \
             the report's pairwise table tests the models beyond these items",
            1.0 - self.design.alpha
        );
        if let Some(spend) = &self.spend {
            let _ = writeln!(out, "  paid: {}", spend.line());
        }
        for best in &self.best {
            let _ = writeln!(
                out,
                "  {:<10} best: {}",
                best.dataset,
                best.model.as_deref().unwrap_or("undecided")
            );
        }
        for d in self.quantities.iter().filter(|d| d.asked) {
            let _ = writeln!(out, "  {}", d.line());
        }
        if self.quantities.iter().any(|d| d.asked && d.spent) {
            let _ = writeln!(
                out,
                "  (spent) the plan was spent: the full plan's figure, exact for these items; \
                 whether it holds beyond them is the report's pairwise test"
            );
        }
        out
    }
}

impl Decision {
    /// When it was decided, in words ("wave 3 (80 items; 8 more in
    /// flight)"), if it was; a decision only as the plan was spent is
    /// marked `spent` (a word, or its markup).
    pub fn when(&self, spent: &str) -> Option<String> {
        let (wave, items) = (self.decided_after_wave?, self.decided_after_items?);
        let mut notes = vec![format!("{items} items")];
        if let Some(more) = self.in_flight_items.filter(|&n| n > 0) {
            notes.push(format!("{more} more in flight"));
        }
        if self.spent {
            notes.push(spent.to_string());
        }
        Some(format!("wave {wave} ({})", notes.join("; ")))
    }

    /// Its line in the terminal.
    fn line(&self) -> String {
        let when = match self.when("spent") {
            Some(when) => format!("after {when}"),
            None => "undecided".to_string(),
        };
        match &self.versus {
            None => format!(
                "{:<10} {} {:<28} {:5.1}% [{:5.1}, {:5.1}]  {when}",
                self.dataset,
                self.what,
                self.model,
                100.0 * self.estimate,
                100.0 * self.interval.lower,
                100.0 * self.interval.upper
            ),
            Some(v) => format!(
                "{:<10} {} {} {v}  by {:+.1} pp [{:+.1}, {:+.1}]  {when}",
                self.dataset,
                self.model,
                self.order.as_deref().unwrap_or("?"),
                100.0 * self.estimate,
                100.0 * self.interval.lower,
                100.0 * self.interval.upper
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(spent: bool) -> Decision {
        Decision {
            dataset: "plogic".into(),
            what: "A3".into(),
            model: "m".into(),
            versus: None,
            asked: true,
            estimate: 0.9,
            interval: Interval {
                lower: 0.9,
                upper: 0.9,
            },
            order: None,
            decided_after_wave: Some(1),
            decided_after_items: Some(80),
            in_flight_items: None,
            spent,
            level: 0.05,
        }
    }

    #[test]
    fn the_terminal_says_what_was_decided_only_because_the_plan_was_spent() {
        let mut decisions = Decisions {
            design: Design::default(),
            all_decided: true,
            waves: 1,
            answers: 80,
            plan_answers: 80,
            units: 160,
            plan_units: 160,
            quantities: vec![level(true), level(false)],
            best: Vec::new(),
            spend: None,
        };
        let said = decisions.terminal();
        assert!(
            said.starts_with(
                "decided: everything asked (1 question only as the plan was spent) after 1 wave, 160"
            ),
            "{said}"
        );
        assert!(said.contains("(80 items; spent)"), "{said}");
        assert!(
            said.contains("the plan was spent: the full plan's figure"),
            "{said}"
        );
        assert!(
            said.contains("of what: each figure is the plan's own"),
            "{said}"
        );
        decisions.quantities = vec![level(false)];
        decisions.waves = 3;
        let said = decisions.terminal();
        assert!(
            said.starts_with("decided: everything asked after 3 waves"),
            "{said}"
        );
        assert!(!said.contains("the plan was spent"), "{said}");
    }
}
