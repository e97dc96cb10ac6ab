//! A config file read as flags: each key is the long flag it names and
//! each value that flag's value (a list repeats the flag, `true` turns a
//! switch on), so the flags' own parsers read the file, and a flag the
//! command line gives wins by leaving the file's out.

use super::ModelTables;
use crate::{Result, SettingsError};
use autoeval_models::ModelSettings;
use clap::ArgAction;
use std::path::Path;

/// A config file: its flags, and its `[model."SPEC"]` tables.
#[derive(Debug, Default)]
pub struct ConfigFile {
    /// Each key a long flag, with its value.
    pub flags: toml::Table,
    /// Each model's own settings.
    pub models: ModelTables,
}

/// The config file `text` (`path` names it in errors): `[model."SPEC"]`
/// tables apart, and the list of models under `model` or `models`.
pub fn read(text: &str, path: &Path) -> Result<ConfigFile> {
    let config = |source| SettingsError::Config {
        path: path.to_path_buf(),
        source,
    };
    let mut flags: toml::Table = toml::from_str(text).map_err(|e| {
        // A list under `model` beside `[model."SPEC"]` tables: TOML's own
        // words do not say what to write instead.
        if e.message().contains("dotted key `model` attempted to extend") {
            let line = e.span().map_or(0, |at| text[..at.start].lines().count() + 1);
            return SettingsError::Invalid(format!(
                "{}: line {line}: `model = [...]` and `[model.\"SPEC\"]` tables both use the key `model`: write the list of models as `models = [...]`",
                path.display()
            ));
        }
        config(e)
    })?;
    // Beside these tables the list of models is `models` (the flag's alias).
    let mut models = ModelTables::new();
    if matches!(flags.get("model"), Some(toml::Value::Table(_))) {
        if let Some(toml::Value::Table(tables)) = flags.remove("model") {
            for (spec, table) in tables {
                let settings = model_table(table).map_err(|why| {
                    SettingsError::Invalid(format!("{}: [model.{spec:?}] {why}", path.display()))
                })?;
                models.insert(spec, settings);
            }
        }
    }
    Ok(ConfigFile { flags, models })
}

/// A `[model."SPEC"]` table read as the per-model keys' flags, through
/// their own parser (as a spec's `?key=value` tail is); its `extra` table
/// holds request-body fields as given.
fn model_table(table: toml::Value) -> std::result::Result<ModelSettings, String> {
    let toml::Value::Table(mut table) = table else {
        return Err("is not a table of per-model keys".into());
    };
    let extra = match table.remove("extra") {
        Some(extra) => extra
            .try_into()
            .map_err(|e| format!("`extra` is not a table of body fields: {e}"))?,
        None => Default::default(),
    };
    let mut keys = Vec::new();
    for (key, value) in table {
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => {
                return Err(format!(
                    "`{key}` takes one value, not a list, a table or a date"
                ))
            }
        };
        keys.push((key, text));
    }
    let mut settings = ModelSettings::from_keys(keys)?;
    settings.extra = extra;
    Ok(settings)
}

/// `flags` as command-line tokens of `command`, leaving out each flag
/// whose argument `given` says the command line gave. A key that is no
/// long flag of `command` is refused, naming the file.
pub fn tokens(
    flags: &toml::Table,
    command: &clap::Command,
    path: &Path,
    given: impl Fn(&str) -> bool,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (key, value) in flags {
        let Some(arg) = command.get_arguments().find(|a| {
            a.get_long() == Some(key.as_str())
                || a.get_all_aliases()
                    .is_some_and(|all| all.contains(&key.as_str()))
        }) else {
            let spelt = key.replace('_', "-");
            let near = command
                .get_arguments()
                .filter_map(|a| a.get_long())
                .find(|long| {
                    *long == spelt || long.trim_end_matches('s') == spelt.trim_end_matches('s')
                });
            return Err(SettingsError::Invalid(format!(
                "{}: `{key}` is no flag of `autoeval {}`{}; a config file's keys are its long flags, as `--per-bucket 5` is `per-bucket = 5` (see --help)",
                path.display(),
                command.get_name(),
                near.map_or(String::new(), |n| format!(" (did you mean `{n}`?)"))
            )));
        };
        if given(arg.get_id().as_str()) {
            continue;
        }
        let flag = format!("--{}", arg.get_long().unwrap_or(key));
        let scalar = |v: &toml::Value| -> Result<String> {
            match v {
                toml::Value::String(s) => Ok(s.clone()),
                toml::Value::Integer(i) => Ok(i.to_string()),
                toml::Value::Float(f) => Ok(f.to_string()),
                toml::Value::Boolean(b) => Ok(b.to_string()),
                toml::Value::Datetime(d) => Ok(d.to_string()),
                toml::Value::Array(_) | toml::Value::Table(_) => {
                    Err(SettingsError::Invalid(format!(
                        "{}: `{key}` takes {}, not a list or a table",
                        path.display(),
                        if arg.get_action().takes_values() {
                            "a value or a list of values"
                        } else {
                            "true or false"
                        }
                    )))
                }
            }
        };
        let switch = matches!(arg.get_action(), ArgAction::SetTrue);
        match value {
            toml::Value::Boolean(on) if switch => {
                if *on {
                    out.push(flag);
                }
            }
            _ if switch => {
                return Err(SettingsError::Invalid(format!(
                    "{}: `{key}` is a switch: give it true or false",
                    path.display()
                )))
            }
            toml::Value::Array(values) => {
                for v in values {
                    out.push(format!("{flag}={}", scalar(v)?));
                }
            }
            v => out.push(format!("{flag}={}", scalar(v)?)),
        }
    }
    Ok(out)
}

