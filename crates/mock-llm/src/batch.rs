//! Provider batches as the mock server keeps them, whichever provider's API
//! they came through (each provider's module has its routes and objects).
//! A batch ends [`crate::MockConfig::batch_delay`] after it was made; a
//! share of its requests fail, chosen batches expire with half their
//! requests done, and chosen batches are made but the reply to their
//! creation is lost.

use crate::shared::Shared;
use crate::store::{unix_now, Batch, Ended, Origin, Request, Store};
use crate::wire::{Got, Wire};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// An error reply in the OpenAI form the mock server answers every API's
/// errors in.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
    )
        .into_response()
}

/// Unix seconds as RFC 3339, as the providers write a batch's times.
pub(crate) fn rfc3339(secs: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(at).to_string()
}

/// The reply to a batch's creation: `made` described by `describe`, a lost
/// reply where the batch was made but its reply is to be lost, or why it
/// was refused.
pub(crate) fn created(
    made: Result<(String, bool), String>,
    describe: impl FnOnce(&str) -> Response,
) -> Response {
    match made {
        Ok((_, true)) => lost_reply(),
        Ok((id, false)) => describe(&id),
        Err(why) => error(StatusCode::BAD_REQUEST, &why),
    }
}

/// A list's page size: the query's `key` when it is a number, else
/// `default`, within 1 and `most`.
pub(crate) fn page_size(
    page: &HashMap<String, String>,
    key: &str,
    default: usize,
    most: usize,
) -> usize {
    page.get(key)
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(default)
        .clamp(1, most)
}

/// A batch as its API describes it, or 404 when there is no such batch.
pub(crate) fn batch_reply(described: Option<serde_json::Value>) -> Response {
    match described {
        Some(v) => Json(v).into_response(),
        None => error(StatusCode::NOT_FOUND, "no such batch"),
    }
}

/// The reply to a batch's creation, lost after the batch was made.
fn lost_reply() -> Response {
    error(
        StatusCode::BAD_GATEWAY,
        "the reply was lost on its way (the batch was made)",
    )
}

impl Shared {
    pub(crate) fn batch_store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The ids of the batches `kept` keeps, newest first, as the batch APIs list them.
    pub(crate) fn batch_ids_newest_first(&self, kept: impl Fn(&Batch) -> bool) -> Vec<String> {
        let store = self.batch_store();
        let mut made: Vec<(u64, &String)> = store
            .batches
            .iter()
            .filter(|(_, b)| kept(b))
            .map(|(id, b)| (b.order, id))
            .collect();
        made.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
        made.into_iter().map(|(_, id)| id.clone()).collect()
    }

    /// Keeps a new batch of `requests`; its id and whether the reply to its
    /// creation is to be lost, or why it is refused.
    pub(crate) fn make_batch(
        &self,
        wire: &'static dyn Wire,
        origin: Origin,
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
        let id = wire.batch_id(n);
        let expires = self.config.expire_batches.contains(&(n as usize));
        let lost = self.config.lose_batch_replies.contains(&(n as usize));
        self.batch_requests
            .fetch_add(requests.len() as u64, Ordering::Relaxed);
        let mut store = self.batch_store();
        for r in &requests {
            *store.submitted.entry(r.custom_id.clone()).or_default() += 1;
            self.count_prompt(&wire.prompt(&r.body));
        }
        store.batches.insert(
            id.clone(),
            Batch {
                wire,
                made: Instant::now(),
                order: n,
                created_at: unix_now(),
                origin,
                requests,
                ended: None,
                expires,
            },
        );
        Ok((id, lost))
    }

    /// Batch `id` asked after: counted, and ended if its time has come.
    pub(crate) fn polled(&self, id: &str) {
        self.batch_polls.fetch_add(1, Ordering::Relaxed);
        self.settle(id);
    }

    /// Ends batch `id` once its delay has passed: answers its requests.
    pub(crate) fn settle(&self, id: &str) {
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
        let wire = batch.wire;
        for (i, r) in batch.requests.iter().enumerate() {
            let n = self.batch_draws.fetch_add(1, Ordering::Relaxed);
            let model = r.model.as_str();
            let done;
            // A batch refuses what a direct request is refused, per request.
            let got = if let Some(body) = wire.refusal(&r.body) {
                errored += 1;
                Got::Refused(body)
            } else if batch.expires && i >= half {
                expired += 1;
                Got::Expired
            } else if crate::shared::draw(n ^ 0x5bd1_e995) < self.config.batch_failure_rate {
                errored += 1;
                Got::Errored
            } else {
                succeeded += 1;
                done = self.complete(&wire.prompt(&r.body), wire.max_tokens(&r.body));
                Got::Answered(&done, model)
            };
            let (line, to_errors) = wire.result_line(n, &r.custom_id, got);
            if to_errors {
                errors.push(line);
            } else {
                output.push(line);
            }
        }
        self.batch_failed.fetch_add(errored, Ordering::Relaxed);
        self.batch_expired.fetch_add(expired, Ordering::Relaxed);
        self.batch_succeeded.fetch_add(succeeded, Ordering::Relaxed);
        let status = wire.ended_status(batch.expires);
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
        if wire.results_in_files() {
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
