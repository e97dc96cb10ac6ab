//! One attempt over HTTP: the request in the provider's shape, the reply
//! read, and a failure told apart from a refusal.

use crate::provider::{self, base_url_of, request_body};
use crate::{estimate_tokens, Backend, Cause, Reason};
use autoeval_models::Finish;
use autoeval_models::{parse_retry_after, ModelSpec, Usage};
use serde_json::Value;
use std::time::{Duration, SystemTime};

/// One attempt's failure: how it failed, the provider's reason when it
/// answered with one, and the server's wait if it gave one.
pub(crate) struct Failure {
    pub(crate) status: Option<u16>,
    pub(crate) cause: Cause,
    /// The provider's reason; `None` when no reply came (the connection
    /// failed or timed out), which is always worth trying again.
    pub(crate) reason: Option<Reason>,
    pub(crate) message: String,
    pub(crate) retry_after: Option<Duration>,
}

impl Failure {
    /// A failure without a reply: no connection, no answer in time, a body cut off.
    pub(crate) fn transport(cause: Cause, message: String) -> Failure {
        Failure {
            status: None,
            cause,
            reason: None,
            message,
            retry_after: None,
        }
    }

    /// A reply with a successful status whose body is not the answer expected.
    pub(crate) fn malformed(status: u16, message: String) -> Failure {
        Failure {
            status: Some(status),
            cause: Cause::Other,
            reason: Some(Reason::Malformed),
            message,
            retry_after: None,
        }
    }
}

/// What one attempt got: the text, and the usage when the server reported it.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    /// The model's text; empty when the reply was too long to read.
    pub(crate) text: String,
    /// The usage the server reported (estimated for a reply too long to read).
    pub(crate) usage: Option<Usage>,
    /// The reply passed [`BackendOptions::max_reply_bytes`] and was not read whole.
    pub(crate) too_long: bool,
    /// Why the model stopped, when the provider said.
    pub(crate) finish_reason: Option<Finish>,
}

impl Backend {
    /// The request for `prompt`, its JSON body written off the async
    /// runtime when the prompt is long (a prompt carries the model's own
    /// English, which may be megabytes).
    /// The request for `prompt`, built whole and signed where the
    /// provider signs requests; its JSON body written off the async
    /// runtime when the prompt is long (a prompt carries the model's own
    /// English, which may be megabytes).
    pub(crate) async fn request(&self, prompt: &str) -> Result<reqwest::Request, Failure> {
        let (builder, body) = self.request_parts(prompt);
        let bytes = if prompt.len() <= PARSE_INLINE_BYTES {
            serde_json::to_vec(&body)
        } else {
            tokio::task::spawn_blocking(move || serde_json::to_vec(&body))
                .await
                .unwrap_or_else(|e| Err(serde::ser::Error::custom(e)))
        };
        // A JSON value always writes out; were it not to, the request
        // goes without a body and the server's refusal says so.
        let builder = match bytes {
            Ok(bytes) => builder
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes),
            Err(e) => {
                tracing::error!(error = %e, "cannot write a request body");
                builder
            }
        };
        let mut request = builder.build().map_err(|e| self.transport_failure(e))?;
        provider::of(&self.spec)
            .sign(&mut request, &self.credentials)
            .map_err(|why| Failure::transport(Cause::Other, why))?;
        Ok(request)
    }

    /// The request for `prompt` without its body, and the body.
    pub(crate) fn request_parts(&self, prompt: &str) -> (reqwest::RequestBuilder, Value) {
        let params = &self.options.params;
        let body = request_body(&self.spec, params, prompt);
        let base = self.base_url();
        let base = base.trim_end_matches('/');
        let api = provider::of(&self.spec);
        let r = self.http.post(format!(
            "{base}{}",
            api.chat_path(&self.spec.model(), params)
        ));
        let r = api.authorize(r, &self.credentials);
        (r, body)
    }

    /// The API's base address.
    pub(crate) fn base_url(&self) -> String {
        base_url_of(
            &self.spec,
            self.options.base_url.as_deref(),
            &self.credentials,
        )
    }

    /// What a 404 adds to its message: the path asked, and the form the
    /// provider's base address takes, since a base address of the wrong
    /// form (with or without its version) is the usual cause.
    fn not_found_hint(&self, path: &str) -> String {
        let provider = self.spec.provider();
        let own = provider.default_base_url().map_or(String::new(), |own| {
            format!(
                "; {}'s own base address is {own}, and one given{} or as the spec's @URL takes the same form",
                self.spec.backend(),
                provider
                    .base_url_variable()
                    .map_or(String::new(), |v| format!(" in {v}"))
            )
        });
        format!(
            " (asked {path} at the base address {}{own})",
            self.base_url()
        )
    }

    /// Where requests go, for messages about failures to reach it.
    pub(crate) fn address(&self) -> String {
        address_of(&self.base_url())
    }

    /// A transport error in words that name its real cause and the address.
    pub(crate) fn transport_failure(&self, e: reqwest::Error) -> Failure {
        let address = self.address();
        let root = root_cause(&e);
        let (cause, message) = if e.is_timeout() {
            (
                Cause::TimedOut(address.clone()),
                format!(
                    "no answer from {address} within {} s",
                    self.options.request_timeout.as_secs_f64()
                ),
            )
        } else if root.contains("refused") {
            (
                Cause::Refused(address.clone()),
                format!("connection refused to {address}"),
            )
        } else if root.contains("dns error") || root.contains("failed to lookup") {
            (
                Cause::UnknownHost(address.clone()),
                format!("cannot resolve the host of {address}: {root}"),
            )
        } else if e.is_connect() {
            (Cause::Other, format!("cannot connect to {address}: {root}"))
        } else {
            (Cause::Other, format!("request to {address} failed: {root}"))
        };
        Failure::transport(cause, message)
    }

    /// The response body, read chunk by chunk up to the size limit; `None`
    /// past it (the rest is never read).
    pub(crate) async fn read_body(
        &self,
        mut response: reqwest::Response,
    ) -> Result<Option<Vec<u8>>, Failure> {
        let limit = self.options.max_reply_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_failure(e))?
        {
            if body.len() + chunk.len() > limit {
                return Ok(None);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Some(body))
    }

    pub(crate) async fn attempt(&self, prompt: &str) -> Result<Answer, Failure> {
        let request = self.request(prompt).await?;
        let response = self
            .http
            .execute(request)
            .await
            .map_err(|e| self.transport_failure(e))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let retry_after = retry_after_of(&headers);
        // The path alone: a query may carry what no message should.
        let path = response.url().path().to_string();
        let Some(body) = self.read_body(response).await? else {
            // Paid for, not read: charged as a reply of the most tokens
            // asked, or, uncapped, of the bytes it had past the limit.
            tracing::warn!(
                limit = self.options.max_reply_bytes,
                "a reply too long to read"
            );
            let unread = estimate_tokens("", self.options.max_reply_bytes as u64);
            let usage = Usage::new(
                estimate_tokens(prompt, 0),
                self.options.params.max_tokens.map_or(unread, u64::from),
            );
            return Ok(Answer {
                text: String::new(),
                usage: Some(usage),
                too_long: true,
                finish_reason: None,
            });
        };
        if !(200..300).contains(&status) {
            let mut failure = refusal(
                &self.spec,
                &self.address(),
                Refused {
                    status,
                    headers: &headers,
                    body: &body,
                },
                retry_after,
            );
            if status == 404 {
                failure.message.push_str(&self.not_found_hint(&path));
            }
            return Err(failure);
        }
        let spec = self.spec.clone();
        if body.len() <= PARSE_INLINE_BYTES {
            return parse_answer(&spec, status, &body);
        }
        // A long body takes a while to parse: off the async runtime, so
        // heartbeats and health checks are answered meanwhile.
        tokio::task::spawn_blocking(move || parse_answer(&spec, status, &body))
            .await
            .unwrap_or_else(|e| {
                Err(Failure::malformed(
                    status,
                    format!("the reply could not be read: {e}"),
                ))
            })
    }
}

