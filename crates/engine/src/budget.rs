//! A one-machine run's caps: the translate stage wrapped so that it
//! charges what each round trip paid and, once a cap is reached, starts
//! nothing more. The loops then leave the unsent units pending, as after a
//! halt, and the command pauses the run; `resume` with higher caps goes on
//! from the records, where every paid reply is cached. A fleet keeps the
//! same caps, with the same words, in Redis.

use crate::stage::Translate;
use autoeval_proto::{ResultRecord, RoundTrip, TranslateTask, VerifyTask};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, OnceLock};

/// The most a run may spend; `None` for no cap of that kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Caps {
    /// Most it may spend on model calls, in US dollars.
    pub usd: Option<f64>,
    /// Most prompt plus completion tokens it may pay for.
    pub tokens: Option<u64>,
}

impl Caps {
    /// True when either cap is set.
    pub fn any(&self) -> bool {
        self.usd.is_some() || self.tokens.is_some()
    }

    /// Why a run that spent `spent` must pause, when it reached a cap (the
    /// fleet's words).
    pub fn reached(&self, spent: Spent) -> Option<String> {
        match (self.usd, self.tokens) {
            (Some(cap), _) if spent.usd >= cap => {
                Some(format!("the cost cap of ${cap:.4} is reached"))
            }
            (_, Some(cap)) if spent.tokens >= cap => {
                Some(format!("the token cap of {cap} is reached"))
            }
            _ => None,
        }
    }
}

/// What a run has paid for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// In US dollars, as the price table prices the calls.
    pub usd: f64,
    /// Prompt plus completion tokens.
    pub tokens: u64,
}

impl Spent {
    /// What a round trip paid: its calls not answered by the cache.
    pub fn of(paid: &RoundTrip) -> Spent {
        Spent {
            usd: paid.cost.unwrap_or(0.0),
            tokens: paid.paid_usage.prompt_tokens + paid.paid_usage.completion_tokens,
        }
    }

    /// What a recorded round paid, as its record tells: nothing when the
    /// cache answered both calls; its whole usage otherwise (a record does
    /// not say which one call the cache answered, so that one's tokens
    /// count too, though its cost is zero).
    pub fn recorded(r: &ResultRecord) -> Spent {
        if r.cached {
            return Spent::default();
        }
        Spent {
            usd: r.cost.unwrap_or(0.0),
            tokens: r.usage.prompt_tokens + r.usage.completion_tokens,
        }
    }

    /// Both spends together.
    pub fn plus(self, other: Spent) -> Spent {
        Spent {
            usd: self.usd + other.usd,
            tokens: self.tokens + other.tokens,
        }
    }
}

/// A translate stage that pauses its run at a cap.
pub struct Capped<T> {
    inner: Arc<T>,
    caps: Caps,
    spent: Mutex<Spent>,
    paused: OnceLock<String>,
}

impl<T: Translate> Capped<T> {
    /// `inner` under `caps`, having spent `spent` before (a resumed run's
    /// records); paused at once when that already reaches a cap.
    pub fn new(inner: Arc<T>, caps: Caps, spent: Spent) -> Capped<T> {
        let capped = Capped {
            inner,
            caps,
            spent: Mutex::new(spent),
            paused: OnceLock::new(),
        };
        if let Some(why) = caps.reached(spent) {
            let _ = capped.paused.set(why);
        }
        capped
    }

    /// Why the run paused, once it reached a cap.
    pub fn paused(&self) -> Option<String> {
        self.paused.get().cloned()
    }

    /// What the run has spent, before and here.
    pub fn spent(&self) -> Spent {
        self.spent.lock().map(|s| *s).unwrap_or_default()
    }

    /// Charges what a round trip paid; pauses the run at a cap.
    fn charge(&self, paid: &RoundTrip) {
        let Ok(mut spent) = self.spent.lock() else {
            return;
        };
        *spent = spent.plus(Spent::of(paid));
        if let Some(why) = self.caps.reached(*spent) {
            let _ = self.paused.set(why);
        }
    }
}

impl<T: Translate> Translate for Capped<T> {
    async fn translate(&self, task: TranslateTask) -> VerifyTask {
        let done = self.inner.translate(task).await;
        self.charge(&done.translation);
        done
    }

    fn halted(&self) -> Option<String> {
        self.inner.halted().or_else(|| self.paused())
    }

    fn serves(&self, model: &str) -> bool {
        self.inner.serves(model)
    }

    fn refusal(&self, model: &str) -> String {
        self.inner.refusal(model)
    }

    fn batched(&self, model: &str) -> bool {
        self.inner.batched(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_is_reached_by_spending_it_in_dollars_or_tokens() {
        let caps = Caps {
            usd: Some(1.0),
            tokens: Some(1000),
        };
        assert_eq!(
            caps.reached(Spent {
                usd: 0.99,
                tokens: 999
            }),
            None
        );
        assert_eq!(
            caps.reached(Spent {
                usd: 1.0,
                tokens: 0
            })
            .as_deref(),
            Some("the cost cap of $1.0000 is reached")
        );
        assert_eq!(
            caps.reached(Spent {
                usd: 0.0,
                tokens: 1000
            })
            .as_deref(),
            Some("the token cap of 1000 is reached")
        );
        assert_eq!(
            Caps::default().reached(Spent {
                usd: 1e9,
                tokens: u64::MAX
            }),
            None
        );
    }
}
