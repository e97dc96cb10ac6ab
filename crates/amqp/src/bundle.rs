//! Tasks made into broker messages: one message per bundle of tasks that
//! share a routing key and a shard, each message naming its units.

use crate::Meta;
use autoeval_proto::fleet::{bundles, BUNDLE_SIZE};
use autoeval_proto::wire::{encode, Header, MessageKind, WireError};
use autoeval_proto::RoundKey;
use serde::Serialize;

/// One message ready to publish: routing key, body, headers.
pub type Message = (String, Vec<u8>, Meta);

/// The messages of `kind` for `run` that carry `tasks`, in bundles of up
/// to [`BUNDLE_SIZE`]; `route` gives each task's routing key and its
/// round (whose item decides the shard).
pub fn bundle_messages<T: Serialize>(
    run: &str,
    kind: MessageKind,
    tasks: Vec<T>,
    route: impl Fn(&T) -> (String, RoundKey),
) -> Result<Vec<Message>, WireError> {
    let header = Header {
        kind,
        run: run.to_string(),
    };
    let routed = tasks.into_iter().map(|t| (route(&t), t));
    let grouped = bundles(
        routed,
        |((key, round), _)| (key.clone(), round.unit.shard()),
        BUNDLE_SIZE,
    );
    grouped
        .into_iter()
        .map(|bundle| {
            let key = bundle[0].0 .0.clone();
            let (routes, tasks): (Vec<_>, Vec<T>) = bundle.into_iter().unzip();
            let meta = Meta {
                run: run.to_string(),
                units: routes
                    .into_iter()
                    .map(|(_, round)| round.to_string())
                    .collect(),
            };
            Ok((key, encode(&header, &tasks)?, meta))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_proto::wire::decode;

    #[test]
    fn each_message_carries_one_key_and_shard_and_names_its_units_in_order() {
        // Items whose shards differ, for two routing keys.
        let tasks: Vec<(String, String)> = (0..40)
            .map(|i| {
                (
                    format!("k{}", i % 2),
                    format!("plogic-0-0-{i}|m|zero-shot|0#1"),
                )
            })
            .collect();
        let route = |t: &(String, String)| (t.0.clone(), t.1.parse::<RoundKey>().unwrap());
        let messages = bundle_messages("r", MessageKind::Translate, tasks.clone(), route).unwrap();
        let mut seen = Vec::new();
        for (key, bytes, meta) in &messages {
            let (header, body): (Header, Vec<(String, String)>) =
                decode(bytes, MessageKind::Translate).unwrap();
            assert_eq!(header.run, "r");
            assert!(!body.is_empty() && body.len() <= BUNDLE_SIZE);
            assert!(body.iter().all(|(k, _)| k == key));
            let shards: std::collections::BTreeSet<u32> =
                body.iter().map(|t| route(t).1.unit.shard()).collect();
            assert_eq!(shards.len(), 1, "one shard per message");
            let units: Vec<String> = body.iter().map(|(_, u)| u.clone()).collect();
            assert_eq!(meta.units, units, "the headers name the body's units");
            seen.extend(body);
        }
        seen.sort();
        let mut all = tasks;
        all.sort();
        assert_eq!(seen, all, "every task in exactly one message");
        assert!(messages.len() < 40, "tasks share messages");
    }
}
