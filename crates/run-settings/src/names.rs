//! How a model spec is named in file names.

use autoeval_models::Model;

/// A model spec as part of a file name, whole: the backend and model name,
/// the host and port of a server, and a short hash of any `?…` settings;
/// characters other than letters, digits, `.` and `-` become `-`.
/// `openai-compatible:llama3:8b@http://127.0.0.1:8000/v1` becomes
/// `openai-compatible-llama3-8b-127.0.0.1-8000`.
pub fn model_file_name(model: &Model) -> String {
    let spec = model.spec();
    let server = spec
        .base_url()
        .map(|url| format!("{}-{}-{}", spec.backend(), spec.model(), host_port(url)));
    file_name(model.as_str(), server)
}

/// The file name of a model as records name it: [`model_file_name`] where
/// the name is a model spec, the name itself where it is not (a run
/// imported from another tool keeps that tool's model names).
pub fn recorded_model_file_name(recorded: &str) -> String {
    match recorded.parse::<Model>() {
        Ok(model) => model_file_name(&model),
        Err(_) => file_name(recorded, None),
    }
}

/// `written` as a file name: `server` (the model on its server) in place
/// of the spec where it has one, then a hash of any settings.
fn file_name(written: &str, server: Option<String>) -> String {
    let (base, settings) = match written.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (written, None),
    };
    let mut name = server.unwrap_or_else(|| base.to_string());
    if let Some(q) = settings {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(q.as_bytes());
        name.push_str(&format!("-s{:02x}{:02x}", d[0], d[1]));
    }
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `host-port` of a URL such as `http://127.0.0.1:8000/v1` (the path dropped).
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    authority.replace(':', "-")
}
