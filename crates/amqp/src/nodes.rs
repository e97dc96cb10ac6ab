//! Which node of a cluster a process tries first: the one after the node
//! it was last on, so that a process whose node died goes to the next that
//! answers; a process's first connection starts at a node of its own (by
//! its process id), so that a fleet's processes spread over the nodes.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};

/// Per list of nodes (`--amqp` as given), the node last connected to.
static LAST: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Mutex::default);

/// This process's broker connections: the node of its last, and how many
/// it made to each node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Connections {
    /// The node connected to last, as its URL fit to print.
    pub last: Option<String>,
    /// Connections made, the first included, by node.
    pub by_node: BTreeMap<String, u64>,
}

static CONNECTIONS: Mutex<Connections> = Mutex::new(Connections {
    last: None,
    by_node: BTreeMap::new(),
});

/// Notes a connection made to `node` (its URL fit to print).
pub(crate) fn note_connection(node: &str) {
    let mut all = CONNECTIONS.lock().unwrap_or_else(|e| e.into_inner());
    *all.by_node.entry(node.to_string()).or_default() += 1;
    all.last = Some(node.to_string());
}

/// The broker connections this process made so far.
pub fn connections() -> Connections {
    CONNECTIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// The index of the node of `urls` (of `count` nodes) to try first.
pub(crate) fn first_to_try(urls: &str, count: usize) -> usize {
    let last = LAST
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(urls)
        .copied();
    match last {
        Some(k) => (k + 1) % count,
        None => std::process::id() as usize % count,
    }
}

/// Notes that this process connected to node `k` of `urls`.
pub(crate) fn connected(urls: &str, k: usize) {
    LAST.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(urls.to_string(), k);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_tries_the_node_after_the_one_it_was_on() {
        let urls = "amqp://a,amqp://b,amqp://c (a list of this test only)";
        assert!(first_to_try(urls, 3) < 3);
        connected(urls, 1);
        assert_eq!(first_to_try(urls, 3), 2);
        connected(urls, 2);
        assert_eq!(first_to_try(urls, 3), 0, "after the last, the first");
    }
}
