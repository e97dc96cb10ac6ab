//! `autoeval run --config FILE`: every flag of `run` is a key of the file,
//! a flag given on the command line wins over it, and a value of the wrong
//! type is refused with a message naming its key and the form it wants.

use crate::common::{autoeval, BIN};
use autoeval_e2e::{run_ok, scratch};
use std::path::Path;

/// Every long flag `autoeval run --help` lists, as written (`per-bucket`).
fn flags_of_run() -> Vec<String> {
    let help = String::from_utf8(autoeval(&["run", "--help"]).stdout).unwrap();
    let mut flags = Vec::new();
    for line in help.lines() {
        // An option's line is indented by at most six spaces; its help,
        // wrapped, by more (and may begin with another flag's name).
        let indent = line.len() - line.trim_start().len();
        let line = line.trim_start();
        if !line.starts_with('-') || indent > 6 {
            continue;
        }
        let Some(at) = line.find("--") else { continue };
        let name: String = line[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        flags.push(name);
    }
    assert!(flags.len() > 20, "too few flags read from the help: {help}");
    flags
}

/// A TOML value for each flag of `run`. A test that meets a flag it does
/// not know fails, so a new flag must be shown to be a key too.
fn value_of(flag: &str, dir: &Path) -> String {
    let path = |name: &str| format!("{:?}", dir.join(name).to_str().unwrap());
    match flag {
        "dataset" => r#"["ksat"]"#.into(),
        "model" => r#"["reference"]"#.into(),
        "prompt" => r#"["zero-shot"]"#.into(),
        "per-bucket" | "batches" | "rounds" | "repeats" | "concurrency" | "jobs" => "2".into(),
        "seed" => "7".into(),
        "sampling" => r#""algorithm-1""#.into(),
        "timeout-ms" => "5000".into(),
        "rlimit" => "1000000".into(),
        "request-timeout-s" => "30".into(),
        "max-attempts" => "3".into(),
        "temperature" => "0.2".into(),
        "max-tokens" => "512".into(),
        "copy-policy" => r#""flag""#.into(),
        "templates" => path("templates"),
        "prices" => path("prices.json"),
        "secrets" => path("secrets.json"),
        "cache" => path("cache"),
        "prompt-set" => r#""paper""#.into(),
        "protocol" => r#""paper""#.into(),
        "items" => path("items.jsonl"),
        "compress" | "parquet" => "true".into(),
        "until" => r#""decided""#.into(),
        "decide" => r#""order""#.into(),
        "precision" => "3.5".into(),
        "alpha" => "0.1".into(),
        "out" => path("run"),
        // The file asks for the plan only, so nothing below is reached.
        "dry-run" => "true".into(),
        "baseline" => "0.6".into(),
        "detect" => "0.05".into(),
        "quiet" | "plain" | "fleet" => "true".into(),
        "log-every" => "5".into(),
        "amqp" => r#""amqp://guest:guest@127.0.0.1:1/%2f""#.into(),
        "redis" => r#""redis://127.0.0.1:1""#.into(),
        "fleet-name" => r#""nightly""#.into(),
        "worker-wait-s" => "9".into(),
        "health-addr" => r#""127.0.0.1:1""#.into(),
        "linger-s" => "1".into(),
        "keep-s" => "60".into(),
        "budget-usd" => "2.5".into(),
        "budget-tokens" => "100000".into(),
        "no-budget" => "true".into(),
        other => panic!("no value for --{other} in this test: add one, and make it a config key"),
    }
}

#[test]
fn a_config_file_may_give_every_flag_of_run() {
    let dir = scratch("config-every-flag");
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(dir.join("prices.json"), "{}").unwrap();
    std::fs::write(dir.join("secrets.json"), "{}").unwrap();
    let items = dir.join("items.jsonl");
    run_ok(
        Path::new(BIN),
        &[
            "generate",
            "--dataset",
            "ksat",
            "--per-bucket",
            "1",
            "--batches",
            "1",
            "--quiet",
            "--out",
            items.to_str().unwrap(),
        ],
    );
    let flags = flags_of_run();
    // A budget and no-budget cannot stand together: no-budget goes in a file of its own.
    let (alone, rest): (Vec<_>, Vec<_>) = flags
        .iter()
        .filter(|f| !matches!(f.as_str(), "help" | "version" | "config"))
        .partition(|f| *f == "no-budget");
    for keys in [rest, alone] {
        let mut text = String::new();
        for flag in &keys {
            text.push_str(&format!("{flag} = {}\n", value_of(flag, &dir)));
        }
        if !text.contains("dry-run") {
            text.push_str("dry-run = true\nmodel = [\"reference\"]\n");
        }
        let file = dir.join("every.toml");
        std::fs::write(&file, &text).unwrap();
        let out = autoeval(&["run", "--config", file.to_str().unwrap()]);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success(),
            "the file was refused:\n{text}\n{stderr}"
        );
        // The plan printed is the file's: its one model, nothing sent.
        assert!(stdout.contains("reference"), "{stdout}");
        assert!(!dir.join("run").exists(), "a dry run writes no run");
    }
}

#[test]
fn the_files_command_keys_take_effect_and_a_flag_wins_over_them() {
    let dir = scratch("config-command-keys");
    let file = dir.join("run.toml");
    let from_file = dir.join("from-file");
    std::fs::write(
        &file,
        format!(
            "model = [\"reference\"]\ndataset = [\"ksat\"]\nprompt = [\"zero-shot\"]\nper-bucket = 1\nbatches = 1\nquiet = true\nout = {:?}\n",
            from_file.to_str().unwrap()
        ),
    )
    .unwrap();
    let out = autoeval(&["run", "--config", file.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        from_file.join("results.jsonl").exists(),
        "out from the file"
    );
    // quiet = true leaves only where the report is.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("units"), "quiet from the file: {stderr}");

    let from_flag = dir.join("from-flag");
    let out = autoeval(&[
        "run",
        "--config",
        file.to_str().unwrap(),
        "--out",
        from_flag.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(from_flag.join("results.jsonl").exists(), "--out wins");
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_and_form() {
    let dir = scratch("config-wrong-type");
    let file = dir.join("run.toml");
    for (text, key, form) in [
        ("budget-usd = \"two\"\n", "--budget-usd", "invalid float"),
        ("per-bucket = \"five\"\n", "--per-bucket", "invalid digit"),
        ("fleet = \"yes\"\n", "`fleet`", "true or false"),
        (
            "per-buckets = 5\n",
            "`per-buckets`",
            "no flag of `autoeval run`",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let out = autoeval(&["run", "--config", file.to_str().unwrap(), "--dry-run"]);
        assert_eq!(out.status.code(), Some(1), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        println!("{text}→ {stderr}");
        assert!(
            stderr.contains("run.toml") && stderr.contains(key) && stderr.contains(form),
            "{text}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
}
