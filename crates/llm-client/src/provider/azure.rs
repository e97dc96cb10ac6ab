//! Azure OpenAI: chat completions on a deployment, at the resource's
//! address: the `v1` path (`/openai/v1/chat/completions`, the deployment
//! as the model) or, with an `api-version`, the deployment's own path;
//! a key in `api-key` or an Entra ID token as a bearer; the Batch API
//! under `/openai/v1`. Requests, replies and errors are OpenAI's.

use super::openai::{chat_body, chat_reason, read_chat_answer, FileBatchApi};
use super::{with_key, Provider, Reason};
use crate::secret::Credentials;
use crate::{Answer, ApiKey};
use autoeval_models::provider::Takes;
use autoeval_models::{GenerationParams, ModelSpec};
use reqwest::header::HeaderMap;
use serde_json::Value;

/// Azure OpenAI.
pub(crate) struct Azure;

/// The variable of an Entra ID token, sent as a bearer when no key is set.
const TOKEN_VARIABLE: &str = "AZURE_OPENAI_AD_TOKEN";

/// Its Batch API, under the `v1` path; a line's `url` is the endpoint
/// without `/v1`.
const BATCHES: FileBatchApi = FileBatchApi {
    prefix: "/openai/v1",
    endpoint: "/chat/completions",
};

impl Provider for Azure {
    fn chat_path(&self, model: &str, params: &GenerationParams) -> String {
        match &params.api_version {
            Some(version) => {
                format!("/openai/deployments/{model}/chat/completions?api-version={version}")
            }
            None => "/openai/v1/chat/completions".into(),
        }
    }

    fn credentials(
        &self,
        spec: &ModelSpec,
        lookup: &dyn Fn(&str) -> Option<ApiKey>,
    ) -> Result<Credentials, String> {
        let key_variable = spec.key_variable().unwrap_or_default();
        let key = lookup(key_variable)
            .map(|k| (k, key_variable))
            .or_else(|| lookup(TOKEN_VARIABLE).map(|t| (t, TOKEN_VARIABLE)));
        if key.is_none() {
            return Err(format!(
                "{spec} needs a key: set {key_variable} (or an Entra ID token in {TOKEN_VARIABLE}) in the environment or in the secrets file"
            ));
        }
        Ok(Credentials {
            key,
            ..Credentials::default()
        })
    }

    fn authorize(
        &self,
        r: reqwest::RequestBuilder,
        credentials: &Credentials,
    ) -> reqwest::RequestBuilder {
        match credentials.key {
            Some((_, TOKEN_VARIABLE)) => with_key(r, credentials, None),
            _ => with_key(r, credentials, Some("api-key")),
        }
    }

    fn request_body(&self, model: &str, p: &GenerationParams, takes: Takes, prompt: &str) -> Value {
        chat_body(model, p, takes, prompt)
    }

    fn read_answer(&self, v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
        read_chat_answer(v, spec)
    }

    fn reason(&self, status: u16, _headers: &HeaderMap, body: &Value) -> Reason {
        // Its content filter refuses a prompt with 400 `content_filter`:
        // that prompt's, not the deployment's, failure.
        if body["error"]["code"] == "content_filter" {
            return Reason::Filtered;
        }
        // A deployment that does not exist.
        if body["error"]["code"] == "DeploymentNotFound" {
            return Reason::UnknownModel;
        }
        chat_reason(status, body)
    }

    fn file_batch_api(&self) -> Option<&'static FileBatchApi> {
        Some(&BATCHES)
    }

    fn batch_name(&self) -> &'static str {
        "azure"
    }
}
