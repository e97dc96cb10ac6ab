//! How a run calls its models: calls at once, time limits, attempts, and
//! the sampling a protocol may give its own defaults.

use super::within;
use autoeval_models::{defaults, key_help, ranges};
use serde::{Deserialize, Serialize};

/// How models are called.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CallArgs {
    /// Round trips in flight at once.
    #[arg(long, help = key_help("concurrency"), default_value_t = defaults::CONCURRENCY, value_parser = within(ranges::CONCURRENCY.0, ranges::CONCURRENCY.1))]
    pub concurrency: usize,
    /// Model request time limit in seconds (at most a day, a provider's batch window).
    #[arg(long, help = key_help("request-timeout-s"), default_value_t = defaults::REQUEST_TIMEOUT_S, value_parser = within(ranges::REQUEST_TIMEOUT_S.0, ranges::REQUEST_TIMEOUT_S.1))]
    pub request_timeout_s: u64,
    /// Attempts per model call, the first included.
    #[arg(long, help = key_help("max-attempts"), default_value_t = defaults::MAX_ATTEMPTS, value_parser = within(ranges::MAX_ATTEMPTS.0, ranges::MAX_ATTEMPTS.1))]
    pub max_attempts: u32,
    /// Sampling temperature: 0.1 when not given; under --protocol paper, 1
    /// for local open models.
    #[arg(long, help = format!("{} When not given: 0.1; under --protocol paper, 1 for local open models.", key_help("temperature")), value_parser = within(ranges::TEMPERATURE.0, ranges::TEMPERATURE.1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens per reply: 1024 when not given; under a protocol, each
    /// provider's own (none for local servers).
    #[arg(long, help = format!("{} When not given: 1024; under a protocol, each provider's own (none for local servers).", key_help("max-tokens")), value_parser = within(ranges::MAX_TOKENS.0, ranges::MAX_TOKENS.1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// The temperature when none is given and no protocol says otherwise.
pub const DEFAULT_TEMPERATURE: f64 = 0.1;

/// The token cap when none is given and no protocol says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Args;

    /// The run-wide call flags that are also per-model keys.
    fn shared_flags() -> Vec<clap::Arg> {
        let command = CallArgs::augment_args(clap::Command::new("run"));
        let shared: Vec<clap::Arg> = command
            .get_arguments()
            .filter(|a| {
                a.get_long()
                    .is_some_and(|l| autoeval_models::MODEL_KEYS.contains(&l))
            })
            .cloned()
            .collect();
        assert!(
            shared.len() >= 5,
            "the call flags share no keys: {shared:?}"
        );
        shared
    }

    #[test]
    fn a_call_flag_says_what_its_per_model_key_says() {
        for arg in shared_flags() {
            let long = arg.get_long().unwrap();
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            assert!(
                help.starts_with(&key_help(long)),
                "--{long}: {help:?} does not begin with the key's {:?}",
                key_help(long)
            );
        }
    }

    #[test]
    fn a_value_out_of_range_is_refused_by_a_flag_and_a_specs_tail_in_the_same_words() {
        for (key, value) in [
            ("request-timeout-s", "0"),
            ("max-attempts", "101"),
            ("concurrency", "0"),
            ("temperature", "2.5"),
            ("max-tokens", "0"),
        ] {
            let flag = crate::RunArgs::parse_from([format!("--{key}={value}")])
                .unwrap_err()
                .to_string();
            let spec = format!("reference?{key}={value}");
            let tail = spec
                .parse::<autoeval_models::Model>()
                .unwrap_err()
                .to_string();
            let refusal = format!("invalid value '{value}' for '--{key} <");
            assert!(flag.contains(&refusal), "{flag}");
            assert!(tail.contains(&refusal), "{tail}");
            let why = |text: &str| text.split("': ").nth(1).unwrap_or_default().to_string();
            assert!(
                why(&tail).starts_with(&why(&flag)),
                "flag: {flag}\ntail: {tail}"
            );
        }
    }
}
