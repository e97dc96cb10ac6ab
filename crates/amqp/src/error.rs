//! What can go wrong talking to the broker, and which of it no retry mends.

use thiserror::Error;

/// What went wrong talking to the broker.
#[derive(Debug, Error)]
pub enum BrokerError {
    /// The broker cannot be reached or refused us.
    #[error("cannot reach the broker at {url} ({detail}); start it, or point --amqp (or AUTOEVAL_AMQP) at it")]
    Connect {
        /// Where, without credentials.
        url: String,
        /// Why, in one line: the innermost cause the client gave.
        detail: String,
    },
    /// The broker answers, but refuses this connection for good: TLS with a
    /// plaintext port, credentials or a vhost it does not know.
    #[error("the broker at {url} refuses this connection ({detail}); correct --amqp (or AUTOEVAL_AMQP): its scheme, credentials or vhost")]
    Refused {
        /// Where, without credentials.
        url: String,
        /// Why, in one line.
        detail: String,
    },
    /// The TLS material for an `amqps://` URL cannot be read.
    #[error(transparent)]
    Tls(#[from] autoeval_proto::tls::TlsError),
    /// A broker operation failed (often: the connection was lost).
    #[error("broker: {what}: {source}")]
    Amqp {
        /// The operation.
        what: String,
        /// Why.
        source: lapin::Error,
    },
    /// The broker refused to take a message.
    #[error("the broker refused a message for {routing_key} (negative confirm)")]
    Nacked {
        /// Where it was going.
        routing_key: String,
    },
    /// The broker did not confirm a publish in time (a memory or disk alarm
    /// blocks publishers); the connection is closed, to be opened again.
    #[error(
        "the broker did not confirm a publish to {routing_key} within {seconds} s; reconnecting"
    )]
    ConfirmTimedOut {
        /// Where it was going.
        routing_key: String,
        /// How long it waited.
        seconds: u64,
    },
    /// A broker operation did not end in time: over a connection that died
    /// under it, lapin can leave an operation waiting forever, so every one
    /// is bounded and its connection taken for lost.
    #[error("broker: {what} did not end within {seconds} s; the connection is taken for lost")]
    TimedOut {
        /// The operation.
        what: String,
        /// How long it waited.
        seconds: u64,
    },
    /// No queue is bound for the message's routing key.
    #[error("no queue takes messages for {routing_key}: {reply}")]
    Unroutable {
        /// Where it was going.
        routing_key: String,
        /// The broker's reply text.
        reply: String,
    },
}

/// Tries in a row that fail the same permanent way before a connection is
/// given up: one could be a fluke of a broker starting; three are not.
pub const PERMANENT_TRIES: u32 = 3;

impl BrokerError {
    /// Why, without where: a connection's detail, or the whole message.
    pub fn detail(&self) -> String {
        match self {
            BrokerError::Connect { detail, .. } | BrokerError::Refused { detail, .. } => {
                detail.clone()
            }
            other => other.to_string(),
        }
    }

    /// Whether retrying cannot mend it: a TLS handshake that met a
    /// plaintext port, credentials or a vhost the broker refuses, TLS
    /// material that cannot be read. A refused or reset connection, or a
    /// broker that does not answer in time, is worth retrying.
    pub fn is_permanent(&self) -> bool {
        match self {
            BrokerError::Tls(_) | BrokerError::Refused { .. } => true,
            BrokerError::Connect { detail, .. } => permanent_detail(detail),
            BrokerError::Amqp { source, .. } => permanent_detail(&source.to_string()),
            _ => false,
        }
    }
}

/// Whether a connection failure's words say no retry can mend it.
fn permanent_detail(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase().replace(['-', ' '], "_");
    [
        "tls_failed",
        "access_refused",
        "not_allowed",
        "invalidcertificate",
        "unknownissuer",
    ]
    .iter()
    .any(|sign| d.contains(sign))
}

pub(crate) fn amqp(what: impl Into<String>) -> impl FnOnce(lapin::Error) -> BrokerError {
    let what = what.into();
    move |source| BrokerError::Amqp { what, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_no_retry_mends_is_told_from_a_broker_away() {
        // The broker's and the TLS layer's own words, as seen from lapin.
        for permanent in [
            "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile.",
            "NOT_ALLOWED - vhost nosuchvhost not found",
            "TLS failed: received corrupt message of type InvalidContentType; is that port a TLS listener?",
        ] {
            assert!(permanent_detail(permanent), "{permanent}");
        }
        for away in [
            // A queue homed on a cluster node that died: back with the node.
            "NOT_FOUND - home node 'rc2@localhost' of durable queue 'q' in vhost '/' is down or inaccessible",
            "Connection refused (os error 111)",
            "connection reset by peer",
            "timed out",
        ] {
            assert!(!permanent_detail(away), "{away}");
        }
    }
}
