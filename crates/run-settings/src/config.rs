//! The settings of a run: built-in defaults, then a TOML file, then flags.

#[cfg(feature = "cli")]
use crate::cli;
use crate::{Result, SettingsError};
use autoeval_generate::DatasetKind;
use autoeval_models::{MaxTokens, ModelSettings, ModelSpec};
use autoeval_pipeline::RunPlan;
use autoeval_prompts::{PromptSet, Shots};
use autoeval_proto::CopyPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every setting of `autoeval run`, as the config file spells it. Missing
/// keys take the built-in defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunConfig {
    /// Dataset type (repeat for several): ksat, plogic, fol, fol-english, regex [default: all five].
    #[cfg_attr(feature = "cli", arg(long = "dataset", value_parser = cli::dataset))]
    #[serde(alias = "dataset")]
    pub datasets: Option<Vec<DatasetKind>>,
    /// Model (repeat for several): reference, reference-noisy:RATE, reference-chatty:RATE,
    /// openai:MODEL, anthropic:MODEL, openai-compatible:MODEL@URL; settings may follow a `?`:
    /// 'openai:o3-mini?reasoning=true&max_tokens=4000', 'openai-compatible:m@URL?top_p=0.9'
    /// (temperature, max_tokens, seed, reasoning, system, concurrency, request_timeout_s,
    /// max_reply_bytes;
    /// other keys are sent as request-body fields) [default: reference and reference-noisy:0.1].
    #[cfg_attr(feature = "cli", arg(long = "model"))]
    pub models: Option<Vec<String>>,
    /// Prompt style (repeat for both) [default: zero-shot and few-shot].
    #[cfg_attr(feature = "cli", arg(long = "prompt", value_parser = cli::shots()))]
    #[serde(alias = "prompt")]
    pub prompts: Option<Vec<Shots>>,
    /// Items per complexity value in each batch [default: 4].
    #[cfg_attr(feature = "cli", arg(long))]
    pub per_bucket: Option<usize>,
    /// Batches per dataset; the report's bands span them [default: 3].
    #[cfg_attr(feature = "cli", arg(long))]
    pub batches: Option<u64>,
    /// Rounds n of (A∘I)^n; a round runs only if the one before kept the meaning [default: 1].
    #[cfg_attr(feature = "cli", arg(long))]
    pub rounds: Option<u32>,
    /// Times each item is asked of each model in each style [default: 1].
    #[cfg_attr(feature = "cli", arg(long))]
    pub repeats: Option<u32>,
    /// Seed of the generated datasets [default: 0].
    #[cfg_attr(feature = "cli", arg(long))]
    pub seed: Option<u64>,
    /// How items are drawn: algorithm-1 (the paper's Algorithm 1 exactly: up to n distinct
    /// completions per form, buckets drawn uniformly) or prefer-new-trees (4 completions per
    /// form, new parse trees first: more diverse) [default: algorithm-1 under --protocol
    /// paper, prefer-new-trees otherwise].
    #[cfg_attr(feature = "cli", arg(long, value_parser = cli::sampling()))]
    pub sampling: Option<autoeval_generate::Sampling>,
    /// Round trips in flight at once [default: 32].
    #[cfg_attr(feature = "cli", arg(long))]
    pub concurrency: Option<usize>,
    /// Verifier threads and prover processes [default: the number of cores].
    #[cfg_attr(feature = "cli", arg(long))]
    pub verifiers: Option<usize>,
    /// Prover time limit per check in milliseconds [default: 10000].
    #[cfg_attr(feature = "cli", arg(long))]
    pub timeout_ms: Option<u64>,
    /// Model request time limit in seconds [default: 120].
    #[cfg_attr(feature = "cli", arg(long))]
    pub request_timeout_s: Option<u64>,
    /// Attempts per model call, the first included [default: 6].
    #[cfg_attr(feature = "cli", arg(long))]
    pub max_attempts: Option<u32>,
    /// Sampling temperature [default: 0.1].
    #[cfg_attr(feature = "cli", arg(long))]
    pub temperature: Option<f64>,
    /// Most tokens per reply [default: 1024].
    #[cfg_attr(feature = "cli", arg(long))]
    pub max_tokens: Option<u32>,
    /// When the English copies the formula: flag it, or count the round as non-compliant [default: flag].
    #[cfg_attr(feature = "cli", arg(long, value_parser = cli::copy_policy()))]
    pub copy_policy: Option<CopyPolicy>,
    /// Directory of NAME.txt prompt templates replacing built-in ones.
    #[cfg_attr(feature = "cli", arg(long))]
    pub templates: Option<PathBuf>,
    /// JSON price table {"model": {"input": USD/Mtok, "output": USD/Mtok}} extending the built-in one.
    #[cfg_attr(feature = "cli", arg(long))]
    pub prices: Option<PathBuf>,
    /// JSON file of API keys ({"OPENAI_API_KEY": "…"}), read after the environment.
    #[cfg_attr(feature = "cli", arg(long))]
    pub secrets: Option<PathBuf>,
    /// Response cache directory, shared between runs if you like [default: DIR/cache].
    #[cfg_attr(feature = "cli", arg(long))]
    pub cache: Option<PathBuf>,
    /// Prompt set: paper (App. F's prompts) or extended (every name of φ0 in both prompts,
    /// English predicate meanings, the regex alphabet) [default: paper].
    #[cfg_attr(feature = "cli", arg(long, value_parser = cli::prompt_set))]
    pub prompt_set: Option<PromptSet>,
    /// Take the defaults of a published protocol. paper: the five datasets at Table 1
    /// settings generated by Algorithm 1, 50 items per complexity value, 10 batches,
    /// zero-shot, Pass@1, the paper's prompts, strict parsing as the headline, temperature
    /// 0.1 for API models and 1 for local open models, no token cap for local servers
    /// (as the public code sent them none) and one no translation reaches for API models
    /// (16384; 8192 for Anthropic) (flags still override).
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub protocol: Option<Protocol>,
    /// Evaluate the items of a file instead of generated ones: this project's JSONL
    /// (`autoeval generate`) or the reference implementation's dataset JSON.
    #[cfg_attr(feature = "cli", arg(long))]
    pub items: Option<PathBuf>,
    /// Write the results zstd-compressed (`results.jsonl.zst`) once the run
    /// ends; every command reads them either way [default: false].
    #[cfg_attr(
        feature = "cli",
        arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")
    )]
    pub compress: Option<bool>,
    /// Write the results as Parquet too, `results.parquet` beside
    /// `results.jsonl`, once the run ends (the file `autoeval export
    /// --format parquet` writes) [default: false].
    #[cfg_attr(
        feature = "cli",
        arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")
    )]
    pub parquet: Option<bool>,
    /// Settings per model, as `[model."SPEC"]` tables: temperature,
    /// max-tokens, seed, reasoning, system, concurrency, request-timeout-s, max-reply-bytes
    /// and `extra` body fields. A spec's own `?key=value` tail overrides them.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub model: Option<BTreeMap<String, ModelSettings>>,
}

