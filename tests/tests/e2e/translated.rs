//! A fleet run counts rounds translated apart from rounds recorded, in its
//! progress line and in `status`, and its summary has the fleet's busy
//! times. Its own test binary: a verifier of another test would prove its
//! rounds, which here must wait for one.

use autoeval_e2e::fleet::Fleet;
use autoeval_e2e::progress::{count_before, follow, lines_of, progress_line, status};

#[test]
fn rounds_translated_are_counted_apart_from_rounds_recorded_and_busy_times_are_measured() {
    let _turn = autoeval_e2e::turn(module_path!());
    // No verifier at first: the rounds are translated and wait to be proved.
    let mut fleet = Fleet::new("translated-apart", &[]);
    fleet.start_worker(4);
    let mut coordinator = follow(&fleet);
    let said = lines_of(&mut coordinator);
    let line = progress_line(&said, "with rounds translated and none verified", |l| {
        l.contains("start `autoeval-verifier`") && count_before(l, " translated") > 0
    });
    assert_eq!(count_before(&line, " verified"), 0, "{line}");
    let now = status(&fleet);
    eprintln!("{now}");
    let told = now
        .lines()
        .find(|l| l.contains("round trips translated"))
        .unwrap_or_else(|| panic!("status counts no translation: {now}"));
    assert!(count_before(told, " round trips translated") > 0, "{told}");
    assert!(now.contains(", 0 rounds recorded"), "{now}");

    fleet.start_verifier(1);
    let ended = coordinator.wait().expect("the run ends");
    let rest: Vec<String> = said.try_iter().collect();
    assert!(ended.success(), "{}", rest.join("\n"));
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fleet.out.join("summary.json")).expect("the summary"),
    )
    .expect("JSON");
    let stages = &summary["this_session"]["stages"];
    for stage in ["translate_s", "verify_s", "record_s"] {
        let busy = stages[stage].as_f64().unwrap_or(0.0);
        assert!(busy > 0.0, "{stage} is {busy}: {stages}");
    }
    let done = rest
        .iter()
        .find(|l| l.contains("busy s:"))
        .unwrap_or_else(|| panic!("no busy line: {}", rest.join("\n")));
    assert!(!done.contains("translate 0.00,"), "{done}");
}
