//! Where the fleet's messages and state live: the broker topology and the
//! Redis key layout. Every process names them through these functions, so
//! the layout is written down once.
//!
//! # Broker
//!
//! The names below are the unnamed fleet's; a named fleet's carry its name
//! after `autoeval.` (`autoeval.<fleet>.tasks`, `autoeval.<fleet>.verify` …),
//! see [`Topology`].
//!
//! - `autoeval.tasks`, a durable direct exchange. Routing key `translate.<model>`
//!   reaches the quorum queue `autoeval.translate.<model>`, which an LLM worker
//!   declares for each model it serves; `verify` and `judge` reach
//!   `autoeval.verify`, which every process declares. Routing key
//!   `judge.<model>` reaches `autoeval.judge.<model>`, the A4 questions a judge
//!   model answers, declared by the LLM workers serving that model.
//! - The stage queues dead-letter to `autoeval.dead` (fanout) at least once,
//!   after [`DELIVERY_LIMIT`] deliveries or when a worker refuses a message;
//!   `autoeval.dead-lettered`, a quorum queue, keeps them (a broker node's
//!   loss loses none; `autoeval.dead-letters`, the classic queue of earlier
//!   versions, is emptied into it and deleted).
//! - Every quorum queue is created with a replica on each of up to
//!   [`QUORUM_REPLICAS`] nodes of a cluster (as many as it has, when fewer).
//! - `autoeval.unrouted` (fanout) is the tasks exchange's alternate exchange:
//!   a task for a model whose queue no worker has declared lands in the
//!   dead-letter queue too, its routing key saying which model.
//! - Translate and verify messages carry a *bundle*: up to [`BUNDLE_SIZE`]
//!   tasks of one model and one shard (see [`bundles`]), so the broker's
//!   per-message work (publish, confirm, deliver, acknowledge: each a write
//!   to a quorum queue's log) is paid once per bundle, not once per unit.
//!   A worker still runs, counts, charges and sets aside each task on its
//!   own; the bundle is acknowledged once every task in it is handed on.
//!   A judge message carries one question.
//! - Every message carries the headers `autoeval-run` and `autoeval-units`
//!   (an array: the `<unit>#<round>` of each task in it); a worker that
//!   refuses a message adds `autoeval-reason`.
//!
//! # Redis
//!
//! Every key of a run is `autoeval:{RUN}:…`; the braces are a Redis Cluster
//! hash tag, so one run's keys live on one node and a script may touch them all.
//!
//! - `meta` (hash): `plan` (what to run, JSON), `stages` (how the stages
//!   run it, JSON), `config` (the run's `config.toml`), `units` (total work
//!   units), `items`, `created` and `published` (Unix seconds).
//! - `results` (hash): field `<unit>#<round>` → the round's record as JSON.
//! - `holders` (set): the fleet processes that hold or held the run's tasks;
//!   `holding:<process>` (hash, expires 5 s after the process's last word):
//!   field `<stage>|<shard>` → the run's tasks that process holds.
//! - `arrivals` (list): each `results` field in the order it was recorded,
//!   so a reader can take new rounds as they come instead of rescanning.
//! - `tally` (hash): field `<unit>#<round>` → the `counts` field that round
//!   added to, so forgetting the round takes its count back.
//! - `final` (hash): field `<unit>` → the verdict that ended the unit.
//! - `counts` (hash): field `dataset|model|prompt|round|complexity|verdict` → rounds.
//! - `done` (string): units with a final outcome.
//! - `cache` (hash): field = the reply's cache key → the cached reply as JSON.
//! - `budget` (hash): `cap_usd`, `cap_tokens` (absent: no cap), `spent_usd`,
//!   `spent_tokens` (what the workers paid), `paused` (why the run is paused
//!   at a cap, absent while it runs), `halted` (why a backend halted it),
//!   `lifts` (how many times a halt was lifted) and `parked` (tasks set aside while
//!   paused); `parked` (set): those tasks' `results` fields, which `resume`
//!   takes in the same step as it unpauses the run, and publishes again.
//! - `judge-settings:<judge>|<style>` in `meta`: how a judge model is asked
//!   (the stage settings, JSON), written by `autoeval judge --fleet`.
//! - `judged:<judge>|<style>` (hash): field = the pair ([`judged_pair`]) → its
//!   judgement as JSON, written once; `judge-failed:<judge>|<style>` (hash):
//!   the pairs whose last call failed and that have no judgement yet.
//!
//! Rate limits are kept per model, not per run, under
//! `autoeval:{limit:<model>}:` (hash-tagged by model): `requests` and
//! `tokens` (strings: the GCRA theoretical arrival time in ms on Redis's
//! clock) and `hold` (the time until which a 429 holds the model), each
//! expiring once it no longer matters.