/// A command with no settings beyond the run's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoOtherKeys {}

/// The models of a run that names none: a perfect translator beside one
/// that errs on a tenth of the items, so the first report shows its plots
/// telling two models apart.
pub const DEFAULT_MODELS: [&str; 2] = ["reference", "reference-noisy:0.1"];

/// A named protocol: defaults that reproduce a published setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// The paper's: the five datasets at Table 1 settings generated by
    /// Algorithm 1, 50 items per complexity value, 10 batches, zero-shot,
    /// one round, one sample (Pass@1), the paper's prompts and temperatures;
    /// strict parsing is the headline.
    Paper,
    /// The paper's, with the stimulus of the public implementation that
    /// produced its numbers: its prompts byte for byte (the `reference`
    /// prompt set), its reading of answers (lowercased, newlines dropped,
    /// the whole answer one formula; `v`, `|`, `&`, `->` accepted), and its
    /// token cap of 1,024 for Anthropic's models.
    Reference,
}

impl Protocol {
    /// A description for the report: which protocol produced the numbers.
    pub fn describe(self) -> &'static str {
        match self {
            Protocol::Paper => "the paper's protocol",
            Protocol::Reference => {
                "the public implementation's protocol: its prompts and its reading of answers"
            }
        }
    }
}

/// The settings after defaults are filled in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    /// What is evaluated; a resumed run must match it.
    pub plan: RunPlan,
    /// Round trips in flight.
    pub concurrency: usize,
    /// Verifier threads.
    pub verifiers: usize,
    /// Prover time limit per check, in ms.
    pub timeout_ms: u64,
    /// Model request time limit, in seconds.
    pub request_timeout_s: u64,
    /// Attempts per model call.
    pub max_attempts: u32,
    /// Sampling temperature.
    pub temperature: f64,
    /// Most tokens per reply.
    pub max_tokens: u32,
    /// Copy-check policy.
    pub copy_policy: CopyPolicy,
    /// Template override directory.
    pub templates: Option<PathBuf>,
    /// Price table file.
    pub prices: Option<PathBuf>,
    /// Secrets file.
    pub secrets: Option<PathBuf>,
    /// Response cache directory.
    pub cache: Option<PathBuf>,
    /// The protocol the defaults came from, if any.
    pub protocol: Option<Protocol>,
    /// The items file, if items are read rather than generated.
    pub items: Option<PathBuf>,
    /// Per-model settings from the config file, by spec as written.
    pub model: BTreeMap<String, ModelSettings>,
    /// Whether the results are written compressed once the run ends.
    #[serde(default)]
    pub compress: bool,
    /// Whether the results are written as Parquet too once the run ends.
    #[serde(default)]
    pub parquet: bool,
    /// The paper's temperatures per model, where no temperature was given
    /// (`--protocol paper`): 0.1 for API models, 1 for local open models.
    #[serde(default)]
    pub paper_temperatures: bool,
    /// The protocol's token caps, where none was given (`--protocol`): each
    /// provider's own (none for local servers, as the public implementation
    /// sent them none; a ceiling for API models).
    #[serde(default)]
    pub paper_max_tokens: bool,
}

