//! Which node of a cluster a process tries first: the one after the node
//! it was last on, so that a process whose node died goes to the next that
//! answers; a process's first connection starts at a node of its own (by
//! its process id), so that a fleet's processes spread over the nodes.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Per list of nodes (`--amqp` as given), the node last connected to.
static LAST: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Mutex::default);

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
