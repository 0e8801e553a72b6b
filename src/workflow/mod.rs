//! The jobs a user runs, as library functions with typed requests and
//! results: [`simulate`](mod@simulate), [`identify`] (and [`summarize`] for sharded runs),
//! [`swingup`], [`linearize`], [`bench`](mod@bench), [`synth`] (a synthetic measured
//! drop) and [`redraw`] (an identification's figures again). Each one
//! checks its request before it claims any output, runs, writes its files
//! and returns what it found; printing is the caller's (the `tether-sweep`
//! binary is one such caller, a test or a notebook binding another).
//!
//! Layer: the top of the library, above `io` and `plot`, which the jobs
//! write through.

pub mod bench;
pub mod bodies;
pub mod design;
pub mod film;
pub mod fit;
pub mod identify;
pub mod keywords;
pub mod linearize;
pub mod objective;
pub mod redraw;
pub mod simulate;
pub mod spacing;
pub mod summarize;
pub mod swingup;
pub mod synth;
pub mod words;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use thiserror::Error;

use std::time::Instant;

use crate::engine::choice::{self, Choice};
use crate::engine::estimate::{CpuProbe, Workload, counted_work};
use crate::engine::request::{ChoiceError, EngineRequest};
use crate::engine::{EngineOptions, Progress};
use crate::error::InputError;
use crate::gpu::GpuError;
use crate::io::IoError;
use crate::io::checkpoint::CheckpointError;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::plot::PlotError;
use crate::scenario::batch::BatchError;
use crate::scenario::batch::{StepCache, gpu_simulation};
use crate::scenario::{Scenario, SolverReport, SolverSettings, simulate};
use crate::scheme::FixedStepScheme;
use crate::solver::SolverError;

/// What a job may be told while it runs: progress, and a flag that stops it
/// at its next stopping point (between simulations on the CPU, between
/// dispatches on the GPU).
#[derive(Clone, Copy, Default)]
pub struct Hooks<'a> {
    pub progress: Option<&'a Progress<'a>>,
    pub cancel: Option<&'a AtomicBool>,
    /// Told once, after the first chunk, how long the rest will take.
    pub estimate: Option<&'a (dyn Fn(&Estimate) + Sync + 'a)>,
}

/// A run's first estimate of its time, from the rate its first chunk ran
/// at per element of tether and the work left counted the same way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Candidates finished, and left.
    pub finished: u64,
    pub left: u64,
    /// Wall time so far, and estimated for the rest \[s\].
    pub elapsed_s: f64,
    pub left_s: f64,
}

impl Estimate {
    /// After `finished` of `total` candidates, started at `started`, that
    /// were the fraction `share_done` of the work.
    pub fn after(started: Instant, finished: u64, total: u64, share_done: f64) -> Self {
        let elapsed_s = started.elapsed().as_secs_f64();
        Self {
            finished,
            left: total - finished,
            elapsed_s,
            left_s: elapsed_s / share_done * (1.0 - share_done).max(0.0),
        }
    }
}

/// Why a job failed. The variants say whose the fault is: [`exit_code`]
/// maps them to the binary's exit codes.
///
/// Wrapped errors are not exposed as `source()`: their text is already in
/// the message, and a reporter that prints the chain would print it twice.
///
/// [`exit_code`]: WorkflowError::exit_code
#[derive(Debug, Error)]
pub enum WorkflowError {
    /// The user's input, in words that name the flag or key: exit code 2.
    #[error("{0}")]
    Usage(String),
    /// A value out of its range: exit code 2.
    #[error("{0}")]
    Input(InputError),
    /// Ctrl-C: what finished is saved, the message says where; exit 130.
    #[error("{0}")]
    Interrupted(String),
    /// Every simulation of a job diverged or failed, so there is no answer:
    /// exit 3, nothing written but the saved chunks.
    #[error("{0}")]
    NothingSimulated(String),
    /// The simulation of a single-run job diverged (exit 3) or failed.
    #[error("{context}: {error}")]
    Solver {
        context: &'static str,
        error: SolverError,
    },
    #[error("{context}: {error}")]
    Batch {
        context: &'static str,
        error: BatchError,
    },
    #[error("{0}")]
    Gpu(GpuError),
    #[error("{0}")]
    Choice(ChoiceError),
    #[error("{0}")]
    Io(IoError),
    #[error("{0}")]
    Plot(PlotError),
    /// The job ran but its result is not usable (every candidate diverged,
    /// the validation failed): exit code 1, after the files are written.
    #[error("{0}")]
    Failed(String),
    /// The results are written, but the best fit misses the data by more
    /// than this experiment allows (other units, axes or clock): exit
    /// code 4, unless the user accepted it.
    #[error("{0}")]
    Implausible(String),
}