/// The token cap under a protocol, where none was given: the providers'
/// modules give each its own ([`autoeval_models::provider::Provider::protocol_max_tokens`]).
pub const PAPER_MAX_TOKENS: u32 = autoeval_models::provider::PROTOCOL_MAX_TOKENS;

/// The paper's temperature for local open models (App. D); API models got 0.1.
pub const PAPER_OPEN_MODEL_TEMPERATURE: f64 = 1.0;

impl RunConfig {
    /// Reads a TOML config file.
    pub fn read(path: &Path) -> Result<RunConfig> {
        Ok(RunConfig::read_with::<NoOtherKeys>(path, &[])?.0)
    }

    /// Reads a TOML config file whose keys `others` (as written, e.g.
    /// `budget-usd`) are the command's own settings rather than the run's:
    /// those are read into `T`, the rest into the run's settings.
    pub fn read_with<T: serde::de::DeserializeOwned>(
        path: &Path,
        others: &[&str],
    ) -> Result<(RunConfig, T)> {
        let text = std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
            what: "the config file",
            path: path.to_path_buf(),
            source,
        })?;
        let config = |source| SettingsError::Config {
            path: path.to_path_buf(),
            source,
        };
        let mut table: toml::Table = toml::from_str(&text).map_err(config)?;
        // `model = [...]`, as the flag is spelt, is the list of models; the
        // `[model."SPEC"]` tables hold each model's settings.
        if matches!(table.get("model"), Some(toml::Value::Array(_)))
            && !table.contains_key("models")
        {
            if let Some(list) = table.remove("model") {
                table.insert("models".into(), list);
            }
        }
        let mut own = toml::Table::new();
        for key in others {
            if let Some(value) = table.remove(*key) {
                own.insert(key.to_string(), value);
            }
        }
        Ok((
            table.try_into().map_err(config)?,
            own.try_into().map_err(config)?,
        ))
    }

    /// `self` with every key that `over` sets replaced.
    pub fn overridden_by(self, over: RunConfig) -> RunConfig {
        macro_rules! pick {
            ($($f:ident),*) => { RunConfig { $($f: over.$f.or(self.$f)),* } };
        }
        pick!(
            datasets,
            models,
            prompts,
            per_bucket,
            batches,
            rounds,
            repeats,
            seed,
            sampling,
            concurrency,
            verifiers,
            timeout_ms,
            request_timeout_s,
            max_attempts,
            temperature,
            max_tokens,
            copy_policy,
            templates,
            prices,
            secrets,
            cache,
            compress,
            parquet,
            prompt_set,
            protocol,
            items,
            model
        )
    }

    /// Fills in the defaults: the protocol's when one is named, otherwise
    /// the built-in ones (the `reference` model beside `reference-noisy:0.1`
    /// on a small set of all five datasets). `items_digest` names the contents of the items file.
    pub fn resolve_with(self, items_digest: Option<String>) -> Result<Resolved> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let paper = self.protocol.is_some();
        let (per_bucket, batches, prompts) = if paper {
            (50, 10, vec![Shots::ZeroShot])
        } else {
            (4, 3, vec![Shots::ZeroShot, Shots::FewShot])
        };
        let items_file = match (&self.items, items_digest) {
            (Some(path), Some(digest)) => Some(format!("{}#{digest}", path.display())),
            (Some(path), None) => Some(path.display().to_string()),
            _ => None,
        };
        let r = Resolved {
            plan: RunPlan {
                datasets: self.datasets.unwrap_or_else(|| DatasetKind::ALL.to_vec()),
                models: self
                    .models
                    .unwrap_or_else(|| DEFAULT_MODELS.iter().map(|m| m.to_string()).collect()),
                prompts: self.prompts.unwrap_or(prompts),
                per_bucket: self.per_bucket.unwrap_or(per_bucket),
                batches: self.batches.unwrap_or(batches),
                rounds: self.rounds.unwrap_or(1),
                repeats: self.repeats.unwrap_or(1),
                seed: self.seed.unwrap_or(0),
                sampling: self.sampling.unwrap_or(if paper {
                    autoeval_generate::Sampling::Algorithm1
                } else {
                    autoeval_generate::Sampling::PreferNewTrees
                }),
                prompt_set: self.prompt_set.unwrap_or(match self.protocol {
                    Some(Protocol::Reference) => PromptSet::Reference,
                    _ => PromptSet::Paper,
                }),
                items_file,
            },
            protocol: self.protocol,
            items: self.items,
            concurrency: self.concurrency.unwrap_or(32),
            verifiers: self.verifiers.unwrap_or(cores),
            timeout_ms: self.timeout_ms.unwrap_or(10_000),
            request_timeout_s: self.request_timeout_s.unwrap_or(120),
            max_attempts: self.max_attempts.unwrap_or(6),
            temperature: self.temperature.unwrap_or(0.1),
            max_tokens: self
                .max_tokens
                .unwrap_or(if paper { PAPER_MAX_TOKENS } else { 1024 }),
            paper_temperatures: paper && self.temperature.is_none(),
            paper_max_tokens: paper && self.max_tokens.is_none(),
            copy_policy: self.copy_policy.unwrap_or_default(),
            templates: self.templates,
            prices: self.prices,
            secrets: self.secrets,
            cache: self.cache,
            model: self.model.unwrap_or_default(),
            compress: self.compress.unwrap_or(false),
            parquet: self.parquet.unwrap_or(false),
        };
        r.plan.validate()?;
        for m in &r.plan.models {
            ModelSpec::parse_with_settings(m)?;
        }
        for m in r.model.keys() {
            if !r.plan.models.contains(m) {
                return Err(SettingsError::Invalid(format!(
                    "the config file has settings for model {m:?}, which the run does not evaluate; \
                     the table's name must be the model spec exactly as in `models`"
                )));
            }
        }
        r.check_ranges()?;
        Ok(r)
    }
}

