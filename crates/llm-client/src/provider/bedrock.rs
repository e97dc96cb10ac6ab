//! Amazon Bedrock's Converse API: `/model/MODEL_ID/converse` at
//! `bedrock-runtime.REGION.amazonaws.com`; each request signed with AWS
//! Signature Version 4 (AWS's own signing crate) from the standard
//! credential variables, or carrying a Bedrock API key as a bearer;
//! `messages` of content blocks, `inferenceConfig`, model-specific fields
//! in `additionalModelRequestFields`; `stopReason` and `usage`; errors
//! named by `x-amzn-ErrorType`. Its batch inference reads and writes S3
//! buckets only, which this tool does not keep: calls go directly.

use super::{finish_of, message_of, openai::too_long_for_context, Provider, Reason};
use crate::secret::{Credentials, SigningKeys};
use crate::{Answer, ApiKey};
use autoeval_models::provider::{cap_beside_thinking, Takes};
use autoeval_models::{GenerationParams, ModelSpec, Usage};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use std::time::SystemTime;

/// Amazon Bedrock.
pub(crate) struct Bedrock;

/// The service name requests are signed for.
const SERVICE: &str = "bedrock";

/// What a path segment leaves unencoded: RFC 3986's unreserved characters,
/// as AWS's SDKs encode a model id (an ARN's `:` and `/` encoded).
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

impl Provider for Bedrock {
    fn default_base(&self, credentials: &Credentials) -> Option<String> {
        let region = credentials.region.as_deref()?;
        Some(format!("https://bedrock-runtime.{region}.amazonaws.com"))
    }

    fn chat_path(&self, model: &str, _params: &GenerationParams) -> String {
        format!("/model/{}/converse", utf8_percent_encode(model, UNRESERVED))
    }

