//! How a model is called is declared once: the run-wide flags that are also
//! per-model keys (`--request-timeout-s` beside `?request-timeout-s=`) take
//! their range from `autoeval_models::ranges` and their default from
//! `autoeval_models::defaults`, the ranges a spec's tail and a config
//! file's table are checked against; no flag writes its own numbers.

use crate::tree::root;

/// The option group of the run-wide call flags.
const CALL_FLAGS: &str = "crates/run-settings/src/options/calls.rs";

#[test]
fn the_call_flags_take_their_ranges_and_defaults_from_the_one_declaration() {
    let text = std::fs::read_to_string(root().join(CALL_FLAGS)).unwrap();
    let mut own = Vec::new();
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with("#[arg(") {
            continue;
        }
        checked += 1;
        if line.contains("within(") && !line.contains("within(ranges::") {
            own.push(format!("{CALL_FLAGS}:{}: a range of its own", n + 1));
        }
        if line.contains("default_value_t") && !line.contains("default_value_t = defaults::") {
            own.push(format!("{CALL_FLAGS}:{}: a default of its own", n + 1));
        }
    }
    assert!(
        checked >= 5,
        "{CALL_FLAGS} declares no flags: the check is vacuous"
    );
    assert!(
        own.is_empty(),
        "declare it in autoeval_models::ranges or defaults: {own:#?}"
    );
}
