//! A model's reply-token cap as its settings give it: a number, or none at
//! all, which leaves the server's own limit (the public implementation sent
//! local servers no cap).

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The word that asks for no cap, in the config file and a spec's tail.
pub const NO_CAP: &str = "none";

/// The most tokens a reply may have, as a model's settings give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxTokens {
    /// Send this cap.
    Cap(u32),
    /// Send none: the server's own limit (its context length) applies.
    Uncapped,
}

impl MaxTokens {
    /// The cap to send, if any.
    pub fn cap(self) -> Option<u32> {
        match self {
            MaxTokens::Cap(n) => Some(n),
            MaxTokens::Uncapped => None,
        }
    }
}

impl fmt::Display for MaxTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxTokens::Cap(n) => write!(f, "{n}"),
            MaxTokens::Uncapped => f.write_str(NO_CAP),
        }
    }
}

impl Serialize for MaxTokens {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MaxTokens::Cap(n) => s.serialize_u32(*n),
            MaxTokens::Uncapped => s.serialize_str(NO_CAP),
        }
    }
}

impl<'de> Deserialize<'de> for MaxTokens {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MaxTokens, D::Error> {
        struct Cap;
        impl Visitor<'_> for Cap {
            type Value = MaxTokens;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a whole number of tokens or {NO_CAP:?}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MaxTokens, E> {
                u32::try_from(v)
                    .map(MaxTokens::Cap)
                    .map_err(|_| E::custom(format!("{v} tokens is more than any model replies")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MaxTokens, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom("a token cap cannot be negative"))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MaxTokens, E> {
                if v == NO_CAP {
                    Ok(MaxTokens::Uncapped)
                } else {
                    Err(E::custom(format!(
                        "max-tokens {v:?} is neither a whole number nor {NO_CAP:?}"
                    )))
                }
            }
        }
        d.deserialize_any(Cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_reads_from_a_number_or_the_word_none() {
        let read = |s: &str| serde_json::from_str::<MaxTokens>(s);
        assert_eq!(read("512").unwrap(), MaxTokens::Cap(512));
        assert_eq!(read("\"none\"").unwrap(), MaxTokens::Uncapped);
        assert!(read("-1").is_err());
        assert!(read("\"lots\"").unwrap_err().to_string().contains("none"));
        assert_eq!(
            serde_json::to_string(&MaxTokens::Uncapped).unwrap(),
            "\"none\""
        );
        assert_eq!(serde_json::to_string(&MaxTokens::Cap(7)).unwrap(), "7");
    }
}