/// The range each numeric setting must lie in: past these, durations
/// overflow or a run could never finish.
const RANGES: [(&str, u64, u64); 6] = [
    ("concurrency", 1, 100_000),
    ("verifiers", 1, 4_096),
    ("max-attempts", 1, 100),
    ("max-tokens", 1, 10_000_000),
    // Prover time limit per check: up to an hour.
    ("timeout-ms", 1, 3_600_000),
    // Model request time limit: up to a day (a provider's batch window).
    ("request-timeout-s", 1, 86_400),
];

impl Resolved {
    /// Refuses settings out of range, naming the flag and its range.
    fn check_ranges(&self) -> Result<()> {
        let values = [
            self.concurrency as u64,
            self.verifiers as u64,
            u64::from(self.max_attempts),
            u64::from(self.max_tokens),
            self.timeout_ms,
            self.request_timeout_s,
        ];
        for ((name, low, high), value) in RANGES.iter().zip(values) {
            if !(*low..=*high).contains(&value) {
                return Err(SettingsError::Invalid(format!(
                    "--{name} {value} is out of range: it must lie in {low}..={high}"
                )));
            }
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(SettingsError::Invalid(format!(
                "--temperature {} is out of range: it must lie in 0..=2",
                self.temperature
            )));
        }
        Ok(())
    }