use crate::Verdict;
use sha2::{Digest, Sha256};

/// The names of one fleet's exchanges and queues on its broker. Every
/// name starts with `autoeval.` and, for a named fleet, its name
/// (`autoeval.<fleet>.verify`), so two fleets on one broker and vhost
/// never share a queue and a verifier never takes another fleet's work.
/// The unnamed fleet keeps the names of the module's table above.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    fleet: Option<String>,
}

/// A fleet name the broker's names cannot carry.
#[derive(Debug, thiserror::Error)]
#[error("the fleet name {0:?} is not 1 to 40 letters, digits, `-` or `_`")]
pub struct BadFleetName(pub String);

impl Topology {
    /// The fleet named `fleet`; the empty name is the unnamed fleet.
    pub fn named(fleet: &str) -> Result<Topology, BadFleetName> {
        if fleet.is_empty() {
            return Ok(Topology::default());
        }
        let fits = fleet.len() <= 40
            && fleet
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !fits {
            return Err(BadFleetName(fleet.into()));
        }
        Ok(Topology {
            fleet: Some(fleet.into()),
        })
    }

    /// The fleet a Redis database stands for when no name is given:
    /// database 0 is the unnamed fleet, database `n` the fleet `db<n>`,
    /// so fleets kept apart in Redis are kept apart on the broker too.
    pub fn of_redis_database(db: i64) -> Topology {
        match db {
            0 => Topology::default(),
            n => Topology {
                fleet: Some(format!("db{n}")),
            },
        }
    }

    /// The fleet's name, `None` for the unnamed fleet.
    pub fn name(&self) -> Option<&str> {
        self.fleet.as_deref()
    }

    fn prefixed(&self, rest: &str) -> String {
        match &self.fleet {
            None => format!("autoeval.{rest}"),
            Some(fleet) => format!("autoeval.{fleet}.{rest}"),
        }
    }

    /// The exchange every task is published to.
    pub fn tasks_exchange(&self) -> String {
        self.prefixed("tasks")
    }

    /// Where refused and over-delivered messages go.
    pub fn dead_exchange(&self) -> String {
        self.prefixed("dead")
    }

    /// Where tasks for models no worker serves go.
    pub fn unrouted_exchange(&self) -> String {
        self.prefixed("unrouted")
    }

    /// The queue that keeps dead letters.
    pub fn dead_queue(&self) -> String {
        self.prefixed("dead-lettered")
    }

    /// The classic queue earlier versions kept dead letters in: on a
    /// cluster it lives on one node, and with that node down no process
    /// could declare the topology, so its letters move to [`Self::dead_queue`].
    pub fn legacy_dead_queue(&self) -> String {
        self.prefixed("dead-letters")
    }

    /// The verify stage's queue.
    pub fn verify_queue(&self) -> String {
        self.prefixed("verify")
    }

    /// The queue of a model's translate tasks.
    pub fn translate_queue(&self, model: &str) -> String {
        self.prefixed(&translate_key(model))
    }

    /// The queue of a judge model's A4 questions.
    pub fn judge_queue(&self, model: &str) -> String {
        self.prefixed(&judge_key(model))
    }
}

