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

    /// The text with every `{key}` replaced by its value, in one pass: a
    /// value is never searched again, so a model's English that happens to
    /// hold `{vocabulary}` stays as written, and a long one is copied once.
    pub fn render(&self, values: &BTreeMap<&str, String>) -> String {
        let size = self.text.len() + values.values().map(String::len).sum::<usize>();
        let mut out = String::with_capacity(size);
        let mut rest = self.text.as_str();
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            match after.find('}') {
                Some(end) => {
                    match values.get(&after[..end]) {
                        Some(value) => out.push_str(value),
                        None => out.push_str(&rest[start..start + end + 2]),
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
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
        "judge-cot" | "judge-yesno" => &["logic", "logic_title", "problem", "formula1", "formula2"],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_holds_a_placeholder_is_kept_as_written() {
        let t = Template {
            name: "t".into(),
            text: "Say {description} with {vocabulary}; {unset} stays.".into(),
        };
        let values = BTreeMap::from([
            ("description", "p or {vocabulary}".to_string()),
            ("vocabulary", "p, q".to_string()),
        ]);
        assert_eq!(
            t.render(&values),
            "Say p or {vocabulary} with p, q; {unset} stays."
        );
    }
}
