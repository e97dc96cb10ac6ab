//! The benchmark's prompts (paper App. F): informalization I (formula →
//! English), autoformalization A (English → formula, in a fresh context),
//! and the LLM-as-verifier question of metric A4, zero-shot or few-shot.
//!
//! Templates are data files (`templates/`) that users can replace; each
//! prompt carries its template's version. The vocabulary block is built
//! from the ground-truth formula.

mod copy_check;
mod judge;
pub mod reference;
mod template;
pub mod vocabulary;

pub use autoeval_proto::{CopyCheck, Shots};
pub use copy_check::copy_check;
pub use judge::{parse_judgement, Judgement};
pub use template::{Template, TemplateError};

use autoeval_syntax::{parse_formula_exact, parse_regex_exact, Mode, ParseError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// Names of the templates, which are also their file names without `.txt`.
pub const TEMPLATE_NAMES: [&str; 8] = [
    "informalize-logic",
    "autoformalize-logic",
    "informalize-regex",
    "autoformalize-regex",
    "judge-cot",
    "judge-yesno",
    "examples-logic",
    "examples-regex",
];

/// Which prompt family a dataset uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// ksat and plogic.
    Propositional,
    /// fol.
    FirstOrder,
    /// fol-english: predicates are English verbs and their meanings are given.
    FirstOrderEnglish,
    /// regex.
    Regex,
}

impl From<autoeval_proto::DatasetKind> for Family {
    fn from(kind: autoeval_proto::DatasetKind) -> Family {
        use autoeval_proto::DatasetKind;
        match kind {
            DatasetKind::Ksat | DatasetKind::Plogic => Family::Propositional,
            DatasetKind::Fol => Family::FirstOrder,
            DatasetKind::FolEnglish => Family::FirstOrderEnglish,
            DatasetKind::Regex => Family::Regex,
        }
    }
}

impl Family {
    /// The family of a dataset name.
    pub fn of_dataset(name: &str) -> Option<Family> {
        Some(match name {
            "ksat" | "plogic" => Family::Propositional,
            "fol" => Family::FirstOrder,
            "fol-english" => Family::FirstOrderEnglish,
            "regex" => Family::Regex,
            _ => return None,
        })
    }

    /// True for the two first-order families.
    pub fn is_first_order(self) -> bool {
        matches!(self, Family::FirstOrder | Family::FirstOrderEnglish)
    }

    /// The kind of formula with capitals, as App. F's verification prompt writes it.
    fn logic_title(self) -> &'static str {
        match self {
            Family::Propositional => "Propositional Logic",
            Family::FirstOrder | Family::FirstOrderEnglish => "First-Order Logic",
            Family::Regex => "Regular Expression",
        }
    }

    /// The kind of formula as the public implementation's judge prompt names it.
    fn problem_name(self) -> &'static str {
        match self {
            Family::Regex => "regex",
            other => other.logic_name(),
        }
    }

    fn logic_name(self) -> &'static str {
        match self {
            Family::Propositional => "propositional logic",
            Family::FirstOrder | Family::FirstOrderEnglish => "first-order logic",
            Family::Regex => "regular expression",
        }
    }
}

/// The A4 question with an explanation first (chain of thought) or a bare yes/no.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JudgeStyle {
    /// Explanation, then `[Answer] yes|no`.
    Cot,
    /// Only `[Answer] yes|no`.
    Yesno,
}

/// A rendered prompt and the version of the template that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// The text sent to the model as one user message.
    pub text: String,
    /// `name@hash` of the template.
    pub template: String,
}

