//! Each provider in one module, as far as it needs no I/O: the spec that
//! names it, its key and address variables, the API shape it speaks, the
//! caps a protocol gives it, its batch limits. How it is spoken to over
//! HTTP is the model client's `provider/`, one module per provider there too.
//! Nothing outside these modules names a provider.

mod anthropic;
mod azure;
mod bedrock;
mod builtin;
mod gemini;
mod hosts;
mod openai;
mod openai_compatible;
mod responses;

pub use anthropic::OUTPUT_CEILING as ANTHROPIC_OUTPUT_CEILING;
pub use builtin::Builtin;
pub use hosts::Host;

use crate::{Finish, GenerationParams, MaxTokens};

/// The shape of a provider's chat API: which request and reply it speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Chat completions (`/chat/completions`, `choices[0].message`), with
    /// its Batch API (a file of requests, `/batches`).
    ChatCompletions,
    /// Messages (`/v1/messages`, `content` blocks), with its Message Batches.
    Messages,
    /// Responses (`/v1/responses`, `output` items, `reasoning.effort`),
    /// with the Batch API.
    Responses,
    /// Chat completions on a deployment of a cloud resource (its own paths,
    /// key header and `api-version`), with its batch API.
    DeploymentChat,
    /// `models/MODEL:generateContent` (`contents` of `parts`,
    /// `generationConfig`), with its Batch Mode.
    GenerateContent,
    /// Converse (`/model/MODEL/converse`), signed per request.
    Converse,
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
    /// Every variable holding a credential of it (its key, and any other
    /// way it takes to sign or authorize), for the secrets file and `NAME_FILE`.
    fn credential_variables(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether a call without a key is refused before it is sent.
    fn requires_key(&self) -> bool {
        false
    }
    /// Its API's address when neither the spec nor a variable gives one;
    /// `None` when the model client computes it (from a region) or the
    /// spec must give it.
    fn default_base_url(&self) -> Option<&'static str> {
        None
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
    /// What its API's word for why a model stopped means.
    fn finish(&self, word: &str) -> Finish {
        chat_completions_finish(word)
    }
    /// The name its model is priced under in the price table (a Bedrock
    /// model id names the vendor's model inside it).
    fn price_key(&self, model: &str) -> String {
        model.to_string()
    }
    /// Whether `model` is, by its name, one of its reasoning models (OpenAI's
    /// o-series and gpt-5 family), which refuse a temperature and a
    /// `max_tokens`; a spec's `?reasoning=true|false` overrides it.
    fn reasoning_by_name(&self, _model: &str) -> bool {
        false
    }
    /// Which of the sampling settings in `p` its API takes for `model`;
    /// a setting it does not take is not sent. A chat-completions server's
    /// reasoning model takes what OpenAI's do.
    fn takes(&self, _model: &str, p: &GenerationParams) -> Takes {
        openai_takes(p)
    }
    /// Why `p` cannot be sent to `model` at all (a thinking budget outside
    /// the model's range), said before any call; `None` when it can.
    fn refuses(&self, _model: &str, _p: &GenerationParams) -> Option<String> {
        None
    }
}

/// Which sampling settings a model's API takes; one it does not take is
/// left out of the request, and the run's settings say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Takes {
    /// A temperature other than the model's default.
    pub temperature: bool,
    /// A `top_p` other than the model's default.
    pub top_p: bool,
    /// Why not, in words, when it does not take one of them.
    pub why: &'static str,
}

impl Takes {
    /// Every setting is taken.
    pub const EVERYTHING: Takes = Takes {
        temperature: true,
        top_p: true,
        why: "",
    };
}

