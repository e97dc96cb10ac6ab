//! A provider's batch API over HTTP, written once: what is sent and how a
//! reply reads are the provider module's (`Provider::batch_*`); here they
//! are sent, with the key, the size limit and the failures of every call.

use crate::health::Cause;
use crate::provider::{
    self, BatchListing, BatchResults, BatchState, FileBatches, Line, Provider, Submission,
};
use crate::secret::Credentials;
use crate::{address_of, parse_answer, refusal, Answer, Failure, Refused};
use autoeval_models::ModelSpec;
use serde_json::Value;

/// How to reach a provider's batch API.
pub(crate) struct Connection {
    /// The HTTP client.
    pub http: reqwest::Client,
    /// What requests are authorized or signed with.
    pub credentials: Credentials,
    /// The API's base address.
    pub base: String,
    /// The largest reply text kept; past it a result is "too long".
    pub max_reply_bytes: usize,
}

/// Batches looked through, newest first, for one a lost reply made.
const NEWEST_LOOKED_AT: usize = 1000;

/// What one request of an ended batch got.
pub(crate) type Outcome = Result<Answer, Missed>;

/// Why a request of an ended batch has no answer.
pub(crate) enum Missed {
    /// The batch's window closed before it ran.
    Expired,
    /// It failed: the status when the line gives one, and why.
    Failed(Option<u16>, String),
}

/// One provider's batch API for one model.
pub(crate) struct BatchApi {
    provider: &'static dyn Provider,
    spec: ModelSpec,
    conn: Connection,
}

impl BatchApi {
    /// How `requests` are submitted as one batch of this model's.
    pub(crate) fn submission(&self, requests: &[(String, Value)]) -> Submission {
        self.provider.batch_submission(&self.spec.model(), requests)
    }

    /// The batch API of `spec`'s provider over `conn`.
    pub(crate) fn new(spec: &ModelSpec, conn: Connection) -> BatchApi {
        BatchApi {
            provider: provider::of(spec),
            spec: spec.clone(),
            conn,
        }
    }

    /// What its requests carry, removed from any text kept.
    pub(crate) fn credentials(&self) -> &Credentials {
        &self.conn.credentials
    }

