//! The fleet's admission of paid work: a run's caps and halts kept in Redis,
//! shared by every worker, as the engine's [`Admission`].

use crate::{Budgets, RedisRecords};
use autoeval_engine::{Admission, JudgementStore, Start, StoreError as EngineError};
use autoeval_proto::{JudgeKey, JudgeRecord, RoundKey, RoundTrip};

impl Admission for Budgets {
    /// When the budget cannot be read, the run is taken to have a cap.
    async fn capped(&self, run: &str) -> bool {
        match self.state(run).await {
            Ok((_, capped)) => capped,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; going on");
                true
            }
        }
    }

    /// Read just before the task starts, so that a cap reached stops every task not yet begun.
    async fn start(&self, run: &str, round: &RoundKey) -> Start {
        let why = match self.state(run).await {
            Ok((Some(why), _)) => why,
            Ok((None, _)) => return Start::Go,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; going on");
                return Start::Go;
            }
        };
        match self.park(run, round).await {
            Ok(true) => {
                tracing::debug!(run, why, "the run is paused; a task set aside");
                Start::Parked
            }
            // Resumed meanwhile: the task is done after all.
            Ok(false) => Start::Go,
            Err(e) => {
                // Not remembered, it would be lost: its bundle goes back.
                tracing::warn!(error = %e, "cannot set a task aside; returning its bundle");
                Start::Return
            }
        }
    }

    /// A cap reached pauses the run for every worker; replies the cache gave cost nothing.
    async fn charge(&self, run: &str, paid: &RoundTrip) {
        let usd = paid.cost.unwrap_or(0.0);
        let tokens = if paid.cached {
            0
        } else {
            paid.usage.prompt_tokens + paid.usage.completion_tokens
        };
        if usd <= 0.0 && tokens == 0 {
            return;
        }
        match Budgets::charge(self, run, usd, tokens).await {
            Ok(Some(why)) => tracing::info!(run, why, "the run is paused"),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "cannot charge the run's budget"),
        }
    }

    async fn halt(&self, run: &str, why: &str, rounds: &[RoundKey]) -> Result<(), EngineError> {
        Ok(Budgets::halt(self, run, why, rounds).await?)
    }
}

impl JudgementStore for RedisRecords {
    async fn record_judgement(
        &self,
        run: &str,
        judge: &JudgeKey,
        judgement: &JudgeRecord,
    ) -> Result<bool, EngineError> {
        Ok(self.run(run).record_judgement(judge, judgement).await?)
    }
}
