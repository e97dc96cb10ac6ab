//! The two providers' batch APIs, as the mock server plays them: OpenAI's
//! Batch API (a JSONL file uploaded to `/v1/files`, a batch made on
//! `/v1/batches`, output and error files) and Anthropic's Message Batches
//! (`/v1/messages/batches`, results as JSONL). A batch ends
//! [`crate::MockConfig::batch_delay`] after it was made; a share of its
//! requests fail, chosen batches expire with half their requests done, and
//! chosen batches are made but the reply to their creation is lost.

use crate::{Shared, API_ERROR};
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Which API a batch came through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    OpenAi,
    Anthropic,
}

/// One request of a batch.
struct Request {
    custom_id: String,
    body: Value,
}

/// One batch, until its results are read.
pub(crate) struct Batch {
    api: Api,
    made: Instant,
    /// Its place in the order batches were made.
    order: u64,
    created_at: u64,
    input_file_id: Option<String>,
    requests: Vec<Request>,
    /// Set once the batch ended: its result lines, the output and error
    /// files' ids (OpenAI), and its counts.
    ended: Option<Ended>,
    /// Whether this batch expires (its window closes with half its requests done).
    expires: bool,
}

struct Ended {
    status: &'static str,
    output: Vec<String>,
    errors: Vec<String>,
    output_file_id: Option<String>,
    error_file_id: Option<String>,
    succeeded: u64,
    errored: u64,
    expired: u64,
    ended_at: u64,
}

/// Files and batches the server holds.
#[derive(Default)]
pub(crate) struct Store {
    files: HashMap<String, Vec<u8>>,
    batches: HashMap<String, Batch>,
    /// Every custom_id ever submitted, with the times it was (per model).
    submitted: HashMap<String, u64>,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response()
}

/// `POST /v1/files`: a multipart upload of a batch input file.
pub(crate) async fn upload(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    mut form: Multipart,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    let (mut purpose, mut file, mut filename) = (None, None, None);
    loop {
        match form.next_field().await {
            Ok(Some(field)) => {
                let name = field.name().unwrap_or_default().to_string();
                if name == "file" {
                    filename = field.file_name().map(String::from);
                }
                let Ok(bytes) = field.bytes().await else {
                    return error(StatusCode::BAD_REQUEST, "a part could not be read");
                };
                match name.as_str() {
                    "purpose" => purpose = Some(String::from_utf8_lossy(&bytes).into_owned()),
                    "file" => file = Some(bytes.to_vec()),
                    _ => {}
                }
            }
            Ok(None) => break,
            Err(e) => return error(StatusCode::BAD_REQUEST, &e.body_text()),
        }
    }
    if purpose.as_deref() != Some("batch") {
        return error(StatusCode::BAD_REQUEST, "purpose must be \"batch\"");
    }
    let Some(file) = file else {
        return error(StatusCode::BAD_REQUEST, "no file part");
    };
    let n = s.files_made.fetch_add(1, Ordering::Relaxed);
    let id = format!("file-mock{n}");
    let bytes = file.len();
    s.batch_store().files.insert(id.clone(), file);
    Json(json!({
        "id": id, "object": "file", "bytes": bytes, "created_at": unix_now(),
        "filename": filename.unwrap_or_default(), "purpose": "batch",
    }))
    .into_response()
}

