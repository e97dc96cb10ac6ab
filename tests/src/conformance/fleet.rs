//! RabbitMQ and Redis, the fleet's transport, for the conformance suite:
//! each test has a run of its own and, through a model name of its own,
//! queues of its own, so tests run side by side.

use super::Transport;
use crate::fleet::{AMQP, REDIS};
use autoeval_amqp::{route_translate, AmqpInbox, AmqpOutbox, Broker, Meta};
use autoeval_engine::Outbox;
use autoeval_proto::fleet::{translate_key, Topology};
use autoeval_proto::wire::{decode, MessageKind};
use autoeval_proto::{TranslateTask, VerifyTask};
use autoeval_redis_store::{Budgets, Cap, CapsSet, RedisRecords, RunStore};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;

/// The verify inbox of a test: the queue of its model's name prefixed `verify-`.
fn verify_model(model: &str) -> String {
    format!("verify-{model}")
}

/// Routes a verify task to its test's own verify queue (the fleet's route
/// names one queue that every verifier shares).
fn route_to_test_verifier(v: &VerifyTask) -> (String, autoeval_proto::RoundKey) {
    (
        translate_key(&verify_model(&v.task.model)),
        v.task.round_key(),
    )
}

/// A test's queues on the real broker and its run in the real Redis.
pub struct Fleet {
    run: String,
    model: String,
    broker: Arc<Broker>,
    redis: autoeval_redis_store::Connection,
    store: Arc<RedisRecords>,
}

impl Fleet {
    fn verify_queue(&self) -> String {
        self.broker
            .topology()
            .translate_queue(&verify_model(&self.model))
    }

    /// Takes every message waiting in `queue` now, settling each (acked).
    async fn take<T: DeserializeOwned>(&self, queue: &str, kind: MessageKind) -> Vec<T> {
        let ready = self
            .broker
            .depth(queue)
            .await
            .expect("the queue's depth")
            .map_or(0, |(ready, _)| ready);
        if ready == 0 {
            return Vec::new();
        }
        let mut consumer = self.broker.consume(queue, 1, "").await.expect("a consumer");
        let mut out = Vec::new();
        for _ in 0..ready {
            let task = consumer
                .next()
                .await
                .expect("a message")
                .expect("a delivery");
            let (_, tasks): (_, Vec<T>) = decode(&task.data, kind).expect("a bundle");
            out.extend(tasks);
            task.ack().await.expect("acknowledged");
        }
        consumer.close().await;
        out
    }

    /// Waits until the broker has settled every delivery of `queue` (after a consumer closed).
    async fn settled(&self, queue: &str) {
        for _ in 0..5_000 {
            match self.broker.depth(queue).await {
                Ok(Some((_, 0))) | Ok(None) => return,
                _ => tokio::time::sleep(Duration::from_millis(2)).await,
            }
        }
        panic!("the deliveries of {queue} were not given back in time");
    }
}

impl Transport for Fleet {
    type VerifyIn = AmqpInbox<VerifyTask>;
    type TranslateIn = AmqpInbox<TranslateTask>;
    type ToTranslate = AmqpOutbox<TranslateTask>;
    type ToVerify = AmqpOutbox<VerifyTask>;
    type Store = RedisRecords;
    type Admit = Budgets;

    async fn open(name: &str) -> Fleet {
        let unique = format!(
            "conformance-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let broker = Arc::new(
            Broker::connect(AMQP, &Topology::default(), "autoeval-conformance")
                .await
                .expect("the broker (is RabbitMQ running?)"),
        );
        let redis = autoeval_redis_store::connect(REDIS)
            .await
            .expect("Redis (is it running?)");
        broker
            .declare_translate(&unique)
            .await
            .expect("the translate queue");
        broker
            .declare_translate(&verify_model(&unique))
            .await
            .expect("the verify queue");
        Fleet {
            run: unique.clone(),
            model: unique,
            broker,
            store: Arc::new(RedisRecords::new(redis.clone())),
            redis,
        }
    }