    /// The settings as a config file that reproduces them.
    pub fn to_config(&self) -> RunConfig {
        RunConfig {
            datasets: Some(self.plan.datasets.clone()),
            models: Some(self.plan.models.clone()),
            prompts: Some(self.plan.prompts.clone()),
            per_bucket: Some(self.plan.per_bucket),
            batches: Some(self.plan.batches),
            rounds: Some(self.plan.rounds),
            repeats: Some(self.plan.repeats),
            seed: Some(self.plan.seed),
            sampling: Some(self.plan.sampling),
            concurrency: Some(self.concurrency),
            verifiers: Some(self.verifiers),
            timeout_ms: Some(self.timeout_ms),
            request_timeout_s: Some(self.request_timeout_s),
            max_attempts: Some(self.max_attempts),
            // The protocol's per-model values come back from the protocol.
            temperature: (!self.paper_temperatures).then_some(self.temperature),
            max_tokens: (!self.paper_max_tokens).then_some(self.max_tokens),
            copy_policy: Some(self.copy_policy),
            templates: self.templates.clone(),
            prices: self.prices.clone(),
            secrets: self.secrets.clone(),
            cache: self.cache.clone(),
            prompt_set: Some(self.plan.prompt_set),
            protocol: self.protocol,
            items: self.items.clone(),
            model: (!self.model.is_empty()).then(|| self.model.clone()),
            compress: self.compress.then_some(true),
            parquet: self.parquet.then_some(true),
        }
    }

    /// The settings of `model` (a spec as written): the run's, then its
    /// config table's, then its spec's `?…` tail.
    pub fn model_settings(&self, model: &str) -> Result<(ModelSpec, ModelSettings)> {
        let (spec, from_spec) = ModelSpec::parse_with_settings(model)?;
        let temperature = if self.paper_temperatures && spec.provider().is_local() {
            PAPER_OPEN_MODEL_TEMPERATURE
        } else {
            self.temperature
        };
        // A protocol's cap where none was given: each provider's module
        // says which (a cap its API requires, or none for local servers).
        let max_tokens = if self.paper_max_tokens {
            spec.provider()
                .protocol_max_tokens(self.protocol == Some(Protocol::Reference))
        } else {
            MaxTokens::Cap(self.max_tokens)
        };
        let run = ModelSettings {
            temperature: Some(temperature),
            max_tokens: Some(max_tokens),
            concurrency: Some(self.concurrency),
            request_timeout_s: Some(self.request_timeout_s),
            ..ModelSettings::default()
        };
        let table = self.model.get(model).cloned().unwrap_or_default();
        Ok((spec, run.overridden_by(table).overridden_by(from_spec)))
    }

