//! Declaring the topology against the broker on this machine: the dead
//! letters an earlier version kept in a classic queue move into the quorum
//! queue, and queues an earlier version made are taken as they are.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_amqp::{Broker, Meta};
use autoeval_proto::fleet::Topology;
use lapin::options::{BasicPublishOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Connection, ConnectionProperties, ExchangeKind};

/// The broker every test of the project talks to.
const LIVE: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// A fleet of this test alone, so that its queues are its own.
fn fleet(name: &str) -> Topology {
    Topology::named(&format!("{name}{}", std::process::id())).unwrap()
}

async fn raw_channel() -> (Connection, lapin::Channel) {
    let connection = Connection::connect(LIVE, ConnectionProperties::default())
        .await
        .unwrap();
    let channel = connection.create_channel().await.unwrap();
    (connection, channel)
}

fn text(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s))
}

async fn delete_fleet_queues(broker: &Broker, names: &Topology, also: &[String]) {
    for q in [
        names.dead_queue(),
        names.legacy_dead_queue(),
        names.verify_queue(),
    ]
    .iter()
    .chain(also)
    {
        broker.delete_queue(q).await.unwrap();
    }
}

#[tokio::test]
async fn the_dead_letters_of_the_classic_queue_move_to_the_quorum_queue_which_is_then_alone() {
    let names = fleet("deadmove");
    let (connection, ch) = raw_channel().await;
    // What an earlier version left: the dead exchange, and the classic
    // queue bound to it, holding three letters.
    let durable = lapin::options::ExchangeDeclareOptions {
        durable: true,
        ..Default::default()
    };
    let (dead, legacy) = (names.dead_exchange(), names.legacy_dead_queue());
    ch.exchange_declare(
        dead.as_str().into(),
        ExchangeKind::Fanout,
        durable,
        FieldTable::default(),
    )
    .await
    .unwrap();
    let options = QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    ch.queue_declare(legacy.as_str().into(), options, FieldTable::default())
        .await
        .unwrap();
    ch.queue_bind(
        legacy.as_str().into(),
        dead.as_str().into(),
        "".into(),
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await
    .unwrap();
    for k in 0..3 {
        let mut headers = FieldTable::default();
        headers.insert("autoeval-run".into(), text(&format!("run-{k}")));
        headers.insert("autoeval-reason".into(), text("refused by a worker"));
        ch.basic_publish(
            dead.as_str().into(),
            format!("translate.model-{k}").as_str().into(),
            BasicPublishOptions::default(),
            b"a bundle",
            BasicProperties::default().with_headers(headers),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    connection.close(200, "done".into()).await.unwrap();

    let broker = Broker::connect(LIVE, &names, "autoeval-test-declare")
        .await
        .unwrap();
    assert_eq!(
        broker.depth(&legacy).await.unwrap(),
        None,
        "the classic queue is gone"
    );
    let mut letters = broker.dead_letters(10).await.unwrap();
    letters.sort_by(|a, b| a.run.cmp(&b.run));
    let seen: Vec<(String, String, String)> = letters
        .into_iter()
        .map(|l| (l.run, l.routing_key, l.reason))
        .collect();
    let want: Vec<(String, String, String)> = (0..3)
        .map(|k| {
            (
                format!("run-{k}"),
                format!("translate.model-{k}"),
                "refused by a worker".to_string(),
            )
        })
        .collect();
    assert_eq!(seen, want, "each letter moved once, as it was");

    // A letter dead-lettered now reaches the quorum queue alone.
    if let Err(e) = broker
        .publish("no-such-model", b"x", &Meta::default())
        .await
    {
        panic!("a publish to the alternate exchange is confirmed: {e}");
    }
    let letters = broker.dead_letters(10).await.unwrap();
    assert_eq!(letters.len(), 4, "{letters:?}");
    delete_fleet_queues(&broker, &names, &[]).await;
}

#[tokio::test]
async fn queues_an_earlier_version_made_without_a_replica_count_are_taken_as_they_are() {
    let names = fleet("olderqueues");
    let (connection, ch) = raw_channel().await;
    let mut args = FieldTable::default();
    args.insert("x-queue-type".into(), text("quorum"));
    args.insert(
        "x-dead-letter-exchange".into(),
        text(&names.dead_exchange()),
    );
    args.insert("x-delivery-limit".into(), AMQPValue::LongInt(5));
    let options = QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    let translate = names.translate_queue("reference");
    for q in [names.verify_queue(), translate.clone()] {
        ch.queue_declare(q.as_str().into(), options, args.clone())
            .await
            .unwrap();
    }
    connection.close(200, "done".into()).await.unwrap();

    let broker = Broker::connect(LIVE, &names, "autoeval-test-declare")
        .await
        .unwrap_or_else(|e| panic!("an older verify queue is no obstacle: {e}"));
    let declared = broker.declare_translate("reference").await;
    assert_eq!(declared.unwrap(), translate);
    // And a second process finds what the first made.
    let again = Broker::connect(LIVE, &names, "autoeval-test-declare")
        .await
        .unwrap();
    assert_eq!(
        again.declare_translate("reference").await.unwrap(),
        translate
    );
    assert_eq!(again.depth(&translate).await.unwrap(), Some((0, 0)));
    delete_fleet_queues(&broker, &names, &[translate]).await;
}
