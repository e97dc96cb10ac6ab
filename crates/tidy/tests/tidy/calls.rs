//! How a model is called is declared once. The per-model keys
//! (`autoeval_models::ModelSettings`, read by its own flag parser from a
//! spec's tail, a config file's table and a fleet run's settings) take
//! their ranges from `autoeval_models::ranges`; the run-wide flags that are
//! also per-model keys (`--request-timeout-s` beside `?request-timeout-s=`)
//! take the same ranges, their defaults from `autoeval_models::defaults`
//! and their help from the key's (`key_help`); no flag writes its own.

use crate::tree::root;

/// The option group of the run-wide call flags.
const CALL_FLAGS: &str = "crates/run-settings/src/options/calls.rs";
/// The per-model keys' declaration.
const MODEL_KEYS: &str = "crates/models/src/settings.rs";

/// Each `#[arg(…)]` line of `path` that writes a range, a default or (for
/// a run-wide flag, `shared_help`) a help of its own.
fn own_declarations(path: &str, shared_help: bool) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let mut own = Vec::new();
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with("#[arg(long") {
            continue;
        }
        checked += 1;
        if line.contains("within(") && !line.contains("within(ranges::") {
            own.push(format!("{path}:{}: a range of its own", n + 1));
        }
        if line.contains("default_value_t") && !line.contains("default_value_t = defaults::") {
            own.push(format!("{path}:{}: a default of its own", n + 1));
        }
        if shared_help && !line.contains("key_help(\"") {
            own.push(format!("{path}:{}: a help of its own", n + 1));
        }
    }
    (checked, own)
}

#[test]
fn the_call_flags_take_their_ranges_defaults_and_help_from_the_one_declaration() {
    let (flags, mut own) = own_declarations(CALL_FLAGS, true);
    let (keys, own_keys) = own_declarations(MODEL_KEYS, false);
    own.extend(own_keys);
    assert!(
        flags >= 5 && keys >= 19,
        "{CALL_FLAGS} declares {flags} flags and {MODEL_KEYS} {keys} keys: the check is vacuous"
    );
    assert!(
        own.is_empty(),
        "declare it in autoeval_models::ranges, defaults or the key's help: {own:#?}"
    );
}