/// `POST /v1/batches`: a batch of the requests in an uploaded file.
pub(crate) async fn create_openai(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    if body["endpoint"] != "/v1/chat/completions" {
        return error(
            StatusCode::BAD_REQUEST,
            "endpoint must be /v1/chat/completions",
        );
    }
    if body["completion_window"] != "24h" {
        return error(StatusCode::BAD_REQUEST, "completion_window must be 24h");
    }
    let Some(file_id) = body["input_file_id"].as_str() else {
        return error(StatusCode::BAD_REQUEST, "input_file_id is missing");
    };
    let Some(file) = s.batch_store().files.get(file_id).cloned() else {
        return error(StatusCode::NOT_FOUND, "no such file");
    };
    let mut requests = Vec::new();
    for (i, line) in String::from_utf8_lossy(&file).lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("line {} is not JSON", i + 1),
            );
        };
        let ok = v["method"] == "POST"
            && v["url"] == "/v1/chat/completions"
            && v["custom_id"].is_string()
            && v["body"]["messages"].is_array()
            && v["body"]["model"].is_string();
        if !ok {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("line {} is not a chat-completions batch request", i + 1),
            );
        }
        requests.push(Request {
            custom_id: v["custom_id"].as_str().unwrap_or_default().to_string(),
            body: v["body"].clone(),
        });
    }
    match s.make_batch(Api::OpenAi, Some(file_id.to_string()), requests) {
        Ok((_, true)) => lost_reply(),
        Ok((id, false)) => openai_object(&s, &id),
        Err(why) => error(StatusCode::BAD_REQUEST, &why),
    }
}

/// `POST /v1/messages/batches`: Anthropic's batch of message requests.
pub(crate) async fn create_anthropic(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    let Some(list) = body["requests"].as_array() else {
        return error(StatusCode::BAD_REQUEST, "requests is missing");
    };
    let mut requests = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let id_ok = r["custom_id"].as_str().is_some_and(|c| {
            (1..=64).contains(&c.len())
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        let params = &r["params"];
        if !id_ok
            || !params["messages"].is_array()
            || !params["model"].is_string()
            || !params["max_tokens"].is_u64()
        {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("requests.{i} is not a message batch request"),
            );
        }
        requests.push(Request {
            custom_id: r["custom_id"].as_str().unwrap_or_default().to_string(),
            body: params.clone(),
        });
    }
    match s.make_batch(Api::Anthropic, None, requests) {
        Ok((_, true)) => lost_reply(),
        Ok((id, false)) => anthropic_object(&s, &id, &headers),
        Err(why) => error(StatusCode::BAD_REQUEST, &why),
    }
}

/// The reply to a batch's creation, lost after the batch was made.
fn lost_reply() -> Response {
    error(
        StatusCode::BAD_GATEWAY,
        "the reply was lost on its way (the batch was made)",
    )
}

/// `GET /v1/batches?limit=N&after=ID`: the batches, newest first, a page at a time.
pub(crate) async fn list_openai(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(page): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    let limit = page
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(20)
        .clamp(1, 100);
    let ids: Vec<String> = {
        let store = s.batch_store();
        let mut made: Vec<(u64, &String)> = store
            .batches
            .iter()
            .filter(|(_, b)| b.api == Api::OpenAi)
            .map(|(id, b)| (b.order, id))
            .collect();
        made.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
        let start = page
            .get("after")
            .and_then(|after| made.iter().position(|(_, id)| *id == after))
            .map_or(0, |i| i + 1);
        made.into_iter()
            .skip(start)
            .map(|(_, id)| id.clone())
            .collect()
    };
    let has_more = ids.len() > limit;
    let data: Vec<Value> = ids
        .iter()
        .take(limit)
        .filter_map(|id| openai_json(&s, id))
        .collect();
    Json(json!({
        "object": "list", "data": data, "has_more": has_more,
        "first_id": data.first().map(|b| b["id"].clone()),
        "last_id": data.last().map(|b| b["id"].clone()),
    }))
    .into_response()
}

/// `GET /v1/batches/{id}`.
pub(crate) async fn get_openai(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    s.batch_polls.fetch_add(1, Ordering::Relaxed);
    s.settle(&id);
    openai_object(&s, &id)
}

/// `GET /v1/messages/batches/{id}`.
pub(crate) async fn get_anthropic(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    s.batch_polls.fetch_add(1, Ordering::Relaxed);
    s.settle(&id);
    anthropic_object(&s, &id, &headers)
}

/// `GET /v1/files/{id}/content`.
pub(crate) async fn file_content(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    match s.batch_store().files.get(&id) {
        Some(bytes) => bytes.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, "no such file"),
    }
}

