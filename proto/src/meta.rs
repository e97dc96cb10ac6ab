//! The fields of a run's `meta` hash in Redis: what the coordinator
//! registers and every worker reads, spelled once.

/// What to run (the plan, JSON).
pub const PLAN: &str = "plan";
/// How the stages run it (JSON).
pub const STAGES: &str = "stages";
/// The run's `config.toml`.
pub const CONFIG: &str = "config";
/// Total work units.
pub const UNITS: &str = "units";
/// Items generated.
pub const ITEMS: &str = "items";
/// When the run was first registered (Unix seconds).
pub const CREATED: &str = "created";
/// When its first tasks were published (Unix seconds).
pub const PUBLISHED: &str = "published";
/// Waves of a run `--until decided` published so far: a coordinator
/// started again follows those and publishes only the waves after them.
pub const WAVES: &str = "waves";
/// When the coordinator saw every unit end and the run's results written
/// to its directory (Unix seconds); the run's keys then expire.
pub const FINISHED: &str = "finished";
/// How often the coordinator reconciled the run, and the last time and why ([`Reconciled`]).
pub const RECONCILED: &str = "reconciled";

/// The coordinator's reconciliations of a run: how many, the last one's
/// time and cause. Its one encoding is `<count>|<unix seconds>|<why>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconciled {
    /// How many times.
    pub count: u64,
    /// When last, in Unix seconds.
    pub at: u64,
    /// Why, last time.
    pub why: String,
}

impl std::fmt::Display for Reconciled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}|{}|{}", self.count, self.at, self.why)
    }
}

impl std::str::FromStr for Reconciled {
    type Err = crate::NotAKey;

    fn from_str(s: &str) -> Result<Reconciled, crate::NotAKey> {
        let bad = || crate::NotAKey {
            what: "a reconciliation (count|at|why)",
            text: s.to_string(),
        };
        let (count, rest) = s.split_once('|').ok_or_else(bad)?;
        let (at, why) = rest.split_once('|').ok_or_else(bad)?;
        Ok(Reconciled {
            count: count.parse().map_err(|_| bad())?,
            at: at.parse().map_err(|_| bad())?,
            why: why.to_string(),
        })
    }
}

const JUDGE_SETTINGS: &str = "judge-settings:";

/// The field holding how the judge `judge` is asked.
pub fn judge_settings(judge: &crate::JudgeKey) -> String {
    format!("{JUDGE_SETTINGS}{judge}")
}

/// The judge a field names, when it is a judge's settings.
pub fn judge_of(field: &str) -> Option<Result<crate::JudgeKey, crate::NotAKey>> {
    field.strip_prefix(JUDGE_SETTINGS).map(str::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reconciliation_reads_back_with_bars_in_its_cause() {
        let r = Reconciled {
            count: 3,
            at: 1_700_000_000,
            why: "lost | found".into(),
        };
        assert_eq!(r.to_string().parse::<Reconciled>(), Ok(r));
        assert!("x|1|why".parse::<Reconciled>().is_err());
    }
}