/// Why a prompt could not be built.
#[derive(Debug, Clone, Error)]
pub enum PromptError {
    /// The ground truth does not parse.
    #[error("the ground-truth formula does not parse: {0}")]
    Formula(#[from] ParseError),
}

/// A set of templates: the built-in ones, possibly with some replaced.
#[derive(Clone, Debug)]
pub struct Templates {
    set: PromptSet,
    /// `name@hash` of the set as it stands, kept up to date by every change.
    id: String,
    by_name: BTreeMap<String, Template>,
}

/// The template files of one built-in set, by name.
macro_rules! template_set {
    ($dir:literal) => {
        [
            (
                "informalize-logic",
                include_str!(concat!("../templates/", $dir, "/informalize-logic.txt")),
            ),
            (
                "autoformalize-logic",
                include_str!(concat!("../templates/", $dir, "/autoformalize-logic.txt")),
            ),
            (
                "informalize-regex",
                include_str!(concat!("../templates/", $dir, "/informalize-regex.txt")),
            ),
            (
                "autoformalize-regex",
                include_str!(concat!("../templates/", $dir, "/autoformalize-regex.txt")),
            ),
            (
                "judge-cot",
                include_str!(concat!("../templates/", $dir, "/judge-cot.txt")),
            ),
            (
                "judge-yesno",
                include_str!(concat!("../templates/", $dir, "/judge-yesno.txt")),
            ),
            (
                "examples-logic",
                include_str!(concat!("../templates/", $dir, "/examples-logic.txt")),
            ),
            (
                "examples-regex",
                include_str!(concat!("../templates/", $dir, "/examples-regex.txt")),
            ),
        ]
    };
}

const PAPER: [(&str, &str); 8] = template_set!("paper");
const EXTENDED: [(&str, &str); 8] = template_set!("extended");
const REFERENCE: [(&str, &str); 8] = template_set!("reference");

/// The built-in prompt sets.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum PromptSet {
    /// App. F's prompts as the paper used them: autoformalization lists only
    /// the operators (and, for English FOL, the predicates with their arity).
    #[default]
    Paper,
    /// The paper's prompts with this product's additions: every name of φ0
    /// in both prompts, English predicate meanings, the regex alphabet.
    Extended,
    /// The prompts of the public implementation that produced the paper's
    /// numbers, byte for byte: φ0 as its logic library prints it, `v` for
    /// disjunction, "→ represents implication", φ0's names in both prompts
    /// in its order; its answers are read as it reads them.
    Reference,
}

impl PromptSet {
    /// The set's name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            PromptSet::Paper => "paper",
            PromptSet::Extended => "extended",
            PromptSet::Reference => "reference",
        }
    }
}

impl std::str::FromStr for PromptSet {
    type Err = String;
    fn from_str(s: &str) -> Result<PromptSet, String> {
        match s {
            "paper" => Ok(PromptSet::Paper),
            "extended" => Ok(PromptSet::Extended),
            "reference" => Ok(PromptSet::Reference),
            _ => Err(format!(
                "unknown prompt set {s:?}; expected paper, extended or reference"
            )),
        }
    }
}

impl Templates {
    /// The paper's templates (App. F), the default set.
    pub fn builtin() -> Templates {
        Templates::of_set(PromptSet::Paper)
    }

    /// The templates of a built-in set.
    pub fn of_set(set: PromptSet) -> Templates {
        let files = match set {
            PromptSet::Paper => PAPER,
            PromptSet::Extended => EXTENDED,
            PromptSet::Reference => REFERENCE,
        };
        let by_name = files
            .iter()
            .map(|(name, text)| {
                let t = Template {
                    name: name.to_string(),
                    text: text.to_string(),
                };
                (name.to_string(), t)
            })
            .collect();
        let mut t = Templates {
            set,
            id: String::new(),
            by_name,
        };
        t.id = t.computed_id(false);
        t
    }

    /// Which built-in set these templates start from.
    pub fn set(&self) -> PromptSet {
        self.set
    }

    /// The set's name and version, `name@hash`: the hash covers every
    /// template, so a replaced template gives another version.
    pub fn set_id(&self) -> &str {
        &self.id
    }

    fn computed_id(&self, custom: bool) -> String {
        let joined: String = self.versions().join("\n");
        let name = if custom {
            format!("{}+custom", self.set.name())
        } else {
            self.set.name().to_string()
        };
        Template { name, text: joined }.version()
    }

