//! Finding the runs a Redis holds, by their keys.

use crate::Connection;
use crate::{redis_err, StoreError};
use autoeval_proto::fleet::run_key;

/// Runs registered under `name` and eight hex digits (`results-1a2b3c4d`):
/// the fleet runs made from directories named `name`, sorted.
pub async fn runs_made_from(conn: &Connection, name: &str) -> Result<Vec<String>, StoreError> {
    let pattern = run_key(&format!("{}-*", glob_literal(name)), "meta");
    let mut found = Vec::new();
    for run in registered_runs(conn, &pattern).await? {
        let made_here = run
            .strip_prefix(name)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|tail| tail.len() == 8 && tail.chars().all(|c| c.is_ascii_hexdigit()));
        if made_here {
            found.push(run);
        }
    }
    Ok(found)
}

/// The runs whose `meta` keys match `pattern`, sorted.
async fn registered_runs(conn: &Connection, pattern: &str) -> Result<Vec<String>, StoreError> {
    Ok(scan_keys(conn, pattern)
        .await?
        .iter()
        .filter_map(|key| run_of_key(key))
        .collect())
}

/// The run a key belongs to: `autoeval:{RUN}:part` → `RUN`.
fn run_of_key(key: &str) -> Option<String> {
    let rest = key.strip_prefix("autoeval:{")?;
    let end = rest.rfind("}:")?;
    Some(rest[..end].to_string())
}

/// Every run with a key in this Redis, registered or not, sorted (the
/// models' shared rate limits, `autoeval:{limit:…}`, are no run's).
pub async fn runs_with_keys(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut runs: Vec<String> = scan_keys(conn, "autoeval:{*}:*")
        .await?
        .iter()
        .filter_map(|key| run_of_key(key))
        .filter(|run| !run.starts_with("limit:"))
        .collect();
    runs.sort();
    runs.dedup();
    Ok(runs)
}

/// Every registered run in this Redis, sorted.
pub async fn all_runs(conn: &Connection) -> Result<Vec<String>, StoreError> {
    registered_runs(conn, "autoeval:{*}:meta").await
}

/// `name` as a glob that matches only itself.
pub(crate) fn glob_literal(name: &str) -> String {
    name.chars()
        .flat_map(|c| match c {
            '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

/// Every key matching `pattern`, read in batches.
pub(crate) async fn scan_keys(conn: &Connection, pattern: &str) -> Result<Vec<String>, StoreError> {
    let mut conn = conn.clone();
    let mut found = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .map_err(redis_err("look for keys"))?;
        found.extend(keys);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    found.sort();
    found.dedup();
    Ok(found)
}
