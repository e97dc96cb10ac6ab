//! How a model spec is named in file names.

use autoeval_models::ModelSpec;

/// A model spec as part of a file name, whole: the backend and model name,
/// the host and port of a server, and a short hash of any `?…` settings;
/// characters other than letters, digits, `.` and `-` become `-`.
/// `openai-compatible:llama3:8b@http://127.0.0.1:8000/v1` becomes
/// `openai-compatible-llama3-8b-127.0.0.1-8000`.
pub fn model_file_name(model: &str) -> String {
    let (base, settings) = match model.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (model, None),
    };
    let mut name = match base.parse::<ModelSpec>() {
        Ok(spec) => match spec.base_url() {
            Some(url) => format!("{}-{}-{}", spec.backend(), spec.model(), host_port(url)),
            None => base.to_string(),
        },
        Err(_) => base.to_string(),
    };
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