/// The OpenAI reasoning models by name: the o-series (`o1`, `o3-mini`,
/// `o4-mini-2025-04-16`) and the gpt-5 family but its chat models
/// (`gpt-5-chat-latest` takes a temperature), each possibly behind an
/// `org/` prefix.
pub(crate) fn openai_reasoning_name(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let o_series = name.len() >= 2
        && name.starts_with('o')
        && name.as_bytes()[1].is_ascii_digit()
        && name[1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .all(|c| c != '0');
    let gpt5 = name.starts_with("gpt-5") && !name.contains("-chat");
    o_series || gpt5
}

/// What a model with extended thinking on takes (Anthropic's, on its own
/// API or Bedrock's): a temperature of 1 only, which is its default.
pub(crate) fn thinking_takes(p: &GenerationParams) -> Takes {
    if p.thinking_budget.is_some() || p.reasoning {
        Takes {
            temperature: false,
            top_p: true,
            why: "with extended thinking on, the model takes only a temperature of 1",
        }
    } else {
        Takes::EVERYTHING
    }
}

/// The token cap sent beside a thinking budget: thinking spends from the
/// cap, which must be above the budget, so a cap at or below the budget is
/// raised by the budget (the answer keeps the cap it was given).
pub fn cap_beside_thinking(cap: u32, budget: Option<u32>) -> u32 {
    match budget {
        Some(budget) if budget >= cap => budget.saturating_add(cap),
        _ => cap,
    }
}

/// The least thinking budget Anthropic's extended thinking takes.
pub(crate) const LEAST_THINKING_BUDGET: u32 = 1024;

/// What an OpenAI reasoning model takes: no temperature, no `top_p`.
pub(crate) fn openai_takes(p: &GenerationParams) -> Takes {
    if p.reasoning {
        Takes {
            temperature: false,
            top_p: false,
            why: "the model accepts only its default",
        }
    } else {
        Takes::EVERYTHING
    }
}

/// The chat-completions API's finish reasons, which OpenAI-compatible
/// servers share.
pub(crate) fn chat_completions_finish(word: &str) -> Finish {
    match word {
        "stop" => Finish::Complete,
        "length" => Finish::Truncated,
        "content_filter" => Finish::Filtered,
        _ => Finish::Other,
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

/// Every provider with a module of its own, the built-in models first.
const PROVIDERS: [&dyn Provider; 11] = [
    &builtin::REFERENCE,
    &builtin::NOISY,
    &builtin::JUDGE_NOISY,
    &builtin::CHATTY,
    &openai::OpenAi,
    &responses::Responses,
    &anthropic::Anthropic,
    &gemini::Gemini,
    &azure::Azure,
    &bedrock::Bedrock,
    &openai_compatible::OpenAiCompatible,
];

/// Every provider: those with a module, then the named OpenAI-compatible hosts.
pub(crate) fn all() -> impl Iterator<Item = &'static dyn Provider> {
    PROVIDERS
        .iter()
        .copied()
        .chain(hosts::HOSTS.iter().map(|h| h as &dyn Provider))
}

/// The provider whose spec prefix is `name`.
pub(crate) fn named(name: &str) -> Option<&'static dyn Provider> {
    all().find(|p| p.name() == name)
}

/// The named OpenAI-compatible hosts: name, base address, key variable,
/// and whether it offers the Batch API; for the README's table and `--help`.
pub fn hosts() -> impl Iterator<Item = &'static Host> {
    hosts::HOSTS.iter()
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
        .chain(std::iter::once("HOST:MODEL"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The help of a model spec, from the one list of providers and of keys.
pub fn spec_help() -> String {
    format!(
        "Model (repeat for several): {}; settings may follow a `?`: 'openai:o3-mini?max-tokens=4000', \
         'openai-compatible:m@URL?top_p=0.9' ({}; any other key is sent as a request-body field). \
         A provider with a base address takes @URL after the model, or its base-address variable",
        forms(),
        crate::MODEL_KEYS.join(", ")
    )
}

/// How a spec names `model` on an OpenAI-compatible server, for messages:
/// `NAME:MODEL@URL`.
pub fn served_form(model: &str) -> String {
    format!("{}:{model}@URL", server().name())
}

/// The variables that hold providers' API keys and other credentials.
pub fn key_variables() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = all()
        .flat_map(|p| {
            p.key_variable()
                .into_iter()
                .chain(p.credential_variables().iter().copied())
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// How each provider with a module reaches a server at `host` (such as
/// `http://127.0.0.1:8000`): its spec with `@URL`, and the base-address
/// variable that does the same, if it has one; for the mock server's
/// banner. The OpenAI-style APIs take the path `/v1`, the others the bare
/// host, as their SDKs read a base address.
pub fn specs_at(host: &str) -> Vec<(String, Option<String>)> {
    PROVIDERS
        .iter()
        .filter(|p| p.api() != Api::InProcess)
        .map(|p| {
            let versioned = matches!(p.api(), Api::ChatCompletions | Api::Responses);
            let url = format!("{host}{}", if versioned { "/v1" } else { "" });
            let variable = p.base_url_variable().map(|v| format!("{v}={url}"));
            (format!("{}:MODEL@{url}", p.name()), variable)
        })
        .collect()
}

/// The variables that hold providers' other addresses, with their providers' names.
pub fn base_url_variables() -> Vec<(&'static str, &'static str)> {
    all()
        .filter_map(|p| Some((p.name(), p.base_url_variable()?)))
        .collect()
}

/// A model name and, after its last `@http` (or its only `@`), the
/// server's address, read from `rest`; `url_required` when the spec must
/// give one. Model names may hold `:`, `/` or even `@` (llama3:8b,
/// org/model, a Bedrock ARN).
fn model_at(
    provider: &dyn Provider,
    rest: Option<&str>,
    url_required: bool,
) -> Result<Named, String> {
    let form = provider.form();
    let rest = rest.ok_or_else(|| format!("write it as {form}"))?;
    let split = rest
        .rfind("@http")
        .or_else(|| url_required.then(|| rest.find('@')).flatten());
    let (model, url) = match split {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None if url_required => return Err(format!("write it as {form}")),
        None => (rest, None),
    };
    if model.trim().is_empty() {
        return Err("the model name is missing".into());
    }
    let base_url = match url {
        Some(url) => Some(checked_url(url, provider.key_variable())?),
        None => None,
    };
    Ok(Named {
        model: model.to_string(),
        base_url,
        builtin: None,
    })
}

/// A server's address as a spec gives it: http or https, without a
/// user or password, without a trailing `/`.
fn checked_url(url: &str, key_variable: Option<&str>) -> Result<String, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err("the URL must start with http:// or https://".into());
    }
    // A spec travels in messages, queue names, Redis and every record:
    // a credential in it would travel too.
    let authority = url
        .split_once("://")
        .map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
    if authority.contains('@') {
        let variable = key_variable.unwrap_or("its key variable");
        return Err(format!("the URL holds a user or password, which would be written wherever the spec is; give the server's key in {variable} (or the secrets file) instead"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_reaches_a_server_in_the_form_its_sdk_reads() {
        let specs = specs_at("http://h:1");
        let has = |spec: &str, variable: Option<&str>| {
            specs.contains(&(spec.to_string(), variable.map(str::to_string)))
        };
        assert!(has(
            "openai:MODEL@http://h:1/v1",
            Some("OPENAI_BASE_URL=http://h:1/v1")
        ));
        assert!(has(
            "anthropic:MODEL@http://h:1",
            Some("ANTHROPIC_BASE_URL=http://h:1")
        ));
        assert!(has("openai-compatible:MODEL@http://h:1/v1", None));
        // Every provider with an API, none of the built-in models.
        assert_eq!(specs.len(), 7, "{specs:?}");
        assert!(specs.iter().all(|(s, _)| !s.starts_with("reference")));
    }
}
