//! Anthropic's API: messages, a key in `ANTHROPIC_API_KEY`, a token cap it
//! requires and its ceiling, its Message Batches' limits.

use super::{model_at, Api, BatchLimits, Named, Provider};
use crate::{Finish, MaxTokens};

/// The most tokens its models reply without a beta flag (8,192 for Claude
/// 3.5): the cap its API requires is never set higher.
pub const OUTPUT_CEILING: u32 = 8_192;

/// The public implementation's cap for its models (its Claude client's).
const REFERENCE_MAX_TOKENS: u32 = 1_024;

/// Anthropic's API.
pub(super) struct Anthropic;

impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn form(&self) -> &'static str {
        "anthropic:MODEL[@URL]"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, false)
    }

    fn api(&self) -> Api {
        Api::Messages
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("ANTHROPIC_API_KEY")
    }

    fn requires_key(&self) -> bool {
        true
    }

    fn default_base_url(&self) -> Option<&'static str> {
        Some("https://api.anthropic.com")
    }

    fn base_url_variable(&self) -> Option<&'static str> {
        Some("ANTHROPIC_BASE_URL")
    }

    fn protocol_max_tokens(&self, reference: bool) -> MaxTokens {
        // Its API requires a cap and refuses one above the models' ceiling.
        MaxTokens::Cap(if reference {
            REFERENCE_MAX_TOKENS
        } else {
            OUTPUT_CEILING
        })
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        // 100,000 requests; 256 MB of request, less a margin.
        Some(BatchLimits {
            requests: crate::LARGEST_BATCH,
            bytes: 250_000_000,
        })
    }

    fn finish(&self, word: &str) -> Finish {
        match word {
            "end_turn" | "stop_sequence" => Finish::Complete,
            "max_tokens" | "model_context_window_exceeded" => Finish::Truncated,
            "refusal" => Finish::Filtered,
            _ => Finish::Other,
        }
    }

    fn takes(&self, _model: &str, p: &crate::GenerationParams) -> super::Takes {
        super::thinking_takes(p)
    }

    fn refuses(&self, _model: &str, p: &crate::GenerationParams) -> Option<String> {
        thinking_budget_too_small(p)
    }
}

/// Why a thinking budget is below what extended thinking takes, when it is.
pub(super) fn thinking_budget_too_small(p: &crate::GenerationParams) -> Option<String> {
    p.thinking_budget
        .filter(|&b| b < super::LEAST_THINKING_BUDGET)
        .map(|b| {
            format!(
                "thinking-budget must be at least {} for extended thinking, not {b}",
                super::LEAST_THINKING_BUDGET
            )
        })
}