    /// Its name, as the journal keeps it.
    pub(crate) fn name(&self) -> &'static str {
        self.provider.batch_name()
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
        self.provider.authorize(r, &self.conn.credentials)
    }

    /// Sends `request` and reads its whole body; an error status or a
    /// transport failure is a [`Failure`], with any key removed.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Vec<u8>, Failure> {
        let address = address_of(&self.conn.base);
        let built = request.build().map(|mut r| {
            // A provider that signs requests signs each whole.
            if let Err(why) = self.provider.sign(&mut r, &self.conn.credentials) {
                tracing::error!(%why, "cannot sign a batch request");
            }
            r
        });
        let response = match built {
            Ok(r) => self.conn.http.execute(r).await,
            Err(e) => Err(e),
        };
        let response = response.map_err(|e| {
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
        let headers = response.headers().clone();
        let retry_after = crate::backend::http::retry_after_of(&headers);
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
                Refused {
                    status,
                    headers: &headers,
                    body: &body,
                },
                retry_after,
            );
            failure.message = self.redact(&failure.message);
            return Err(failure);
        }
        Ok(body.to_vec())
    }

    fn redact(&self, text: &str) -> String {
        self.conn.credentials.redact(text)
    }

    /// The provider's file batches: only a provider that submits files
    /// ever has a file to make a batch of.
    fn file_batches(&self) -> Result<&'static dyn FileBatches, Failure> {
        self.provider
            .file_batches()
            .ok_or_else(|| self.malformed("a file from an API that takes batches inline"))
    }

    /// How the provider lists batches, for one whose creation's reply was lost.
    fn listing(&self) -> Result<&'static dyn BatchListing, Failure> {
        self.provider
            .batch_listing()
            .ok_or_else(|| self.malformed("a lookup of batches from an API that lists none"))
    }

    /// A reply that is not the JSON expected.
    fn malformed(&self, what: &str) -> Failure {
        Failure::malformed(200, format!("the batch API's reply is malformed ({what})"))
    }

    fn json(&self, body: &[u8], what: &str) -> Result<Value, Failure> {
        serde_json::from_slice(body).map_err(|_| self.malformed(what))
    }

    /// The first step of submitting `requests` (`custom_id`, request body)
    /// as one batch: the batch's id when the API takes them inline, the
    /// uploaded file's when it makes a batch of a file. Repeating an upload
    /// costs nothing: a file is not a batch.
    pub(crate) async fn submit(&self, submission: &Submission) -> Result<Submitted, Failure> {
        match submission {
            Submission::Inline { path, body, .. } => {
                let request = self.post(&self.url(path)).json(body);
                Ok(Submitted::Batch(self.id_of(request, "no batch id").await?))
            }
            Submission::File { path, jsonl } => {
                let file = reqwest::multipart::Part::bytes(jsonl.clone())
                    .file_name("batch.jsonl")
                    .mime_str("application/jsonl")
                    .map_err(|_| self.malformed("a file part"))?;
                let form = reqwest::multipart::Form::new()
                    .text("purpose", "batch")
                    .part("file", file);
                let request = self.post(&self.url(path)).multipart(form);
                Ok(Submitted::File(self.id_of(request, "no file id").await?))
            }
        }
    }

    /// Makes a batch of the requests in uploaded file `file_id`; its id.
    pub(crate) async fn create(&self, file_id: &str) -> Result<String, Failure> {
        let (path, body) = self.file_batches()?.batch_of_file(file_id);
        self.id_of(self.post(&self.url(&path)).json(&body), "no batch id")
            .await
    }

    /// The batch already made of `made_of` (an uploaded file's id, or the
    /// marker an inline batch carries), among the [`NEWEST_LOOKED_AT`]
    /// newest: a creation whose reply was lost may have made it.
    pub(crate) async fn made_of(&self, made_of: &str) -> Result<Option<String>, Failure> {
        let listing = self.listing()?;
        let mut next: Option<String> = None;
        let mut looked_at = 0;
        while looked_at < NEWEST_LOOKED_AT {
            let url = self.url(&listing.page_path(next.as_deref()));
            let page = self.send(self.get(&url)).await?;
            let page = self.json(&page, "not a list of batches")?;
            let (batches, after) = listing
                .page(&page)
                .ok_or_else(|| self.malformed("not a list of batches"))?;
            if let Some(made) = batches.iter().find(|b| listing.made_of(b, made_of)) {
                return Ok(listing.id(made));
            }
            looked_at += batches.len();
            next = after;
            if batches.is_empty() || next.is_none() {
                break;
            }
        }
        Ok(None)
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
        // A batch is named by its `id`, or by its `name` (an operation's).
        made["id"]
            .as_str()
            .or_else(|| made["name"].as_str())
            .map(String::from)
            .ok_or_else(|| self.malformed(missing))
    }

    /// The state of batch `id`.
    pub(crate) async fn poll(&self, id: &str) -> Result<BatchState, Failure> {
        let body = self
            .send(self.get(&self.url(&self.provider.batch_path(id))))
            .await?;
        let v = self.json(&body, "not a batch")?;
        self.provider
            .batch_state(&v)
            .map_err(|what| self.malformed(what))
    }

    /// Each request's outcome, by `custom_id`, from an ended batch's results.
    pub(crate) async fn results(
        &self,
        at: &BatchResults,
    ) -> Result<Vec<(String, Outcome)>, Failure> {
        let mut bodies = Vec::new();
        match at {
            BatchResults::Refused(_) => {}
            BatchResults::Files { output, errors } => {
                for file in [output, errors].into_iter().flatten() {
                    let path = self.provider.results_file_path(file);
                    bodies.push(self.send(self.get(&self.url(&path))).await?);
                }
            }
            BatchResults::Url(url) => bodies.push(self.send(self.get(url)).await?),
            BatchResults::Lines(lines) => bodies.push(lines.join("\n").into_bytes()),
        }
        let mut out = Vec::new();
        for body in bodies {
            for line in String::from_utf8_lossy(&body).lines() {
                if let Some((custom_id, got)) = self.provider.batch_line(line) {
                    out.push((custom_id, self.outcome(got)));
                }
            }
        }
        Ok(out)
    }

    /// What a request of a batch got, its answer read and kept within the size limit.
    fn outcome(&self, got: Line) -> Outcome {
        match got {
            Line::Answered { status, body } => {
                parse_answer(&self.spec, status.unwrap_or(200), body.as_bytes())
                    .map(|a| self.kept(a))
                    .map_err(|f| Missed::Failed(status, f.message))
            }
            Line::Expired => Err(Missed::Expired),
            Line::Failed { status, why } => Err(Missed::Failed(status, self.redact(&why))),
        }
    }

    /// A reply past the size limit: kept as too long, not whole.
    fn kept(&self, mut answer: Answer) -> Answer {
        if answer.text.len() > self.conn.max_reply_bytes {
            answer.text = String::new();
            answer.too_long = true;
        }
        answer
    }
}

/// What the first step of a submission made.
pub(crate) enum Submitted {
    /// The batch itself.
    Batch(String),
    /// A file of its requests, which a batch is then made of.
    File(String),
}
