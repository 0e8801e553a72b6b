//! `tether_sweep._native`: the library's jobs for the Python package
//! (`python/tether_sweep/`). Every command and `Objective` take their
//! keywords as Python values, converted by each keyword's kind into the
//! library's inputs (`keywords` for identify's, `commands` for the
//! others'), their errors naming the keyword; no command-line text
//! crosses. A job runs in the library, on a thread of its own, while the
//! caller's thread waits without the GIL and answers Ctrl-C.

mod commands;
mod keywords;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use arrow::pyarrow::{IntoPyArrow, Table as ArrowTable};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tether_sweep::cli::Cli;
use tether_sweep::engine::RunHooks;
use tether_sweep::io::capture::{self, Captured, CapturedFigure, CapturedTable, Keep};
use tether_sweep::jobs::progress;
use tether_sweep::named::Named;
use tether_sweep::text::console::{self, ProgressSink};
use tether_sweep::workflow::identify::{IdentifyReport, IdentifyRequest, check_outcome};
use tether_sweep::workflow::keywords::Door;
use tether_sweep::workflow::objective::Objective as LibObjective;
use tether_sweep::workflow::{Hooks, WorkflowError};

create_exception!(
    _native,
    ImplausibleFit,
    PyRuntimeError,
    "The best fit misses the data by more than its noise explains (the command line's exit code 4); `allow_implausible=True` returns the result instead."
);

/// How often the waiting thread looks for Ctrl-C and passes progress on.
const POLL: Duration = Duration::from_millis(100);

