//! Google's Gemini API: `models/MODEL:generateContent`, a key in
//! `GEMINI_API_KEY`, `generationConfig` with `thinkingConfig`, its Batch
//! Mode's limits, and its finish reasons.

use super::{model_at, Api, BatchLimits, Named, Provider};
use crate::{Finish, MaxTokens};

/// Gemini's API.
pub(super) struct Gemini;

/// The most output tokens its 2.5 models take (65,536).
const OUTPUT_CEILING: u32 = 65_536;

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn form(&self) -> &'static str {
        "gemini:MODEL[@URL]"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, false)
    }

    fn api(&self) -> Api {
        Api::GenerateContent
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("GEMINI_API_KEY")
    }

    fn requires_key(&self) -> bool {
        true
    }

    fn default_base_url(&self) -> Option<&'static str> {
        Some("https://generativelanguage.googleapis.com")
    }

    fn base_url_variable(&self) -> Option<&'static str> {
        Some("GEMINI_BASE_URL")
    }

    fn protocol_max_tokens(&self, _reference: bool) -> MaxTokens {
        MaxTokens::Cap(super::PROTOCOL_MAX_TOKENS.min(OUTPUT_CEILING))
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        // Batch Mode takes requests inline up to 20 MB, less a margin.
        Some(BatchLimits {
            requests: crate::LARGEST_BATCH,
            bytes: 19_000_000,
        })
    }

    fn finish(&self, word: &str) -> Finish {
        match word {
            "STOP" => Finish::Complete,
            "MAX_TOKENS" => Finish::Truncated,
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
            | "IMAGE_SAFETY" => Finish::Filtered,
            _ => Finish::Other,
        }
    }

    fn takes(&self, _model: &str, _p: &crate::GenerationParams) -> super::Takes {
        // Its thinking models take a temperature too.
        super::Takes::EVERYTHING
    }

    fn refuses(&self, model: &str, p: &crate::GenerationParams) -> Option<String> {
        let budget = p.thinking_budget?;
        let (range, off) = thinking_range(model)?;
        let fits = range.contains(&budget) || (off && budget == 0);
        (!fits).then(|| {
            let zero = if off { " (or 0, thinking off)" } else { "" };
            format!(
                "thinking-budget must be within {}..={}{zero} for {model}, not {budget}",
                range.start(),
                range.end()
            )
        })
    }
}

/// The thinking budgets a Gemini 2.5 model takes, and whether 0 turns its
/// thinking off; `None` for a model whose range is not known here (the
/// server then says).
fn thinking_range(model: &str) -> Option<(std::ops::RangeInclusive<u32>, bool)> {
    let name = model.rsplit('/').next().unwrap_or(model);
    if name.starts_with("gemini-2.5-pro") {
        Some((128..=32_768, false))
    } else if name.starts_with("gemini-2.5-flash-lite") {
        Some((512..=24_576, true))
    } else if name.starts_with("gemini-2.5-flash") {
        Some((0..=24_576, true))
    } else {
        None
    }
}
