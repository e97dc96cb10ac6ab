//! Prompt templates: text with `{placeholders}`, a name, and a version that
//! is a hash of the text, so every result can say which template produced it.

use std::collections::BTreeMap;
use thiserror::Error;

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TemplateError {
    /// A placeholder the template may not use.
    #[error("template {template}: unknown placeholder {{{placeholder}}}; it may use {allowed}")]
    UnknownPlaceholder {
        /// Template name.
        template: String,
        /// The placeholder found.
        placeholder: String,
        /// The placeholders it may use.
        allowed: String,
    },
    /// A name that is not one of the templates.
    #[error("there is no template named {0:?}; the templates are {1}")]
    UnknownTemplate(String, String),
    /// An opening brace without a closing one.
    #[error("template {0}: a '{{' is never closed")]
    Unclosed(String),
}

/// One template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Its name, e.g. `informalize-logic`.
    pub name: String,
    /// Its text.
    pub text: String,
}

impl Template {
    /// `name@hash`: changes whenever the text changes.
    pub fn version(&self) -> String {
        let hash = self.text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{}@{:08x}", self.name, hash as u32)
    }

    fn placeholders(&self) -> Result<Vec<&str>, TemplateError> {
        let mut out = Vec::new();
        let mut rest = self.text.as_str();
        while let Some(start) = rest.find('{') {
            let after = &rest[start + 1..];
            let end = after
                .find('}')
                .ok_or_else(|| TemplateError::Unclosed(self.name.clone()))?;
            out.push(&after[..end]);
            rest = &after[end + 1..];
        }
        Ok(out)
    }

    /// The text with every `{key}` replaced by its value.
    pub fn render(&self, values: &BTreeMap<&str, String>) -> String {
        let mut out = self.text.clone();
        for (key, value) in values {
            out = out.replace(&format!("{{{key}}}"), value);
        }
        out
    }
}

/// The placeholders each template may use.
pub(crate) fn allowed(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "informalize-logic" => &["logic", "examples", "vocabulary", "formula"],
        "autoformalize-logic" => &["logic", "examples", "vocabulary", "description"],
        "informalize-regex" => &["examples", "vocabulary", "formula"],
        "autoformalize-regex" => &["examples", "vocabulary", "description"],
        "judge-cot" | "judge-yesno" => &["logic", "logic_title", "formula1", "formula2"],
        "examples-logic" | "examples-regex" => &[],
        _ => return None,
    })
}

/// Checks that a template uses only the placeholders it may.
pub(crate) fn validate(t: &Template) -> Result<(), TemplateError> {
    let allowed = allowed(&t.name).ok_or_else(|| {
        TemplateError::UnknownTemplate(t.name.clone(), crate::TEMPLATE_NAMES.join(", "))
    })?;
    for p in t.placeholders()? {
        if !allowed.contains(&p) {
            return Err(TemplateError::UnknownPlaceholder {
                template: t.name.clone(),
                placeholder: p.to_string(),
                allowed: allowed
                    .iter()
                    .map(|a| format!("{{{a}}}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    Ok(())
}
