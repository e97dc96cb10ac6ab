//! A connection through Sentinels, against a Redis primary, its replica and
//! three Sentinels the test starts on loopback ports: it finds the primary,
//! follows it through a failover, and says what is wrong without a password.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_local_servers::{free_port, SentinelRedis};
use redis::AsyncCommands;
use std::time::{Duration, Instant};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "autoeval-redis-store-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_through_sentinels_follows_the_primary_through_a_failover() {
    let dir = scratch("failover");
    let mut redis = SentinelRedis::start(&dir, "sentinel-s3cret").unwrap();
    let first = redis.primary().unwrap();
    let mut conn = autoeval_redis_store::connect(&redis.url(3)).await.unwrap();
    assert_eq!(conn.primary(), format!("127.0.0.1:{first}"));
    conn.set::<_, _, ()>("before", 1).await.unwrap();
    // Written through to the replica before the primary goes, so the
    // failover loses nothing of it.
    // (Each wait within the connection's response timeout of half a second.)
    let mut replicas = 0;
    while replicas < 1 {
        replicas = redis::cmd("WAIT")
            .arg(1)
            .arg(300)
            .query_async(&mut conn)
            .await
            .unwrap();
    }

    let killed = redis.kill_primary().unwrap();
    redis.wait_promoted_from(killed).unwrap();
    let second = redis.primary().unwrap();
    assert_ne!(second, first);
    // Commands fail while the connection finds the new primary, then go through.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match conn.set::<_, _, ()>("after", 2).await {
            Ok(()) => break,
            Err(e) => assert!(Instant::now() < deadline, "no write went through: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(conn.primary(), format!("127.0.0.1:{second}"));
    assert_eq!(conn.failovers(), 1);
    let kept: Option<i64> = conn.get("before").await.unwrap();
    assert_eq!(
        kept,
        Some(1),
        "the database (3) and what was replicated are kept"
    );
    // A clone shares the move: it does not fail over again.
    let mut clone = conn.clone();
    let got: Option<i64> = clone.get("after").await.unwrap();
    assert_eq!((got, clone.failovers()), (Some(2), 1));

    // A connection whose primary died before the Sentinels named another
    // (its one asking found none), and which then reconnected by itself to
    // the old primary back as a replica: its writes answer READONLY, and it
    // follows the Sentinels to the primary of now.
    redis.restart_as_replica(killed).unwrap();
    let mut late = autoeval_redis_store::connect(&redis.url(3)).await.unwrap();
    let killed = redis.kill_primary().unwrap();
    assert!(late.set::<_, _, ()>("later", 0).await.is_err());
    redis.wait_promoted_from(killed).unwrap();
    redis.restart_as_replica(killed).unwrap();
    let third = redis.primary().unwrap();
    // Writes go to the old primary until it is a replica, then follow.
    let deadline = Instant::now() + Duration::from_secs(30);
    while late.primary() != format!("127.0.0.1:{third}") {
        assert!(
            Instant::now() < deadline,
            "the connection stayed on the replica"
        );
        let _ = late.set::<_, _, ()>("later", 3).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    late.set::<_, _, ()>("later", 3).await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn sentinels_that_do_not_answer_are_told_each_without_the_password() {
    let (one, two) = (free_port().unwrap(), free_port().unwrap());
    let url = format!("redis-sentinel://:s3cret-pw@127.0.0.1:{one},127.0.0.1:{two}/0#autoeval");
    let error = autoeval_redis_store::connect(&url)
        .await
        .err()
        .expect("no Sentinel answers");
    let said = error.to_string();
    assert!(!said.contains("s3cret-pw"), "{said}");
    assert!(said.contains("no Sentinel names a primary"), "{said}");
    for port in [one, two] {
        assert!(
            said.contains(&format!("Sentinel 127.0.0.1:{port}")),
            "{said}"
        );
    }
    assert!(
        said.contains("redis-sentinel://:***@"),
        "the address, redacted: {said}"
    );
}
