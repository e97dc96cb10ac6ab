//! The command blocks of the README and the user's guide, run as a user
//! pastes them, so that the documentation cannot drift from the tool.
//!
//! A `sh` block either runs here (against the built-in models or the mock
//! server), or is a synopsis (its lines show `[--flag …]`), or is marked
//! ```` ```sh {no-run: WHY} ```` (a real provider, a machine's set-up). The
//! flags of synopses and marked blocks are held to the commands' help by
//! `cli::the_readme_names_every_command_and_no_flag_its_help_does_not_list`.
//! A line ending in `&` runs in the background until the block ends; a
//! trailing `# → TEXT` says what the command prints, which must appear in
//! its output; leading `NAME=value` words set the command's environment,
//! as a shell does; the mock server's port 8000 becomes a free one.

use crate::common::{free_port, user_doc_pages, BIN};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One fenced `sh` block.
struct Block {
    /// Its file and the line its fence opens on.
    place: String,
    /// What follows the language on the fence line.
    info: String,
    /// Its lines.
    body: String,
}

/// The `sh` blocks of `path`.
fn blocks_of(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut open: Option<(usize, String, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match open.take() {
            None => {
                if let Some(info) = line.strip_prefix("```sh") {
                    open = Some((i + 1, info.trim().to_string(), String::new()));
                }
            }
            Some((at, info, body)) if line.starts_with("```") => {
                let name = path.file_name().unwrap().to_string_lossy();
                out.push(Block {
                    place: format!("{name}:{at}"),
                    info,
                    body,
                });
            }
            Some((at, info, mut body)) => {
                body.push_str(line);
                body.push('\n');
                open = Some((at, info, body));
            }
        }
    }
    out
}

/// A line's command and what it says the command prints (`# → TEXT`).
fn command_of(line: &str) -> (&str, Option<&str>) {
    match line.split_once("  #") {
        Some((command, comment)) => {
            let said = comment.trim().strip_prefix("→").map(str::trim);
            (command.trim(), said)
        }
        None => (line.trim(), None),
    }
}

/// Whether `name` is a shell variable's name: `NAME` in `NAME=value`.
fn is_variable(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Waits until something listens on `port`.
fn listening(port: u16) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "nothing listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs a block's lines in `cwd`; the background ones end with it.
fn run_block(block: &Block, cwd: &Path) {
    let port = free_port().to_string();
    let mut background: Vec<Child> = Vec::new();
    for line in block.body.lines().filter(|l| !l.trim().is_empty()) {
        let (command, said) = command_of(line);
        let command = command.replace("8000", &port);
        let (command, behind) = match command.strip_suffix('&') {
            Some(c) => (c.trim().to_string(), true),
            None => (command, false),
        };
        let words = shlex::split(&command).unwrap_or_else(|| panic!("{}: {line}", block.place));
        let assignments = words
            .iter()
            .take_while(|w| w.split_once('=').is_some_and(|(name, _)| is_variable(name)))
            .count();
        let (env, words) = words.split_at(assignments);
        assert_eq!(
            words[0], "autoeval",
            "{}: a block that runs here runs autoeval: {line}",
            block.place
        );
        let mut child = Command::new(BIN);
        child.args(&words[1..]).current_dir(cwd);
        for assignment in env {
            let (name, value) = assignment.split_once('=').unwrap();
            child.env(name, value);
        }
        if behind {
            let spawned = child
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            background.push(spawned);
            if let Some(at) = words.iter().position(|w| w == "--port") {
                listening(words[at + 1].parse().unwrap());
            }
            continue;
        }
        let out = child.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "{}: `{line}` failed:\n{text}",
            block.place
        );
        if let Some(said) = said {
            assert!(
                text.contains(said),
                "{}: `{line}` does not print {said:?}:\n{text}",
                block.place
            );
        }
    }
    for mut child in background {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn every_command_block_of_the_readme_and_the_guide_runs_as_written() {
    let (mut found, mut ran, mut marked, mut synopses) = (0, 0, 0, 0);
    for page in user_doc_pages() {
        for block in blocks_of(&page) {
            found += 1;
            if let Some(why) = block.info.strip_prefix("{no-run:") {
                assert!(
                    why.trim_end_matches('}').trim().len() > 3,
                    "{}: a block marked not to run says why",
                    block.place
                );
                marked += 1;
            } else if block.body.lines().any(|l| command_of(l).0.contains("[-")) {
                synopses += 1;
            } else {
                let cwd = std::env::temp_dir().join(format!(
                    "autoeval-docs-{}-{}",
                    std::process::id(),
                    block.place.replace([':', '.'], "-")
                ));
                std::fs::create_dir_all(&cwd).unwrap();
                run_block(&block, &cwd);
                let _ = std::fs::remove_dir_all(&cwd);
                ran += 1;
            }
        }
    }
    println!(
        "command blocks: {found} found, {ran} run and passed, {synopses} synopses, {marked} marked not to run here"
    );
    assert!(ran >= 6, "{ran} blocks ran");
    assert_eq!(found, ran + synopses + marked);
}
