//! Where a run's fleet is: kept in its directory when the run is claimed,
//! and taken from there by `status`, `rerun --fleet` and `resume --fleet`
//! where the command line names no other address.

use crate::FleetArgs;
use anyhow::Result;

impl FleetArgs {
    /// Where this fleet is, as a run's directory keeps it (no password).
    pub fn addresses(&self) -> autoeval_run_dir::FleetAddresses {
        autoeval_run_dir::FleetAddresses::of(
            &self.broker.amqp,
            &self.store.redis,
            self.broker.fleet_name.as_deref(),
        )
    }

    /// These settings, where `given` does not name an address, at the
    /// addresses `dir`'s run was made on: `status DIR` and `rerun DIR
    /// --fleet` reach the run's own fleet unless told another.
    pub fn at_run_addresses(
        &self,
        dir: &autoeval_run_dir::RunDir,
        given: impl Fn(&str) -> bool,
    ) -> Result<FleetArgs> {
        let kept = dir.fleet_addresses()?;
        let mut fleet = self.clone();
        // A kept address is the asked one but for its password (the
        // default's, say): the asked one, password and all, reaches it.
        let other = |asked: &str, kept: &str| {
            autoeval_proto::fleet::without_password(asked).as_deref() != Some(kept)
        };
        match kept.amqp {
            Some(amqp) if !given("amqp") && other(&fleet.broker.amqp, &amqp) => {
                fleet.broker.amqp = amqp;
            }
            _ => {}
        }
        match kept.redis {
            Some(redis) if !given("redis") && other(&fleet.store.redis, &redis) => {
                fleet.store.redis = redis;
            }
            _ => {}
        }
        if !given("fleet_name") && kept.fleet_name.is_some() {
            fleet.broker.fleet_name = kept.fleet_name;
        }
        Ok(fleet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_run_dir::{FleetAddresses, RunDir};

    #[test]
    fn a_run_is_reached_at_its_kept_addresses_unless_the_command_line_names_others() {
        let dir = std::env::temp_dir().join(format!("fleet-addresses-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = RunDir(dir.clone());
        let asked = FleetArgs::default();
        // A run marked before directories kept addresses: as asked.
        std::fs::write(run.fleet_marker(), "This run runs on a fleet.\n").unwrap();
        let same = asked.at_run_addresses(&run, |_| false).unwrap();
        assert_eq!(same.store.redis, asked.store.redis);
        run.mark_fleet(&FleetAddresses::of(
            "amqp://app:pw@mq:5672/prod",
            "redis://cache:6379/12",
            Some("nightly"),
        ))
        .unwrap();
        let kept = asked.at_run_addresses(&run, |_| false).unwrap();
        assert_eq!(kept.store.redis, "redis://cache:6379/12");
        assert_eq!(kept.broker.amqp, "amqp://app@mq:5672/prod");
        assert_eq!(kept.broker.fleet_name.as_deref(), Some("nightly"));
        // A flag given wins.
        let told = asked.at_run_addresses(&run, |id| id == "redis").unwrap();
        assert_eq!(told.store.redis, asked.store.redis);
        assert_eq!(told.broker.amqp, "amqp://app@mq:5672/prod");
        // The asked address but for its password keeps the password.
        let mut with_password = asked.clone();
        with_password.broker.amqp = "amqp://app:pw@mq:5672/prod".into();
        let kept = with_password.at_run_addresses(&run, |_| false).unwrap();
        assert_eq!(kept.broker.amqp, "amqp://app:pw@mq:5672/prod");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