    fn run(&self) -> &str {
        &self.run
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn store(&self) -> Arc<RedisRecords> {
        self.store.clone()
    }

    fn admission(&self) -> Arc<Budgets> {
        Arc::new(Budgets::new(self.redis.clone()))
    }

    async fn put_verify(&self, tasks: Vec<VerifyTask>, redelivered: bool) {
        let outbox = AmqpOutbox::new(
            self.broker.clone(),
            MessageKind::Verify,
            route_to_test_verifier,
        );
        outbox.send(&self.run, tasks).await.expect("published");
        if redelivered {
            // Taken and given back, as a worker that lost its connection would.
            let queue = self.verify_queue();
            let mut consumer = self
                .broker
                .consume(&queue, 1, "")
                .await
                .expect("a consumer");
            let task = consumer
                .next()
                .await
                .expect("a message")
                .expect("a delivery");
            task.requeue().await.expect("given back");
            consumer.close().await;
            self.settled(&queue).await;
        }
    }

    async fn put_translate(&self, tasks: Vec<TranslateTask>) {
        let outbox = AmqpOutbox::new(self.broker.clone(), MessageKind::Translate, route_translate);
        outbox.send(&self.run, tasks).await.expect("published");
    }

    async fn put_poison(&self) -> String {
        let meta = Meta::one(&self.run, "poison#1");
        self.broker
            .publish(&translate_key(&verify_model(&self.model)), b"\x00", &meta)
            .await
            .expect("published");
        "undecodable message".into()
    }

    async fn verify_ends(&self) -> (AmqpInbox<VerifyTask>, Arc<AmqpOutbox<TranslateTask>>) {
        let consumer = self
            .broker
            .consume(&self.verify_queue(), 16, "")
            .await
            .expect("a consumer");
        (
            AmqpInbox::new(consumer, self.broker.clone(), MessageKind::Verify),
            Arc::new(AmqpOutbox::new(
                self.broker.clone(),
                MessageKind::Translate,
                route_translate,
            )),
        )
    }

    async fn translate_ends(&self) -> (AmqpInbox<TranslateTask>, Arc<AmqpOutbox<VerifyTask>>) {
        let consumer = self
            .broker
            .consume(&self.broker.topology().translate_queue(&self.model), 16, "")
            .await
            .expect("a consumer");
        (
            AmqpInbox::new(consumer, self.broker.clone(), MessageKind::Translate),
            Arc::new(AmqpOutbox::new(
                self.broker.clone(),
                MessageKind::Verify,
                route_to_test_verifier,
            )),
        )
    }

    async fn verify_ended(&self, inbox: AmqpInbox<VerifyTask>) {
        inbox.close().await;
        self.settled(&self.verify_queue()).await;
    }

    async fn translate_ended(&self, inbox: AmqpInbox<TranslateTask>) {
        inbox.close().await;
        self.settled(&self.broker.topology().translate_queue(&self.model))
            .await;
    }

    async fn take_translate(&self) -> Vec<TranslateTask> {
        self.take(
            &self.broker.topology().translate_queue(&self.model),
            MessageKind::Translate,
        )
        .await
    }

    async fn take_verify(&self) -> Vec<VerifyTask> {
        self.take(&self.verify_queue(), MessageKind::Verify).await
    }

    async fn dead_letters(&self) -> Vec<String> {
        self.broker
            .dead_letters(usize::MAX)
            .await
            .expect("the dead letters")
            .into_iter()
            .filter(|d| d.run == self.run)
            .map(|d| d.reason)
            .collect()
    }

    async fn set_aside(&self) -> Option<Vec<String>> {
        let store = RunStore::new(self.redis.clone(), &self.run);
        match store
            .set_caps(Cap::Keep, Cap::Keep, true)
            .await
            .expect("the run's budget")
        {
            CapsSet::Resumed(parked) => Some(parked.iter().map(ToString::to_string).collect()),
            _ => Some(Vec::new()),
        }
    }

    async fn close(self) {
        let _ = RunStore::new(self.redis.clone(), &self.run).delete().await;
        let _ = self.broker.take_dead_letters(&self.run).await;
        let _ = self.broker.delete_queue(&self.verify_queue()).await;
        let _ = self
            .broker
            .delete_queue(&self.broker.topology().translate_queue(&self.model))
            .await;
        self.broker.close().await;
    }
}
