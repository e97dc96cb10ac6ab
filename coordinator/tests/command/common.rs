//! What the command's tests share: the binary, a run's records, and the
//! mock server's statistics (the server itself and free ports come from
//! the end-to-end helpers).

use autoeval_proto::ResultRecord;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use autoeval_e2e::fleet::{free_port, mock_server};

/// The `autoeval` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_autoeval");

/// `autoeval ARGS`, its output whatever its status.
pub fn autoeval(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("autoeval starts")
}

/// The records of the run in `dir`. A run killed mid-write may leave a
/// torn last line; it is not a record.
pub fn records(dir: &Path) -> Vec<ResultRecord> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results file");
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| serde_json::from_str(l).expect("each complete line is a record"))
        .collect()
}

/// The JSON the mock server on `port` answers at `path`.
pub fn get_json(port: u16, path: &str) -> Value {
    autoeval_e2e::fleet::get_json(&format!("http://127.0.0.1:{port}{path}"))
}

/// The README and every page of the user's guide: what a user reads.
pub fn user_doc_pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("the guide")
        .map(|e| e.expect("a page").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    pages
}