/// A library error as the Python exception its exit code stands for: 2
/// (the input) a ValueError, 4 (an implausible fit) `ImplausibleFit`, 130
/// KeyboardInterrupt, anything else a RuntimeError; the message is the
/// library's in Python's words ([`Door::words`]: `resume=True`, not
/// `--resume`).
fn to_py(err: anyhow::Error) -> PyErr {
    let message = Door::Python.words(&format!("{err:#}"));
    let code = (err.chain()).find_map(|cause| {
        cause
            .downcast_ref::<WorkflowError>()
            .map(WorkflowError::exit_code)
    });
    match code {
        Some(2) => PyValueError::new_err(message),
        Some(4) => ImplausibleFit::new_err(message),
        Some(130) => PyKeyboardInterrupt::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// Runs `job` on its own thread while this one waits without the GIL,
/// passing its progress (done, total) to `progress` and checking for
/// Ctrl-C every [`POLL`]: a KeyboardInterrupt sets `cancel`, which the job
/// answers at its next stopping point (between chunks, keeping what
/// finished), and is raised once it has stopped.
fn run_waiting<T: Send + 'static>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    job: impl FnOnce(ProgressSink, &AtomicBool) -> T + Send + 'static,
) -> PyResult<T> {
    let cancel = Arc::new(AtomicBool::new(false));
    let (sender, updates) = mpsc::channel::<(u64, u64)>();
    let (done_sender, done) = mpsc::channel::<T>();
    // Waited on without the GIL, from a closure that must be Sync.
    let done = std::sync::Mutex::new(done);
    let job_cancel = Arc::clone(&cancel);
    let worker = std::thread::spawn(move || {
        let sender = std::sync::Mutex::new(sender);
        let report: ProgressSink = Arc::new(move |d: u64, t: u64| {
            let _ = sender.lock().map(|s| s.send((d, t)));
        });
        let _ = done_sender.send(job(report, &job_cancel));
    });
    let mut interrupted: Option<PyErr> = None;
    let outcome = loop {
        let next = py.detach(|| done.lock().expect("one waiter").recv_timeout(POLL));
        if let Some(callback) = &progress {
            let mut last = None;
            while let Ok(update) = updates.try_recv() {
                last = Some(update);
            }
            if let Some((d, t)) = last
                && let Err(e) = callback.call1(py, (d, t))
            {
                interrupted.get_or_insert(e);
                cancel.store(true, Ordering::Relaxed);
                progress::interrupt_flag().store(true, Ordering::Relaxed);
            }
        }
        match next {
            Ok(value) => break Some(value),
            Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if interrupted.is_none()
            && let Err(e) = py.check_signals()
        {
            interrupted = Some(e);
            cancel.store(true, Ordering::Relaxed);
            // The flag the command line's own jobs answer (`run`).
            progress::interrupt_flag().store(true, Ordering::Relaxed);
        }
    };
    let joined = py.detach(|| worker.join());
    if let Some(e) = interrupted {
        return Err(e);
    }
    match (outcome, joined) {
        (Some(value), Ok(())) => Ok(value),
        _ => Err(PyRuntimeError::new_err(
            "the job stopped without an answer (a panic in tether-sweep: please report it)",
        )),
    }
}

/// Runs a command's `job` as the Python package runs it: on its own
/// thread ([`run_waiting`]), its text kept and its progress passed on
/// (`text::console::embedded`), and the tables it writes kept
/// (`io::capture`), written to their files too unless `memory_only`.
fn run_embedded<T: Send + 'static>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    memory_only: bool,
    job: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> PyResult<(T, String, Captured)> {
    let keep = if memory_only {
        Keep::MemoryOnly
    } else {
        Keep::Files
    };
    // A Ctrl-C of an earlier run is not this one's.
    progress::interrupt_flag().store(false, Ordering::Relaxed);
    let ((answer, captured), text) = run_waiting(py, progress, move |report, cancel| {
        console::embedded(Some(report), || capture::capturing(keep, || job(cancel)))
    })?;
    Ok((answer, Door::Python.words(&text), captured))
}

/// A written file's name for Python: its path below `out` without its
/// extension, or its stem.
fn name_below(path: &Path, out: Option<&Path>) -> String {
    out.and_then(|o| path.strip_prefix(o).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or(path.file_name().map_or(path, Path::new))
        .with_extension("")
        .to_string_lossy()
        .into_owned()
}

/// The kept figures by name (as [`name_below`]), each its PNG bytes and
/// its SVG text.
fn py_figures(figures: Vec<CapturedFigure>, out: Option<&Path>) -> Vec<(String, Vec<u8>, String)> {
    figures
        .into_iter()
        .map(|f| (name_below(&f.stem, out), f.png, f.svg))
        .collect()
}

/// The kept tables as `pyarrow.Table`s by name (as [`name_below`]), their
/// buffers handed over through the Arrow C data interface, not copied.
fn py_tables(
    py: Python<'_>,
    tables: Vec<CapturedTable>,
    out: Option<&Path>,
) -> PyResult<Vec<(String, Py<PyAny>)>> {
    tables
        .into_iter()
        .map(|t| {
            let name = name_below(&t.path, out);
            let schema = t.batch.schema();
            let table = ArrowTable::try_new(vec![t.batch], schema)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?
                .into_pyarrow(py)?;
            Ok((name, table.unbind()))
        })
        .collect()
}

/// What a command hands to Python: its terminal text, and its tables and
/// figures by name.
#[pyclass(frozen, get_all)]
struct RunOutcome {
    text: String,
    tables: Vec<(String, Py<PyAny>)>,
    figures: Vec<(String, Vec<u8>, String)>,
}

/// `simulate` with its keywords (`workflow::simulate::KEYWORDS`' names;
/// None values unset), writing to `out` (with `memory_only`, nothing is
/// written): its text and tables. Errors name the keyword.
#[pyfunction]
#[pyo3(signature = (keywords, out, memory_only=false))]
fn simulate(
    py: Python<'_>,
    keywords: Bound<'_, PyDict>,
    out: PathBuf,
    memory_only: bool,
) -> PyResult<RunOutcome> {
    let inputs = commands::simulate_inputs_of(&keywords, out.clone())?;
    embedded(py, None, memory_only, &out, move || {
        tether_sweep::jobs::simulate::execute(&inputs, Door::Python)
    })
}

/// `linearize` with its keywords (`workflow::linearize::KEYWORDS`'
/// names), writing into the folder `out` (with `memory_only`, nothing is
/// written): its text, tables and figures. Errors name the keyword.
#[pyfunction]
#[pyo3(signature = (keywords, out, memory_only=false))]
fn linearize(
    py: Python<'_>,
    keywords: Bound<'_, PyDict>,
    out: PathBuf,
    memory_only: bool,
) -> PyResult<RunOutcome> {
    let inputs = commands::linearize_inputs_of(&keywords, out.clone())?;
    embedded(py, None, memory_only, &out, move || {
        tether_sweep::jobs::linearize::execute(&inputs, Door::Python)
    })
}

/// `dataset synth` with its keywords (`workflow::synth::KEYWORDS`'
/// names), writing to the file `out` (with `memory_only`, nothing is
/// written), recording the call as `command`.
#[pyfunction]
#[pyo3(signature = (keywords, out, command, memory_only=false))]
fn dataset_synth(
    py: Python<'_>,
    keywords: Bound<'_, PyDict>,
    out: PathBuf,
    command: String,
    memory_only: bool,
) -> PyResult<RunOutcome> {
    let inputs = commands::synth_inputs_of(&keywords, out.clone(), command)?;
    embedded(py, None, memory_only, &out, move || {
        tether_sweep::jobs::synth::execute(&inputs, Door::Python)
    })
}

/// `swingup` with its keywords (`workflow::swingup::KEYWORDS`' names),
/// writing into the folder `out` (with `memory_only`, nothing is
/// written), its landscape's progress to `progress`; Ctrl-C stops it as
/// the command line's does.
#[pyfunction]
#[pyo3(signature = (keywords, out, progress=None, memory_only=false))]
fn swingup(
    py: Python<'_>,
    keywords: Bound<'_, PyDict>,
    out: PathBuf,
    progress: Option<Py<PyAny>>,
    memory_only: bool,
) -> PyResult<RunOutcome> {
    let inputs = commands::swingup_inputs_of(&keywords, out.clone())?;
    embedded(py, progress, memory_only, &out, move || {
        tether_sweep::jobs::swingup::execute(&inputs, Door::Python)
    })
}

/// `design` with its keywords (`workflow::design::KEYWORDS`' names),
/// writing into the folder `out` (with `memory_only`, nothing is
/// written): its text, table and figure. Errors name the keyword.
#[pyfunction]
#[pyo3(signature = (keywords, out, memory_only=false))]
fn design(
    py: Python<'_>,
    keywords: Bound<'_, PyDict>,
    out: PathBuf,
    memory_only: bool,
) -> PyResult<RunOutcome> {
    let inputs = commands::design_inputs_of(&keywords, out.clone())?;
    embedded(py, None, memory_only, &out, move || {
        tether_sweep::jobs::design::execute(&inputs, Door::Python)
    })
}

/// `summarize` of the folder `dir` with its keywords
/// (`workflow::summarize::KEYWORDS`' names): the merged tables and
/// figures, written where the command line writes them (`out`, else
/// DIR/_summary).
#[pyfunction]
fn summarize(py: Python<'_>, dir: PathBuf, keywords: Bound<'_, PyDict>) -> PyResult<RunOutcome> {
    let request = commands::summarize_request_of(dir, &keywords)?;
    let out = (request.out.clone()).unwrap_or_else(|| request.dir.join("_summary"));
    embedded(py, None, false, &out, move || {
        tether_sweep::jobs::summarize::execute(&request)
    })
}

/// `plot`: an identification's figures in `dir` drawn again.
#[pyfunction]
fn plot(py: Python<'_>, dir: PathBuf) -> PyResult<RunOutcome> {
    let out = dir.clone();
    embedded(py, None, false, &out, move || {
        tether_sweep::jobs::plot::execute(&dir)
    })
}

/// A command's `job` run in the library (its text and what it writes
/// kept: [`run_embedded`]), its outcome for Python.
fn embedded(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    memory_only: bool,
    out: &Path,
    job: impl FnOnce() -> anyhow::Result<()> + Send + 'static,
) -> PyResult<RunOutcome> {
    let (answer, text, captured) = run_embedded(py, progress, memory_only, move |_| job())?;
    answer.map_err(to_py)?;
    Ok(RunOutcome {
        text,
        tables: py_tables(py, captured.tables, Some(out))?,
        figures: py_figures(captured.figures, Some(out)),
    })
}

/// What `identify` hands to Python: what the terminal would print, its
/// tables and figures by name, and the summary as JSON.
#[pyclass(frozen, get_all)]
struct IdentifyOutcome {
    text: String,
    tables: Vec<(String, Py<PyAny>)>,
    figures: Vec<(String, Vec<u8>, String)>,
    summary_json: String,
    fit_warning: Option<String>,
}

/// The summary a notebook reads: the best candidate and the confidence
/// region, the refined values with their standard errors and profile
/// intervals, the tolerance and the engine.
fn summary_json(report: &IdentifyReport) -> String {
    serde_json::json!({
        "films": report.films,
        "best": report.summary.as_ref().map(|s| &s.best),
        "best_per_elements": report.summary.as_ref().map(|s| &s.best_per_elements),
        "confidence": report.summary.as_ref().map(|s| &s.confidence),
        "refined": report.refined,
        "weights": report.weights,
        "engine": report.engine,
        "tolerance_m": report.accuracy.as_ref().map(|a| a.tolerance_m),
        "implicit_method": report.accuracy.as_ref().map(|a| a.method.name()),
        "candidates": report.results.len(),
        "abandoned": report.results.iter().filter(|r| r.status.abandoned_at().is_some()).count(),
        "abandon": report.abandon,
        "simulations": report.simulations,
        "wall_s": report.wall_s,
        "fit_warning": report.fit_warning,
    })
    .to_string()
}

/// `identify` with its keywords (`keywords::KEYWORDS`' names; None
/// values unset), writing into `out`: runs it and returns its terminal
/// text, its tables and its summary. Errors are raised as the library
/// reports them, naming the keyword (see [`to_py`]).
#[pyfunction]
#[pyo3(signature = (keywords, out, progress=None, memory_only=false))]
fn identify(
    py: Python<'_>,
    keywords: Bound<'_, PyDict>,
    out: PathBuf,
    progress: Option<Py<PyAny>>,
    memory_only: bool,
) -> PyResult<IdentifyOutcome> {
    let inputs = keywords::inputs_of(&keywords, out)?;
    // An interrupted run's own message (what it kept, how to finish),
    // raised with the KeyboardInterrupt instead of a bare one.
    let stopped: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let said = Arc::clone(&stopped);
    let (answer, text, captured) = run_embedded(py, progress, memory_only, move |cancel| {
        let report = console::progress_sink();
        let report = report.as_deref();
        let hooks = Hooks {
            progress: report.map(|r| r as &(dyn Fn(u64, u64) + Sync)),
            cancel: Some(cancel),
            estimate: None,
        };
        let answer = tether_sweep::jobs::identify::execute(&inputs, Door::Python, hooks);
        if let Err(e) = &answer
            && e.chain().any(|c| {
                c.downcast_ref::<WorkflowError>()
                    .is_some_and(|w| w.exit_code() == 130)
            })
            && let Ok(mut said) = said.lock()
        {
            *said = Some(Door::Python.words(&format!("{e:#}")));
        }
        answer
    })
    .map_err(|e| match stopped.lock().ok().and_then(|s| s.clone()) {
        Some(message) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
            PyKeyboardInterrupt::new_err(message)
        }
        _ => e,
    })?;
    let report = answer.map_err(to_py)?;
    let checked = check_outcome(&report);
    let outcome = IdentifyOutcome {
        text,
        tables: py_tables(py, captured.tables, Some(&report.out))?,
        figures: py_figures(captured.figures, Some(&report.out)),
        summary_json: summary_json(&report),
        fit_warning: report.fit_warning.clone(),
    };
    match checked {
        Ok(()) => Ok(outcome),
        Err(e) => {
            // An implausible fit's results are whole: the exception
            // carries them (`ImplausibleFit.result` in Python).
            let implausible = e.exit_code() == 4;
            let err = to_py(e.into());
            if implausible {
                err.value(py).setattr("outcome", Py::new(py, outcome)?)?;
            }
            Err(err)
        }
    }
}

/// The batched objective of a study built from `identify`'s words.
#[pyclass(frozen)]
struct Objective {
    objective: Arc<LibObjective>,
}

#[pymethods]
impl Objective {
    #[new]
    fn new(keywords: Bound<'_, PyDict>) -> PyResult<Self> {
        let inputs = keywords::inputs_of(&keywords, PathBuf::from("identify-results"))?;
        let request: IdentifyRequest = inputs.request(Door::Python).map_err(|e| to_py(e.into()))?;
        let objective = LibObjective::new(&request).map_err(|e| to_py(e.into()))?;
        Ok(Self {
            objective: Arc::new(objective),
        })
    }

    /// The candidates' parameters, in the order a row of values takes them.
    #[getter]
    fn parameters(&self) -> Vec<String> {
        self.objective.parameters()
    }

    /// The compared coordinates (the residual vector's length).
    #[getter]
    fn observations(&self) -> usize {
        self.objective.observations()
    }

    /// The reference solver's tolerance \[m\] (None: a fixed-step scheme).
    #[getter]
    fn tolerance_m(&self) -> Option<f64> {
        self.objective.tolerance_m()
    }

    /// The reference solver's method at that tolerance: "radau5" or
    /// "generalized-alpha" (None: a fixed-step scheme).
    #[getter]
    fn implicit_method(&self) -> Option<&'static str> {
        self.objective.implicit_method().map(|m| m.name())
    }

    /// J_e \[m²\] of each row of values (NaN where the simulation
    /// diverged), run as one batch, its progress (done, total) passed to
    /// `progress`.
    #[pyo3(signature = (rows, progress=None))]
    fn j_e_m2(
        &self,
        py: Python<'_>,
        rows: Vec<Vec<f64>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Vec<f64>> {
        let objective = Arc::clone(&self.objective);
        let candidates = rows
            .iter()
            .map(|row| objective.candidates(row))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| to_py(e.into()))?;
        // Ctrl-C stops the batch between its simulations (on the GPU,
        // between dispatches), not after it.
        let scores = run_waiting(py, progress, move |report, cancel| {
            let hooks = RunHooks {
                progress: Some(&*report),
                cancel: Some(cancel),
            };
            objective.scores_with(&candidates, hooks)
        })?
        .map_err(|e| to_py(e.into()))?;
        Ok(scores
            .iter()
            .map(|s| s.result.j_e_m2.unwrap_or(f64::NAN))
            .collect())
    }

    /// The measured minus simulated coordinates of one row of values (a
    /// single film's), whose sum of squares is its J_e.
    fn residuals_m(&self, py: Python<'_>, values: Vec<f64>) -> PyResult<Vec<f64>> {
        let objective = Arc::clone(&self.objective);
        let candidate = objective.candidate(&values).map_err(|e| to_py(e.into()))?;
        run_waiting(py, None, move |_, _| objective.residuals_m(&candidate))?
            .map_err(|e| to_py(e.into()))
    }
}

/// A command's flags as the command line declares them: each long name,
/// whether it takes a value, and whether it may be given more than once.
/// The Python functions take exactly these as keywords.
#[pyfunction]
fn flags(command: &str) -> PyResult<Vec<(String, bool, bool)>> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let mut sub = &cli;
    for name in command.split_whitespace() {
        sub = sub
            .find_subcommand(name)
            .ok_or_else(|| PyValueError::new_err(format!("no command named '{command}'")))?;
    }
    Ok(sub
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            let repeated = matches!(a.get_action(), clap::ArgAction::Append);
            Some((long.to_string(), a.get_action().takes_values(), repeated))
        })
        .collect())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(identify, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(linearize, m)?)?;
    m.add_function(wrap_pyfunction!(dataset_synth, m)?)?;
    m.add_function(wrap_pyfunction!(swingup, m)?)?;
    m.add_function(wrap_pyfunction!(design, m)?)?;
    m.add_function(wrap_pyfunction!(summarize, m)?)?;
    m.add_function(wrap_pyfunction!(plot, m)?)?;
    m.add_function(wrap_pyfunction!(flags, m)?)?;
    m.add_function(wrap_pyfunction!(keywords::keywords, m)?)?;
    // The process is Python's: no Ctrl-C handler of the command line's.
    console::embed();
    m.add_class::<Objective>()?;
    m.add_class::<IdentifyOutcome>()?;
    m.add_class::<RunOutcome>()?;
    m.add("ImplausibleFit", m.py().get_type::<ImplausibleFit>())?;
    m.add("VERSION", tether_sweep::VERSION)?;
    Ok(())
}