/// Whether the command line (or the variable an argument reads) gave
/// argument `id`, rather than its default.
pub fn given(matches: &clap::ArgMatches, id: &str) -> bool {
    use clap::parser::ValueSource;
    matches.try_get_raw(id).ok().flatten().is_some()
        && matches!(
            matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
}

/// The flags of `command` that the command line behind `matches` gave,
/// as tokens `command` reads again: a command's own flags passed on to the
/// settings it shares them with.
pub fn given_tokens(matches: &clap::ArgMatches, command: &clap::Command) -> Vec<String> {
    let mut out = Vec::new();
    for arg in command.get_arguments() {
        let (id, Some(long)) = (arg.get_id().as_str(), arg.get_long()) else {
            continue;
        };
        if !given(matches, id) {
            continue;
        }
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            out.push(format!("--{long}"));
            continue;
        }
        for raw in matches.get_raw(id).into_iter().flatten() {
            out.push(format!("--{long}={}", raw.to_string_lossy()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunArgs;
    use clap::Args;

    fn tokens_of(text: &str) -> Vec<String> {
        let command = RunArgs::augment_args(clap::Command::new("run"));
        let file = read(text, Path::new("run.toml")).unwrap();
        tokens(&file.flags, &command, Path::new("run.toml"), |_| false).unwrap()
    }

    #[test]
    fn keys_become_the_flags_they_name() {
        assert_eq!(
            tokens_of("dataset = [\"fol\", \"regex\"]\nper-bucket = 2\nparquet = true\n"),
            [
                "--dataset=fol",
                "--dataset=regex",
                "--parquet",
                "--per-bucket=2"
            ]
        );
        let file = read(
            "models = [\"reference\"]\n[model.reference]\ntemperature = 0.5\n",
            Path::new("run.toml"),
        )
        .unwrap();
        assert!(file.models.contains_key("reference"));
        let command = RunArgs::augment_args(clap::Command::new("run"));
        let listed = tokens(&file.flags, &command, Path::new("run.toml"), |_| false).unwrap();
        assert_eq!(listed, ["--model=reference"]);
        // The plural keys config.toml had before its keys were the flags.
        assert_eq!(
            tokens_of("datasets = [\"fol\"]\nprompts = [\"few-shot\"]\n"),
            ["--dataset=fol", "--prompt=few-shot"]
        );
    }

    #[test]
    fn a_key_that_is_no_flag_is_refused_naming_the_file() {
        let command = RunArgs::augment_args(clap::Command::new("run"));
        let file = read("per-buckets = 2\n", Path::new("run.toml")).unwrap();
        let e = tokens(&file.flags, &command, Path::new("run.toml"), |_| false).unwrap_err();
        assert!(
            e.to_string().contains("run.toml: `per-buckets` is no flag"),
            "{e}"
        );
    }

    #[test]
    fn a_list_under_model_beside_model_tables_names_the_line_and_the_fix() {
        let text = "model = [\"reference\"]\n\n[model.\"reference\"]\ntemperature = 0.5\n";
        let Err(e) = read(text, Path::new("run.toml")) else {
            panic!("read")
        };
        let said = e.to_string();
        assert!(said.starts_with("run.toml: line 3:"), "{said}");
        assert!(
            said.contains("write the list of models as `models = [...]`"),
            "{said}"
        );
    }

    #[test]
    fn a_model_table_is_read_by_the_per_model_keys_parser() {
        let table = "[model.reference]\ntemperature = 0.5\nmax-tokens = \"none\"\nextra = { top_p = 0.9 }\n";
        let file = read(table, Path::new("run.toml")).unwrap();
        let settings = &file.models["reference"];
        assert_eq!(settings.temperature, Some(0.5));
        assert_eq!(
            settings.max_tokens,
            Some(autoeval_models::MaxTokens::Uncapped)
        );
        assert_eq!(settings.extra["top_p"], serde_json::json!(0.9));
        let refused = |text: &str| read(text, Path::new("run.toml")).unwrap_err().to_string();
        let e = refused("[model.reference]\nrequest-timeout-s = 0\n");
        assert!(
            e.contains(
                "run.toml: [model.\"reference\"] invalid value '0' for '--request-timeout-s <"
            ) && e.contains("it must lie in 1..=86400"),
            "{e}"
        );
        let e = refused("[model.reference]\ntop-k = 3\n");
        assert!(e.contains("`top-k` is no per-model key"), "{e}");
        let e = refused("[model.reference]\nbatch = \"yes\"\n");
        assert!(e.contains("'--batch <"), "{e}");
    }
}
