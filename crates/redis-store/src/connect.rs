//! Connecting to Redis, over TLS when the URL asks for it, to one server
//! or through Sentinels.

use crate::{Connection, StoreError};

/// Connects to Redis at `url` (a server's, or Sentinels' `redis-sentinel://`
/// address); the connection reconnects by itself when Redis comes back and,
/// behind Sentinels, follows the primary.
pub async fn connect(url: &str) -> Result<Connection, StoreError> {
    Connection::open(url).await
}

/// Why connecting to `url` failed, in one line.
pub(crate) fn explain(url: &str, e: &redis::RedisError) -> String {
    autoeval_proto::tls::explain_failure(url, &once_each(&e.to_string()))
}

/// The database `url` selects (0 unless it names one), or why the URL
/// cannot be read.
pub fn database_of(url: &str) -> Result<i64, StoreError> {
    use redis::IntoConnectionInfo;
    if autoeval_proto::sentinel::is_sentinel_url(url) {
        return autoeval_proto::sentinel::SentinelUrl::parse(url)
            .map(|parsed| parsed.db)
            .map_err(|e| StoreError::Unreachable {
                url: autoeval_proto::fleet::redact_url(url),
                detail: e.to_string(),
            });
    }
    url.into_connection_info()
        .map(|info| info.redis_settings().db())
        .map_err(|e| StoreError::Unreachable {
            url: autoeval_proto::fleet::redact_url(url),
            detail: e.to_string(),
        })
}

/// A client for `url`: for `rediss://`, with the environment's CA and client certificate.
pub(crate) fn client_for(url: &str) -> Result<redis::Client, String> {
    if !autoeval_proto::tls::wants_tls(url) {
        return redis::Client::open(url).map_err(|e| e.to_string());
    }
    let material = autoeval_proto::tls::TlsMaterial::from_lookup(
        |var| std::env::var(var).ok(),
        |p| std::fs::read(p),
    )
    .map_err(|e| e.to_string())?;
    let certificates = redis::TlsCertificates {
        client_tls: material
            .identity
            .map(|(client_cert, client_key)| redis::ClientTlsConfig {
                client_cert,
                client_key,
            }),
        root_cert: material.ca,
    };
    redis::Client::build_with_tls(url, certificates).map_err(|e| e.to_string())
}

/// A message whose parts (`a: b: b`) repeat, each part once.
fn once_each(message: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in message.split(": ") {
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::once_each;
    use autoeval_proto::fleet::redact_url as without_password;

    #[test]
    fn the_database_is_read_from_the_path_or_the_query() {
        use super::database_of;
        assert_eq!(database_of("redis://127.0.0.1:6379").unwrap(), 0);
        assert_eq!(database_of("redis://u:p@h:6379/13").unwrap(), 13);
        assert_eq!(database_of("rediss://h/14").unwrap(), 14);
        assert_eq!(database_of("redis+unix:///run/r.sock?db=3").unwrap(), 3);
        assert!(database_of("not a url").is_err());
        assert_eq!(
            database_of("redis-sentinel://:p@s1,s2:26380/7#main").unwrap(),
            7
        );
        assert!(database_of("redis-sentinel://s1").is_err());
    }

    #[test]
    fn a_redis_url_is_shown_without_its_password_and_a_cause_once() {
        assert_eq!(
            without_password("redis://app:s3cret@redis.internal:6379/0"),
            "redis://app:***@redis.internal:6379/0"
        );
        assert_eq!(
            without_password("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(
            once_each("Connection refused (os error 111): Connection refused (os error 111)"),
            "Connection refused (os error 111)"
        );
    }
}