/// Routing key of verify tasks.
pub const VERIFY_KEY: &str = "verify";
/// The replicas of a quorum queue on a cluster of three or more nodes: a
/// majority (two) survives the loss of any one node.
pub const QUORUM_REPLICAS: u32 = 3;
/// Deliveries of one message before the broker dead-letters it.
pub const DELIVERY_LIMIT: u32 = 5;
/// Header naming the run of a message.
pub const RUN_HEADER: &str = "autoeval-run";
/// Header listing the unit and round of each task in a message (an array of strings).
pub const UNITS_HEADER: &str = "autoeval-units";
/// Most tasks in one translate or verify message.
pub const BUNDLE_SIZE: usize = 16;
/// Header saying why a worker refused a message.
pub const REASON_HEADER: &str = "autoeval-reason";

/// A model spec as a routing-key part: its readable characters, cut short,
/// and a hash of the whole spec so two specs never share a queue. The
/// readable part leaves out a URL's user and password and the spec's
/// `?…` tail: queue names are listed to anyone who can see the broker.
pub fn model_slug(model: &str) -> String {
    let readable: String = without_secrets(model)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let digest = Sha256::digest(model.as_bytes());
    format!(
        "{readable}-{:02x}{:02x}{:02x}",
        digest[0], digest[1], digest[2]
    )
}

/// `spec` without the user and password of its URL and without its `?…` tail.
pub fn without_secrets(spec: &str) -> String {
    let spec = spec.split_once('?').map_or(spec, |(head, _)| head);
    match spec.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host);
            format!("{scheme}://{host}{path}")
        }
        None => spec.to_string(),
    }
}

/// The URLs of a comma-separated list of one cluster's nodes (`--amqp`):
/// each part that names its scheme starts another URL; a part without one
/// stays with the URL before it (a comma in a path or query).
pub fn url_list(list: &str) -> Vec<&str> {
    let mut urls: Vec<&str> = Vec::new();
    let mut start = 0;
    for (at, _) in list.match_indices(',') {
        let rest = list[at + 1..].trim_start();
        if rest
            .split_once("://")
            .is_some_and(|(scheme, _)| is_scheme(scheme))
        {
            urls.push(list[start..at].trim_matches(|c: char| c == ',' || c.is_whitespace()));
            start = at + 1;
        }
    }
    urls.push(list[start..].trim_matches(|c: char| c == ',' || c.is_whitespace()));
    urls.retain(|u| !u.is_empty());
    urls
}

/// Whether `text` is a URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// A broker or Redis `url` fit to print: its password is `***` and its
/// `?…` tail (where TLS and auth options go) is `?***`; the user stays, as
/// it tells an operator which account was refused. A text that does not
/// parse as a URL with a host is not shown at all: a mistyped URL is the
/// one most likely to hold a password where no parser would find it.
pub fn redact_url(url: &str) -> String {
    let urls = url_list(url);
    if urls.len() > 1 {
        return urls
            .into_iter()
            .map(redact_one)
            .collect::<Vec<_>>()
            .join(",");
    }
    redact_one(url)
}

