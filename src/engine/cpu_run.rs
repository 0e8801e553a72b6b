//! The CPU's side of [`Engine::run`](super::Engine::run): every simulation
//! on its own core, scored or kept, and stopped at its bound.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::objective::{frame_error, identification_error};
use crate::scenario::batch::BatchError;
use crate::scenario::{SimulationOutput, SolverReport, SolverSettings, simulate, simulate_watched};
use crate::solver::SolverError;
use crate::status::RunStatus;
use crate::track::MeasuredTrack;

use super::simulation::{Outcome, RunHooks, Simulation};

/// The CPU's run: every simulation on its own core, cancelled between
/// simulations (the CPU's only stopping point). A simulation whose solver
/// fails is reported as diverged; one the input makes impossible fails the
/// batch, as on the GPU, where such input stops its set-up.
pub(super) fn execute_cpu(
    settings: &SolverSettings,
    simulations: &[Simulation],
    measured: Option<&MeasuredTrack>,
    hooks: RunHooks<'_>,
) -> Result<Vec<Outcome>, BatchError> {
    let done = AtomicU64::new(0);
    let total = simulations.len() as u64;
    simulations
        .par_iter()
        .map(|s| {
            if hooks.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Ok(Outcome::stopped(RunStatus::Cancelled));
            }
            let scored = measured.filter(|_| !s.keep_track);
            let result = match (scored, s.abandon_above_m2) {
                (Some(m), Some(bound)) => simulate_bounded(s, settings, m, bound),
                _ => simulate(&s.scenario, &s.params, settings).map(|out| (out, None)),
            };
            if let Some(report) = hooks.progress {
                report(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            }
            match result {
                Ok((out, abandoned)) => {
                    let (step_s, steps) = solver_steps(&out.report);
                    let report = Some(out.report);
                    let (status, j_e_m2) = match abandoned {
                        Some((time_s, partial_m2)) => {
                            (RunStatus::Abandoned { time_s }, Some(partial_m2))
                        }
                        // The whole film's sum, as an unbounded run's.
                        None => (
                            RunStatus::Ok,
                            scored.map(|m| identification_error(m, &out.track)),
                        ),
                    };
                    Ok(Outcome {
                        status,
                        swingup: out.swingup,
                        output: s.keep_track.then_some(out),
                        j_e_m2,
                        step_s,
                        steps,
                        layout: None,
                        report,
                    })
                }
                Err(SolverError::Cancelled) => Ok(Outcome::stopped(RunStatus::Cancelled)),
                Err(e @ SolverError::Input(_)) => Err(e.into()),
                Err(e) => Ok(Outcome::stopped(e.status())),
            }
        })
        .collect()
}

/// A scored CPU run that stops at the first frame where its J_e so far
/// passes `bound_m2`, with that frame's time and the partial J_e (summed
/// as [`identification_error`] sums, frame by frame from the second); a
/// run that passes it at its last frame or never ends as an unbounded
/// one.
fn simulate_bounded(
    s: &Simulation,
    settings: &SolverSettings,
    measured: &MeasuredTrack,
    bound_m2: f64,
) -> Result<(SimulationOutput, Option<(f64, f64)>), SolverError> {
    let mut partial_m2 = -0.0;
    let mut first = true;
    let mut stop = |t: f64, positions: &[[f64; 2]]| {
        if std::mem::take(&mut first) {
            return false;
        }
        partial_m2 += frame_error(measured, t, positions);
        partial_m2 > bound_m2
    };
    let (out, stopped) = simulate_watched(&s.scenario, &s.params, settings, &mut stop)?;
    // Past the bound only at its last frame, it finished: its whole sum.
    let finished = out.track.times_s.len() == s.scenario.frame_times_s().len();
    let at =
        (stopped && !finished).then(|| (*out.track.times_s.last().expect("a frame"), partial_m2));
    Ok((out, at))
}

/// A run's step (None for the adaptive reference solver) and step count.
fn solver_steps(report: &SolverReport) -> (Option<f64>, u64) {
    match *report {
        SolverReport::FixedStep { step_s, steps, .. } | SolverReport::Gpu { step_s, steps, .. } => {
            (Some(step_s), steps)
        }
        SolverReport::Reference(s) => (None, s.steps),
        SolverReport::GpuAdaptive { steps, .. } => (None, steps),
    }
}
