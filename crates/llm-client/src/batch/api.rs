//! The two providers' batch APIs over HTTP: OpenAI's Batch API (a JSONL
//! file of requests uploaded to `/files`, a batch made on `/batches` with a
//! 24 h window, the output and error files read once it ends) and
//! Anthropic's Message Batches (`/v1/messages/batches`, the results read
//! from its `results_url`).

use crate::health::Cause;
use crate::{address_of, parse_answer, provider, refusal, Answer, ApiKey, Failure};
use autoeval_models::ModelSpec;
use serde_json::{json, Value};

/// Which batch API a model is batched through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// OpenAI's Batch API (also for OpenAI-compatible servers that offer it).
    OpenAi,
    /// Anthropic's Message Batches.
    Anthropic,
}

impl Kind {
    /// The API of `spec`'s provider.
    pub(crate) fn of(spec: &ModelSpec) -> Kind {
        match spec {
            ModelSpec::Anthropic { .. } => Kind::Anthropic,
            _ => Kind::OpenAi,
        }
    }

    /// Its name in the journal.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::OpenAi => "openai",
            Kind::Anthropic => "anthropic",
        }
    }
}

/// How to reach a provider's batch API.
pub(crate) struct Connection {
    /// The HTTP client.
    pub http: reqwest::Client,
    /// The key, when the provider takes one.
    pub key: Option<ApiKey>,
    /// The API's base address.
    pub base: String,
    /// The largest reply text kept; past it a result is "too long".
    pub max_reply_bytes: usize,
}

/// A batch's state at the provider.
pub(crate) enum Polled {
    /// Not ended.
    InFlight,
    /// Ended with `status`; its results are at `results`.
    Ended { status: String, results: Results },
}

/// Where an ended batch's results are.
pub(crate) enum Results {
    /// OpenAI's output and error files.
    Files {
        output: Option<String>,
        errors: Option<String>,
    },
    /// Anthropic's results address.
    Url(String),
    /// None: the batch as a whole failed, for this reason.
    Refused(String),
}

/// Batches looked through, newest first, for one a lost reply made.
const NEWEST_LOOKED_AT: usize = 1000;

/// What one request of an ended batch got.
pub(crate) type Outcome = Result<Answer, (Option<u16>, String)>;

/// One provider's batch API for one model.
pub(crate) struct BatchApi {
    kind: Kind,
    spec: ModelSpec,
    conn: Connection,
}

impl BatchApi {
    /// The batch API of `spec`'s provider over `conn`.
    pub(crate) fn new(spec: &ModelSpec, conn: Connection) -> BatchApi {
        BatchApi {
            kind: Kind::of(spec),
            spec: spec.clone(),
            conn,
        }
    }

