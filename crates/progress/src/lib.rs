//! Progress of a run: bars per stage on a terminal, periodic log lines
//! otherwise, nothing with `--quiet`.

use autoeval_engine::local::Observer;
use autoeval_proto::VerifyTask;
use autoeval_proto::{ResultRecord, Verdict};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Display {
    /// Bars on stderr.
    Bars,
    /// A log line every so many seconds.
    Log(Duration),
    /// Nothing.
    Quiet,
}

impl Display {
    /// Bars on a terminal, log lines every `every` otherwise, or nothing.
    pub fn choose(quiet: bool, plain: bool, every: Duration) -> Display {
        if quiet {
            Display::Quiet
        } else if plain || !std::io::stderr().is_terminal() {
            Display::Log(every)
        } else {
            Display::Bars
        }
    }
}

#[derive(Default)]
struct Tally {
    translated: AtomicUsize,
    recorded: AtomicUsize,
    equivalent: AtomicUsize,
    measured: AtomicUsize,
    /// What the run waits on, when it waits (a stage nobody consumes, a stall).
    waiting_on: std::sync::Mutex<String>,
    /// Where the run's provider batches stand, when it has any.
    batches: std::sync::Mutex<String>,
}

/// Counts rounds and draws them.
pub struct Progress {
    tally: Arc<Tally>,
    translate: ProgressBar,
    record: ProgressBar,
    _multi: MultiProgress,
    stop: Arc<AtomicBool>,
}

impl Progress {
    /// Progress over `total` first-round tasks (later rounds extend the bars).
    pub fn new(total: usize, display: Display) -> Progress {
        let multi = MultiProgress::with_draw_target(match display {
            Display::Bars => ProgressDrawTarget::stderr(),
            _ => ProgressDrawTarget::hidden(),
        });
        let style = |verb: &str| {
            ProgressStyle::with_template(&format!(
                "{{prefix:>9}} [{{bar:30}}] {{pos}}/{{len}} {verb} ({{per_sec}}, ETA {{eta}}) {{msg}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ")
        };
        let translate = multi.add(ProgressBar::new(total as u64).with_style(style("translated")));
        translate.set_prefix("translate");
        let record = multi.add(ProgressBar::new(total as u64).with_style(style("verified")));
        record.set_prefix("verify");
        let tally = Arc::new(Tally::default());
        let stop = Arc::new(AtomicBool::new(false));
        if let Display::Log(every) = display {
            let (tally, stop, plan) = (tally.clone(), stop.clone(), record.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                let mut last = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    if last.elapsed() >= every {
                        last = Instant::now();
                        // The plan grows as later rounds are recorded.
                        let total = plan.length().map_or(total, |n| n as usize);
                        eprintln!("{}", line(&tally, total, started.elapsed()));
                    }
                }
            });
        }
        Progress {
            tally,
            translate,
            record,
            _multi: multi,
            stop,
        }
    }

    /// Names what the run waits on in the progress line (empty: nothing).
    pub fn waiting_on(&self, why: &str) {
        name_wait(&self.tally, &self.translate, why);
    }

    /// Names each rate-limit wait of `waits` in the progress line while it lasts.
    pub fn name_rate_waits(&self, waits: Arc<autoeval_models::Waits>) {
        let (tally, bar, stop) = (
            self.tally.clone(),
            self.translate.clone(),
            self.stop.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let now = autoeval_models::describe_waits(&waits.current());
                name_wait(&tally, &bar, &now);
                std::thread::sleep(Duration::from_millis(250));
            }
        });
    }

    /// Shows where the run's provider batches stand (nothing while it has none).
    pub fn show_batches(&self, counts: &autoeval_models::BatchCounts) {
        let line = counts.line(unix_now()).unwrap_or_default();
        if let Ok(mut b) = self.tally.batches.lock() {
            if *b == line {
                return;
            }
            *b = line;
        }
        self.translate.set_message(translate_message(&self.tally));
    }

    /// Shows the batches `counts` gives every second while the run goes on.
    pub fn follow_batches(
        self: &Arc<Self>,
        counts: impl Fn() -> autoeval_models::BatchCounts + Send + 'static,
    ) {
        let (me, stop) = (self.clone(), self.stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                me.show_batches(&counts());
                std::thread::sleep(Duration::from_secs(1));
            }
        });
    }

    /// Stops drawing.
    pub fn finish(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.translate.finish_and_clear();
        self.record.finish_and_clear();
    }
}

fn name_wait(tally: &Tally, bar: &ProgressBar, why: &str) {
    if let Ok(mut w) = tally.waiting_on.lock() {
        if *w == why {
            return;
        }
        *w = why.to_string();
    }
    bar.set_message(translate_message(tally));
}

