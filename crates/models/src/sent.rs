//! What of a model's settings reaches its request: the provider's rules by
//! model family (a reasoning model takes no temperature, extended thinking
//! a temperature of 1 only), in words for the run's settings and report,
//! and what cannot be sent at all, refused before any call.

use crate::provider::{cap_beside_thinking, Api};
use crate::{GenerationParams, ModelSettings, ModelSpec};

impl ModelSpec {
    /// The parameters `settings` make of `base` for this model: a reasoning
    /// model by its name unless the settings say otherwise.
    pub fn params(&self, settings: &ModelSettings, base: &GenerationParams) -> GenerationParams {
        let by_name = self.provider().reasoning_by_name(&self.model());
        let mut params = settings.params(base);
        params.reasoning = settings.reasoning.unwrap_or(params.reasoning || by_name);
        params
    }

    /// The settings in `p` this model's request leaves out or changes, each
    /// in words (`temperature 0.1 not sent: the model accepts only its default`).
    pub fn unsent(&self, p: &GenerationParams) -> Vec<String> {
        if self.is_builtin() {
            return Vec::new();
        }
        let takes = self.provider().takes(&self.model(), p);
        let mut notes = Vec::new();
        if !takes.temperature {
            notes.push(format!(
                "temperature {} not sent: {}",
                p.temperature, takes.why
            ));
        }
        if !takes.top_p && p.extra.contains_key("top_p") {
            notes.push(format!("top_p not sent: {}", takes.why));
        }
        let chat = matches!(self.api(), Api::ChatCompletions | Api::DeploymentChat);
        if let (true, true, Some(cap)) = (chat, p.reasoning, p.max_tokens) {
            notes.push(format!(
                "max tokens {cap} sent as max_completion_tokens, as reasoning models take it"
            ));
        }
        let thinking = matches!(self.api(), Api::Messages | Api::Converse);
        if let (true, Some(cap)) = (thinking, p.max_tokens) {
            let sent = cap_beside_thinking(cap, p.thinking_budget);
            if sent != cap {
                notes.push(format!(
                    "max tokens {cap} sent as {sent}: thinking spends from the cap, which must be above the budget"
                ));
            }
        }
        notes
    }

    /// Why `p` cannot be sent to this model at all, before any call.
    pub fn refuses(&self, p: &GenerationParams) -> Option<String> {
        self.provider().refuses(&self.model(), p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(spec: &str, query: &str) -> (GenerationParams, Vec<String>) {
        let spec: ModelSpec = spec.parse().unwrap();
        let settings = ModelSettings::from_query("x", query).unwrap();
        let p = spec.params(&settings, &GenerationParams::default());
        let notes = spec.unsent(&p);
        (p, notes)
    }

    #[test]
    fn openais_reasoning_models_are_known_by_name_and_take_no_temperature() {
        for name in ["o1", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini"] {
            for provider in ["openai", "openai-responses"] {
                let (p, notes) = sent(&format!("{provider}:{name}"), "");
                assert!(p.reasoning, "{provider}:{name}");
                assert!(
                    notes[0].starts_with("temperature 0.1 not sent"),
                    "{notes:?}"
                );
            }
        }
        for name in [
            "gpt-4o",
            "gpt-4.1-mini",
            "gpt-5-chat-latest",
            "omni-moderation",
        ] {
            let (p, notes) = sent(&format!("openai:{name}"), "");
            assert!(!p.reasoning, "{name}");
            assert!(notes.is_empty(), "{name}: {notes:?}");
        }
        // The spec overrides the name, both ways.
        assert!(!sent("openai:o3-mini", "reasoning=false").0.reasoning);
        assert!(sent("openai:my-finetune", "reasoning=true").0.reasoning);
    }

    #[test]
    fn thinking_raises_a_cap_at_or_below_its_budget_and_refuses_a_small_budget() {
        let (p, notes) = sent("anthropic:claude-sonnet-4-5", "thinking-budget=2048");
        assert_eq!(p.max_tokens, Some(1024));
        assert!(
            notes.iter().any(|n| n.contains("sent as 3072")),
            "{notes:?}"
        );
        let spec: ModelSpec = "anthropic:claude-sonnet-4-5".parse().unwrap();
        let small = GenerationParams {
            thinking_budget: Some(512),
            ..GenerationParams::default()
        };
        assert!(spec.refuses(&small).is_some_and(|w| w.contains("1024")));
    }

    #[test]
    fn a_gemini_budget_outside_its_models_range_is_refused() {
        let budget = |spec: &str, b: u32| {
            let spec: ModelSpec = spec.parse().unwrap();
            spec.refuses(&GenerationParams {
                thinking_budget: Some(b),
                ..GenerationParams::default()
            })
        };
        assert_eq!(budget("gemini:gemini-2.5-flash", 0), None);
        assert_eq!(budget("gemini:gemini-2.5-flash", 24_576), None);
        assert!(budget("gemini:gemini-2.5-flash", 24_577).is_some());
        assert!(budget("gemini:gemini-2.5-pro", 0).is_some());
        assert!(budget("gemini:gemini-2.5-flash-lite", 100).is_some());
        assert_eq!(budget("gemini:gemini-2.5-flash-lite", 0), None);
    }
}