impl WorkflowError {
    /// 2: the input is wrong; 3: the simulation diverged; 130: interrupted;
    /// 1: anything else.
    pub fn exit_code(&self) -> u8 {
        fn solver(e: &SolverError) -> u8 {
            match e {
                SolverError::Input(_) => 2,
                SolverError::Diverged { .. } => 3,
                _ => 1,
            }
        }
        fn gpu(e: &GpuError) -> u8 {
            match e {
                GpuError::Input(_)
                | GpuError::NoAdapter
                | GpuError::AdapterNotFound { .. }
                | GpuError::NoF64 { .. }
                | GpuError::TooLarge { .. } => 2,
                _ => 1,
            }
        }
        match self {
            WorkflowError::Usage(_) | WorkflowError::Input(_) => 2,
            WorkflowError::Interrupted(_) => 130,
            WorkflowError::NothingSimulated(_) => 3,
            WorkflowError::Solver { error, .. } => solver(error),
            WorkflowError::Batch { error, .. } => match error {
                BatchError::Solver(e) => solver(e),
                BatchError::Gpu(e) => gpu(e),
                BatchError::MixedFilms(_) => 1,
            },
            WorkflowError::Gpu(e) => gpu(e),
            WorkflowError::Choice(e) => match e {
                ChoiceError::Gpu(e) => gpu(e),
                ChoiceError::Estimate(_) => 1,
            },
            WorkflowError::Io(e) => {
                if e.is_input_error() {
                    2
                } else {
                    1
                }
            }
            WorkflowError::Plot(_) | WorkflowError::Failed(_) => 1,
            WorkflowError::Implausible(_) => 4,
        }
    }

    /// An input error that names `flag` (as the user typed it) instead of
    /// the library's field.
    pub fn flag(flag: &str, e: InputError) -> Self {
        WorkflowError::Input(InputError {
            field: flag.into(),
            ..e
        })
    }
}

impl From<InputError> for WorkflowError {
    fn from(e: InputError) -> Self {
        WorkflowError::Input(e)
    }
}

impl From<IoError> for WorkflowError {
    fn from(e: IoError) -> Self {
        WorkflowError::Io(e)
    }
}

impl From<PlotError> for WorkflowError {
    fn from(e: PlotError) -> Self {
        WorkflowError::Plot(e)
    }
}

impl From<GpuError> for WorkflowError {
    fn from(e: GpuError) -> Self {
        WorkflowError::Gpu(e)
    }
}

impl From<ChoiceError> for WorkflowError {
    fn from(e: ChoiceError) -> Self {
        WorkflowError::Choice(e)
    }
}

impl From<CheckpointError> for WorkflowError {
    fn from(e: CheckpointError) -> Self {
        match e {
            CheckpointError::Io(io) => WorkflowError::Io(io),
            other => WorkflowError::Usage(other.to_string()),
        }
    }
}

impl From<crate::io::lock::LockError> for WorkflowError {
    fn from(e: crate::io::lock::LockError) -> Self {
        match e {
            crate::io::lock::LockError::Io(io) => WorkflowError::Io(io),
            held => WorkflowError::Usage(held.to_string()),
        }
    }
}

