//! The terminal: the text on stdout, notes and progress on stderr, and
//! Ctrl-C.
//!
//! On a terminal, a bar that redraws in place; elsewhere (a Slurm log, a
//! pipe) a plain line at a modest interval, so that a log shows a long job
//! moving without filling up with redraws. Run from the Python package
//! (`text::console::embedded`), the text and notes are kept for the
//! result, progress goes to the caller's sink instead of a bar, and no
//! Ctrl-C handler is installed: Python's own stops the run.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::text::console::{ProgressSink, is_embedded, note, progress_sink};

/// Seconds between progress lines when stderr is not a terminal.
pub const INTERVAL_VARIABLE: &str = "TETHER_SWEEP_PROGRESS_INTERVAL_S";
const DEFAULT_INTERVAL_S: f64 = 30.0;

pub struct ProgressBar {
    what: &'static str,
    bar: Option<indicatif::ProgressBar>,
    /// Embedded: the Python caller's.
    sink: Option<ProgressSink>,
    /// Line mode: when the last line was printed, and the interval.
    last_line: Mutex<Instant>,
    interval: Duration,
    started: Instant,
}

impl ProgressBar {
    /// Progress over `what` (e.g. "simulations"); the total comes with each
    /// report.
    pub fn new(what: &'static str) -> Self {
        let drawn = std::io::stderr().is_terminal() && !is_embedded();
        let bar = drawn.then(|| {
            indicatif::ProgressBar::new(0).with_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}} elapsed, ETA {{eta}}"
                ))
                .expect("valid template"),
            )
        });
        let interval_s = std::env::var(INTERVAL_VARIABLE)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .unwrap_or(DEFAULT_INTERVAL_S);
        let now = Instant::now();
        Self {
            what,
            bar,
            sink: progress_sink(),
            last_line: Mutex::new(now),
            interval: Duration::from_secs_f64(interval_s),
            started: now,
        }
    }

    pub fn report(&self, done: u64, total: u64) {
        if is_embedded() {
            if let Some(sink) = &self.sink {
                sink(done, total);
            }
            return;
        }
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(done);
            return;
        }
        let mut last = self.last_line.lock().expect("progress lock");
        if last.elapsed() < self.interval && done < total {
            return;
        }
        *last = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if done > 0 {
            format!(
                ", ETA {:.0} s",
                elapsed * (total.saturating_sub(done)) as f64 / done as f64
            )
        } else {
            String::new()
        };
        eprintln!(
            "progress: {done}/{total} {} ({:.0} %), {elapsed:.0} s elapsed{eta}",
            self.what,
            100.0 * done as f64 / total.max(1) as f64
        );
    }

    /// A line of its own on stderr, above the bar on a terminal.
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => note(line),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The flag Ctrl-C sets, with the handler installed: the job stops at its
/// next stopping point, saves what finished and says how to go on. A second
/// Ctrl-C quits at once.
pub fn interrupt_flag() -> &'static AtomicBool {
    static FLAG: AtomicBool = AtomicBool::new(false);
    static INSTALL: std::sync::Once = std::sync::Once::new();
    if is_embedded() {
        // Python's SIGINT handler stays: its KeyboardInterrupt sets the flag.
        return &FLAG;
    }
    INSTALL.call_once(|| {
        let result = ctrlc::set_handler(|| {
            if FLAG.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
            eprintln!(
                "\ninterrupt: stopping after the running simulations or GPU dispatch (Ctrl-C again to quit now)"
            );
        });
        if let Err(e) = result {
            eprintln!("warning: Ctrl-C will not stop the run cleanly: {e}");
        }
    });
    &FLAG
}
