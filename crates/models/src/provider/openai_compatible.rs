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
        // Model names may hold `:`, `/` or even `@` (llama3:8b, org/model);
        // the URL starts at the last `@http`.
        let (model, url) = rest
            .and_then(|r| {
                let at = r.rfind("@http").or_else(|| r.find('@'))?;
                Some((&r[..at], &r[at + 1..]))
            })
            .ok_or("write it as openai-compatible:MODEL@URL")?;
        if model.is_empty() {
            return Err("the model name is missing".into());
        }
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err("the URL must start with http:// or https://".into());
        }
        // A spec travels in messages, queue names, Redis and every record:
        // a credential in it would travel too.
        let authority = url
            .split_once("://")
            .map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
        if authority.contains('@') {
            return Err("the URL holds a user or password, which would be written wherever the spec is; give the server's key in OPENAI_COMPATIBLE_API_KEY (or the secrets file) instead".into());
        }
        Ok(Named {
            model: model.to_string(),
            base_url: Some(url.trim_end_matches('/').to_string()),
            builtin: None,
        })
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