/// The translate bar's message: what the run waits on, then its batches.
fn translate_message(tally: &Tally) -> String {
    let waiting = tally
        .waiting_on
        .lock()
        .map(|w| w.clone())
        .unwrap_or_default();
    let batches = tally.batches.lock().map(|b| b.clone()).unwrap_or_default();
    [waiting, batches]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The accuracy so far, and the rounds that measure nothing (an API
/// failure, a verifier error or a timeout), which `rerun --failed` redoes.
fn accuracy(t: &Tally) -> String {
    let m = t.measured.load(Ordering::Relaxed);
    let failed = t.recorded.load(Ordering::Relaxed).saturating_sub(m);
    let failed = match failed {
        0 => String::new(),
        n => format!("{n} failed (rerun --failed redoes them)"),
    };
    if m == 0 {
        return failed;
    }
    let accuracy = format!(
        "accuracy {:.1}%",
        100.0 * t.equivalent.load(Ordering::Relaxed) as f64 / m as f64
    );
    [accuracy, failed]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `prefix` and the text `slot` holds, or nothing when it holds none.
fn clause(slot: &std::sync::Mutex<String>, prefix: &str) -> String {
    slot.lock()
        .map(|text| {
            if text.is_empty() {
                String::new()
            } else {
                format!("{prefix}{text}")
            }
        })
        .unwrap_or_default()
}

fn line(t: &Tally, total: usize, elapsed: Duration) -> String {
    let done = t.recorded.load(Ordering::Relaxed);
    let waiting = clause(&t.waiting_on, "; waiting: ");
    let batches = clause(&t.batches, "; ");
    let accuracy = accuracy(t);
    format!(
        "run: {} translated, {done}/{total} verified ({}/s){}{accuracy}{waiting}{batches}",
        t.translated.load(Ordering::Relaxed),
        rate(done as f64 / elapsed.as_secs_f64().max(1e-9)),
        if accuracy.is_empty() { "" } else { " " },
    )
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A rate with three significant digits or so: `1234`, `56.7`, `0.25`.
pub fn rate(per_s: f64) -> String {
    if per_s >= 100.0 {
        format!("{per_s:.0}")
    } else if per_s >= 10.0 {
        format!("{per_s:.1}")
    } else {
        format!("{per_s:.2}")
    }
}

impl Progress {
    /// Shows a fleet's progress as read from its store: rounds translated
    /// and recorded so far, and how many recorded rounds kept the meaning
    /// out of those that measure the model.
    pub fn show(&self, translated: u64, recorded: u64, equivalent: u64, measured: u64) {
        let t = &self.tally;
        // Rounds past the first extend the plan as they are recorded; a
        // task translated twice (delivered again after a worker was lost)
        // is one round trip, so translated never passes the plan.
        let plan = self.record.length().unwrap_or(u64::MAX).max(recorded);
        let translated = translated.min(plan);
        t.translated.store(translated as usize, Ordering::Relaxed);
        t.recorded.store(recorded as usize, Ordering::Relaxed);
        t.equivalent.store(equivalent as usize, Ordering::Relaxed);
        t.measured.store(measured as usize, Ordering::Relaxed);
        for (bar, n) in [(&self.translate, translated), (&self.record, recorded)] {
            if bar.length().is_some_and(|len| n > len) {
                bar.set_length(n);
            }
            bar.set_position(n);
        }
        self.record.set_message(accuracy(t));
    }
}

impl Observer for Progress {
    fn translated(&self, task: &VerifyTask) {
        self.tally.translated.fetch_add(1, Ordering::Relaxed);
        if task.task.round > 1 {
            self.translate.inc_length(1);
        }
        self.translate.inc(1);
    }

    fn recorded(&self, record: &ResultRecord) {
        let t = &self.tally;
        t.recorded.fetch_add(1, Ordering::Relaxed);
        if !record.verdict.is_infrastructure_failure() {
            t.measured.fetch_add(1, Ordering::Relaxed);
        }
        if record.verdict == Verdict::Equivalent {
            t.equivalent.fetch_add(1, Ordering::Relaxed);
        }
        if record.round > 1 {
            self.record.inc_length(1);
        }
        self.record.inc(1);
        self.record.set_message(accuracy(t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_failures_and_no_count_passes_the_plan() {
        let progress = Progress::new(5, Display::Quiet);
        // A task delivered twice is translated twice: the line says 5, not 9.
        progress.show(9, 4, 2, 3);
        let text = line(&progress.tally, 5, Duration::from_secs(1));
        assert!(
            text.starts_with("run: 5 translated, 4/5 verified"),
            "{text}"
        );
        assert!(text.contains("accuracy 66.7%"), "{text}");
        assert!(text.contains("1 failed"), "{text}");
        // A later round extends the plan as it is recorded.
        progress.show(7, 7, 7, 7);
        let plan = progress.record.length().unwrap() as usize;
        let text = line(&progress.tally, plan, Duration::from_secs(1));
        assert!(
            text.starts_with("run: 7 translated, 7/7 verified"),
            "{text}"
        );
        assert!(!text.contains("failed"), "{text}");
        progress.finish();
    }
}