/// `GET /v1/messages/batches/{id}/results`.
pub(crate) async fn anthropic_results(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    let store = s.batch_store();
    match store.batches.get(&id).and_then(|b| b.ended.as_ref()) {
        Some(ended) => {
            let mut body = ended.output.join("\n");
            body.push('\n');
            body.into_response()
        }
        None => error(StatusCode::NOT_FOUND, "the batch has not ended"),
    }
}

fn openai_object(s: &Shared, id: &str) -> Response {
    match openai_json(s, id) {
        Some(v) => Json(v).into_response(),
        None => error(StatusCode::NOT_FOUND, "no such batch"),
    }
}

/// Batch `id` as OpenAI describes a batch.
fn openai_json(s: &Shared, id: &str) -> Option<Value> {
    let store = s.batch_store();
    let b = store.batches.get(id).filter(|b| b.api == Api::OpenAi)?;
    let total = b.requests.len() as u64;
    let (status, completed, failed, output, errors, ended_at) = match &b.ended {
        None => ("in_progress", 0, 0, None, None, None),
        Some(e) => (
            e.status,
            e.succeeded,
            e.errored + e.expired,
            e.output_file_id.clone(),
            e.error_file_id.clone(),
            Some(e.ended_at),
        ),
    };
    Some(json!({
        "id": id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": null,
        "input_file_id": b.input_file_id, "completion_window": "24h", "status": status,
        "output_file_id": output, "error_file_id": errors, "created_at": b.created_at,
        "in_progress_at": b.created_at, "expires_at": b.created_at + 86_400,
        "completed_at": if status == "completed" { ended_at } else { None },
        "expired_at": if status == "expired" { ended_at } else { None },
        "request_counts": {"total": total, "completed": completed, "failed": failed},
        "metadata": null,
    }))
}

fn anthropic_object(s: &Shared, id: &str, headers: &HeaderMap) -> Response {
    let store = s.batch_store();
    let Some(b) = store.batches.get(id).filter(|b| b.api == Api::Anthropic) else {
        return error(StatusCode::NOT_FOUND, "no such batch");
    };
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let (status, counts, url, ended_at) = match &b.ended {
        None => (
            "in_progress",
            json!({"processing": b.requests.len(), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}),
            None,
            None,
        ),
        Some(e) => (
            "ended",
            json!({"processing": 0, "succeeded": e.succeeded, "errored": e.errored, "canceled": 0, "expired": e.expired}),
            Some(format!("http://{host}/v1/messages/batches/{id}/results")),
            Some(rfc3339(e.ended_at)),
        ),
    };
    Json(json!({
        "id": id, "type": "message_batch", "processing_status": status,
        "request_counts": counts, "ended_at": ended_at, "created_at": rfc3339(b.created_at),
        "expires_at": rfc3339(b.created_at + 86_400), "archived_at": null,
        "cancel_initiated_at": null, "results_url": url,
    }))
    .into_response()
}

/// Unix seconds as RFC 3339, as Anthropic writes its times.
fn rfc3339(secs: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(at).to_string()
}

impl Shared {
    pub(crate) fn batch_store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps a new batch of `requests`; its id and whether the reply to its
    /// creation is to be lost, or why it is refused.
    fn make_batch(
        &self,
        api: Api,
        input_file_id: Option<String>,
        requests: Vec<Request>,
    ) -> Result<(String, bool), String> {
        if requests.is_empty() {
            return Err("a batch needs at least one request".into());
        }
        let mut seen = HashSet::new();
        if let Some(dup) = requests.iter().find(|r| !seen.insert(&r.custom_id)) {
            return Err(format!("custom_id {:?} is repeated", dup.custom_id));
        }
        let n = self.batches_made.fetch_add(1, Ordering::Relaxed);
        let id = match api {
            Api::OpenAi => format!("batch_mock{n}"),
            Api::Anthropic => format!("msgbatch_mock{n}"),
        };
        let expires = self.config.expire_batches.contains(&(n as usize));
        let lost = self.config.lose_batch_replies.contains(&(n as usize));
        self.batch_requests
            .fetch_add(requests.len() as u64, Ordering::Relaxed);
        let mut store = self.batch_store();
        for r in &requests {
            *store.submitted.entry(r.custom_id.clone()).or_default() += 1;
            let prompt = crate::last_user_message(&r.body);
            self.count_prompt(&prompt);
        }
        store.batches.insert(
            id.clone(),
            Batch {
                api,
                made: Instant::now(),
                order: n,
                created_at: unix_now(),
                input_file_id,
                requests,
                ended: None,
                expires,
            },
        );
        Ok((id, lost))
    }

