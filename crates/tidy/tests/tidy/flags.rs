//! A flag is declared once and flattened where it is taken: the broker's
//! and Redis's URLs, `--quiet` and `--plain` by name, and every other long
//! flag by its name across every command and process, but for a short list
//! of names that mean different things in different commands.

use crate::debt::Debt;
use crate::tree::product_sources;
use quote::ToTokens;
use std::collections::BTreeMap;
use syn::visit::Visit;

/// The shared flags, as the fields that declare them are named.
const SHARED: [&str; 4] = ["amqp", "redis", "quiet", "plain"];

/// Names declared by more than one field because they mean different
/// things where they are taken, each with what it means there.
const MEANS_DIFFERENT_THINGS: [(&str, &str); 12] = [
    (
        "seed",
        "the seed a run draws its items with, or (a per-model key) the seed a model samples with",
    ),
    ("concurrency", "what one process runs at once: a run's round trips, a worker's tasks per model, a verifier's tasks in hand, a judge's calls"),
    ("dataset", "a dataset type (one type, DatasetKind, read by its one parser) that a run evaluates or a command makes, reads or correlates; or closeness's formula set, which may be a file"),
    (
        "fleet",
        "a run made on the fleet, a run read from the fleet's Redis first, or (status, always the fleet's) the word the other commands take",
    ),
    (
        "max-complexity",
        "the highest complexity A1 counts, or the highest a judge is asked about",
    ),
    ("dry-run", "a run's plan printed, or what `fleet gc` would remove"),
    ("prompt", "the prompt styles a run translates with, or the style a judge is asked in"),
    ("out", "a run's directory, or the one file a command writes"),
    (
        "format",
        "generate's dataset layout, or export's file format",
    ),
    (
        "model",
        "a run's models or the models a worker serves (each a spec), or the one built-in model a mock server plays",
    ),
    (
        "pairs",
        "a file of pairs to check or score, or how many a benchmark makes",
    ),
    (
        "latency-ms",
        "the mock server's delay, or the delay a benchmark asks of it",
    ),
];

/// A per-model key's declaration and the run-wide flag of the same name
/// (`?request-timeout-s=` beside `--request-timeout-s`): one setting, whose
/// run-wide flag takes the key's help, range and default (`calls.rs` holds
/// them to it), so the two count as one declaration.
const KEY_AND_ITS_RUN_FLAG: [&str; 2] = [
    "crates/models/src/settings.rs",
    "crates/run-settings/src/options/calls.rs",
];

/// Where each command-line argument is declared: a field with an `arg`
/// attribute, by its field name and by its long flag.
#[derive(Default)]
struct Declared {
    found: BTreeMap<String, Vec<String>>,
    flags: BTreeMap<String, Vec<String>>,
    path: String,
}

impl<'ast> Visit<'ast> for Declared {
    fn visit_field(&mut self, f: &'ast syn::Field) {
        let args: Vec<String> = f
            .attrs
            .iter()
            .map(|a| a.to_token_stream().to_string())
            .filter(|text| text.starts_with("# [arg"))
            .collect();
        if let (false, Some(name)) = (args.is_empty(), &f.ident) {
            self.found
                .entry(name.to_string())
                .or_default()
                .push(self.path.clone());
            if let Some(flag) = long_flag(&args.join(" "), &name.to_string()) {
                self.flags.entry(flag).or_default().push(self.path.clone());
            }
        }
        syn::visit::visit_field(self, f);
    }
}

/// The long flag an `arg` attribute's `text` declares for field `field`:
/// its `long = "…"`, or the field's name in kebab case for a bare `long`.
fn long_flag(text: &str, field: &str) -> Option<String> {
    if let Some(rest) = text.split("long = \"").nth(1) {
        return rest.split('"').next().map(str::to_string);
    }
    let bare = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == "long");
    bare.then(|| field.replace('_', "-"))
}

/// Every field that declares an argument, read from the product's sources.
fn declared() -> Declared {
    let mut declared = Declared::default();
    for file in product_sources() {
        declared.path = file.path.clone();
        declared.visit_file(&file.syntax);
    }
    assert!(
        declared.found.len() > 50 && declared.flags.len() > 50,
        "the command line's arguments were read"
    );
    declared
}

#[test]
fn shared_flags_are_declared_once() {
    let declared = declared();
    for flag in SHARED {
        let at = declared.found.get(flag).cloned().unwrap_or_default();
        println!("--{flag}: declared in {at:?}");
        assert_eq!(at.len(), 1, "--{flag} is declared in {at:?}");
    }
}

#[test]
fn a_flag_name_is_declared_once_across_every_command_and_process() {
    let declared = declared();
    let declarations: usize = declared.flags.values().map(Vec::len).sum();
    println!(
        "{declarations} long flags declared, {} names",
        declared.flags.len()
    );
    let twice = declared
        .flags
        .iter()
        .filter(|(name, at)| at.len() > 1 && !MEANS_DIFFERENT_THINGS.iter().any(|(n, _)| n == name))
        .filter(|(_, at)| at.as_slice() != KEY_AND_ITS_RUN_FLAG)
        .map(|(name, at)| {
            (
                name.clone(),
                format!("{} declarations: {}", at.len(), at.join(", ")),
            )
        });
    Debt::FLAGS_DECLARED_MORE_THAN_ONCE.check("flags declared more than once", twice);
    for (name, _) in MEANS_DIFFERENT_THINGS {
        let at = declared.flags.get(name).map_or(0, Vec::len);
        assert!(
            at > 1,
            "--{name} is declared {at} time(s): take it off the list"
        );
    }
}
