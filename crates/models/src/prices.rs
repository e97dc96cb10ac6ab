//! Token prices: a dated table of list prices shipped with the project,
//! which users extend or correct with their own file.

use crate::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million completion tokens.
    pub output: f64,
    /// Per million prompt tokens sent through the provider's batch API;
    /// without it, batch requests are charged `input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_input: Option<f64>,
    /// Per million completion tokens through the batch API; without it, `output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_output: Option<f64>,
}

impl Price {
    /// The price of requests sent through the provider's batch API.
    pub fn batched(self) -> Price {
        Price {
            input: self.batch_input.unwrap_or(self.input),
            output: self.batch_output.unwrap_or(self.output),
            batch_input: None,
            batch_output: None,
        }
    }

    /// What the thinking in `usage` cost at this price, in USD (a part of [`Price::cost`]).
    pub fn reasoning_cost(self, usage: Usage) -> f64 {
        usage.reasoning_tokens as f64 * self.output / 1e6
    }

    /// What `usage` costs at this price, in USD.
    pub fn cost(self, usage: Usage) -> f64 {
        (usage.prompt_tokens as f64 * self.input + usage.completion_tokens as f64 * self.output)
            / 1e6
    }
}

/// Prices by model name, with the date the shipped ones were taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    /// When the shipped list prices were read off the providers' pages.
    pub taken: Option<String>,
    /// Prices by model name.
    pub models: BTreeMap<String, Price>,
    /// The names a user's price file gave (`--prices`), as opposed to the
    /// shipped list prices: the only prices that hold at an address other
    /// than the provider's own.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub named: std::collections::BTreeSet<String>,
}

/// The two layouts a price file may have: the shipped one, or a bare object of prices.
#[derive(Deserialize)]
#[serde(untagged)]
enum PriceFile {
    Dated {
        taken: Option<String>,
        models: BTreeMap<String, Price>,
    },
    Bare(BTreeMap<String, Price>),
}

/// The shipped table: list prices of OpenAI's and Anthropic's models.
const SHIPPED: &str = include_str!("../data/prices.json");

impl PriceTable {
    /// The list prices shipped with the project (`data/prices.json`).
    pub fn builtin() -> PriceTable {
        let shipped = PriceTable::default()
            .extended_with(SHIPPED)
            .expect("the shipped price table is valid JSON");
        PriceTable {
            named: Default::default(),
            ..shipped
        }
    }

    /// This table with only the prices a user's price file named: what
    /// holds at an address other than the provider's own, where a list
    /// price would be a guess.
    pub fn named_only(&self) -> PriceTable {
        PriceTable {
            taken: self.taken.clone(),
            models: self
                .models
                .iter()
                .filter(|(k, _)| self.named.contains(*k))
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
            named: self.named.clone(),
        }
    }

    /// This table with the entries of a price file added or replaced: the
    /// shipped layout `{"taken": …, "models": {…}}` or a bare
    /// `{"model": {"input": …, "output": …}}`.
    pub fn extended_with(mut self, json: &str) -> Result<PriceTable, serde_json::Error> {
        let models = match serde_json::from_str(json)? {
            PriceFile::Dated { taken, models } => {
                self.taken = taken.or(self.taken);
                models
            }
            PriceFile::Bare(models) => models,
        };
        self.named.extend(models.keys().cloned());
        self.models.extend(models);
        Ok(self)
    }