    /// Ends batch `id` once its delay has passed: answers its requests.
    fn settle(&self, id: &str) {
        let mut store = self.batch_store();
        let Some(batch) = store.batches.get_mut(id) else {
            return;
        };
        if batch.ended.is_some() || batch.made.elapsed() < self.config.batch_delay {
            return;
        }
        let (mut output, mut errors) = (Vec::new(), Vec::new());
        let (mut succeeded, mut errored, mut expired) = (0, 0, 0);
        let half = batch.requests.len().div_ceil(2);
        for (i, r) in batch.requests.iter().enumerate() {
            let n = self.batch_draws.fetch_add(1, Ordering::Relaxed);
            let custom_id = &r.custom_id;
            if batch.expires && i >= half {
                expired += 1;
                match batch.api {
                    Api::OpenAi => errors.push(json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}).to_string()),
                    Api::Anthropic => output.push(json!({"custom_id": custom_id, "result": {"type": "expired"}}).to_string()),
                }
                continue;
            }
            if crate::draw(n ^ 0x5bd1_e995) < self.config.batch_failure_rate {
                errored += 1;
                match batch.api {
                    Api::OpenAi => errors.push(json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": {"status_code": 500, "request_id": format!("req_{n}"), "body": {"error": {"message": API_ERROR, "type": "server_error"}}}, "error": null}).to_string()),
                    Api::Anthropic => output.push(json!({"custom_id": custom_id, "result": {"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": API_ERROR}}}}).to_string()),
                }
                continue;
            }
            succeeded += 1;
            let prompt = crate::last_user_message(&r.body);
            let model = r.body["model"].as_str().unwrap_or_default();
            let done = self.complete(&prompt);
            match batch.api {
                Api::OpenAi => output.push(json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": {"status_code": 200, "request_id": format!("req_{n}"), "body": done.openai(n, model)}, "error": null}).to_string()),
                Api::Anthropic => output.push(json!({"custom_id": custom_id, "result": {"type": "succeeded", "message": done.anthropic(n, model)}}).to_string()),
            }
        }
        self.batch_failed.fetch_add(errored, Ordering::Relaxed);
        self.batch_expired.fetch_add(expired, Ordering::Relaxed);
        self.batch_succeeded.fetch_add(succeeded, Ordering::Relaxed);
        let api = batch.api;
        let status = match (api, batch.expires) {
            (Api::Anthropic, _) => "ended",
            (Api::OpenAi, true) => "expired",
            (Api::OpenAi, false) => "completed",
        };
        let mut ended = Ended {
            status,
            output,
            errors,
            output_file_id: None,
            error_file_id: None,
            succeeded,
            errored,
            expired,
            ended_at: unix_now(),
        };
        if api == Api::OpenAi {
            let file = |lines: &[String]| {
                let mut text = lines.join("\n");
                text.push('\n');
                text.into_bytes()
            };
            let (out, err) = (file(&ended.output), file(&ended.errors));
            if !ended.output.is_empty() {
                let n = self.files_made.fetch_add(1, Ordering::Relaxed);
                let fid = format!("file-mock{n}");
                ended.output_file_id = Some(fid.clone());
                store.files.insert(fid, out);
            }
            if !ended.errors.is_empty() {
                let n = self.files_made.fetch_add(1, Ordering::Relaxed);
                let fid = format!("file-mock{n}");
                ended.error_file_id = Some(fid.clone());
                store.files.insert(fid, err);
            }
        }
        if let Some(batch) = store.batches.get_mut(id) {
            batch.ended = Some(ended);
        }
    }

    /// How many times each custom_id was submitted in a batch.
    pub(crate) fn submissions(&self) -> HashMap<String, u64> {
        self.batch_store().submitted.clone()
    }
}