    fn credentials(
        &self,
        spec: &ModelSpec,
        lookup: &dyn Fn(&str) -> Option<ApiKey>,
    ) -> Result<Credentials, String> {
        let region = ["AWS_REGION", "AWS_DEFAULT_REGION"]
            .into_iter()
            .find_map(lookup)
            .map(|r| r.expose().to_string());
        let bearer = spec
            .key_variable()
            .and_then(|var| Some((lookup(var)?, var)));
        let signing = match (lookup("AWS_ACCESS_KEY_ID"), lookup("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some(SigningKeys {
                access_key_id: id.expose().to_string(),
                secret,
                session_token: lookup("AWS_SESSION_TOKEN"),
            }),
            _ => None,
        };
        if bearer.is_none() && signing.is_none() {
            return Err(format!(
                "{spec} needs AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK, in the environment or in the secrets file"
            ));
        }
        if region.is_none() {
            return Err(format!(
                "{spec} needs a region: set AWS_REGION (e.g. us-east-1)"
            ));
        }
        Ok(Credentials {
            key: bearer,
            signing,
            region,
        })
    }

    // A Bedrock API key goes as a bearer (the trait's default
    // authorization); without one, each request is signed here.
    fn sign(
        &self,
        request: &mut reqwest::Request,
        credentials: &Credentials,
    ) -> Result<(), String> {
        if credentials.key.is_some() {
            return Ok(());
        }
        let (Some(keys), Some(region)) = (&credentials.signing, &credentials.region) else {
            return Ok(());
        };
        let headers: Vec<(String, String)> = request
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
            .collect();
        let body = request
            .body()
            .and_then(reqwest::Body::as_bytes)
            .unwrap_or_default();
        let signed = signature_headers(
            &Signable {
                method: request.method().as_str(),
                url: request.url().as_str(),
                headers: &headers,
                body,
            },
            keys,
            region,
            SystemTime::now(),
        )?;
        for (name, value) in signed {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| e.to_string())?;
            let value =
                reqwest::header::HeaderValue::from_str(&value).map_err(|e| e.to_string())?;
            request.headers_mut().insert(name, value);
        }
        Ok(())
    }

    fn request_body(
        &self,
        _model: &str,
        p: &GenerationParams,
        takes: Takes,
        prompt: &str,
    ) -> Value {
        let mut inference = serde_json::Map::new();
        if let Some(cap) = p.max_tokens {
            inference.insert(
                "maxTokens".into(),
                json!(cap_beside_thinking(cap, p.thinking_budget)),
            );
        }
        if takes.temperature {
            inference.insert("temperature".into(), json!(p.temperature));
        }
        let mut body = json!({
            "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": inference,
        });
        if let Some(system) = &p.system {
            body["system"] = json!([{ "text": system }]);
        }
        // What the model takes beyond Converse's own fields goes to it as given.
        let mut model_fields = serde_json::Map::new();
        if let Some(budget) = p.thinking_budget {
            model_fields.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        if let Some(effort) = &p.reasoning_effort {
            model_fields.insert("reasoning_effort".into(), json!(effort));
        }
        for (k, v) in &p.extra {
            if k == "top_p" && !takes.top_p {
                continue;
            }
            model_fields.insert(k.clone(), v.clone());
        }
        if !model_fields.is_empty() {
            body["additionalModelRequestFields"] = Value::Object(model_fields);
        }
        body
    }

    fn read_answer(&self, v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
        let content = v["output"]["message"]["content"]
            .as_array()
            .ok_or("no output message")?;
        // Reasoning blocks are `reasoningContent`, not `text`.
        let text: String = content.iter().filter_map(|c| c["text"].as_str()).collect();
        let u = &v["usage"];
        let usage = match (u["inputTokens"].as_u64(), u["outputTokens"].as_u64()) {
            (Some(input), Some(output)) => Some(Usage::new(input, output)),
            _ => None,
        };
        Ok(Answer {
            text,
            usage,
            too_long: false,
            finish_reason: finish_of(spec, v["stopReason"].as_str()),
        })
    }

    fn reason(&self, status: u16, headers: &HeaderMap, body: &Value) -> Reason {
        // The error's name is in a header (`ThrottlingException:http://…`) or the body.
        let header = headers
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let named = [
            header,
            body["__type"].as_str().unwrap_or_default(),
            body["code"].as_str().unwrap_or_default(),
        ]
        .into_iter()
        .find(|n| !n.is_empty())
        .unwrap_or_default();
        let kind = named
            .split([':', '#'])
            .find(|part| part.ends_with("Exception"))
            .unwrap_or(named);
        let message = message_of(body);
        match kind {
            "ThrottlingException" | "ServiceQuotaExceededException" => Reason::RateLimit,
            "ModelNotReadyException" | "ServiceUnavailableException" => Reason::Overloaded,
            "ModelTimeoutException" => Reason::Timeout,
            "InternalServerException" | "ModelErrorException" => Reason::ServerError,
            "AccessDeniedException"
                if message.contains("security token") || message.contains("signature") =>
            {
                Reason::Auth
            }
            "AccessDeniedException" => Reason::Permission,
            "UnrecognizedClientException"
            | "InvalidSignatureException"
            | "ExpiredTokenException" => Reason::Auth,
            "ResourceNotFoundException" => Reason::UnknownModel,
            "ValidationException" if message.contains("model identifier is invalid") => {
                Reason::UnknownModel
            }
            "ValidationException"
                if too_long_for_context(&message) || message.contains("too long") =>
            {
                Reason::ContextLength
            }
            "ValidationException" => Reason::BadRequest,
            _ => super::refusal_of_status(status),
        }
    }

    fn batch_name(&self) -> &'static str {
        "bedrock"
    }
}

/// A request as it is signed.
pub(crate) struct Signable<'a> {
    /// `POST`, `GET`, …
    pub method: &'a str,
    /// The whole URL, its path percent-encoded as sent.
    pub url: &'a str,
    /// The headers sent, each signed.
    pub headers: &'a [(String, String)],
    /// The body.
    pub body: &'a [u8],
}

/// The headers that sign `request` with `keys` for `region` at `time`
/// (AWS Signature Version 4: `authorization`, `x-amz-date`, and
/// `x-amz-security-token` for temporary keys).
pub(crate) fn signature_headers(
    request: &Signable<'_>,
    keys: &SigningKeys,
    region: &str,
    time: SystemTime,
) -> Result<Vec<(String, String)>, String> {
    use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
    use aws_sigv4::sign::v4;
    let identity = aws_credential_types::Credentials::new(
        keys.access_key_id.clone(),
        keys.secret.expose().to_string(),
        keys.session_token.as_ref().map(|t| t.expose().to_string()),
        None,
        "environment",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SERVICE)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| format!("cannot sign a request: {e}"))?
        .into();
    let signable = SignableRequest::new(
        request.method,
        request.url,
        request
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(request.body),
    )
    .map_err(|e| format!("cannot sign a request: {e}"))?;
    let (instructions, _signature) = sign(signable, &params)
        .map_err(|e| format!("cannot sign a request: {e}"))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}