/// A reply with an error status, as it came.
pub(crate) struct Refused<'a> {
    /// Its status.
    pub(crate) status: u16,
    /// Its headers.
    pub(crate) headers: &'a reqwest::header::HeaderMap,
    /// Its body.
    pub(crate) body: &'a [u8],
}

/// The failure of a reply with an error status, its reason read by the
/// provider's module.
pub(crate) fn refusal(
    spec: &ModelSpec,
    address: &str,
    refused: Refused<'_>,
    retry_after: Option<Duration>,
) -> Failure {
    let Refused {
        status,
        headers,
        body,
    } = refused;
    let reason = provider::reason_of(spec, status, headers, body);
    let words = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let head = &body[..body.len().min(1200)];
    let excerpt: String = String::from_utf8_lossy(head).chars().take(300).collect();
    Failure {
        status: Some(status),
        cause: Cause::Status(status),
        reason: Some(reason),
        message: format!("{address} answered HTTP {status} {words}: {excerpt}"),
        retry_after,
    }
}

/// Bodies longer than this are parsed off the async runtime.
pub(crate) const PARSE_INLINE_BYTES: usize = 64 << 10;

/// How long a reply's `Retry-After` header asks to wait, when it asks.
pub(crate) fn retry_after_of(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()))
}

/// `host:port` of a base address, for messages about failing to reach it.
pub(crate) fn address_of(base: &str) -> String {
    reqwest::Url::parse(base)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_string();
            Some(match u.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| base.to_string())
}

/// The answer in a successful reply's `body`, read as `spec`'s provider writes it.
pub(crate) fn parse_answer(spec: &ModelSpec, status: u16, body: &[u8]) -> Result<Answer, Failure> {
    let text = String::from_utf8_lossy(body);
    let malformed = |what: &str| {
        let excerpt: String = text.chars().take(200).collect();
        Failure::malformed(status, format!("malformed response ({what}): {excerpt}"))
    };
    let v: Value = serde_json::from_str(&text).map_err(|_| malformed("not JSON"))?;
    provider::of(spec).read_answer(&v, spec).map_err(malformed)
}

/// The innermost error's words: reqwest's own say only "error sending request".
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last: &dyn std::error::Error = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string().to_lowercase()
}
