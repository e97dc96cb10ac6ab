//! The settings of a run in words, as the top of its report shows them.

use crate::{Resolved, Result};

impl Resolved {
    /// (name, value) lines of the settings, one per model at the end.
    pub fn describe(&self) -> Result<Vec<(String, String)>> {
        let p = &self.plan;
        let list = |v: Vec<String>| v.join(", ");
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut rows = vec![
            (
                "datasets".to_string(),
                list(p.datasets.iter().map(|d| d.name().to_string()).collect()),
            ),
            (
                "items".into(),
                match &p.items_file {
                    Some(file) => format!("read from {file}"),
                    None => format!(
                        "generated: seed {}, {} per complexity value, {}",
                        p.seed,
                        p.per_bucket,
                        plural(p.batches, "batch", "batches")
                    ),
                },
            ),
            (
                "prompts".into(),
                format!(
                    "set {}; styles {}",
                    p.prompt_set.name(),
                    list(p.prompts.iter().map(|&x| x.name().to_string()).collect())
                ),
            ),
            (
                "protocol".into(),
                format!(
                    "{} of (A∘I), {}{}",
                    plural(u64::from(p.rounds), "round", "rounds"),
                    plural(u64::from(p.repeats), "repeat", "repeats"),
                    self.protocol
                        .map_or(String::new(), |p| format!(" ({})", p.describe()))
                ),
            ),
            (
                "parsing".into(),
                "strict, the paper's, is the headline; lenient is shown beside it".into(),
            ),
            (
                "prover".into(),
                format!("time limit {} ms per check", self.checks.prover.timeout_ms),
            ),
        ];
        for m in &p.models {
            rows.push((format!("model {m}"), self.describe_model(m)?));
        }
        Ok(rows)
    }

    /// How `model` is asked, in words.
    fn describe_model(&self, model: &autoeval_models::Model) -> Result<String> {
        let (spec, settings) = self.model_settings(model);
        if spec.is_builtin() {
            return Ok("built in".into());
        }
        let params = spec.params(&settings, &autoeval_models::GenerationParams::default());
        let cap = params.max_tokens.map_or_else(
            || "none sent (the server's own limit)".to_string(),
            |n| n.to_string(),
        );
        let mut parts = vec![if params.reasoning {
            format!("reasoning model, max completion tokens {cap}")
        } else {
            format!("temperature {}, max tokens {cap}", params.temperature)
        }];
        if let Some(seed) = params.seed {
            parts.push(format!("seed {seed}"));
        }
        if let Some(system) = &params.system {
            parts.push(format!("system prompt {system:?}"));
        }
        for (k, v) in &params.extra {
            parts.push(format!("{k} = {v}"));
        }
        parts.extend(spec.unsent(&params));
        if let Some(address) = self.addresses.get(model.as_str()) {
            parts.push(format!("sent to {address}"));
        }
        Ok(parts.join("; "))
    }
}