    /// Which API it is.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.conn.base.trim_end_matches('/'))
    }

    fn get(&self, url: &str) -> reqwest::RequestBuilder {
        self.with_headers(self.conn.http.get(url))
    }

    fn post(&self, url: &str) -> reqwest::RequestBuilder {
        self.with_headers(self.conn.http.post(url))
    }

    fn with_headers(&self, r: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        provider::of(&self.spec).authorize(r, self.conn.key.as_ref())
    }

    /// Sends `request` and reads its whole body; an error status or a
    /// transport failure is a [`Failure`], with any key removed.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Vec<u8>, Failure> {
        let address = address_of(&self.conn.base);
        let response = request.send().await.map_err(|e| {
            let root = crate::root_cause(&e);
            let cause = if root.contains("refused") {
                Cause::Refused(address.clone())
            } else if e.is_timeout() {
                Cause::TimedOut(address.clone())
            } else {
                Cause::Other
            };
            Failure::transport(
                cause,
                self.redact(&format!("batch request to {address} failed: {root}")),
            )
        })?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| autoeval_models::parse_retry_after(v, std::time::SystemTime::now()));
        let body = response.bytes().await.map_err(|e| {
            Failure::transport(
                Cause::Other,
                self.redact(&format!("the batch API's reply could not be read: {e}")),
            )
        })?;
        if !(200..300).contains(&status) {
            let mut failure = refusal(
                &self.spec,
                &format!("the batch API at {address}"),
                status,
                &body,
                retry_after,
            );
            failure.message = self.redact(&failure.message);
            return Err(failure);
        }
        Ok(body.to_vec())
    }

    fn redact(&self, text: &str) -> String {
        match &self.conn.key {
            Some(k) => k.redact(text),
            None => text.to_string(),
        }
    }

    /// A reply that is not the JSON expected.
    fn malformed(&self, what: &str) -> Failure {
        Failure::malformed(200, format!("the batch API's reply is malformed ({what})"))
    }

    fn json(&self, body: &[u8], what: &str) -> Result<Value, Failure> {
        serde_json::from_slice(body).map_err(|_| self.malformed(what))
    }

    /// Uploads `requests` (`custom_id`, request body) as an OpenAI batch
    /// input file; its id. Repeating it costs nothing: a file is not a batch.
    pub(crate) async fn upload(&self, requests: &[(String, Value)]) -> Result<String, Failure> {
        let mut jsonl = Vec::new();
        for (custom_id, body) in requests {
            let line = json!({
                "custom_id": custom_id,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": body,
            });
            jsonl.extend_from_slice(line.to_string().as_bytes());
            jsonl.push(b'\n');
        }
        let file = reqwest::multipart::Part::bytes(jsonl)
            .file_name("batch.jsonl")
            .mime_str("application/jsonl")
            .map_err(|_| self.malformed("a file part"))?;
        let form = reqwest::multipart::Form::new()
            .text("purpose", "batch")
            .part("file", file);
        self.id_of(self.post(&self.url("/files")).multipart(form), "no file id")
            .await
    }

    /// Makes an OpenAI batch of the requests in uploaded file `file_id`; its id.
    pub(crate) async fn create(&self, file_id: &str) -> Result<String, Failure> {
        let request = self.post(&self.url("/batches")).json(&json!({
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        }));
        self.id_of(request, "no batch id").await
    }

    /// The OpenAI batch already made of file `file_id`, among the
    /// [`NEWEST_LOOKED_AT`] newest: a creation whose reply was lost may
    /// have made it.
    pub(crate) async fn made_of(&self, file_id: &str) -> Result<Option<String>, Failure> {
        let mut after: Option<String> = None;
        let mut looked_at = 0;
        while looked_at < NEWEST_LOOKED_AT {
            let mut url = self.url("/batches?limit=100");
            if let Some(last) = &after {
                url.push_str(&format!("&after={last}"));
            }
            let page = self.send(self.get(&url)).await?;
            let page = self.json(&page, "not a list of batches")?;
            let data = page["data"]
                .as_array()
                .ok_or_else(|| self.malformed("not a list of batches"))?;
            if let Some(made) = data.iter().find(|b| b["input_file_id"] == file_id) {
                return Ok(made["id"].as_str().map(String::from));
            }
            looked_at += data.len();
            after = data.last().and_then(|b| b["id"].as_str()).map(String::from);
            if data.is_empty() || page["has_more"] != true || after.is_none() {
                break;
            }
        }
        Ok(None)
    }

    /// Submits `requests` as one Anthropic message batch; its id.
    pub(crate) async fn submit_messages(
        &self,
        requests: &[(String, Value)],
    ) -> Result<String, Failure> {
        let list: Vec<Value> = requests
            .iter()
            .map(|(custom_id, body)| json!({"custom_id": custom_id, "params": body}))
            .collect();
        let request = self
            .post(&self.url("/v1/messages/batches"))
            .json(&json!({"requests": list}));
        self.id_of(request, "no batch id").await
    }

    /// Sends `request` and reads the `id` of what it made; `missing` says
    /// what a reply without one lacks.
    async fn id_of(
        &self,
        request: reqwest::RequestBuilder,
        missing: &str,
    ) -> Result<String, Failure> {
        let made = self.send(request).await?;
        let made = self.json(&made, missing)?;
        made["id"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| self.malformed(missing))
    }

    /// The state of batch `id`.
    pub(crate) async fn poll(&self, id: &str) -> Result<Polled, Failure> {
        match self.kind {
            Kind::OpenAi => {
                let body = self
                    .send(self.get(&self.url(&format!("/batches/{id}"))))
                    .await?;
                let v = self.json(&body, "not a batch")?;
                let status = v["status"].as_str().unwrap_or_default().to_string();
                let file = |k: &str| v[k].as_str().map(String::from);
                Ok(match status.as_str() {
                    "completed" | "expired" | "cancelled" => Polled::Ended {
                        results: Results::Files {
                            output: file("output_file_id"),
                            errors: file("error_file_id"),
                        },
                        status,
                    },
                    "failed" => {
                        let why = v["errors"]["data"]
                            .as_array()
                            .and_then(|d| d.first())
                            .and_then(|e| e["message"].as_str())
                            .unwrap_or("the provider refused the batch")
                            .to_string();
                        Polled::Ended {
                            results: Results::Refused(why),
                            status,
                        }
                    }
                    _ => Polled::InFlight,
                })
            }
            Kind::Anthropic => {
                let body = self
                    .send(self.get(&self.url(&format!("/v1/messages/batches/{id}"))))
                    .await?;
                let v = self.json(&body, "not a message batch")?;
                let status = v["processing_status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if status != "ended" {
                    return Ok(Polled::InFlight);
                }
                let url = v["results_url"]
                    .as_str()
                    .ok_or_else(|| self.malformed("an ended batch without results_url"))?;
                Ok(Polled::Ended {
                    status,
                    results: Results::Url(url.to_string()),
                })
            }
        }
    }

    /// Each request's outcome, by `custom_id`, from an ended batch's results.
    pub(crate) async fn results(&self, at: &Results) -> Result<Vec<(String, Outcome)>, Failure> {
        let mut out = Vec::new();
        match at {
            Results::Refused(_) => {}
            Results::Files { output, errors } => {
                for file in [output, errors].into_iter().flatten() {
                    let body = self
                        .send(self.get(&self.url(&format!("/files/{file}/content"))))
                        .await?;
                    for line in String::from_utf8_lossy(&body).lines() {
                        if let Some(parsed) = self.openai_line(line) {
                            out.push(parsed);
                        }
                    }
                }
            }
            Results::Url(url) => {
                let body = self.send(self.get(url)).await?;
                for line in String::from_utf8_lossy(&body).lines() {
                    if let Some(parsed) = self.anthropic_line(line) {
                        out.push(parsed);
                    }
                }
            }
        }
        Ok(out)
    }

    /// A reply past the size limit: kept as too long, not whole.
    fn kept(&self, mut answer: Answer) -> Answer {
        if answer.text.len() > self.conn.max_reply_bytes {
            answer.text = String::new();
            answer.too_long = true;
        }
        answer
    }

    /// One line of an OpenAI output or error file.
    fn openai_line(&self, line: &str) -> Option<(String, Outcome)> {
        let v: Value = serde_json::from_str(line).ok()?;
        let custom_id = v["custom_id"].as_str()?.to_string();
        let response = &v["response"];
        let status = response["status_code"].as_u64().map(|s| s as u16);
        let outcome = match status {
            Some(s) if (200..300).contains(&s) => {
                let body = response["body"].to_string();
                parse_answer(&self.spec, s, body.as_bytes())
                    .map(|a| self.kept(a))
                    .map_err(|f| (Some(s), f.message))
            }
            _ => {
                let message = v["error"]["message"]
                    .as_str()
                    .or_else(|| response["body"]["error"]["message"].as_str())
                    .unwrap_or("failed in its batch");
                let code = v["error"]["code"].as_str().unwrap_or_default();
                let why = if code.is_empty() {
                    message.to_string()
                } else {
                    format!("{code}: {message}")
                };
                Err((status, self.redact(&why)))
            }
        };
        Some((custom_id, outcome))
    }

    /// One line of an Anthropic results file.
    fn anthropic_line(&self, line: &str) -> Option<(String, Outcome)> {
        let v: Value = serde_json::from_str(line).ok()?;
        let custom_id = v["custom_id"].as_str()?.to_string();
        let result = &v["result"];
        let outcome = match result["type"].as_str().unwrap_or_default() {
            "succeeded" => {
                let body = result["message"].to_string();
                parse_answer(&self.spec, 200, body.as_bytes())
                    .map(|a| self.kept(a))
                    .map_err(|f| (None, f.message))
            }
            "errored" => {
                let e = &result["error"]["error"];
                let why = format!(
                    "{}: {}",
                    e["type"].as_str().unwrap_or("error"),
                    e["message"].as_str().unwrap_or("failed in its batch")
                );
                Err((None, self.redact(&why)))
            }
            "expired" => Err((
                None,
                "expired: the batch ended before this request was run".to_string(),
            )),
            other => Err((None, format!("{other}: not run in its batch"))),
        };
        Some((custom_id, outcome))
    }
}
