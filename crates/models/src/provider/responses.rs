//! OpenAI's Responses API: `input` and `instructions`, `max_output_tokens`,
//! `reasoning.effort`, an answer's `output` items; the same key and Batch
//! API as its chat completions.

use super::openai::{BASE_URL, KEY_VARIABLE};
use super::{model_at, Api, BatchLimits, Named, Provider};
use crate::Finish;

/// OpenAI's Responses API.
pub(super) struct Responses;

impl Provider for Responses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn form(&self) -> &'static str {
        "openai-responses:MODEL[@URL]"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, false)
    }

    fn api(&self) -> Api {
        Api::Responses
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some(KEY_VARIABLE)
    }

    fn requires_key(&self) -> bool {
        true
    }

    fn default_base_url(&self) -> Option<&'static str> {
        Some(BASE_URL.0)
    }

    fn base_url_variable(&self) -> Option<&'static str> {
        Some(BASE_URL.1)
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        Some(super::openai::BATCH_LIMITS)
    }

    fn finish(&self, word: &str) -> Finish {
        // A response's `status`, and for an incomplete one its reason.
        match word {
            "completed" => Finish::Complete,
            "max_output_tokens" => Finish::Truncated,
            "content_filter" => Finish::Filtered,
            _ => Finish::Other,
        }
    }

    fn reasoning_by_name(&self, model: &str) -> bool {
        super::openai_reasoning_name(model)
    }
}
