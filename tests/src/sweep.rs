//! The broker as earlier test runs left it: a test's mock model server
//! listens on a random loopback port, and the queues of the models it
//! served are named after that address. A run that ended before its
//! cleanup (a panic, a kill) leaves them behind, and every queue holds
//! file handles of the broker's, whose limit (about 900 on a stock node)
//! a few hundred such queues reach: the broker then accepts no connection.
//! The first test of the binary removes the idle ones.

use autoeval_amqp::Broker;
use autoeval_proto::fleet::Topology;
use std::process::Command;

/// The part of a queue's name that only a model served on a loopback
/// port (a test's mock server) gives it.
const LOOPBACK_MODEL: &str = "-127-0-0-1-";

/// Deletes the idle queues of models served on a loopback port, and says how many.
pub fn leftover_queues() {
    let listed = Command::new("rabbitmqctl")
        .args([
            "list_queues",
            "-q",
            "--no-table-headers",
            "name",
            "consumers",
        ])
        .output();
    let Some(listed) = listed.ok().filter(|o| o.status.success()) else {
        eprintln!("sweep: rabbitmqctl could not list the queues; none removed");
        return;
    };
    let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|line| {
            let (name, consumers) = line.split_once('\t')?;
            (name.contains(LOOPBACK_MODEL) && consumers.trim() == "0").then(|| name.to_string())
        })
        .collect();
    if names.is_empty() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let removed = runtime.block_on(async {
        let Ok(broker) = Broker::connect(
            crate::fleet::AMQP,
            &Topology::default(),
            "autoeval-test-sweep",
        )
        .await
        else {
            return 0;
        };
        let mut removed = 0;
        for name in &names {
            if broker.delete_queue_if_idle(name).await.unwrap_or(false) {
                removed += 1;
            }
        }
        broker.close().await;
        removed
    });
    eprintln!("sweep: removed {removed} idle queues that earlier runs left behind");
}