/// `.map_err(solver("simulation failed"))`: a solver error with what was
/// being done.
pub(crate) fn solver(context: &'static str) -> impl Fn(SolverError) -> WorkflowError {
    move |error| WorkflowError::Solver { context, error }
}

/// `.map_err(batch("GPU sweep failed"))`.
pub(crate) fn batch(context: &'static str) -> impl Fn(BatchError) -> WorkflowError {
    move |error| WorkflowError::Batch { context, error }
}

/// A library error the user's input caused, in its own words.
pub(crate) fn usage(e: impl std::fmt::Display) -> WorkflowError {
    WorkflowError::Usage(e.to_string())
}

/// Creates the output directory `dir` and returns `dir/main_file`, refusing
/// to replace an earlier run's `main_file` without `force`. Runs before any
/// simulation, so that a bad output path costs nothing.
pub fn claim_output(dir: &Path, main_file: &str, force: bool) -> Result<PathBuf, WorkflowError> {
    let path = dir.join(main_file);
    refuse_to_replace(&path, force)?;
    std::fs::create_dir_all(dir).map_err(|e| {
        WorkflowError::Usage(format!(
            "cannot create output directory {}: {e}",
            dir.display()
        ))
    })?;
    Ok(path)
}

/// The table format `--out` names by its extension, or an error that says
/// so (before any simulation).
pub(crate) fn output_format(path: &Path) -> Result<crate::io::TableFormat, WorkflowError> {
    crate::io::TableFormat::from_path(path).map_err(|e| WorkflowError::Usage(format!("--out {e}")))
}

/// Every command's rule for an existing output: replaced only with
/// `--force`.
pub fn refuse_to_replace(path: &Path, force: bool) -> Result<(), WorkflowError> {
    if path.exists() && !force {
        return Err(WorkflowError::Usage(format!(
            "{} exists: choose another --out or pass --force to replace it",
            path.display()
        )));
    }
    Ok(())
}

/// How many of a job's simulations `--backend auto` times on the CPU: one
/// per core of a small machine, so that timing them costs about one
/// simulation's wall time.
const CPU_PROBE_SIMULATIONS: usize = 4;

