//! Where the command line's text goes: stdout and stderr, or, for a
//! command the Python package runs, a buffer that becomes its result's
//! `text`. The binary and the package share every command's code; only
//! this switch tells them apart.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once by the Python package: the process is Python's.
static EMBEDDED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's kept text, while a job runs [`embedded`].
    static KEPT: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Where this thread's job reports its progress, while it runs
    /// [`embedded`].
    static PROGRESS: RefCell<Option<ProgressSink>> = const { RefCell::new(None) };
}

/// Receives a job's progress as (done, total), from any of its threads.
pub type ProgressSink = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Marks the process as Python's (the package does so on import): no
/// progress is drawn and no Ctrl-C handler installed, so that Python's
/// KeyboardInterrupt stays Python's; the package sets the command line's
/// Ctrl-C flag itself.
pub fn embed() {
    EMBEDDED.store(true, Ordering::Relaxed);
}

/// Runs `job` as the Python package runs a command ([`embed`]): its text
/// and notes kept on this thread (returned beside its answer) instead of
/// printed, and its progress passed to `progress` instead of drawn.
pub fn embedded<T>(progress: Option<ProgressSink>, job: impl FnOnce() -> T) -> (T, String) {
    embed();
    KEPT.with(|k| *k.borrow_mut() = Some(String::new()));
    PROGRESS.with(|p| *p.borrow_mut() = progress);
    let answer = job();
    PROGRESS.with(|p| p.borrow_mut().take());
    let text = KEPT.with(|k| k.borrow_mut().take()).unwrap_or_default();
    (answer, text)
}

/// Where the job on this thread reports its progress ([`embedded`]).
pub fn progress_sink() -> Option<ProgressSink> {
    PROGRESS.with(|p| p.borrow().clone())
}

/// The command's text: to stdout, or kept ([`embedded`]).
pub fn print_text(text: &str) {
    let kept = KEPT.with(|k| k.borrow_mut().as_mut().map(|buf| buf.push_str(text)));
    if kept.is_none() {
        print!("{text}");
    }
}

/// A note beside the text (the engine's choice, a caveat): to stderr, or
/// kept with the text ([`embedded`]).
pub fn note(text: &str) {
    let line = format!("{text}\n");
    let kept = KEPT.with(|k| k.borrow_mut().as_mut().map(|buf| buf.push_str(&line)));
    if kept.is_none() {
        eprint!("{line}");
    }
}

/// Whether the process is Python's ([`embed`]).
pub fn is_embedded() -> bool {
    EMBEDDED.load(Ordering::Relaxed)
}
