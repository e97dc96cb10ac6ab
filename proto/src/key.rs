//! The names of a unit, a round of it and a judge, each with one encoding
//! that reads back: the fields of Redis hashes, the units a message's
//! headers name, the samples the response cache tells apart.

use serde::{Deserialize, Serialize};

/// What identifies a work unit: one item asked of one model in one prompt style, once.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct UnitKey {
    /// Item id, `{dataset}-{seed}-{batch}-{index}`.
    pub id: String,
    /// Model spec as written.
    pub model: String,
    /// `zero-shot` or `few-shot`.
    pub prompt: String,
    /// Repeat number, from 0.
    pub repeat: u32,
}

impl UnitKey {
    /// The shard `status` counts the unit in and its messages are bundled by: its item's.
    pub fn shard(&self) -> u32 {
        crate::fleet::shard_of(&self.id, crate::fleet::SHARDS)
    }

    /// Round `round` of this unit.
    pub fn round(&self, round: u32) -> RoundKey {
        RoundKey {
            unit: self.clone(),
            round,
        }
    }
}

/// A text that is not the name of a unit, a round or a judge.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not {what}: {text:?}")]
pub struct NotAKey {
    /// What the text was read as.
    pub what: &'static str,
    /// The text.
    pub text: String,
}

impl std::fmt::Display for UnitKey {
    /// `id|model|prompt|repeat`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}|{}|{}|{}",
            self.id, self.model, self.prompt, self.repeat
        )
    }
}

impl std::str::FromStr for UnitKey {
    type Err = NotAKey;

    /// Read from both ends, so that a model spec may hold a `|`.
    fn from_str(s: &str) -> Result<UnitKey, NotAKey> {
        let bad = || NotAKey {
            what: "a unit (id|model|prompt|repeat)",
            text: s.to_string(),
        };
        let (id, rest) = s.split_once('|').ok_or_else(bad)?;
        let (rest, repeat) = rest.rsplit_once('|').ok_or_else(bad)?;
        let (model, prompt) = rest.rsplit_once('|').ok_or_else(bad)?;
        if id.is_empty() || model.is_empty() || prompt.is_empty() {
            return Err(bad());
        }
        Ok(UnitKey {
            id: id.to_string(),
            model: model.to_string(),
            prompt: prompt.to_string(),
            repeat: repeat.parse().map_err(|_| bad())?,
        })
    }
}

/// One round of one unit: what a result is stored under and a message's headers name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoundKey {
    /// The unit.
    pub unit: UnitKey,
    /// Round r of (A∘I)^n, from 1.
    pub round: u32,
}

impl std::fmt::Display for RoundKey {
    /// `<unit>#<round>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.unit, self.round)
    }
}

impl std::str::FromStr for RoundKey {
    type Err = NotAKey;

    fn from_str(s: &str) -> Result<RoundKey, NotAKey> {
        let bad = || NotAKey {
            what: "a round (id|model|prompt|repeat#round)",
            text: s.to_string(),
        };
        let (unit, round) = s.rsplit_once('#').ok_or_else(bad)?;
        Ok(RoundKey {
            unit: unit.parse().map_err(|_| bad())?,
            round: round.parse().map_err(|_| bad())?,
        })
    }
}

/// A judge of equivalence: a model spec asked in one style.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JudgeKey {
    /// The judge's model spec as written.
    pub spec: String,
    /// `cot` or `yesno`.
    pub style: String,
}

impl std::fmt::Display for JudgeKey {
    /// `spec|style`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}|{}", self.spec, self.style)
    }
}

impl std::str::FromStr for JudgeKey {
    type Err = NotAKey;

    /// Read from the end, so that a model spec may hold a `|`.
    fn from_str(s: &str) -> Result<JudgeKey, NotAKey> {
        match s.rsplit_once('|') {
            Some((spec, style)) if !spec.is_empty() && !style.is_empty() => Ok(JudgeKey {
                spec: spec.to_string(),
                style: style.to_string(),
            }),
            _ => Err(NotAKey {
                what: "a judge (spec|style)",
                text: s.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(model: &str) -> UnitKey {
        UnitKey {
            id: "fol-7-2-13".into(),
            model: model.into(),
            prompt: "few-shot".into(),
            repeat: 3,
        }
    }

    #[test]
    fn a_unit_and_its_round_read_back_what_they_wrote_even_with_bars_and_hashes_in_the_model() {
        for model in [
            "reference",
            "openai-compatible:m@http://h/v1?stop=a|b",
            "openai-compatible:m@http://h/v1#frag",
        ] {
            let u = unit(model);
            assert_eq!(u.to_string().parse::<UnitKey>(), Ok(u.clone()));
            let r = u.round(4);
            assert_eq!(r.to_string(), format!("fol-7-2-13|{model}|few-shot|3#4"));
            assert_eq!(r.to_string().parse::<RoundKey>(), Ok(r));
        }
    }

    #[test]
    fn texts_that_are_not_keys_are_refused() {
        for bad in ["", "a|b|c", "a|m|p|x", "|m|p|0", "a||p|0"] {
            assert!(bad.parse::<UnitKey>().is_err(), "{bad:?}");
        }
        for bad in ["a|m|p|0", "a|m|p|0#", "a|m|p|0#one", "a|m#1"] {
            assert!(bad.parse::<RoundKey>().is_err(), "{bad:?}");
        }
        for bad in ["cot", "|cot", "m|"] {
            assert!(bad.parse::<JudgeKey>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_judge_reads_back_with_a_bar_in_its_spec() {
        let j = JudgeKey {
            spec: "openai-compatible:m@http://h/v1?stop=a|b".into(),
            style: "cot".into(),
        };
        assert_eq!(j.to_string().parse::<JudgeKey>(), Ok(j));
    }

    #[test]
    fn a_units_shard_is_its_items() {
        let a = unit("a");
        let b = UnitKey {
            model: "b".into(),
            repeat: 0,
            ..a.clone()
        };
        assert_eq!(a.shard(), b.shard());
        assert!(a.shard() < crate::fleet::SHARDS);
    }
}
