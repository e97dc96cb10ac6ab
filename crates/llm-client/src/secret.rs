//! API keys: read from the environment or a secrets file, never printed.

use std::collections::BTreeMap;

/// An API key. Its `Debug` shows `***`, it has no `Display`, and
/// [`ApiKey::redact`] removes it from any text before the text is kept.
#[derive(Clone)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl ApiKey {
    /// A key from its text (trimmed); `None` when empty.
    pub fn new(text: &str) -> Option<ApiKey> {
        let t = text.trim();
        (!t.is_empty()).then(|| ApiKey(t.to_string()))
    }

    /// The key in environment variable `var`, or in a secrets file: a JSON
    /// object mapping variable names to keys.
    pub fn lookup(var: &str, secrets_file: Option<&std::path::Path>) -> Option<ApiKey> {
        if let Some(k) = std::env::var(var).ok().and_then(|v| ApiKey::new(&v)) {
            return Some(k);
        }
        let text = std::fs::read_to_string(secrets_file?).ok()?;
        let map: BTreeMap<String, String> = serde_json::from_str(&text).ok()?;
        ApiKey::new(map.get(var)?)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}
