//! Every setting of `autoeval run`, declared once: its field, type, help
//! and flag (the doc comment and `arg` attribute), its key in the config
//! file, a value the file may give it, its range where it has one, and,
//! for a setting that resolves on its own, its resolved type and default
//! and whether it reaches the verify stage. From the one declaration come
//! [`RunConfig`] (flags and file keys alike), [`RunConfig::overridden_by`],
//! [`RunConfig::keys`] (which the config tests walk), the range check,
//! [`Knobs`] (resolved, and written back into a config), and
//! [`VerifySettings`]; settings whose defaults hang on others (the plan's,
//! a protocol's temperature and token cap) are resolved by hand in `config.rs`.

use crate::cli;
use crate::knob::Knob;
use crate::{Protocol, Resolved, Result, SettingsError};
use autoeval_generate::DatasetKind;
use autoeval_models::ModelSettings;
use autoeval_prompts::{PromptSet, Shots};
use autoeval_proto::CopyPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Declares the run's settings: `name: Type` (each an `Option` in
/// [`RunConfig`]), then optionally `flag "NAME"` (the flag and file key when
/// not the field's name in kebab case), `example r#"TOML"#` (a value the
/// file may give; `FILE:name` stands for a file's path), `range LOW..=HIGH`
/// (checked once resolved, on the resolved field of the same name), and
/// `resolved TYPE = DEFAULT` for a setting that resolves on its own (the
/// value given, else `DEFAULT`; `Option<Type>` for one with no default):
/// it becomes a field of [`Knobs`], which [`Resolved`] reads as its own,
/// and, followed by `=> verify`, a field of [`VerifySettings`] too, which
/// reaches the verify stage on both modes.
macro_rules! run_settings {
    ($(
        $(#[$attr:meta])*
        $name:ident : $ty:ty
        $(, flag $flag:literal)?
        $(, example $example:literal)?
        $(, range $low:literal ..= $high:literal)?
        $(, resolved $resolved:ty = $default:expr $(=> $stage:ident)?)?
        ;
    )*) => {
        /// Every setting of `autoeval run`, as the config file spells it.
        /// Missing keys take the built-in defaults.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[derive(clap::Args)]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        pub struct RunConfig {
            $( $(#[$attr])* pub $name: Option<$ty>, )*
        }

        /// The settings that resolve on their own: each the value given, or
        /// its declared default. [`Resolved`] reads them as its own fields.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct Knobs {
            $($(
                #[doc = concat!("`", stringify!($name), "`, resolved.")]
                pub $name: $resolved,
            )?)*
        }

        /// How the verify stage proves and records: the settings declared
        /// to reach it (`=> verify`), as workers read them from Redis.
        #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
        pub struct VerifySettings {
            $($($(
                #[doc = concat!("`", stringify!($name), "`, as the verify stage reads it.")]
                pub $name: only_verify!($stage, $resolved),
            )?)?)*
        }

        impl Default for VerifySettings {
            /// Each setting's declared default.
            fn default() -> Self {
                VerifySettings { $($($( $name: only_verify!($stage, $default), )?)?)* }
            }
        }

        impl Default for Knobs {
            /// Each setting's declared default (a settings file an older
            /// build wrote may lack a knob added since).
            fn default() -> Self {
                Knobs::of(&RunConfig::default())
            }
        }

        impl Knobs {
            /// The knobs of `config`: each the value given, or its default.
            pub(crate) fn of(config: &RunConfig) -> Knobs {
                Knobs {
                    $($( $name: <$resolved as Knob<$ty>>::given_or(config.$name.clone(), $default), )?)*
                }
            }

            /// Writes the knobs into `config`, as a config file that repeats them.
            pub(crate) fn write_into(&self, config: &mut RunConfig) {
                $($( config.$name = <$resolved as Knob<$ty>>::as_given(&self.$name); )?)*
            }

            /// What the verify stage reads of them.
            pub fn verify(&self) -> VerifySettings {
                VerifySettings { $($($( $name: only_verify!($stage, self.$name), )?)?)* }
            }
        }

        impl RunConfig {
            /// `self` with every key that `over` sets replaced.
            pub fn overridden_by(self, over: RunConfig) -> RunConfig {
                RunConfig { $( $name: over.$name.or(self.$name), )* }
            }

            /// Each setting's flag (its key in the config file too) with a
            /// value the file may give it (`FILE:name` stands for a file's path).
            pub fn keys() -> Vec<(String, &'static str)> {
                let mut keys = Vec::new();
                $({
                    let key = key_of(stringify!($name), &[$($flag),*]);
                    $( keys.push((key.clone(), $example)); )?
                    let _ = key;
                })*
                keys
            }
        }

        impl Resolved {
            /// Refuses settings out of their declared range, naming the flag and its range.
            pub(crate) fn check_ranges(&self) -> Result<()> {
                $({
                    let key = || key_of(stringify!($name), &[$($flag),*]);
                    $( check_range(&key(), self.$name as u64, $low, $high)?; )?
                    let _ = key;
                })*
                if !(0.0..=2.0).contains(&self.temperature) {
                    return Err(SettingsError::Invalid(format!(
                        "--temperature {} is out of range: it must lie in 0..=2",
                        self.temperature
                    )));
                }
                Ok(())
            }
        }
    };
}

/// `$value` when `$stage` is `verify`, the one stage settings reach by
/// declaration; any other stage is refused when the settings are declared.
macro_rules! only_verify {
    (verify, $($value:tt)+) => {
        $($value)+
    };
}

/// A setting's flag: the one declared, or its field's name in kebab case.
fn key_of(field: &str, flag: &[&str]) -> String {
    flag.first()
        .map_or_else(|| field.replace('_', "-"), |f| f.to_string())
}

/// Refuses `value` of `--key` outside `low..=high`.
fn check_range(key: &str, value: u64, low: u64, high: u64) -> Result<()> {
    if (low..=high).contains(&value) {
        return Ok(());
    }
    Err(SettingsError::Invalid(format!(
        "--{key} {value} is out of range: it must lie in {low}..={high}"
    )))
}

run_settings! {
    /// Dataset type (repeat for several): ksat, plogic, fol, fol-english, regex [default: all five].
    #[arg(long = "dataset", value_parser = cli::dataset)]
    #[serde(alias = "dataset")]
    datasets: Vec<DatasetKind>, flag "dataset", example r#"["ksat"]"#;
    /// Model (repeat for several): reference, reference-noisy:RATE, reference-chatty:RATE,
    /// openai:MODEL, anthropic:MODEL, openai-compatible:MODEL@URL; settings may follow a `?`:
    /// 'openai:o3-mini?reasoning=true&max_tokens=4000', 'openai-compatible:m@URL?top_p=0.9'
    /// (temperature, max_tokens, seed, reasoning, system, concurrency, request_timeout_s,
    /// max_reply_bytes;
    /// other keys are sent as request-body fields) [default: reference and reference-noisy:0.1].
    #[arg(long = "model")]
    models: Vec<autoeval_models::Model>, flag "model", example r#"["reference"]"#;
    /// Prompt style (repeat for both) [default: zero-shot and few-shot].
    #[arg(long = "prompt", value_parser = cli::shots())]
    #[serde(alias = "prompt")]
    prompts: Vec<Shots>, flag "prompt", example r#"["zero-shot"]"#;
    /// Items per complexity value in each batch [default: 4].
    #[arg(long)]
    per_bucket: usize, example r#"2"#;
    /// Batches per dataset; the report's bands span them [default: 3].
    #[arg(long)]
    batches: u64, example r#"2"#;
    /// Rounds n of (A∘I)^n; a round runs only if the one before kept the meaning [default: 1].
    #[arg(long)]
    rounds: u32, example r#"2"#;
    /// Times each item is asked of each model in each style [default: 1].
    #[arg(long)]
    repeats: u32, example r#"2"#;
    /// Seed of the generated datasets [default: 0].
    #[arg(long)]
    seed: u64, example r#"7"#;
    /// How items are drawn: algorithm-1 (the paper's Algorithm 1 exactly: up to n distinct
    /// completions per form, buckets drawn uniformly) or prefer-new-trees (4 completions per
    /// form, new parse trees first: more diverse) [default: algorithm-1 under --protocol
    /// paper, prefer-new-trees otherwise].
    #[arg(long, value_parser = cli::sampling())]
    sampling: autoeval_generate::Sampling, example r#""algorithm-1""#;
    /// Round trips in flight at once [default: 32].
    #[arg(long)]
    concurrency: usize, example r#"2"#, range 1..=100_000, resolved usize = 32;
    /// Verifier threads and prover processes [default: the number of cores].
    #[arg(long)]
    verifiers: usize, example r#"2"#, range 1..=4_096,
        resolved usize = std::thread::available_parallelism().map_or(1, |n| n.get());
    /// Prover time limit per check in milliseconds [default: 10000].
    #[arg(long)]
    // Prover time limit per check: up to an hour.
    timeout_ms: u64, example r#"5000"#, range 1..=3_600_000,
        resolved u64 = autoeval_proto::DEFAULT_CHECK_TIMEOUT_MS.into() => verify;
    /// Model request time limit in seconds [default: 120].
    #[arg(long)]
    // Model request time limit: up to a day (a provider's batch window).
    request_timeout_s: u64, example r#"30"#, range 1..=86_400, resolved u64 = 120;
    /// Attempts per model call, the first included [default: 6].
    #[arg(long)]
    max_attempts: u32, example r#"3"#, range 1..=100, resolved u32 = 6;
    /// Sampling temperature [default: 0.1].
    #[arg(long)]
    temperature: f64, example r#"0.2"#;
    /// Most tokens per reply [default: 1024].
    #[arg(long)]
    max_tokens: u32, example r#"512"#, range 1..=10_000_000;
    /// When the English copies the formula: flag it, or count the round as non-compliant [default: flag].
    #[arg(long, value_parser = cli::copy_policy())]
    copy_policy: CopyPolicy, example r#""flag""#,
        resolved CopyPolicy = CopyPolicy::default() => verify;
    /// Directory of NAME.txt prompt templates replacing built-in ones.
    #[arg(long)]
    templates: PathBuf, example r#"FILE:templates"#, resolved Option<PathBuf> = None;
    /// JSON price table {"model": {"input": USD/Mtok, "output": USD/Mtok}} extending the built-in one.
    #[arg(long)]
    prices: PathBuf, example r#"FILE:prices.json"#, resolved Option<PathBuf> = None;
    /// JSON file of API keys ({"OPENAI_API_KEY": "…"}), read after the environment.
    #[arg(long)]
    secrets: PathBuf, example r#"FILE:secrets.json"#, resolved Option<PathBuf> = None;
    /// Response cache directory, shared between runs if you like [default: DIR/cache].
    #[arg(long)]
    cache: PathBuf, example r#"FILE:cache"#, resolved Option<PathBuf> = None;
    /// Prompt set: paper (App. F's prompts) or extended (every name of φ0 in both prompts,
    /// English predicate meanings, the regex alphabet) [default: paper].
    #[arg(long, value_parser = cli::prompt_set)]
    prompt_set: PromptSet, example r#""paper""#;
    /// Take the defaults of a published protocol. paper: the five datasets at Table 1
    /// settings generated by Algorithm 1, 50 items per complexity value, 10 batches,
    /// zero-shot, Pass@1, the paper's prompts, strict parsing as the headline, temperature
    /// 0.1 for API models and 1 for local open models, no token cap for local servers
    /// (as the public code sent them none) and one no translation reaches for API models
    /// (16384; 8192 for Anthropic) (flags still override).
    #[arg(long, value_enum)]
    protocol: Protocol, example r#""paper""#;
    /// Evaluate the items of a file instead of generated ones: this project's JSONL
    /// (`autoeval generate`) or the reference implementation's dataset JSON.
    #[arg(long)]
    items: PathBuf, example r#"FILE:items.jsonl"#;
    /// Write the results zstd-compressed (`results.jsonl.zst`) once the run
    /// ends; every command reads them either way [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    compress: bool, example r#"true"#, resolved bool = false;
    /// Write the results as Parquet too, `results.parquet` beside
    /// `results.jsonl`, once the run ends (the file `autoeval export
    /// --format parquet` writes) [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    parquet: bool, example r#"true"#, resolved bool = false;
    /// Settings per model, as `[model."SPEC"]` tables: temperature,
    /// max-tokens, seed, reasoning, system, concurrency, request-timeout-s, max-reply-bytes
    /// and `extra` body fields. A spec's own `?key=value` tail overrides them.
    #[arg(skip)]
    model: BTreeMap<String, ModelSettings>;
}
