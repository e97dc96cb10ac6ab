//! `--amqp` as a list of a cluster's nodes, against the broker on this
//! machine: a process reaches the node that answers, and a list of which
//! none answers is told node by node, without a password.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_amqp::Broker;
use autoeval_proto::fleet::Topology;

/// The broker every test of the project talks to.
const LIVE: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// A loopback port nothing listens on: bound, then let go.
fn dead_url(password: &str) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("amqp://guest:{password}@127.0.0.1:{port}/%2f")
}

#[tokio::test]
async fn a_process_reaches_the_node_of_its_list_that_answers_whichever_it_tries_first() {
    // Each order: the dead node first, then last.
    for urls in [
        format!("{},{LIVE}", dead_url("guest")),
        format!("{LIVE}, {}", dead_url("guest")),
    ] {
        for _ in 0..3 {
            let broker = Broker::connect(&urls, &Topology::default(), "autoeval-test-nodes")
                .await
                .unwrap_or_else(|e| panic!("{urls}: {e}"));
            assert_eq!(broker.node(), "amqp://guest:***@127.0.0.1:5672/%2f");
            assert!(broker.is_connected());
        }
    }
}

#[tokio::test]
async fn a_list_no_node_of_which_answers_is_told_node_by_node_without_a_password() {
    let (one, two) = (dead_url("s3cret-one"), dead_url("s3cret-two"));
    let urls = format!("{one},{two}");
    let error = Broker::connect(&urls, &Topology::default(), "autoeval-test-nodes")
        .await
        .err()
        .expect("no node answers");
    let said = error.to_string();
    assert!(!said.contains("s3cret"), "{said}");
    assert!(said.contains("no node answers"), "{said}");
    for url in [&one, &two] {
        let port = url.rsplit(':').next().unwrap().trim_end_matches("/%2f");
        assert!(said.contains(&format!("127.0.0.1:{port}")), "{said}");
    }
    assert!(
        !error.is_permanent(),
        "nodes away are worth retrying: {said}"
    );
}