/// One URL fit to print (see [`redact_url`]).
fn redact_one(url: &str) -> String {
    if crate::sentinel::is_sentinel_url(url) {
        return match crate::sentinel::SentinelUrl::parse(url) {
            Ok(parsed) => parsed.redacted(),
            Err(_) => "redis-sentinel://<an address that does not parse, not shown>".into(),
        };
    }
    let Some(mut parsed) = url::Url::parse(url).ok().filter(|u| u.has_host()) else {
        return match url.split_once("://") {
            Some((scheme, _)) => format!("{scheme}://<a URL that does not parse, not shown>"),
            None => "<a URL that does not parse, not shown>".into(),
        };
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    if parsed.query().is_some() {
        parsed.set_query(Some("***"));
    }
    parsed.set_fragment(None);
    parsed.to_string()
}

/// `url` without the password of its user, nor a query parameter that
/// names one; `None` for a text that is no URL, which may hold a password
/// where no parser would find it.
pub fn without_password(url: &str) -> Option<String> {
    let mut parsed = url::Url::parse(url).ok()?;
    let _ = parsed.set_password(None);
    let secret = |name: &str| {
        let name = name.to_ascii_lowercase();
        ["pass", "secret", "token"].iter().any(|s| name.contains(s))
    };
    if parsed.query().is_some() {
        let kept: Vec<(String, String)> = parsed
            .query_pairs()
            .filter(|(name, _)| !secret(name))
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect();
        parsed.set_query(None);
        if !kept.is_empty() {
            parsed.query_pairs_mut().extend_pairs(kept);
        }
    }
    Some(parsed.to_string())
}

/// Routing key of a model's translate tasks.
pub fn translate_key(model: &str) -> String {
    format!("translate.{}", model_slug(model))
}

/// Routing key of a judge model's A4 questions.
pub fn judge_key(model: &str) -> String {
    format!("judge.{}", model_slug(model))
}

/// The judged pair: the unit and round φ1 came from.
pub fn judged_pair(j: &crate::JudgeRecord) -> crate::RoundKey {
    j.task.unit().round(j.task.round)
}

/// The shard of an item: a stable hash of its id, the same on every machine and build.
pub fn shard_of(item_id: &str, shards: u32) -> u32 {
    let d = Sha256::digest(item_id.as_bytes());
    let n = u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]);
    (n % u64::from(shards.max(1))) as u32
}

/// What one of a run's round counters counts: rounds of one dataset,
/// model, prompt style, round and complexity that ended with one verdict.
/// Its one encoding is `dataset|model|prompt|round|complexity|verdict`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Counter {
    /// Dataset name.
    pub dataset: String,
    /// Model spec.
    pub model: String,
    /// Prompt style.
    pub prompt: String,
    /// Round.
    pub round: u32,
    /// Complexity of φ0.
    pub complexity: u32,
    /// How the rounds ended.
    pub verdict: Verdict,
}

impl Counter {
    /// The counter `r` adds to.
    pub fn of(r: &crate::ResultRecord) -> Counter {
        Counter {
            dataset: r.dataset.clone(),
            model: r.model.clone(),
            prompt: r.prompt.clone(),
            round: r.round,
            complexity: r.complexity,
            verdict: r.verdict,
        }
    }
}

impl std::fmt::Display for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}|{}|{}|{}|{}|{}",
            self.dataset, self.model, self.prompt, self.round, self.complexity, self.verdict
        )
    }
}

/// A field that is not a counter's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a round counter: {0:?}")]
pub struct NotACounter(pub String);

impl std::str::FromStr for Counter {
    type Err = NotACounter;

    /// Read from both ends, so that a model spec may hold a `|`.
    fn from_str(s: &str) -> Result<Counter, NotACounter> {
        let bad = || NotACounter(s.to_string());
        let mut tail = s.rsplitn(5, '|');
        let verdict = tail.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let complexity = tail.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let round = tail.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let prompt = tail.next().ok_or_else(bad)?.to_string();
        let (dataset, model) = tail
            .next()
            .ok_or_else(bad)?
            .split_once('|')
            .ok_or_else(bad)?;
        Ok(Counter {
            dataset: dataset.to_string(),
            model: model.to_string(),
            prompt,
            round,
            complexity,
            verdict,
        })
    }
}

/// Shards `status` groups a run's units into.
pub const SHARDS: u32 = 8;

/// Groups `tasks` into bundles of at most `size` that share `key` (a
/// model and shard, say), keeping their order: a bundle is sent when full,
/// the rest at the end, so a run's first bundles are ready at once.
pub fn bundles<T, K: Eq + std::hash::Hash>(
    tasks: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
    size: usize,
) -> Vec<Vec<T>> {
    let size = size.max(1);
    let mut open: std::collections::HashMap<K, Vec<T>> = std::collections::HashMap::new();
    // Keys in the order they first appear, so the rest come out in a stable order.
    let mut order: Vec<K> = Vec::new();
    let mut out = Vec::new();
    for t in tasks {
        let k = key(&t);
        let bundle = match open.get_mut(&k) {
            Some(b) => b,
            None => {
                order.push(key(&t));
                open.entry(k).or_default()
            }
        };
        bundle.push(t);
        if bundle.len() == size {
            out.push(std::mem::take(bundle));
        }
    }
    for k in order {
        if let Some(rest) = open.remove(&k).filter(|b| !b.is_empty()) {
            out.push(rest);
        }
    }
    out
}

