//! `fleet`: the mark of a run made on a fleet, and where that fleet is, so
//! that `status` and `rerun --fleet` find the run's broker and Redis
//! without being told again. Addresses are kept without their passwords:
//! a directory is shared and copied, a password is not.

use crate::{io, Result, RunDir, RunDirError};
use autoeval_proto::fleet::without_password;
use serde::{Deserialize, Serialize};

/// Where a fleet run's broker and Redis are, as its directory keeps them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct FleetAddresses {
    /// The broker's URL, without its password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amqp: Option<String>,
    /// Redis's URL, without its password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis: Option<String>,
    /// The fleet's name, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet_name: Option<String>,
}

impl FleetAddresses {
    /// The addresses of a fleet, each URL without its password.
    pub fn of(amqp: &str, redis: &str, fleet_name: Option<&str>) -> FleetAddresses {
        FleetAddresses {
            amqp: without_password(amqp),
            redis: without_password(redis),
            fleet_name: fleet_name.map(String::from),
        }
    }
}

const HEADER: &str = "# This run runs on a fleet. `autoeval status DIR` and `autoeval rerun DIR --failed --fleet`\n\
# reach it at these addresses unless --amqp, --redis or --fleet-name (or their variables) say otherwise;\n\
# passwords are not kept here: give them as the fleet's processes take them (AUTOEVAL_AMQP_FILE …).\n";

impl RunDir {
    /// `fleet`: present in the directory of a run that runs on a fleet,
    /// holding where that fleet is.
    pub fn fleet_marker(&self) -> std::path::PathBuf {
        self.0.join("fleet")
    }

    /// Whether the run runs on a fleet (its redo and report go through it too).
    pub fn is_fleet(&self) -> bool {
        self.fleet_marker().exists()
    }

    /// Marks the run as a fleet's, at `addresses`.
    pub fn mark_fleet(&self, addresses: &FleetAddresses) -> Result<()> {
        let path = self.fleet_marker();
        let body = toml::to_string(addresses).map_err(|e| RunDirError::Encode(e.to_string()))?;
        std::fs::write(&path, format!("{HEADER}{body}")).map_err(io("write", &path))
    }

    /// Where the run's fleet is, as its directory keeps it; nothing for a
    /// run marked before the directory kept addresses.
    pub fn fleet_addresses(&self) -> Result<FleetAddresses> {
        let path = self.fleet_marker();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
            Err(e) => return Err(io("read", &path)(e)),
        };
        Ok(toml::from_str(&text).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_kept_without_passwords_and_read_back() {
        let dir = std::env::temp_dir().join(format!("fleet-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = RunDir(dir.clone());
        assert_eq!(run.fleet_addresses().unwrap(), FleetAddresses::default());
        let kept = FleetAddresses::of(
            "amqps://app:s3cret@mq.internal:5671/prod?auth_mechanism=plain&password=x2",
            "redis://:hunter2@cache:6379/12",
            Some("nightly"),
        );
        run.mark_fleet(&kept).unwrap();
        let text = std::fs::read_to_string(run.fleet_marker()).unwrap();
        assert!(!text.contains("s3cret") && !text.contains("hunter2") && !text.contains("x2"));
        let read = run.fleet_addresses().unwrap();
        assert_eq!(read, kept);
        assert_eq!(
            read.amqp.as_deref(),
            Some("amqps://app@mq.internal:5671/prod?auth_mechanism=plain")
        );
        assert_eq!(read.redis.as_deref(), Some("redis://cache:6379/12"));
        assert!(run.is_fleet());
        // A marker of an earlier build, prose only, names no address.
        std::fs::write(run.fleet_marker(), "This run runs on a fleet.\n").unwrap();
        assert_eq!(run.fleet_addresses().unwrap(), FleetAddresses::default());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
