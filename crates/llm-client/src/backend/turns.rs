//! A direct call's turns: the concurrency limit, the rate gate, and the
//! retries of one call.

use crate::{
    adaptive, health, observe, retry, Answer, AttemptOutcome, Backend, CallError, Cause, Failure,
    WaitCause,
};
use autoeval_models::Usage;
use std::time::{Duration, Instant, SystemTime};

impl Backend {
    pub(crate) async fn call_with_retries(&self, prompt: &str) -> Result<(Answer, u32), CallError> {
        let policy = self.options.retry;
        let mut attempt = 0;
        loop {
            // A turn per attempt: a request waiting to be tried again holds
            // none, so that a lowered limit takes hold at once.
            let turn = self
                .limiter
                .turn()
                .await
                .ok_or_else(|| CallError::Setup("the backend was closed".into()))?;
            // Held until this attempt's outcome is known: a probe's ends the halt or keeps it.
            let _probe = match self.health.admit().await {
                health::Admit::Go => None,
                health::Admit::Probe(guard) => Some(guard),
                health::Admit::Refused(halt) => {
                    return Err(CallError::Halted {
                        cause: halt.cause,
                        attempts: attempt,
                    })
                }
            };
            attempt += 1;
            let estimated = self.wait_turn(prompt).await;
            let sent = Instant::now();
            let epoch = self.limiter.epoch();
            let answered = self.attempt(prompt).await;
            self.adapt(&answered, epoch);
            drop(turn);
            match (&answered, estimated) {
                (
                    Ok(Answer {
                        usage: Some(usage), ..
                    }),
                    Some(estimated),
                ) => {
                    self.reconcile(prompt, estimated, *usage).await;
                }
                // A request the provider answered with an error status used no tokens.
                (Err(f), Some(estimated)) if f.status.is_some() => {
                    let refund = -i64::try_from(estimated).unwrap_or(i64::MAX);
                    self.gate
                        .reconcile(&self.gate_key, self.options.limits, refund)
                        .await;
                }
                _ => {}
            }
            if let Some(o) = &self.options.observer {
                let outcome = match &answered {
                    Ok(_) => AttemptOutcome::Ok,
                    Err(f) => observe::outcome_of(&f.cause),
                };
                o.attempt(&self.spec, outcome, sent.elapsed().as_secs_f64());
            }
            let failure = match answered {
                Ok(answer) => {
                    self.health.succeeded(sent);
                    return Ok((answer, attempt));
                }
                Err(f) => f,
            };
            let is_429 = failure.cause == Cause::Status(429);
            let caller = retry::Caller {
                credentials: &self.credentials,
                key_variable: self.spec.key_variable(),
                what: "",
            };
            let wait = match retry::after_failure(&self.health, &policy, failure, attempt, &caller)
            {
                retry::Next::Retry(wait) => wait,
                retry::Next::Fail(e) => return Err(e),
            };
            if let Some(o) = &self.options.observer {
                o.retry(&self.spec);
            }
            if is_429 {
                // The provider's limit is the fleet's: every caller of this model waits.
                self.gate.back_off(&self.gate_key, wait).await;
                if let Some(o) = &self.options.observer {
                    o.waited(&self.spec, WaitCause::TooManyRequests, wait.as_secs_f64());
                }
            }
            tracing::debug!(attempt, ?wait, "retrying");
            tokio::time::sleep(wait).await;
        }
    }

    /// Tells the concurrency limit how an attempt sent at `epoch` went.
    pub(crate) fn adapt(&self, answered: &Result<Answer, Failure>, epoch: u64) {
        let signal = match answered {
            Ok(_) => adaptive::Signal::Ok,
            Err(f)
                if f.status
                    .is_some_and(|s| s == 429 || (500..600).contains(&s)) =>
            {
                adaptive::Signal::Overloaded
            }
            Err(_) => adaptive::Signal::Neither,
        };
        if let Some(limit) = self.limiter.observe(signal, epoch) {
            tracing::debug!(limit, model = %self.spec, "concurrency adapted");
            if let Some(o) = &self.options.observer {
                o.concurrency(&self.spec, limit);
            }
        }
    }

    /// Requests this backend sends at once now (its adaptive limit, or the fixed one).
    pub fn concurrency(&self) -> usize {
        self.limiter.limit()
    }

    /// Waits until the gate admits this request: its rate limits allow it
    /// and no 429 holds the model. Answers the tokens charged when tokens are limited.
    pub(crate) async fn wait_turn(&self, prompt: &str) -> Option<u64> {
        let limits = self.options.limits;
        let tokens = limits
            .tokens_per_minute
            .map(|_| self.history.estimate(prompt));
        loop {
            let wait = self
                .gate
                .admit(&self.gate_key, limits, tokens.unwrap_or(0))
                .await;
            if wait.is_zero() {
                tracing::trace!(?tokens, "admitted");
                return tokens;
            }
            if let Some(o) = &self.options.observer {
                o.waited(&self.spec, WaitCause::Limit, wait.as_secs_f64());
            }
            // A little jitter, so that callers told the same wait do not all ask at once.
            tokio::time::sleep(wait + Duration::from_millis((jitter() * 5.0) as u64)).await;
        }
    }

    /// Charges the gate the tokens used beyond (or refunds those short of) the estimate.
    pub(crate) async fn reconcile(&self, prompt: &str, estimated: u64, usage: Usage) {
        self.history
            .observe(prompt, usage.prompt_tokens, usage.completion_tokens);
        let used = usage.prompt_tokens + usage.completion_tokens;
        let delta = used as i64 - estimated as i64;
        tracing::trace!(estimated, used, "tokens charged");
        if delta != 0 {
            self.gate
                .reconcile(&self.gate_key, self.options.limits, delta)
                .await;
        }
    }
}

/// A uniform draw in [0, 1) for backoff jitter; it needs no reproducibility.
pub(crate) fn jitter() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut x = nanos as u64 ^ 0x9E37_79B9_7F4A_7C15;
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}
