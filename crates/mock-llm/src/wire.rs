//! What the shared code asks of a provider's API shape, and the answer it
//! writes in that shape: the bottom of the server's modules.

use serde_json::Value;

/// One answer, to be written in a provider's shape.
pub(crate) struct Completion {
    pub(crate) text: String,
    /// Cut at the token cap: each shape says so in its own word.
    pub(crate) cut: bool,
    pub(crate) prompt_tokens: usize,
    /// Output tokens, thinking included.
    pub(crate) completion_tokens: usize,
    /// Of them, tokens spent thinking.
    pub(crate) reasoning_tokens: usize,
}

/// One provider's API shape, as far as the shared code needs it.
pub(crate) trait Wire: Send + Sync {
    /// Its name, telling its batches from another's.
    fn name(&self) -> &'static str;
    /// Whether a direct request is one it takes.
    fn well_formed(&self, req: &Value) -> bool;
    /// The provider's own 400 body for a request its model refuses (a
    /// parameter the model does not take), as the real API words it;
    /// `None` for a request it takes.
    fn refusal(&self, _req: &Value) -> Option<Value> {
        None
    }
    /// The prompt a request asks: its last user message.
    fn prompt(&self, req: &Value) -> String {
        last_user_message(req)
    }
    /// The most output tokens a request asks for.
    fn max_tokens(&self, req: &Value) -> Option<u64> {
        req["max_tokens"]
            .as_u64()
            .or_else(|| req["max_completion_tokens"].as_u64())
    }
    /// `done` written as its reply to request `n` for `model`.
    fn reply(&self, done: &Completion, n: u64, model: &str) -> Value;
    /// The id of the `n`th batch made.
    fn batch_id(&self, n: u64) -> String;
    /// The result line of batched request `n` (`custom_id`), and whether it
    /// goes in the errors file rather than the output.
    fn result_line(&self, n: u64, custom_id: &str, got: Got<'_>) -> (String, bool);
    /// Its word for how a batch ended.
    fn ended_status(&self, expired: bool) -> &'static str;
    /// Whether an ended batch's results are kept as files (output, errors).
    fn results_in_files(&self) -> bool;
}

/// What a batched request got.
pub(crate) enum Got<'a> {
    /// Nothing: its batch expired before it.
    Expired,
    /// An injected failure.
    Errored,
    /// The provider's refusal of a parameter its model does not take: the
    /// 400 body a direct request would get.
    Refused(serde_json::Value),
    /// An answer, for this model.
    Answered(&'a Completion, &'a str),
}

/// The last user message of a chat or messages request body: a string, or
/// the text of its content blocks.
pub(crate) fn last_user_message(body: &serde_json::Value) -> String {
    let Some(messages) = body["messages"].as_array() else {
        return String::new();
    };
    let Some(user) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect()
        }
        _ => String::new(),
    }
}
