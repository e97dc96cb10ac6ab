//! Each provider in one module, as far as it needs no I/O: the spec that
//! names it, its key and address variables, the API shape it speaks, the
//! caps a protocol gives it, its batch limits. How it is spoken to over
//! HTTP is the model client's `provider/`, one module per provider there too.
//! Nothing outside these modules names a provider.

mod anthropic;
mod builtin;
mod openai;
mod openai_compatible;

pub use anthropic::OUTPUT_CEILING as ANTHROPIC_OUTPUT_CEILING;
pub use builtin::Builtin;

use crate::MaxTokens;

/// The shape of a provider's chat API: which request and reply it speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Chat completions (`/chat/completions`, `choices[0].message`), with
    /// its Batch API (a file of requests, `/batches`).
    ChatCompletions,
    /// Messages (`/v1/messages`, `content` blocks), with its Message Batches.
    Messages,
    /// None: the model runs in this process.
    InProcess,
}

/// A provider's batch limits: most requests, most bytes of one batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchLimits {
    /// Most requests in one batch.
    pub requests: usize,
    /// Most bytes of one batch's input, less a margin for framing.
    pub bytes: usize,
}

/// The token cap a protocol gives API models where the paper set none:
/// high enough that no formula's translation reaches it, and within what
/// chat-completions models accept (16,384 output tokens for gpt-4o).
pub const PROTOCOL_MAX_TOKENS: u32 = 16_384;

/// One provider, as far as specs, settings and limits go.
pub trait Provider: Send + Sync {
    /// Its name: the spec's prefix (`NAME:MODEL`), and the backend's name in
    /// cache keys, prices and the journal.
    fn name(&self) -> &'static str;
    /// The spec's form, for messages: `NAME:MODEL`.
    fn form(&self) -> &'static str;
    /// The spec after `NAME:` (`None` when there is no `:`), read.
    fn read(&self, rest: Option<&str>) -> Result<Named, String>;
    /// The shape of its API.
    fn api(&self) -> Api;
    /// The variable holding its API key, when it takes one.
    fn key_variable(&self) -> Option<&'static str> {
        None
    }
    /// Whether a call without a key is refused before it is sent.
    fn requires_key(&self) -> bool {
        false
    }
    /// The variable holding another address for its API (a proxy, a gateway).
    fn base_url_variable(&self) -> Option<&'static str> {
        None
    }
    /// Whether its models are local open models (the paper's temperature 1,
    /// and no token cap under a protocol, as the public code sent them none).
    fn is_local(&self) -> bool {
        false
    }
    /// The cap a protocol gives its models where none was asked for;
    /// `reference` for the public implementation's own.
    fn protocol_max_tokens(&self, _reference: bool) -> MaxTokens {
        MaxTokens::Cap(PROTOCOL_MAX_TOKENS)
    }
    /// Its batch API's limits, when it has one.
    fn batch_limits(&self) -> Option<BatchLimits> {
        None
    }
    /// The `backend` label of its metrics.
    fn metric_label(&self) -> &'static str {
        self.name()
    }
}

/// What a spec names at its provider.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Named {
    /// The model's name as the provider knows it.
    pub model: String,
    /// The server's address, for providers whose spec gives one.
    pub base_url: Option<String>,
    /// Which built-in model, for the ones run in this process.
    pub builtin: Option<Builtin>,
}

/// Every provider, the built-in models first.
pub(crate) const PROVIDERS: [&dyn Provider; 7] = [
    &builtin::REFERENCE,
    &builtin::NOISY,
    &builtin::JUDGE_NOISY,
    &builtin::CHATTY,
    &openai::OpenAi,
    &anthropic::Anthropic,
    &openai_compatible::OpenAiCompatible,
];

/// The provider whose spec prefix is `name`.
pub(crate) fn named(name: &str) -> Option<&'static dyn Provider> {
    PROVIDERS.iter().copied().find(|p| p.name() == name)
}

/// The provider of a model on an OpenAI-compatible server.
pub(crate) fn server() -> &'static dyn Provider {
    &openai_compatible::OpenAiCompatible
}

/// Every spec form, for messages: `reference, …, NAME:MODEL, …`.
pub fn forms() -> String {
    PROVIDERS
        .iter()
        .map(|p| p.form())
        .collect::<Vec<_>>()
        .join(", ")
}

/// How a spec names `model` on an OpenAI-compatible server, for messages:
/// `NAME:MODEL@URL`.
pub fn served_form(model: &str) -> String {
    format!("{}:{model}@URL", server().name())
}

/// The variables that hold providers' API keys.
pub fn key_variables() -> Vec<&'static str> {
    PROVIDERS.iter().filter_map(|p| p.key_variable()).collect()
}

/// The variables that hold providers' other addresses, with their providers' names.
pub fn base_url_variables() -> Vec<(&'static str, &'static str)> {
    PROVIDERS
        .iter()
        .filter_map(|p| Some((p.name(), p.base_url_variable()?)))
        .collect()
}

/// A model name read from `rest`, which must hold one.
fn model_name(rest: Option<&str>) -> Result<Named, String> {
    match rest {
        Some(m) if !m.trim().is_empty() => Ok(Named {
            model: m.to_string(),
            ..Named::default()
        }),
        _ => Err("the model name is missing".into()),
    }
}