    /// These templates with some replaced by `(name, text)` pairs, e.g. read
    /// from a directory of `NAME.txt` files.
    pub fn with_overrides(
        mut self,
        overrides: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Templates, TemplateError> {
        let mut changed = false;
        for (name, text) in overrides {
            changed = true;
            let t = Template {
                name: name.clone(),
                text,
            };
            template::validate(&t)?;
            self.by_name.insert(name, t);
        }
        if changed {
            self.id = self.computed_id(true);
        }
        Ok(self)
    }

    fn get(&self, name: &str) -> &Template {
        &self.by_name[name]
    }

    /// The version of every template, for run records.
    pub fn versions(&self) -> Vec<String> {
        self.by_name.values().map(Template::version).collect()
    }

    /// Few-shot examples as the prompts show them; `formula_first` for informalization.
    fn examples(&self, family: Family, shots: Shots, formula_first: bool) -> String {
        if shots == Shots::ZeroShot {
            return String::new();
        }
        let name = if family == Family::Regex {
            "examples-regex"
        } else {
            "examples-logic"
        };
        let lines: Vec<&str> = self
            .get(name)
            .text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        let mut out = String::new();
        for (i, pair) in lines.chunks(2).enumerate() {
            let (formula, description) = (pair[0], pair.get(1).copied().unwrap_or(""));
            let (first, second) = if formula_first {
                (formula, description)
            } else {
                (description, formula)
            };
            // The public implementation leaves no blank line between examples.
            let gap = if self.set == PromptSet::Reference {
                ""
            } else {
                "\n"
            };
            out.push_str(&format!("[EXAMPLE {}]\n{first}\n{second}\n{gap}", i + 1));
        }
        out
    }

    /// The informalization prompt for ground truth `phi0`.
    pub fn informalize(
        &self,
        family: Family,
        phi0: &str,
        shots: Shots,
        alphabet: &[char],
    ) -> Result<Prompt, PromptError> {
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        values.insert("formula", phi0.to_string());
        values.insert("examples", self.examples(family, shots, true));
        let name = if family == Family::Regex {
            let r = parse_regex_exact(phi0, Mode::Lenient, &autoeval_syntax::alphabet(36))?;
            values.insert(
                "vocabulary",
                vocabulary::informalize_regex(&r, alphabet, self.set),
            );
            "informalize-regex"
        } else {
            let f = parse_formula_exact(phi0, Mode::Lenient)?;
            values.insert(
                "vocabulary",
                vocabulary::informalize_logic(&f, family, self.set),
            );
            values.insert("logic", family.logic_name().into());
            if self.set == PromptSet::Reference {
                // As that implementation prints φ0, and names its logic by φ0.
                values.insert("formula", reference::print(&f));
                let first_order = reference::names(&f).first_order;
                let logic = if first_order {
                    "first-order logic"
                } else {
                    "propositional logic"
                };
                values.insert("logic", logic.into());
            }
            "informalize-logic"
        };
        let t = self.get(name);
        Ok(Prompt {
            text: t.render(&values),
            template: t.version(),
        })
    }

    /// The autoformalization prompt: the vocabulary comes from `phi0`, the
    /// description is the model's informalization.
    pub fn autoformalize(
        &self,
        family: Family,
        phi0: &str,
        description: &str,
        shots: Shots,
        alphabet: &[char],
    ) -> Result<Prompt, PromptError> {
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        values.insert("description", description.to_string());
        values.insert("examples", self.examples(family, shots, false));
        let name = if family == Family::Regex {
            values.insert(
                "vocabulary",
                vocabulary::autoformalize_regex(alphabet, self.set),
            );
            "autoformalize-regex"
        } else {
            let f = parse_formula_exact(phi0, Mode::Lenient)?;
            values.insert(
                "vocabulary",
                vocabulary::autoformalize_logic(&f, family, self.set),
            );
            values.insert("logic", family.logic_name().into());
            "autoformalize-logic"
        };
        let t = self.get(name);
        Ok(Prompt {
            text: t.render(&values),
            template: t.version(),
        })
    }

    /// The A4 question: are `phi0` and `phi1` equivalent?
    pub fn judge(&self, family: Family, phi0: &str, phi1: &str, style: JudgeStyle) -> Prompt {
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        values.insert("logic", family.logic_name().into());
        values.insert("logic_title", family.logic_title().into());
        values.insert("problem", family.problem_name().into());
        // The public implementation shows φ0 as its dataset stores it: as
        // its logic library prints it.
        let shown = match parse_formula_exact(phi0, Mode::Lenient) {
            Ok(f) if self.set == PromptSet::Reference && family != Family::Regex => {
                reference::print(&f)
            }
            _ => phi0.to_string(),
        };
        values.insert("formula1", shown);
        values.insert("formula2", phi1.to_string());
        let t = self.get(match style {
            JudgeStyle::Cot => "judge-cot",
            JudgeStyle::Yesno => "judge-yesno",
        });
        Prompt {
            text: t.render(&values),
            template: t.version(),
        }
    }
}
