//! Why a model stopped, in the tool's own words: each provider module maps
//! its API's finish reasons to these, so nothing past it reads a provider's
//! word (`length`, `max_tokens`, `MAX_TOKENS`, `incomplete`, …).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a model stopped answering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Finish {
    /// It ended its answer itself (or at a stop sequence).
    Complete,
    /// It was cut at the token cap: a reasoning model may have spent the
    /// cap thinking.
    Truncated,
    /// The provider withheld or cut the answer (a safety or recitation
    /// filter, a guardrail, a refusal).
    Filtered,
    /// Another reason the provider gave (a tool call, a pause, an error).
    Other,
    /// The provider said nothing.
    Unreported,
}

impl Finish {
    /// Every finish, for tables that list them all.
    pub const ALL: [Finish; 5] = [
        Finish::Complete,
        Finish::Truncated,
        Finish::Filtered,
        Finish::Other,
        Finish::Unreported,
    ];

    /// Its name in records, exports and messages.
    pub fn name(self) -> &'static str {
        match self {
            Finish::Complete => "complete",
            Finish::Truncated => "truncated",
            Finish::Filtered => "filtered",
            Finish::Other => "other",
            Finish::Unreported => "unreported",
        }
    }

    /// The finish named `name` (see [`Finish::name`]); a name this build
    /// does not write is `Other`.
    pub fn from_name(name: &str) -> Finish {
        Finish::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .unwrap_or(Finish::Other)
    }

    /// Whether the answer was cut at the token cap.
    pub fn is_truncation(self) -> bool {
        self == Finish::Truncated
    }
}

impl std::fmt::Display for Finish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Finish {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Finish {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Finish, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Finish::from_name(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_finish_reads_back_from_its_name() {
        for f in Finish::ALL {
            let written = serde_json::to_string(&f).unwrap();
            assert_eq!(serde_json::from_str::<Finish>(&written).unwrap(), f);
        }
    }
}
