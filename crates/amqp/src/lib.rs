//! The fleet's broker, RabbitMQ, as the rest of the code needs it: the
//! topology of [`autoeval_proto::fleet`] declared, messages published with
//! `mandatory` and publisher confirms (a nack or a return is an error, never
//! a silent success), messages (bundles of tasks) consumed with a prefetch
//! and acknowledged one by one, and refused messages kept as dead letters
//! with their reason.
//!
//! A lost connection surfaces as an error from whatever was in progress;
//! callers reconnect with [`Broker::connect_with_backoff`] and declare and
//! subscribe again (the broker redelivers what was not acknowledged).

mod bounded;
mod broker;
mod bundle;
mod dead;
mod declare;
mod delivery;
mod error;
mod headers;
mod hold;
mod nodes;
mod transport;

pub use bounded::OPERATION_TIMEOUT;
pub use broker::{Broker, CONFIRM_TIMEOUT};
pub use bundle::{bundle_messages, Message};
pub use dead::DeadLetter;
pub use delivery::{Consumer, Task};
pub use error::{BrokerError, PERMANENT_TRIES};
pub use headers::Meta;
pub use hold::{prefetch_for, InHand};
pub use nodes::{connections, Connections};
pub use transport::{route_translate, route_verify, AmqpDelivery, AmqpInbox, AmqpOutbox};

/// The URL without its password or query, for messages and logs.
pub use autoeval_proto::fleet::redact_url as redact;
