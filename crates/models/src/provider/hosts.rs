//! Hosts that speak OpenAI's chat completions at a known address: one
//! table of name, address, key variable and batch support, used as
//! `NAME:MODEL`; each is the OpenAI-compatible module at its address.

use super::{model_at, Api, BatchLimits, Named, Provider};

/// One named host.
#[derive(Debug)]
pub struct Host {
    /// Its spec prefix: `NAME:MODEL`.
    pub name: &'static str,
    /// The form of its specs, for messages.
    pub form: &'static str,
    /// Its API's address.
    pub base_url: &'static str,
    /// The variable holding its key.
    pub key_variable: &'static str,
    /// Whether it offers OpenAI's Batch API (files and `/batches`).
    pub batch: bool,
}

/// The hosts, by name. Each address and key variable is the one the host
/// documents for its OpenAI-compatible endpoint.
pub(super) const HOSTS: [Host; 10] = [
    host(
        "together",
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        true,
    ),
    host(
        "groq",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        true,
    ),
    host(
        "deepseek",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        false,
    ),
    host(
        "mistral",
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        false,
    ),
    host(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        false,
    ),
    host(
        "fireworks",
        "https://api.fireworks.ai/inference/v1",
        "FIREWORKS_API_KEY",
        false,
    ),
    host("xai", "https://api.x.ai/v1", "XAI_API_KEY", false),
    host(
        "gemini-openai",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "GEMINI_API_KEY",
        false,
    ),
    host(
        "cerebras",
        "https://api.cerebras.ai/v1",
        "CEREBRAS_API_KEY",
        false,
    ),
    host(
        "deepinfra",
        "https://api.deepinfra.com/v1/openai",
        "DEEPINFRA_API_KEY",
        false,
    ),
];

/// A host named `name` at `base_url`, its key in `key_variable`.
const fn host(
    name: &'static str,
    base_url: &'static str,
    key_variable: &'static str,
    batch: bool,
) -> Host {
    Host {
        name,
        // Every host's specs take the same form.
        form: "HOST:MODEL",
        base_url,
        key_variable,
        batch,
    }
}

impl Provider for Host {
    fn name(&self) -> &'static str {
        self.name
    }

    fn form(&self) -> &'static str {
        self.form
    }

    fn read(&self, rest: Option<&str>) -> Result<Named, String> {
        model_at(self, rest, false)
    }

    fn default_base_url(&self) -> Option<&'static str> {
        Some(self.base_url)
    }

    fn api(&self) -> Api {
        Api::ChatCompletions
    }

    fn key_variable(&self) -> Option<&'static str> {
        Some(self.key_variable)
    }

    fn requires_key(&self) -> bool {
        true
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        self.batch.then_some(super::openai::BATCH_LIMITS)
    }
}
