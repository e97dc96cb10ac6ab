//! OpenAI's API: chat completions at its own address, a key in
//! `OPENAI_API_KEY`, its Batch API's limits.

use super::{model_at, Api, BatchLimits, Named, Provider};

/// The Batch API's limits for chat completions: 50,000 requests; 200 MB of
/// input, less a margin for the multipart framing. Servers that offer the
/// same API take the same.
pub(super) const BATCH_LIMITS: BatchLimits = BatchLimits {
    requests: 50_000,
    bytes: 190_000_000,
};

/// The variable holding an OpenAI key, for either of its APIs.
pub(super) const KEY_VARIABLE: &str = "OPENAI_API_KEY";

/// OpenAI's address, and the variable that moves it, for either of its APIs.
pub(super) const BASE_URL: (&str, &str) = ("https://api.openai.com/v1", "OPENAI_BASE_URL");

/// OpenAI's API.
pub(super) struct OpenAi;

impl Provider for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn form(&self) -> &'static str {
        "openai:MODEL[@URL]"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, false)
    }

    fn api(&self) -> Api {
        Api::ChatCompletions
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
        Some(BATCH_LIMITS)
    }

    fn reasoning_by_name(&self, model: &str) -> bool {
        super::openai_reasoning_name(model)
    }
}
