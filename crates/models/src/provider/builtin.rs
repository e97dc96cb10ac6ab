//! The built-in models, run in this process: the deterministic reference
//! model and its variants with a known error rate. They take no key and
//! cost nothing.

use super::{Api, Named, Provider};

/// Which built-in model, with its rate where it has one (0 to 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Builtin {
    /// The deterministic model: its round trip is exact.
    Exact,
    /// App. G errors injected into `rate` of the items.
    Noisy(f64),
    /// A judge (A4) that gives the opposite answer for `rate` of the pairs.
    JudgeNoisy(f64),
    /// Formulas dressed in prose, ASCII notation or an equation for `rate` of the answers.
    Chatty(f64),
}

/// One built-in model's spec prefix.
pub(super) struct BuiltinModel {
    name: &'static str,
    form: &'static str,
    of_rate: Option<fn(f64) -> Builtin>,
}

/// `reference`.
pub(super) const REFERENCE: BuiltinModel = BuiltinModel {
    name: "reference",
    form: "reference",
    of_rate: None,
};
/// `reference-noisy:RATE`.
pub(super) const NOISY: BuiltinModel = BuiltinModel {
    name: "reference-noisy",
    form: "reference-noisy:RATE",
    of_rate: Some(Builtin::Noisy),
};
/// `reference-judge-noisy:RATE`.
pub(super) const JUDGE_NOISY: BuiltinModel = BuiltinModel {
    name: "reference-judge-noisy",
    form: "reference-judge-noisy:RATE",
    of_rate: Some(Builtin::JudgeNoisy),
};
/// `reference-chatty:RATE`.
pub(super) const CHATTY: BuiltinModel = BuiltinModel {
    name: "reference-chatty",
    form: "reference-chatty:RATE",
    of_rate: Some(Builtin::Chatty),
};

impl Provider for BuiltinModel {
    fn name(&self) -> &'static str {
        self.name
    }

    fn form(&self) -> &'static str {
        self.form
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        let (builtin, model) = match (self.of_rate, rest) {
            (None, None) => (Builtin::Exact, self.name.to_string()),
            (None, Some(_)) => return Err("unknown backend".into()),
            (Some(of_rate), rest) => {
                let rate: f64 = rest
                    .ok_or("the rate is missing")?
                    .parse()
                    .map_err(|_| "the rate is not a number")?;
                if !(0.0..=1.0).contains(&rate) {
                    return Err("the rate must be between 0 and 1".into());
                }
                (of_rate(rate), format!("{}:{rate}", self.name))
            }
        };
        Ok(Named {
            model,
            base_url: None,
            builtin: Some(builtin),
        })
    }

    fn api(&self) -> Api {
        Api::InProcess
    }

    fn metric_label(&self) -> &'static str {
        "builtin"
    }
}
