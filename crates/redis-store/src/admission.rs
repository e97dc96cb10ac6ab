//! The fleet's admission of paid work: a run's caps and halts kept in Redis,
//! shared by every worker, as the engine's [`Admission`].

use crate::{Budgets, RedisRecords};
use autoeval_engine::{
    while_store_away, Admission, JudgementStore, Start, StoreError as EngineError, OUTAGE_HOLD,
};
use autoeval_proto::{JudgeKey, JudgeRecord, RoundKey, RoundTrip};

impl Admission for Budgets {
    /// Fails closed: a budget that cannot be read, even after waiting for
    /// Redis, is taken to be a cap.
    async fn capped(&self, run: &str) -> bool {
        match while_store_away(OUTAGE_HOLD, || self.read(run)).await {
            Ok((_, capped)) => capped,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; taking it to have a cap");
                true
            }
        }
    }

    /// Read just before the task starts, so that a cap reached stops every
    /// task not yet begun. Fails closed: while the budget cannot be read the
    /// task waits, and past the outage hold its bundle goes back unspent.
    async fn start(&self, run: &str, round: &RoundKey) -> Start {
        let why = match while_store_away(OUTAGE_HOLD, || self.read(run)).await {
            Ok((Some(why), _)) => why,
            Ok((None, _)) => return Start::Go,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; returning the bundle unspent");
                return Start::Return;
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

    /// A cap reached pauses the run for every worker; replies the cache gave
    /// cost nothing. Each charge sends what this process has paid for the
    /// run in all, so a charge Redis cannot take (or loses) is made good by
    /// the next one.
    async fn charge(&self, run: &str, paid: &RoundTrip) {
        let usd = paid.cost.unwrap_or(0.0);
        // A round trip may have one call answered by the cache and one paid.
        let tokens = paid.paid_usage.prompt_tokens + paid.paid_usage.completion_tokens;
        if usd <= 0.0 && tokens == 0 {
            return;
        }
        let (usd, tokens) = self.pay(run, usd, tokens);
        let charged = while_store_away(OUTAGE_HOLD, || async {
            Ok(Budgets::charge(self, run, usd, tokens).await?)
        })
        .await;
        match charged {
            Ok(Some(why)) => tracing::info!(run, why, "the run is paused"),
            Ok(None) => {}
            Err(e) => {
                tracing::error!(error = %e, "cannot charge the run's budget; the next charge carries this one");
            }
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

impl Budgets {
    async fn read(&self, run: &str) -> Result<(Option<String>, bool), EngineError> {
        Ok(self.state(run).await?)
    }
}
