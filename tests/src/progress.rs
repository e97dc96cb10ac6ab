//! Following a fleet run from the outside: its progress lines as they come, and `status`.

use crate::fleet::Fleet;
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// `autoeval run --fleet` on a few ksat items of the fleet's model, with a
/// progress line every second.
pub fn follow(fleet: &Fleet) -> Child {
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = fleet.small_run(&fleet.model, "ksat", &out);
    args.extend(fleet.on_fleet());
    args.extend(["--plain", "--log-every", "1", "--worker-wait-s", "0"]);
    fleet.autoeval(&args)
}

/// The lines the command writes on stderr, as they come.
pub fn lines_of(child: &mut Child) -> Receiver<String> {
    let stderr = child.stderr.take().expect("its stderr");
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    said
}

/// The first line that `wanted` accepts, within two minutes.
pub fn first_line(said: &Receiver<String>, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    loop {
        let line = said
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no line {what}"));
        if wanted(&line) {
            eprintln!("{line}");
            return line;
        }
    }
}

/// The first progress line that `wanted` accepts.
pub fn progress_line(said: &Receiver<String>, what: &str, wanted: impl Fn(&str) -> bool) -> String {
    first_line(said, &format!("of progress {what}"), |l| {
        l.starts_with("run: ") && wanted(l)
    })
}

/// The number before `after` in `line`: `12` in "12 translated".
pub fn count_before(line: &str, after: &str) -> u64 {
    let at = line
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} in {line}"));
    line[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.split('/').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before {after:?} in {line}"))
}

/// `autoeval status` on the fleet's run, which must succeed.
pub fn status(fleet: &Fleet) -> String {
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = vec!["status", &out];
    args.extend(fleet.on_fleet());
    let status = fleet.autoeval_output(&args);
    assert!(status.status.success(), "{status:?}");
    String::from_utf8_lossy(&status.stdout).into_owned()
}
