//! `autoeval mock-llm`: a local model server answering with the reference model, in OpenAI's and Anthropic's shapes, directly and through their batch APIs.

use anyhow::{bail, Context, Result};
use autoeval_mock_llm::{router, MockConfig};
use autoeval_models::ModelSpec;
use std::time::Duration;

/// Settings of `autoeval mock-llm`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Port (0 picks a free one and prints it).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Address to listen on (0.0.0.0 in a container, for the other services to reach it).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The built-in model it plays: `reference`, `reference-noisy:RATE`,
    /// `reference-chatty:RATE` or the judge `reference-judge-noisy:RATE`.
    #[arg(long, default_value = "reference")]
    model: ModelSpec,
    /// Delay before every answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Fraction of requests that fail (half 500, half dropped connections).
    #[arg(long, default_value_t = 0.0)]
    error_rate: f64,
    /// Requests per minute before 429 with Retry-After (enforced per second).
    #[arg(long)]
    rate_limit: Option<u32>,
    /// What a 429's Retry-After header says (seconds or an HTTP date; any
    /// text, to try a client on a server's numbers).
    #[arg(long, default_value = "1")]
    retry_after: String,
    /// Bytes of filler put before every answer, for replies of any size.
    #[arg(long, default_value_t = 0)]
    pad_reply_bytes: usize,
    /// Fraction of prompts (by a hash of the prompt) answered cut at the
    /// token cap: half the reply, with each API's finish reason for it.
    #[arg(long, default_value_t = 0.0)]
    truncate_rate: f64,
    /// Play a reasoning model: this fraction of prompts (by a hash of the
    /// prompt) it thinks about until the token cap and answers nothing;
    /// the rest it thinks about three tokens a word, reported in each
    /// API's reasoning-token field.
    #[arg(long, default_value_t = 0.0)]
    thinking_rate: f64,
    /// Keep every request as it came (method, path, headers, body) for
    /// `GET /recorded-requests`, to hold a client's requests to a
    /// provider's SDK or check their signatures.
    #[arg(long)]
    record_requests: bool,
    /// Answer 401 to requests without `Authorization: Bearer KEY`, echoing
    /// what they sent in the error (as some providers do), to try a
    /// client's redaction.
    #[arg(long, env = "AUTOEVAL_MOCK_REQUIRED_KEY", hide_env_values = true)]
    require_key: Option<String>,
    /// Answer 429 (Retry-After 0) to requests past this many at once: a
    /// provider's concurrency limit, to try adaptive concurrency on.
    #[arg(long)]
    max_concurrent: Option<usize>,
    /// How long a batch (either provider's batch API) stays in progress, in milliseconds.
    #[arg(long, default_value_t = 0)]
    batch_delay_ms: u64,
    /// Fraction of batched requests that fail inside their batch.
    #[arg(long, default_value_t = 0.0)]
    batch_failure_rate: f64,
    /// Batches that expire, by the order they are made from 0 (comma-separated):
    /// their window closes with the first half of their requests answered.
    #[arg(long, value_delimiter = ',')]
    expire_batches: Vec<usize>,
    /// Batches made but answered 502, by the order they are made from 0
    /// (comma-separated): the reply to their creation is lost.
    #[arg(long, value_delimiter = ',')]
    lose_batch_replies: Vec<usize>,
    /// Answer every chat request with a recorded provider error: a JSON
    /// file `{"status": 429, "headers": {"retry-after": "20"}, "body": {…}}`
    /// (a spent quota, an unknown model, an absurd Retry-After).
    #[arg(long, value_name = "FIXTURE")]
    refuse_with: Option<std::path::PathBuf>,
    /// With --refuse-with, answer this many requests normally first.
    #[arg(long, default_value_t = 0, requires = "refuse_with")]
    refuse_after: u64,
    /// Play a model of this context length, in tokens, as vLLM serves it:
    /// a request whose prompt plus `max_tokens` exceeds it is answered 400.
    #[arg(long, value_name = "TOKENS")]
    context_length: Option<u64>,
}

/// Runs `autoeval mock-llm` until interrupted.
pub fn run(args: Args) -> Result<()> {
    let spec = &args.model;
    let Some(play) = spec.builtin() else {
        bail!(
            "the mock server plays a built-in model (reference, reference-noisy:RATE, reference-chatty:RATE, reference-judge-noisy:RATE), not {spec}"
        )
    };
    if !(0.0..=1.0).contains(&args.error_rate) {
        bail!("--error-rate must be between 0 and 1");
    }
    if !(0.0..=1.0).contains(&args.truncate_rate) {
        bail!("--truncate-rate must be between 0 and 1");
    }
    if !(0.0..=1.0).contains(&args.thinking_rate) {
        bail!("--thinking-rate must be between 0 and 1");
    }
    if !(0.0..=1.0).contains(&args.batch_failure_rate) {
        bail!("--batch-failure-rate must be between 0 and 1");
    }
    let refusal = match &args.refuse_with {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let fixture: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", path.display()))?;
            let refusal = autoeval_mock_llm::Refusal::from_fixture(&fixture, args.refuse_after)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            Some(refusal)
        }
    };
    let config = MockConfig {
        play,
        latency: Duration::from_millis(args.latency_ms),
        error_rate: args.error_rate,
        rate_limit_rpm: args.rate_limit,
        retry_after: Some(args.retry_after),
        pad_reply_bytes: args.pad_reply_bytes,
        truncate_rate: args.truncate_rate,
        thinking_rate: args.thinking_rate,
        record_requests: args.record_requests,
        require_key: args.require_key,
        max_concurrent: args.max_concurrent,
        batch_delay: Duration::from_millis(args.batch_delay_ms),
        batch_failure_rate: args.batch_failure_rate,
        expire_batches: args.expire_batches,
        lose_batch_replies: args.lose_batch_replies,
        refusal,
        context_length: args.context_length,
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
        let addr = listener.local_addr()?;
        eprintln!("{}", banner(&args.model.to_string(), addr));
        axum::serve(listener, router(config))
            .await
            .context("the server stopped")
    })
}

/// What the server prints when it starts: the model it plays, and the spec
/// or base-address variable that reaches it through each API it speaks.
fn banner(model: &str, addr: std::net::SocketAddr) -> String {
    let host = format!("http://{addr}");
    let mut out =
        format!("mock LLM playing {model} at {host}; each API it speaks is reached by:\n");
    for (spec, variable) in autoeval_models::provider::specs_at(&host) {
        let or = variable.map_or(String::new(), |v| format!("  (or {v})"));
        out.push_str(&format!("  {spec}{or}\n"));
    }
    out.push_str(&format!(
        "  and their batch APIs likewise; request counts at {host}/stats"
    ));
    out
}
