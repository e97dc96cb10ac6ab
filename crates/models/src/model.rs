//! A model as a run names it: the spec exactly as written, read once at the
//! edge (a flag, a config file, a message from the coordinator) into its
//! provider, model and own settings, and carried typed from there on.

use crate::{ModelSettings, ModelSpec, SpecError};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A model of a run: the spec as written (`openai:gpt-4o?top_p=0.9`), which
/// names it in tasks, records and run ids, and what it says, parsed once.
///
/// Two models are the same when they are written the same: the written
/// text is the identity the run's records and the broker's tasks carry.
/// A clone shares the reading (the settings are large, and a model is
/// carried by every stage).
#[derive(Clone)]
pub struct Model(Arc<Read>);

/// What a spec says, read.
struct Read {
    written: String,
    spec: ModelSpec,
    own: ModelSettings,
}

impl Model {
    /// The spec as written, settings tail included.
    pub fn as_str(&self) -> &str {
        &self.0.written
    }

    /// Which model answers, and through which provider.
    pub fn spec(&self) -> &ModelSpec {
        &self.0.spec
    }

    /// The settings of the spec's own `?…` tail (none set without one).
    pub fn own_settings(&self) -> &ModelSettings {
        &self.0.own
    }

    /// The model `model` on the OpenAI-compatible server at `base_url`.
    pub fn on_server(model: &str, base_url: &str) -> Result<Model, SpecError> {
        ModelSpec::on_server(model, base_url)?.to_string().parse()
    }
}

impl std::str::FromStr for Model {
    type Err = SpecError;
    fn from_str(written: &str) -> Result<Model, SpecError> {
        let (spec, own) = ModelSpec::parse_with_settings(written)?;
        Ok(Model(Arc::new(Read {
            written: written.to_string(),
            spec,
            own,
        })))
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Model({:?})", self.as_str())
    }
}

impl PartialEq for Model {
    fn eq(&self, other: &Model) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Model {}

impl PartialEq<String> for Model {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for Model {
    fn partial_cmp(&self, other: &Model) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Model {
    fn cmp(&self, other: &Model) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Model {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

/// A map keyed by models is looked up by the written spec a task carries.
impl Borrow<str> for Model {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Serialize for Model {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Model {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Model, D::Error> {
        let written = String::deserialize(deserializer)?;
        written.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_model_is_its_written_spec_parsed_once() {
        let m: Model = "openai-compatible:m@http://127.0.0.1:1/v1?top_p=0.5"
            .parse()
            .unwrap();
        assert_eq!(
            m.as_str(),
            "openai-compatible:m@http://127.0.0.1:1/v1?top_p=0.5"
        );
        assert_eq!(m.spec().model(), "m");
        assert_eq!(m.spec().base_url(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(
            m.own_settings().extra.get("top_p"),
            Some(&serde_json::Value::from(0.5))
        );
        assert!("nonesuch:x".parse::<Model>().is_err());
    }

    #[test]
    fn a_model_travels_as_its_written_text_and_is_read_back_checked() {
        let m: Model = "reference-noisy:0.1".parse().unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, "\"reference-noisy:0.1\"");
        assert_eq!(serde_json::from_str::<Model>(&json).unwrap(), m);
        let map = BTreeMap::from([(m.clone(), 1)]);
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            "{\"reference-noisy:0.1\":1}"
        );
        assert_eq!(map.get("reference-noisy:0.1"), Some(&1));
        let refused = serde_json::from_str::<Model>("\"nonesuch:x\"").unwrap_err();
        assert!(refused.to_string().contains("unknown backend"), "{refused}");
    }
}