    /// A short stable name for the run's directory when none is given:
    /// the same plan always lands in the same place, so the same command resumes.
    pub fn default_dir_name(&self) -> String {
        use sha2::{Digest, Sha256};
        // A plan of plain values always encodes; an empty text would still name a directory.
        let text = serde_json::to_string(&self.plan).unwrap_or_default();
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        // Whole model names only, never cut in the middle; the hash tells
        // apart plans whose names would be alike.
        let mut joined = String::new();
        for (i, m) in self.plan.models.iter().enumerate() {
            let name = crate::model_file_name(m);
            if i > 0 && joined.len() + name.len() > 80 {
                joined.push_str(&format!("+{}-more", self.plan.models.len() - i));
                break;
            }
            if i > 0 {
                joined.push('+');
            }
            joined.push_str(&name);
        }
        format!("{joined}-{hex}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<RunConfig> {
        let path = std::env::temp_dir().join(format!(
            "autoeval-config-test-{}-{}.toml",
            std::process::id(),
            text.len()
        ));
        std::fs::write(&path, text).expect("a temporary file");
        let read = RunConfig::read(&path);
        let _ = std::fs::remove_file(&path);
        read
    }

    #[test]
    fn keys_may_be_spelt_as_the_flags_are() {
        let c = read("dataset = [\"fol\"]\nprompt = [\"few-shot\"]\nmodel = [\"reference\"]\nper-bucket = 2\n")
            .expect("flag names are keys");
        assert_eq!(c.datasets, Some(vec![DatasetKind::Fol]));
        assert_eq!(c.prompts, Some(vec![Shots::FewShot]));
        assert_eq!(c.models, Some(vec!["reference".to_string()]));
        assert_eq!(c.per_bucket, Some(2));
        // The per-model tables keep their place beside the list.
        let c = read("models = [\"reference\"]\n[model.reference]\ntemperature = 0.5\n")
            .expect("a per-model table");
        assert!(c.model.is_some_and(|m| m.contains_key("reference")));
    }

    #[test]
    fn the_papers_protocol_sets_its_temperatures_and_no_low_cap() {
        let models = vec![
            "openai:gpt-4o".to_string(),
            "anthropic:claude-3-5-sonnet".to_string(),
            "openai-compatible:llama@http://127.0.0.1:8000/v1".to_string(),
        ];
        let paper = RunConfig {
            protocol: Some(Protocol::Paper),
            models: Some(models.clone()),
            ..RunConfig::default()
        }
        .resolve_with(None)
        .expect("the paper's settings");
        let asked = |r: &Resolved, m: &str| {
            let (_, s) = r.model_settings(m).expect("a model's settings");
            (s.temperature, s.max_tokens)
        };
        let cap = |n| Some(MaxTokens::Cap(n));
        assert_eq!(asked(&paper, &models[0]), (Some(0.1), cap(16_384)));
        assert_eq!(asked(&paper, &models[1]), (Some(0.1), cap(8_192)));
        // A local server gets no cap, as the public implementation sent none.
        assert_eq!(
            asked(&paper, &models[2]),
            (Some(1.0), Some(MaxTokens::Uncapped))
        );
        // Kept as a config, the protocol gives them again.
        let again = paper
            .to_config()
            .resolve_with(None)
            .expect("the same settings");
        assert_eq!(
            asked(&again, &models[2]),
            (Some(1.0), Some(MaxTokens::Uncapped))
        );
        // What is given wins, for every model.
        let given = RunConfig {
            protocol: Some(Protocol::Paper),
            models: Some(models.clone()),
            temperature: Some(0.0),
            max_tokens: Some(512),
            ..RunConfig::default()
        }
        .resolve_with(None)
        .expect("given settings");
        assert_eq!(asked(&given, &models[2]), (Some(0.0), cap(512)));
        assert_eq!(asked(&given, &models[1]), (Some(0.0), cap(512)));
        // Without the protocol: 0.1 and 1024 for all.
        let plain = RunConfig {
            models: Some(models.clone()),
            ..RunConfig::default()
        }
        .resolve_with(None)
        .expect("default settings");
        assert_eq!(asked(&plain, &models[2]), (Some(0.1), cap(1024)));
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key() {
        let e = read("per-bucket = \"five\"\n").expect_err("a string is no count");
        let text = format!(
            "{e}: {}",
            std::error::Error::source(&e)
                .map(ToString::to_string)
                .unwrap_or_default()
        );
        assert!(text.contains("per-bucket"), "{text}");
    }
}