/// Chooses the engine of a job whose simulations are `scenarios` ×
/// `params` pairs, handed to the engine `chunk` at a time in this order:
/// the counting and the CPU probe that `engine::choice` asks for, from the
/// job's own simulations (or an even sample of the `request.simulations`
/// it runs). The steps chosen for the counting are kept in
/// `steps`, for the run to reuse.
pub(crate) fn choose_engine(
    request: EngineRequest<'_>,
    label: &str,
    simulations: &[(Scenario, TetherParams)],
    chunk: usize,
    steps: &Arc<StepCache>,
) -> Result<Choice, WorkflowError> {
    let stands_for = request.simulations.max(simulations.len());
    let workload = |scheme: FixedStepScheme| -> Result<Workload, String> {
        use rayon::prelude::*;
        let counted = simulations
            .par_iter()
            .map(|(scenario, params)| {
                gpu_simulation(scenario, params, scheme, None, steps)
                    .map(|sim| (params.elements, sim.total_steps))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        Ok(Workload {
            label: label.to_string(),
            simulations: counted,
            stands_for,
            chunk,
        })
    };
    // The largest tethers of the job, a few spread over its order, timed on
    // the CPU side by side: the reference solver's cost varies several-fold
    // with the damping (one at the grid's highest D made the default grid's
    // estimate 3.9 s against 14.1 s measured on 16 cores).
    let probe = |settings: &SolverSettings| -> Result<CpuProbe, String> {
        use rayon::prelude::*;
        let largest = simulations
            .iter()
            .map(|(_, p)| p.elements)
            .max()
            .unwrap_or(0);
        let candidates: Vec<&(Scenario, TetherParams)> = simulations
            .iter()
            .filter(|(_, p)| p.elements == largest)
            .collect();
        if candidates.is_empty() {
            return Ok(CpuProbe::default());
        }
        let count = CPU_PROBE_SIMULATIONS.min(candidates.len());
        let sample: Vec<_> = (0..count)
            .map(|k| candidates[(2 * k + 1) * candidates.len() / (2 * count)])
            .collect();
        let timed = sample
            .par_iter()
            .map(|(scenario, params)| {
                let started = Instant::now();
                let output = simulate(scenario, params, settings).map_err(|e| e.to_string())?;
                let seconds = started.elapsed().as_secs_f64();
                let counted = match output.report {
                    SolverReport::Reference(s) => Some(counted_work(params.elements, &s)),
                    _ => None,
                };
                Ok((seconds, counted))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(CpuProbe {
            seconds_per_element: timed.iter().map(|t| t.0).sum::<f64>()
                / count as f64
                / largest as f64,
            counted: timed.into_iter().filter_map(|t| t.1).collect(),
        })
    };
    let choice = choice::choose(request, workload, probe)?;
    Ok(Choice {
        engine: choice.engine.with_steps(Arc::clone(steps)),
        ..choice
    })
}

/// What every table records of its engine: the options asked for, the
/// engine chosen (and why, under `auto`), its adapter and GPU layout.
pub(crate) fn record_engine(metadata: &mut Metadata, options: &EngineOptions, choice: &Choice) {
    metadata.insert(metadata::ENGINE_OPTIONS.into(), json(options));
    metadata.insert(metadata::ENGINE.into(), json(&choice.engine.kind().names()));
    if let Some(reason) = &choice.reason {
        metadata.insert(metadata::ENGINE_CHOICE.into(), reason.clone());
    }
    if let Some(g) = choice.engine.gpu() {
        metadata.insert(metadata::ADAPTER.into(), json(&g.adapter));
    }
    if let Some(layout) = choice.engine.kind().gpu_layout() {
        metadata.insert(metadata::GPU_LAYOUT_REQUESTED.into(), layout.name().into());
    }
}

/// "1 candidate", "3 candidates".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_singular_for_one() {
        assert_eq!(count(1, "candidate"), "1 candidate");
        assert_eq!(count(0, "candidate"), "0 candidates");
        assert_eq!(count(735, "simulation"), "735 simulations");
    }

    #[test]
    fn exit_codes_follow_whose_fault_it_is() {
        assert_eq!(WorkflowError::Usage("x".into()).exit_code(), 2);
        assert_eq!(WorkflowError::Interrupted("x".into()).exit_code(), 130);
        assert_eq!(WorkflowError::NothingSimulated("x".into()).exit_code(), 3);
        assert_eq!(WorkflowError::Failed("x".into()).exit_code(), 1);
        assert_eq!(WorkflowError::Implausible("x".into()).exit_code(), 4);
        assert_eq!(WorkflowError::Gpu(GpuError::NoAdapter).exit_code(), 2);
        let flagged = WorkflowError::flag("--length", InputError::new("length_m", -1, "> 0"));
        assert_eq!(flagged.exit_code(), 2);
        assert!(flagged.to_string().starts_with("invalid --length = -1"));
        // A full disk or a spent quota is the machine's, whatever the
        // path: exit 1, the cause named; an unwritable --out is the user's.
        let write = |error| {
            WorkflowError::Io(IoError::Write {
                path: "out/results.parquet".into(),
                error,
            })
        };
        #[cfg(unix)]
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let full = write(std::io::Error::from_raw_os_error(errno));
            assert_eq!(full.exit_code(), 1, "{full}");
        }
        let full = write(std::io::ErrorKind::StorageFull.into());
        assert_eq!(full.exit_code(), 1);
        let denied = write(std::io::ErrorKind::PermissionDenied.into());
        assert_eq!(denied.exit_code(), 2);
    }
}
