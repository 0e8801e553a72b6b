//! The GPU's side of [`Engine::run`](super::Engine::run): how the GPU
//! runs a batch ([`GpuRun`]), the batch made ready for it ([`GpuBatch`]),
//! and its run, on the fixed-step stages or the adaptive one, with the
//! outcomes in the engine's terms.

use std::sync::atomic::AtomicBool;

use crate::gpu::GpuOutcome;
use crate::gpu::adaptive::{
    AdaptiveBatch, AdaptiveOutcome, AdaptiveRun, Landings, run_adaptive_batch,
};
use crate::gpu::shape::AdaptiveShape;
use crate::gpu::{self, BatchOptions, Gpu, GpuSimulation, LayoutRequest};
use crate::gpu::{GpuError, MISSING_SAMPLE_M, Precision};
use crate::model::Tether;
use crate::objective::{SwingupObjective, frame_error};
use crate::scenario::batch::{
    BatchError, adaptive_as_gpu_outcome, adaptive_landings, adaptive_options, adaptive_report,
    gpu_output,
};
use crate::scenario::{Scenario, SolverReport};
use crate::scheme::FixedStepScheme;
use crate::solver::{ReferenceOptions, SolverError};
use crate::status::RunStatus;
use crate::track::MeasuredTrack;

use super::simulation::{Outcome, RunHooks, Simulation};

/// How the GPU runs a batch.
#[derive(Debug, Clone, Copy)]
pub(super) struct GpuRun {
    pub(super) precision: Precision,
    pub(super) scheme: FixedStepScheme,
    pub(super) layout: LayoutRequest,
    /// A fixed step asked for \[s\]; None: the model's.
    pub(super) step_s: Option<f64>,
    /// The adaptive implicit scheme's settings (`gpu::adaptive`) instead
    /// of the fixed-step scheme. The simulations are still planned as the
    /// fixed-step stages upload them (`scheme`), on a step of one sample
    /// interval that the adaptive stage ignores: the model's step would
    /// cost a modal analysis per simulation on the host, for nothing.
    pub(super) adaptive: Option<ReferenceOptions>,
    /// The adaptive scheme's lanes a simulation; None: the cost model's
    /// per batch (`gpu::shape::AdaptiveShape::for_batch`).
    pub(super) adaptive_lanes: Option<u32>,
}

pub(super) struct GpuBatch {
    pub(super) simulations: Vec<GpuSimulation>,
    /// J_e of each scored simulation's compared frames that the model shows
    /// still held (scored on the host from the initial shape).
    pub(super) held_m2: Vec<f64>,
    /// The measured samples of the compared frames, frame-major.
    pub(super) measured_frames: Option<Vec<[f64; 2]>>,
}

impl GpuRun {
    pub(super) fn options(&self) -> BatchOptions<'static> {
        BatchOptions {
            precision: self.precision,
            layout: self.layout,
            ..Default::default()
        }
    }
}

/// The GPU's adaptive scheme on a planned batch (`scenarios` in its
/// order): each simulation landing on its frames and samples, at the
/// reference solver's settings, in `run`'s precision and lanes.
pub(super) fn run_adaptive(
    gpu: &Gpu,
    run: &GpuRun,
    reference: ReferenceOptions,
    batch: &GpuBatch,
    scenarios: &[&Scenario],
    cancel: Option<&AtomicBool>,
) -> Result<Vec<AdaptiveOutcome>, GpuError> {
    let landings: Vec<Landings> = scenarios
        .iter()
        .zip(&batch.simulations)
        .map(|(scenario, sim)| adaptive_landings(scenario, sim))
        .collect();
    crate::gpu::adaptive::check_method(reference.method)?;
    let options = vec![adaptive_options(&reference); landings.len()];
    run_adaptive_batch(
        gpu,
        &AdaptiveBatch {
            sims: &batch.simulations,
            landings: &landings,
            options: &options,
            measured: batch.measured_frames.as_deref(),
        },
        &AdaptiveRun {
            precision: run.precision,
            shape: Some(adaptive_shape(gpu, run, batch)?),
            cancel,
            ..Default::default()
        },
    )
}

/// The adaptive stage's shape for a planned batch: the lanes `run` fixes,
/// else the stage's choice for the batch ([`AdaptiveShape::for_batch`]).
pub(super) fn adaptive_shape(
    gpu: &Gpu,
    run: &GpuRun,
    batch: &GpuBatch,
) -> Result<AdaptiveShape, GpuError> {
    match run.adaptive_lanes {
        Some(lanes) => Ok(AdaptiveShape::with_lanes(lanes)),
        None => {
            let elements: Vec<usize> = batch
                .simulations
                .iter()
                .map(|s| s.params.elements)
                .collect();
            AdaptiveShape::for_batch(gpu, run.precision, &elements)
        }
    }
}

