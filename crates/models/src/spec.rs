//! Model specs as users write them on the command line: `PROVIDER:MODEL`,
//! read by the provider the prefix names.

use crate::provider::{self, Api, Builtin, Provider};
use crate::ModelSettings;
use thiserror::Error;

/// Which model answers, and through which provider.
#[derive(Clone)]
pub struct ModelSpec {
    provider: &'static dyn Provider,
    named: provider::Named,
}

/// Why a model spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid model {spec:?}: {why}{}", expected(forms))]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub why: String,
    /// The forms a spec takes, when the spec's form is what is wrong.
    pub forms: String,
}

/// The forms a spec takes, said after its refusal when they are the fix.
fn expected(forms: &str) -> String {
    if forms.is_empty() {
        String::new()
    } else {
        format!("; expected {forms}, optionally followed by ?key=value&… settings")
    }
}

impl ModelSpec {
    /// A spec as written, with its optional `?key=value&…` tail of settings
    /// (`NAME:MODEL?reasoning=true`, `NAME:MODEL@URL?top_p=0.9`).
    pub(crate) fn parse_with_settings(s: &str) -> Result<(ModelSpec, ModelSettings), SpecError> {
        match s.split_once('?') {
            Some((spec, query)) => Ok((spec.parse()?, ModelSettings::from_query(s, query)?)),
            None => Ok((s.parse()?, ModelSettings::default())),
        }
    }

    /// The model `model` on the OpenAI-compatible server at `base_url`.
    pub fn on_server(model: &str, base_url: &str) -> Result<ModelSpec, SpecError> {
        let server = provider::server();
        format!("{}:{model}@{base_url}", server.name()).parse()
    }

    /// Its provider.
    pub fn provider(&self) -> &'static dyn Provider {
        self.provider
    }

    /// The shape of its provider's API.
    pub fn api(&self) -> Api {
        self.provider.api()
    }

    /// The provider's name, part of cache keys and price lookups.
    pub fn backend(&self) -> &'static str {
        self.provider.name()
    }

    /// The model's name as the provider knows it (a built-in model's: its spec).
    pub fn model(&self) -> String {
        self.named.model.clone()
    }

    /// The server's address, when the spec gives one.
    pub fn base_url(&self) -> Option<&str> {
        self.named.base_url.as_deref()
    }

    /// Which built-in model this is, when it runs in this process.
    pub fn builtin(&self) -> Option<Builtin> {
        self.named.builtin
    }

    /// Whether this is one of the built-in models, which run in this process and cost nothing.
    pub fn is_builtin(&self) -> bool {
        self.named.builtin.is_some()
    }

    /// The environment variable holding the API key, for providers that take one.
    pub fn key_variable(&self) -> Option<&'static str> {
        self.provider.key_variable()
    }
}

impl PartialEq for ModelSpec {
    fn eq(&self, other: &ModelSpec) -> bool {
        self.provider.name() == other.provider.name() && self.named == other.named
    }
}

impl std::fmt::Debug for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelSpec({self})")
    }
}

impl std::str::FromStr for ModelSpec {
    type Err = SpecError;
    /// The spec without settings; a `?…` tail is ignored here (a `Model` reads both).
    fn from_str(written: &str) -> Result<ModelSpec, SpecError> {
        let s = written.split_once('?').map_or(written, |(spec, _)| spec);
        let bad = |why: String| SpecError {
            spec: written.to_string(),
            why,
            forms: provider::forms(),
        };
        let (name, rest) = match s.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s, None),
        };
        let provider = provider::named(name).ok_or_else(|| bad("unknown backend".into()))?;
        let named = provider.read(rest).map_err(bad)?;
        Ok(ModelSpec { provider, named })
    }
}

impl std::fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_builtin() {
            return write!(f, "{}", self.named.model);
        }
        write!(f, "{}:{}", self.provider.name(), self.named.model)?;
        match &self.named.base_url {
            Some(url) => write!(f, "@{url}"),
            None => Ok(()),
        }
    }
}