    /// The price of `model`: its own entry, or that of its undated name for
    /// a dated snapshot (`gpt-4o-2024-08-06`, `claude-3-5-haiku-20241022`).
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.models.get(model) {
            return Some(*p);
        }
        let undated = strip_date(model)?;
        self.models.get(undated).copied()
    }

    /// The price of the model `spec` calls: an entry keyed by the spec as
    /// written (`openai-compatible:qwen2.5@http://…`), else by its model's
    /// name (dated snapshots as in [`PriceTable::price`]).
    pub fn price_of(&self, spec: &crate::ModelSpec) -> Option<Price> {
        self.models
            .get(&spec.to_string())
            .copied()
            .or_else(|| self.price(&spec.provider().price_key(&spec.model())))
    }

    /// Cost of `usage` on the model `spec` calls, when the table prices it.
    pub fn cost_of(&self, spec: &crate::ModelSpec, usage: Usage) -> Option<f64> {
        Some(self.price_of(spec)?.cost(usage))
    }

    /// Cost of `usage` sent through the provider's batch API.
    pub fn batch_cost_of(&self, spec: &crate::ModelSpec, usage: Usage) -> Option<f64> {
        Some(self.price_of(spec)?.batched().cost(usage))
    }

    /// The entries of a price file (`json`) that price none of `specs`: a
    /// key that matches nothing is most likely misspelt.
    pub fn unmatched(json: &str, specs: &[crate::ModelSpec]) -> Vec<String> {
        let keys: Vec<String> = match serde_json::from_str(json) {
            Ok(PriceFile::Dated { models, .. }) | Ok(PriceFile::Bare(models)) => {
                models.into_keys().collect()
            }
            Err(_) => return Vec::new(),
        };
        keys.into_iter()
            .filter(|key| {
                let alone = PriceTable {
                    taken: None,
                    named: Default::default(),
                    models: [(
                        key.clone(),
                        Price {
                            input: 0.0,
                            output: 0.0,
                            batch_input: None,
                            batch_output: None,
                        },
                    )]
                    .into(),
                };
                !specs.iter().any(|s| alone.price_of(s).is_some())
            })
            .collect()
    }

    /// Cost of `usage` on `model`, when the table knows the model.
    pub fn cost(&self, model: &str, usage: Usage) -> Option<f64> {
        Some(self.price(model)?.cost(usage))
    }
}

/// `name` without a trailing `-YYYY-MM-DD` or `-YYYYMMDD`, if it has one.
fn strip_date(name: &str) -> Option<&str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, tail)) = name.rsplit_once('-') {
        if tail.len() == 8 && digits(tail) {
            return Some(head);
        }
    }
    let mut parts = name.rsplitn(4, '-');
    let (d, m, y, head) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    (y.len() == 4 && m.len() == 2 && d.len() == 2 && digits(y) && digits(m) && digits(d))
        .then_some(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_snapshots_take_the_price_of_their_name() {
        let t = PriceTable::builtin();
        assert!(t.taken.is_some());
        assert_eq!(t.price("gpt-4o-2024-08-06"), t.price("gpt-4o"));
        assert_eq!(
            t.price("claude-3-5-haiku-20241022"),
            t.price("claude-3-5-haiku")
        );
        assert_eq!(
            t.price("gpt-4o-mini"),
            Some(Price {
                input: 0.15,
                output: 0.6,
                batch_input: Some(0.075),
                batch_output: Some(0.3),
            })
        );
        assert_eq!(t.price("my-model-2024-01-01"), None);
        assert_eq!(strip_date("o3-mini"), None);
    }

    #[test]
    fn every_shipped_batch_price_is_half_the_list_price_and_charges_half() {
        let t = PriceTable::builtin();
        for (name, p) in &t.models {
            assert_eq!(p.batch_input, Some(p.input / 2.0), "{name}");
            assert_eq!(p.batch_output, Some(p.output / 2.0), "{name}");
        }
        let spec: crate::ModelSpec = "openai:gpt-4o-mini".parse().unwrap();
        let usage = Usage::new(1234, 567);
        let direct = t.cost_of(&spec, usage).unwrap();
        let batched = t.batch_cost_of(&spec, usage).unwrap();
        assert_eq!(batched * 2.0, direct);
        // An entry without batch prices is charged its list price in batch mode.
        let own = PriceTable::default()
            .extended_with(r#"{"mine": {"input": 1.0, "output": 2.0}}"#)
            .unwrap();
        assert_eq!(own.price("mine").unwrap().batched().input, 1.0);
    }
}
