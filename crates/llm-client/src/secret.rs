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

/// What a provider's requests are authorized or signed with, as its
/// module found them ([`crate::provider::Provider::credentials`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Credentials {
    /// The key sent with each request, and the variable it came from (a
    /// provider with two kinds of key sends each its own way).
    pub key: Option<(ApiKey, &'static str)>,
    /// The keys each request is signed with.
    pub signing: Option<SigningKeys>,
    /// The region the provider is asked in, for a provider with regions.
    pub region: Option<String>,
}

/// Keys a request is signed with (AWS Signature Version 4).
#[derive(Clone, Debug)]
pub(crate) struct SigningKeys {
    /// The access key's id (not a secret: it names the key).
    pub access_key_id: String,
    /// The secret access key.
    pub secret: ApiKey,
    /// A temporary credential's session token.
    pub session_token: Option<ApiKey>,
}

impl Credentials {
    /// The key alone, when there is one.
    pub(crate) fn key(&self) -> Option<&ApiKey> {
        self.key.as_ref().map(|(k, _)| k)
    }

    /// `text` with every secret of these credentials replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = match self.key() {
            Some(k) => k.redact(text),
            None => text.to_string(),
        };
        if let Some(s) = &self.signing {
            out = s.secret.redact(&out);
            if let Some(t) = &s.session_token {
                out = t.redact(&out);
            }
        }
        out
    }
}
