//! The five dataset types, named once for every part of the fleet.

use serde::{Deserialize, Serialize};

/// The five dataset types.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum DatasetKind {
    /// k-SAT (3-SAT by default) in conjunctive normal form.
    Ksat,
    /// Propositional logic.
    Plogic,
    /// Prenex first-order logic with synthetic names.
    Fol,
    /// Prenex first-order logic with English verbs and person names
    /// (`fol_human`, the public implementation's name, is read as it).
    #[value(alias = "fol_human")]
    FolEnglish,
    /// Regular expressions over a small digit alphabet.
    Regex,
}

impl DatasetKind {
    /// All kinds, in the order reports list them.
    pub const ALL: [DatasetKind; 5] = [
        DatasetKind::Ksat,
        DatasetKind::Plogic,
        DatasetKind::Fol,
        DatasetKind::FolEnglish,
        DatasetKind::Regex,
    ];

    /// The name used on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            DatasetKind::Ksat => "ksat",
            DatasetKind::Plogic => "plogic",
            DatasetKind::Fol => "fol",
            DatasetKind::FolEnglish => "fol-english",
            DatasetKind::Regex => "regex",
        }
    }

    /// The verifier family: `ksat`, `plogic`, `fol` or `regex`.
    pub fn check_kind(self) -> &'static str {
        match self {
            DatasetKind::FolEnglish => "fol",
            other => other.name(),
        }
    }

    /// True for the two first-order kinds.
    pub fn is_first_order(self) -> bool {
        matches!(self, DatasetKind::Fol | DatasetKind::FolEnglish)
    }

    /// The metric that buckets items: operators for logic, depth for regexes.
    pub fn complexity_field(self) -> &'static str {
        match self {
            DatasetKind::Regex => "depth",
            _ => "num_operators",
        }
    }
}

impl std::str::FromStr for DatasetKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DatasetKind::ALL
            .into_iter()
            .find(|k| k.name() == s || (s == "fol_human" && *k == DatasetKind::FolEnglish))
            .ok_or_else(|| {
                format!("unknown dataset {s:?}; expected ksat, plogic, fol, fol-english or regex")
            })
    }
}