/// The GPU's run of a prepared batch, its outcomes in the engine's terms.
pub(super) fn execute_gpu(
    gpu: &Gpu,
    run: &GpuRun,
    (simulations, measured): (&[Simulation], Option<&MeasuredTrack>),
    batch: &GpuBatch,
    hooks: RunHooks<'_>,
) -> Result<Vec<Outcome>, BatchError> {
    let precision = run.precision;
    let count = batch.simulations.len() as u64;
    // The GPU counts element-steps; the caller counts simulations.
    let in_simulations = |done: u64, of: u64| {
        if let Some(report) = hooks.progress {
            let ran = count as u128 * done as u128 / of.max(1) as u128;
            report(ran as u64, count);
        }
    };
    let options = BatchOptions {
        cancel: hooks.cancel,
        progress: hooks
            .progress
            .map(|_| &in_simulations as &(dyn Fn(u64, u64) + Sync)),
        ..run.options()
    };
    // The adaptive scheme's own reports, for the tracks kept.
    let mut reports: Vec<Option<SolverReport>> = vec![None; batch.simulations.len()];
    let outcomes: Vec<GpuOutcome> = match run.adaptive {
        Some(reference) => {
            let scenarios: Vec<&Scenario> = simulations.iter().map(|s| &s.scenario).collect();
            let adaptive = run_adaptive(gpu, run, reference, batch, &scenarios, hooks.cancel)?;
            for (report, a) in reports.iter_mut().zip(&adaptive) {
                *report = Some(adaptive_report(a, precision, reference.tolerance_m));
            }
            adaptive.iter().map(adaptive_as_gpu_outcome).collect()
        }
        None => gpu::run_batch(
            gpu,
            &batch.simulations,
            batch.measured_frames.as_deref(),
            &options,
        )?,
    };
    simulations
        .iter()
        .zip(&batch.simulations)
        .zip(&batch.held_m2)
        .zip(outcomes.into_iter().zip(reports))
        .map(|(((s, sim), held), (out, report))| {
            // A GPU run that did not finish reads as the CPU's solver error.
            let status = on_file_clock(out.status.clone(), &s.scenario);
            let ok = status.is_ok();
            let output = match ok && s.keep_track {
                true => {
                    let mut output = gpu_output(&s.scenario, sim, &out, precision)?;
                    if let Some(report) = report {
                        output.report = report;
                    }
                    Some(output)
                }
                false => None,
            };
            let scored =
                (ok || status.abandoned_at().is_some()) && !s.keep_track && measured.is_some();
            let swingup = s
                .scenario
                .as_swingup()
                .filter(|_| ok)
                .map(|swingup| SwingupObjective {
                    weights: swingup.objective_weights,
                    j_a_min: out.swingup_min_m,
                    t_at_min_s: out.swingup_time_s,
                });
            Ok(Outcome {
                status,
                output,
                j_e_m2: scored.then(|| out.identification_error_m2 + held),
                swingup,
                step_s: run.adaptive.is_none().then_some(sim.step_s),
                steps: out.steps,
                layout: Some(out.layout),
                report,
            })
        })
        .collect()
}

/// A GPU simulation's status with an abandon's time on the file's clock,
/// as the CPU reports it (the frame's time in the measured track): the
/// stages count it from the release.
fn on_file_clock(status: RunStatus, scenario: &Scenario) -> RunStatus {
    match status {
        RunStatus::Abandoned { time_s } => {
            let since_release = |t: f64| (scenario.model_time_s(t) - time_s).abs();
            let frame = scenario
                .frame_times_s()
                .into_iter()
                .min_by(|a, b| since_release(*a).total_cmp(&since_release(*b)));
            RunStatus::Abandoned {
                time_s: frame.unwrap_or(time_s),
            }
        }
        other => other,
    }
}

/// The measured samples the GPU compares, frame-major, for the scored
/// simulations of a batch: they share the film's frames and markers (the
/// shader indexes them by frame), so a batch mixing films is refused.
pub(super) fn measured_frames(
    measured: &MeasuredTrack,
    simulations: &[Simulation],
) -> Result<Option<Vec<[f64; 2]>>, BatchError> {
    let mut scored = simulations.iter().filter(|s| !s.keep_track);
    let Some(first) = scored.next() else {
        return Ok(None);
    };
    let times = first.scenario.compared_frame_times_s();
    let markers = first.scenario.marker_arc_lengths_m.len();
    if let Some(other) = scored.find(|s| {
        s.scenario.compared_frame_times_s() != times
            || s.scenario.marker_arc_lengths_m.len() != markers
    }) {
        return Err(BatchError::MixedFilms(format!(
            "{} frames of {markers} markers against {} of {}",
            times.len(),
            other.scenario.compared_frame_times_s().len(),
            other.scenario.marker_arc_lengths_m.len()
        )));
    }
    let mut frames = Vec::with_capacity(times.len() * markers);
    for &t in &times {
        // A sample the measurement lacks: the shader skips it.
        frames.extend((0..markers).map(|j| measured.get(t, j).unwrap_or([MISSING_SAMPLE_M; 2])));
    }
    Ok(Some(frames))
}

/// J_e over the compared frames at which the model is still held (at or
/// before the release), which the host scores from the initial shape.
pub(super) fn held_error_m2(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    sim: &GpuSimulation,
) -> Result<f64, SolverError> {
    let held: Vec<f64> = scenario
        .compared_frame_times_s()
        .into_iter()
        .filter(|&t| scenario.model_time_s(t) <= 0.0)
        .collect();
    if held.is_empty() {
        return Ok(0.0);
    }
    let tether = Tether::new(sim.params.clone())?;
    let shape: Vec<[f64; 2]> = scenario
        .marker_arc_lengths_m
        .iter()
        .map(|&s| tether.point(&sim.initial_q, s))
        .collect();
    Ok(held.iter().map(|&t| frame_error(measured, t, &shape)).sum())
}
