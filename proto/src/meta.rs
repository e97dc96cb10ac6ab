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

const JUDGE_SETTINGS: &str = "judge-settings:";

/// The field holding how the judge `judge` is asked.
pub fn judge_settings(judge: &crate::JudgeKey) -> String {
    format!("{JUDGE_SETTINGS}{judge}")
}

/// The judge a field names, when it is a judge's settings.
pub fn judge_of(field: &str) -> Option<Result<crate::JudgeKey, crate::NotAKey>> {
    field.strip_prefix(JUDGE_SETTINGS).map(str::parse)
}
