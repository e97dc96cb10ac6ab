//! A model's settings read as flags. A spec's `?key=value` tail, a config
//! file's `[model."SPEC"]` table and the settings a fleet run registered
//! all go through [`ModelSettings`]'s own flag parser, whose ranges
//! ([`crate::ranges`]), value parsers and help the run-wide flags of the
//! same names share: a per-model value is refused or accepted exactly as
//! the flag would be, in the flag's words.

use crate::{in_range, MaxTokens, ModelSettings, NO_CAP};
use clap::{Args, FromArgMatches};
use serde_json::Value;
use std::fmt::Display;
use std::str::FromStr;

/// A parser of numbers in `low..=high`, for `#[arg(value_parser = …)]`:
/// the one range check of a run-wide flag and of a per-model key.
pub fn within<T>(low: T, high: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: FromStr + PartialOrd + Display + Copy + Send + Sync + 'static,
    T::Err: Display,
{
    move |text: &str| {
        let value: T = text.trim().parse().map_err(|e| format!("{e}"))?;
        in_range(value, (low, high))
    }
}

/// `max-tokens`' parser: a cap within [`crate::ranges::MAX_TOKENS`], or
/// [`NO_CAP`].
pub(crate) fn max_tokens(text: &str) -> Result<MaxTokens, String> {
    if text.trim() == NO_CAP {
        return Ok(MaxTokens::Uncapped);
    }
    let (low, high) = crate::ranges::MAX_TOKENS;
    within(low, high)(text)
        .map(MaxTokens::Cap)
        .map_err(|why| format!("{why} (or {NO_CAP:?} for no cap)"))
}

/// The flag parser of a model's settings.
fn command() -> clap::Command {
    ModelSettings::augment_args(clap::Command::new("model").no_binary_name(true))
}

/// The help a per-model key's flag gives, for the run-wide flag of the
/// same name to show the same words.
pub fn key_help(key: &str) -> String {
    command()
        .get_arguments()
        .find(|a| a.get_long() == Some(key))
        .and_then(|a| a.get_help())
        .map(ToString::to_string)
        .unwrap_or_else(|| panic!("{key} is no per-model key"))
}

/// A flag parser's error on one line, as a config file's or a spec's
/// message quotes it: its first paragraph (the refusal, and the possible
/// values where there are some), without the pointer to `--help`.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let line = first.join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_string()
}

impl ModelSettings {
    /// The settings `keys` give, each `(key, value)` read as the flag
    /// `--key=value` by the settings' own parser (so `_` and `-` are one);
    /// a key that is none of [`crate::MODEL_KEYS`] is refused, naming them.
    pub fn from_keys(keys: Vec<(String, String)>) -> Result<ModelSettings, String> {
        let mut tokens = Vec::with_capacity(keys.len());
        for (key, value) in keys {
            let flag = key.replace('_', "-");
            if !crate::MODEL_KEYS.contains(&flag.as_str()) {
                return Err(format!(
                    "`{key}` is no per-model key (the keys: {}; body fields go under `extra`)",
                    crate::MODEL_KEYS.join(", ")
                ));
            }
            tokens.push(format!("--{flag}={value}"));
        }
        let matches = command()
            .try_get_matches_from(tokens)
            .map_err(|e| one_line(&e))?;
        ModelSettings::from_arg_matches(&matches).map_err(|e| one_line(&e))
    }

    /// These settings as the `(key, value)` pairs [`ModelSettings::from_keys`]
    /// reads back to them, the extra body fields left out.
    pub fn as_keys(&self) -> Vec<(String, String)> {
        let Ok(Value::Object(fields)) = serde_json::to_value(self) else {
            return Vec::new();
        };
        fields
            .into_iter()
            .filter(|(key, value)| key != "extra" && !value.is_null())
            .map(|(key, value)| match value {
                Value::String(text) => (key, text),
                value => (key, value.to_string()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_range_keeps_its_fraction() {
        let parse = within(0.0_f64, 2.0);
        assert_eq!(parse("0.25"), Ok(0.25));
        assert!(parse("2.5").unwrap_err().contains("0..=2"));
        let count = within(1_u32, 100);
        assert!(count("0").unwrap_err().contains("1..=100"));
        assert!(count("five").is_err());
    }

    #[test]
    fn a_key_that_is_no_setting_is_refused_naming_the_keys() {
        let why = ModelSettings::from_keys(vec![("top-k".into(), "3".into())]).unwrap_err();
        assert!(why.contains("no per-model key") && why.contains("request-timeout-s"));
        let set = ModelSettings::from_keys(vec![("request_timeout_s".into(), "5".into())]);
        assert_eq!(set.unwrap().request_timeout_s, Some(5));
    }

    #[test]
    fn max_tokens_takes_a_cap_or_none() {
        assert_eq!(max_tokens("none"), Ok(MaxTokens::Uncapped));
        assert_eq!(max_tokens("50"), Ok(MaxTokens::Cap(50)));
        assert!(max_tokens("0").unwrap_err().contains("out of range"));
    }
}
