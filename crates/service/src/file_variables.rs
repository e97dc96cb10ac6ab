//! Settings that may come from files, as Docker and Kubernetes hand out
//! secrets: `NAME_FILE` names a file holding NAME's value, so a password or
//! key never needs to be in a process's arguments or environment listing.

use anyhow::{Context, Result};
use std::path::Path;

/// The variables that may be given as `NAME_FILE`: the connections', and
/// every provider's API key.
pub fn file_variables() -> Vec<&'static str> {
    let mut names = vec!["AUTOEVAL_AMQP", "AUTOEVAL_REDIS"];
    names.extend(autoeval_models::provider::key_variables());
    names
}

/// The TLS variables, which take a file's path themselves: their
/// `NAME_FILE` is copied as a path, so a private key never enters the
/// process's environment, which its children would inherit.
pub const PATH_VARIABLES: [&str; 3] = [
    autoeval_proto::tls::CA_VAR,
    autoeval_proto::tls::CERT_VAR,
    autoeval_proto::tls::KEY_VAR,
];

/// For each of [`file_variables`] that is unset while its `NAME_FILE` is
/// set, sets it to the file's contents without surrounding whitespace; an
/// empty file leaves it unset (a deployment mounts an empty file for a
/// provider whose key it does not have). Call it first thing in `main`,
/// before any thread starts.
pub fn variables_from_files() -> Result<()> {
    for name in file_variables() {
        if std::env::var_os(name).is_some() {
            continue;
        }
        let Some(path) = std::env::var_os(format!("{name}_FILE")) else {
            continue;
        };
        let value = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "cannot read {name}_FILE ({}); point it at a readable file, or unset it",
                Path::new(&path).display()
            )
        })?;
        if !value.trim().is_empty() {
            std::env::set_var(name, value.trim());
        }
    }
    for name in PATH_VARIABLES {
        if std::env::var_os(name).is_some() {
            continue;
        }
        if let Some(path) = std::env::var_os(format!("{name}_FILE")) {
            std::env::set_var(name, path);
        }
    }
    Ok(())
}
