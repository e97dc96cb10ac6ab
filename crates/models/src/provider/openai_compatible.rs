//! Any OpenAI-compatible server (vLLM, Ollama, llama.cpp, TGI, the mock
//! server): chat completions at the address the spec gives, a key in
//! `OPENAI_COMPATIBLE_API_KEY` when the server wants one, local open models.

use super::{Api, BatchLimits, Named, Provider};
use crate::MaxTokens;

/// A model on an OpenAI-compatible server.
pub(super) struct OpenAiCompatible;

impl Provider for OpenAiCompatible {
    fn name(&self) -> &'static str {
        "openai-compatible"
    }

    fn form(&self) -> &'static str {
        "openai-compatible:MODEL@URL"
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        super::model_at(self, rest, true)
    }

    fn api(&self) -> Api {
        Api::ChatCompletions
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some("OPENAI_COMPATIBLE_API_KEY")
    }

    fn is_local(&self) -> bool {
        true
    }

    fn protocol_max_tokens(&self, _reference: bool) -> MaxTokens {
        // The public implementation sent local servers no cap, so a model
        // with a short context still runs.
        MaxTokens::Uncapped
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        // Servers that offer a Batch API take the chat-completions one's.
        Some(super::openai::BATCH_LIMITS)
    }
}