/// The compact name Redis marks a round or unit by: the first 16 bytes of
/// its key's SHA-256, the same on every machine and build. Two of a
/// campaign's keys share one with odds below one in 10^20.
pub fn mark_of(key: &str) -> [u8; 16] {
    let d = Sha256::digest(key.as_bytes());
    let mut mark = [0u8; 16];
    mark.copy_from_slice(&d[..16]);
    mark
}

/// One key of a run.
pub fn run_key(run: &str, part: &str) -> String {
    format!("autoeval:{{{run}}}:{part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleets_share_no_name_and_the_unnamed_fleet_keeps_the_old_names() {
        let every_name = |t: &Topology| {
            vec![
                t.tasks_exchange(),
                t.dead_exchange(),
                t.unrouted_exchange(),
                t.dead_queue(),
                t.verify_queue(),
                t.translate_queue("reference"),
                t.judge_queue("reference-judge"),
            ]
        };
        let unnamed = Topology::default();
        assert_eq!(
            every_name(&unnamed)[..5],
            [
                "autoeval.tasks",
                "autoeval.dead",
                "autoeval.unrouted",
                "autoeval.dead-lettered",
                "autoeval.verify"
            ]
        );
        assert_eq!(Topology::of_redis_database(0), unnamed);
        assert_eq!(Topology::named("").unwrap(), unnamed);
        let fleets = [
            unnamed,
            Topology::of_redis_database(13),
            Topology::of_redis_database(14),
            Topology::named("night_runs-2").unwrap(),
        ];
        let mut all: Vec<String> = fleets.iter().flat_map(every_name).collect();
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count, "no two fleets share a name");
        assert_eq!(fleets[1].verify_queue(), "autoeval.db13.verify");
        for bad in ["a.b", "a b", "é", &"x".repeat(41)] {
            assert!(Topology::named(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_list_of_urls_is_split_where_a_scheme_starts_another() {
        assert_eq!(
            url_list("amqp://a@h1:5672/%2f,amqps://a@h2:5671/v, amqp://h3"),
            ["amqp://a@h1:5672/%2f", "amqps://a@h2:5671/v", "amqp://h3"]
        );
        assert_eq!(url_list("amqp://h/v?x=1,2"), ["amqp://h/v?x=1,2"]);
        assert_eq!(
            url_list("amqp://h1,,amqp://h2,"),
            ["amqp://h1", "amqp://h2"]
        );
        assert!(url_list(" ").is_empty());
    }

    #[test]
    fn a_printed_url_never_holds_its_password_whatever_its_shape() {
        let cases = [
            (
                "amqp://guest:secret@127.0.0.1:5672/%2f",
                "amqp://guest:***@127.0.0.1:5672/%2f",
            ),
            ("redis://:secret@127.0.0.1:1", "redis://:***@127.0.0.1:1"),
            ("rediss://user@h:6380", "rediss://user@h:6380"),
            ("amqp://127.0.0.1", "amqp://127.0.0.1"),
            (
                "amqps://u:se?cret@h:5671/%2f",
                "amqps://<a URL that does not parse, not shown>",
            ),
            ("amqps://u:s%40cret@h:5671/v", "amqps://u:***@h:5671/v"),
            (
                "amqps://u:p@[::1]:5671/%2f?cacertfile=/s/ca.pem",
                "amqps://u:***@[::1]:5671/%2f?***",
            ),
            ("u:secret@h:5672", "<a URL that does not parse, not shown>"),
            (
                "amqp://u:one@10.0.0.1:5672/%2f, amqp://u:two@10.0.0.2:5672/%2f",
                "amqp://u:***@10.0.0.1:5672/%2f,amqp://u:***@10.0.0.2:5672/%2f",
            ),
            ("amqp:/u:secret@h", "<a URL that does not parse, not shown>"),
        ];
        for (url, shown) in cases {
            let got = redact_url(url);
            assert_eq!(got, shown, "{url}");
            assert!(
                !got.contains("secret") && !got.contains("cret"),
                "{url}: {got}"
            );
        }
    }

    #[test]
    fn a_counter_reads_back_what_it_wrote_even_with_a_bar_in_the_model() {
        let c = Counter {
            dataset: "fol".into(),
            model: "openai-compatible:m@http://h/v1?stop=a|b".into(),
            prompt: "few-shot".into(),
            round: 2,
            complexity: 7,
            verdict: Verdict::NotEquivalent,
        };
        let text = c.to_string();
        assert_eq!(
            text,
            "fol|openai-compatible:m@http://h/v1?stop=a|b|few-shot|2|7|not_equivalent"
        );
        assert_eq!(text.parse::<Counter>(), Ok(c));
        assert!("fol|m|few-shot|2|7|maybe".parse::<Counter>().is_err());
        assert!("fol|few-shot|2|7|equivalent".parse::<Counter>().is_err());
    }

    #[test]
    fn slugs_are_readable_and_tell_specs_apart() {
        let a = model_slug("openai-compatible:m@http://127.0.0.1:8000/v1");
        let b = model_slug("openai-compatible:m@http://127.0.0.1:8001/v1");
        assert!(a.starts_with("openai-compatible-m-http---127-0-0-1-8000-v1-"));
        assert_ne!(a, b);
        // A password or a query never shows in a queue name; the hash still tells specs apart.
        let secret = "openai-compatible:m@http://user:hunter2@127.0.0.1:8000/v1?api_key=sk-123";
        let s = model_slug(secret);
        assert!(
            !s.contains("hunter2") && !s.contains("user") && !s.contains("sk-123"),
            "{s}"
        );
        assert!(
            s.starts_with("openai-compatible-m-http---127-0-0-1-8000-v1-"),
            "{s}"
        );
        assert_ne!(s, a);
        assert_eq!(
            without_secrets("reference-noisy:0.1"),
            "reference-noisy:0.1"
        );
        assert_eq!(
            Topology::default().translate_queue("reference"),
            format!("autoeval.translate.{}", model_slug("reference"))
        );
    }

    #[test]
    fn bundles_share_a_key_keep_order_and_are_never_larger_than_asked() {
        let tasks: Vec<u32> = (0..23).collect();
        let got = bundles(tasks.clone(), |n| n % 2, 4);
        assert!(got.iter().all(|b| !b.is_empty() && b.len() <= 4));
        assert!(got.iter().all(|b| b.iter().all(|n| n % 2 == b[0] % 2)));
        let mut flat: Vec<u32> = got.iter().flatten().copied().collect();
        flat.sort_unstable();
        assert_eq!(flat, tasks, "every task exactly once");
        // Full bundles come out as they fill, in the order of their tasks.
        assert_eq!(got[0], vec![0, 2, 4, 6]);
        assert_eq!(got[1], vec![1, 3, 5, 7]);
        // 12 even numbers fill three bundles; the 11 odd ones leave three at the end.
        assert_eq!(got.len(), 6);
        assert_eq!(got.last(), Some(&vec![17, 19, 21]));
        assert_eq!(bundles(Vec::<u32>::new(), |n| *n, 4).len(), 0);
        assert_eq!(bundles(vec![1, 2], |_| 0, 0), vec![vec![1], vec![2]]);
    }

    #[test]
    fn shards_spread_and_stay_put() {
        let mut seen = [0u32; 4];
        for i in 0..400 {
            seen[shard_of(&format!("plogic-0-0-{i}"), 4) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 60), "{seen:?}");
        // The hash is part of the contract (reruns shard identically); 175 is
        // the first 8 bytes of SHA-256("plogic-0-0-0"), little-endian, mod 1000.
        assert_eq!(shard_of("plogic-0-0-0", 1000), 175);
        assert_eq!(run_key("r1", "results"), "autoeval:{r1}:results");
    }
}
