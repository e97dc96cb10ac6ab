//! `budget.json`: the caps a one-machine run was given, so that a run
//! started again on its directory, or resumed with other caps, keeps them.

use crate::{io, Result, RunDir};
use autoeval_engine::budget::Caps;
use std::path::PathBuf;

impl RunDir {
    /// `budget.json`: the run's caps, when it has any.
    pub fn caps_file(&self) -> PathBuf {
        self.0.join("budget.json")
    }

    /// The caps the run was given; none when it was given none.
    pub fn caps(&self) -> Result<Caps> {
        let path = self.caps_file();
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| crate::RunDirError::Io {
                verb: "read",
                path,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Caps::default()),
            Err(e) => Err(io("read", &path)(e)),
        }
    }

    /// Keeps `caps` as the run's; none removes the file.
    pub fn keep_caps(&self, caps: Caps) -> Result<()> {
        let path = self.caps_file();
        if !caps.any() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", &path)(e)),
                _ => Ok(()),
            };
        }
        let text = serde_json::to_string_pretty(&caps).unwrap_or_default();
        std::fs::write(&path, text + "\n").map_err(io("write", &path))
    }
}
