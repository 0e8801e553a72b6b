//! Identification sweeps: every candidate (n, D, C_D) of a grid simulated on
//! the drop and scored by J_e against a measured track (docs/model.md §5, §6), and
//! what the J_e surface says about how well each parameter is determined.

pub mod grid;
pub mod parameter;
pub mod refine;
pub mod release;
pub mod shard;
pub mod validation;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;
use serde::Serialize;

use crate::error::InputError;
use crate::gpu::{GpuLayout, GpuSimulation};
use crate::model::TetherParams;
use crate::objective::{MeasuredTrack, frame_error, identification_error};
use crate::scenario::{Scenario, SolverReport, SolverSettings, simulate};
pub use grid::{Candidate, Grid, ParameterAxis, ParameterValues};
pub use parameter::Parameter;
pub use shard::Shard;

pub use crate::scenario::RunStatus as Status;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateResult {
    pub candidate: Candidate,
    /// J_e \[m²\]; None unless `status` is ok.
    pub j_e_m2: Option<f64>,
    pub status: Status,
    /// Explicit step, or None for the adaptive reference solver.
    pub step_s: Option<f64>,
    /// Steps taken.
    pub steps: u64,
    /// The GPU layout it ran in; None on the CPU.
    pub gpu_layout: Option<GpuLayout>,
}

impl CandidateResult {
    /// A candidate stopped before it started.
    pub fn cancelled(candidate: Candidate) -> Self {
        Self {
            candidate,
            j_e_m2: None,
            status: Status::Cancelled,
            step_s: None,
            steps: 0,
            gpu_layout: None,
        }
    }

    /// A candidate whose simulation failed (`reason`).
    pub fn diverged(candidate: Candidate, reason: String) -> Self {
        Self {
            status: Status::Diverged(reason),
            ..Self::cancelled(candidate)
        }
    }
}

/// What J_e compares: every marker of every frame after t = 0, less the
/// samples the measurement lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Frames after t = 0 × markers.
    pub expected: usize,
    /// Of those, the samples the measured file has.
    pub compared: usize,
}

impl Coverage {
    /// Samples skipped: occluded markers, dropped frames.
    pub fn missing(&self) -> usize {
        self.expected - self.compared
    }

    /// Compared coordinates: two per sample.
    pub fn observations(&self) -> usize {
        2 * self.compared
    }
}

/// Counts the samples J_e compares, and refuses a measurement that has
/// fewer than half of them: with so many missing, its frames or markers
/// are not the experiment's (another frame rate, other marker numbers),
/// and J_e would compare little.
pub fn check_coverage(
    measured: &MeasuredTrack,
    scenario: &Scenario,
) -> Result<Coverage, InputError> {
    let markers = scenario.marker_arc_lengths_m.len();
    let times = compared_frame_times_s(scenario);
    let frames = times.len();
    let compared = times
        .iter()
        .map(|&t| {
            (0..markers)
                .filter(|&j| measured.get(t, j).is_some())
                .count()
        })
        .sum();
    let coverage = Coverage {
        expected: frames * markers,
        compared,
    };
    if 2 * coverage.compared < coverage.expected {
        return Err(InputError::new(
            "measured",
            format!(
                "{} of the {} marker positions J_e compares",
                coverage.compared, coverage.expected
            ),
            format!(
                "at least half of markers 0..{} at the {frames} frames t = {} … {} s (check the frame interval and the marker numbers)",
                markers - 1,
                times.first().copied().unwrap_or(0.0),
                times.last().copied().unwrap_or(0.0),
            ),
        ));
    }
    Ok(coverage)
}

/// The times of the frames J_e compares, on the file's clock: every frame
/// after t = 0 (docs/model.md §5; the frame at t = 0 is the known initial shape).
pub fn compared_frame_times_s(scenario: &Scenario) -> Vec<f64> {
    scenario
        .frame_times_s()
        .into_iter()
        .filter(|&t| t > 0.0)
        .collect()
}

/// Runs `candidates` on the CPU, all cores, and scores them. `base` gives
/// every parameter the grid does not vary. Candidates that differ only in
/// the release time share one simulation ([`release`]). Results come back
/// in the order of `candidates`; `progress` advances by one per finished
/// candidate.
pub fn run_cpu(
    candidates: &[Candidate],
    measured: &MeasuredTrack,
    base: &TetherParams,
    scenario: &Scenario,
    settings: &SolverSettings,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    cancel: Option<&AtomicBool>,
) -> Vec<CandidateResult> {
    let done = AtomicU64::new(0);
    let total = candidates.len() as u64;
    let groups = release::group_by_release(candidates);
    let finished: Vec<Vec<(usize, CandidateResult)>> = groups
        .par_iter()
        .map(|group| {
            let members: Vec<Candidate> = group.iter().map(|&i| candidates[i]).collect();
            // Between simulations is the CPU's stopping point: what has not
            // started comes back cancelled.
            let results = if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                members
                    .iter()
                    .map(|&c| CandidateResult::cancelled(c))
                    .collect()
            } else if let [candidate] = members[..] {
                vec![run_cpu_candidate(
                    candidate, measured, base, scenario, settings,
                )]
            } else {
                run_cpu_release_group(&members, measured, base, scenario, settings)
            };
            if let Some(report) = progress {
                let n = group.len() as u64;
                report(done.fetch_add(n, Ordering::Relaxed) + n, total);
            }
            group.iter().copied().zip(results).collect()
        })
        .collect();
    let mut ordered: Vec<Option<CandidateResult>> = vec![None; candidates.len()];
    for (i, r) in finished.into_iter().flatten() {
        ordered[i] = Some(r);
    }
    ordered
        .into_iter()
        .map(|r| r.expect("every candidate is in one group"))
        .collect()
}

/// One simulation for a release group ([`release`]), each member scored
/// from it.
fn run_cpu_release_group(
    members: &[Candidate],
    measured: &MeasuredTrack,
    base: &TetherParams,
    scenario: &Scenario,
    settings: &SolverSettings,
) -> Vec<CandidateResult> {
    let (tether, shared) = release::shared_experiment(members, base, scenario);
    match simulate(&shared, &tether, settings) {
        Ok(out) => {
            let (step_s, steps) = solver_steps(&out.report);
            members
                .iter()
                .map(|&candidate| CandidateResult {
                    candidate,
                    j_e_m2: Some(release::member_error(
                        &candidate, base, scenario, measured, &out.track,
                    )),
                    status: Status::Ok,
                    step_s,
                    steps,
                    gpu_layout: None,
                })
                .collect()
        }
        Err(e) => members
            .iter()
            .map(|&candidate| CandidateResult::diverged(candidate, e.to_string()))
            .collect(),
    }
}

/// A run's step (None for the adaptive reference solver) and step count.
fn solver_steps(report: &SolverReport) -> (Option<f64>, u64) {
    match *report {
        SolverReport::FixedStep { step_s, steps, .. } | SolverReport::Gpu { step_s, steps, .. } => {
            (Some(step_s), steps)
        }
        SolverReport::Reference(s) => (None, s.steps),
    }
}

fn run_cpu_candidate(
    candidate: Candidate,
    measured: &MeasuredTrack,
    base: &TetherParams,
    scenario: &Scenario,
    settings: &SolverSettings,
) -> CandidateResult {
    let (tether, scenario) = candidate.experiment(base, scenario);
    match simulate(&scenario, &tether, settings) {
        Ok(out) => {
            let (step_s, steps) = solver_steps(&out.report);
            let j_e = identification_error(measured, &out.track);
            CandidateResult {
                candidate,
                j_e_m2: Some(j_e),
                status: Status::Ok,
                step_s,
                steps,
                gpu_layout: None,
            }
        }
        Err(e) => CandidateResult::diverged(candidate, e.to_string()),
    }
}

/// The approximate 95 % confidence region of (D, C_D) at the best n.
///
/// Assumption: markers carry independent Gaussian noise of one variance σ²
/// and the model at the best candidate is otherwise exact. Then J_e/σ² is
/// χ²-distributed and the region is J_e ≤ J_min + σ² χ²₂(0.95), with σ²
/// estimated from the residual at the optimum, J_min/(N − 2), N the number
/// of compared coordinates. Model error (a coarse mesh) inflates σ², which
/// makes the region larger, not falsely small.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confidence {
    pub elements: usize,
    pub observations: usize,
    pub sigma2_m2: f64,
    pub threshold_m2: f64,
    pub damping_pa_s: (f64, f64),
    pub drag_coefficient: (f64, f64),
    /// Whether the region reaches the grid's edge on that axis (then the
    /// data do not pin the parameter down within the grid).
    pub damping_at_grid_edge: bool,
    pub drag_at_grid_edge: bool,
    /// The region's extent on each parameter axis.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<ParameterRange>,
}

/// The confidence region's extent on a parameter axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterRange {
    pub parameter: Parameter,
    pub range: (f64, f64),
    pub at_grid_edge: bool,
}

/// χ² quantile with 2 degrees of freedom at probability p: −2 ln(1 − p).
pub fn chi2_two_dof_quantile(p: f64) -> f64 {
    -2.0 * (1.0 - p).ln()
}

/// The best candidate overall, the best per n, and the confidence region.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub best: CandidateResult,
    pub best_per_elements: Vec<CandidateResult>,
    pub confidence: Confidence,
    pub diverged: usize,
}

/// Orders candidates by J_e; only called on candidates that have one.
fn by_j_e(a: &&CandidateResult, b: &&CandidateResult) -> std::cmp::Ordering {
    a.j_e_m2
        .unwrap_or(f64::INFINITY)
        .total_cmp(&b.j_e_m2.unwrap_or(f64::INFINITY))
}

pub fn summarize(grid: &Grid, results: &[CandidateResult], observations: usize) -> Option<Summary> {
    let ok = |r: &&CandidateResult| r.j_e_m2.is_some();
    let best = results.iter().filter(ok).min_by(by_j_e)?.clone();
    let best_per_elements = grid
        .elements
        .iter()
        .filter_map(|&n| {
            results
                .iter()
                .filter(ok)
                .filter(|r| r.candidate.elements == n)
                .min_by(by_j_e)
                .cloned()
        })
        .collect();
    let j_min = best.j_e_m2.expect("filtered");
    let sigma2 = j_min / (observations.saturating_sub(2).max(1)) as f64;
    let threshold = j_min + sigma2 * chi2_two_dof_quantile(0.95);
    let inside: Vec<&CandidateResult> = results
        .iter()
        .filter(|r| r.candidate.elements == best.candidate.elements)
        .filter(|r| r.j_e_m2.is_some_and(|j| j <= threshold))
        .collect();
    let range = |f: &dyn Fn(&Candidate) -> f64| {
        inside
            .iter()
            .map(|r| f(&r.candidate))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let damping = range(&|c| c.damping_pa_s);
    let drag = range(&|c| c.drag_coefficient);
    let at_edge = |(lo, hi): (f64, f64), axis: &[f64]| {
        let (min, max) = axis
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        axis.len() > 1 && (lo <= min || hi >= max)
    };
    Some(Summary {
        confidence: Confidence {
            elements: best.candidate.elements,
            observations,
            sigma2_m2: sigma2,
            threshold_m2: threshold,
            damping_pa_s: damping,
            drag_coefficient: drag,
            damping_at_grid_edge: at_edge(damping, &grid.damping_pa_s),
            drag_at_grid_edge: at_edge(drag, &grid.drag_coefficient),
            parameters: grid
                .parameters
                .iter()
                .map(|axis| {
                    let p = axis.parameter;
                    let range = range(&|c| c.parameters.get(p).unwrap_or(f64::NAN));
                    ParameterRange {
                        parameter: p,
                        range,
                        at_grid_edge: at_edge(range, &axis.values),
                    }
                })
                .collect(),
        },
        best,
        best_per_elements,
        diverged: results
            .iter()
            .filter(|r| matches!(r.status, Status::Diverged(_)))
            .count(),
    })
}

/// Runs `candidates` on the GPU engine in one batch (chunked by the
/// engine) with `scheme`; results in their order. The step of each
/// candidate comes from the model, as on the CPU. A candidate alone
/// accumulates J_e on the device; candidates that differ only in the
/// release time share one simulation ([`release`]), whose recorded track
/// the host scores for each. `options` carries the precision, the progress
/// callback and the cancel flag; `steps` may hold steps chosen before
/// (while choosing the engine).
#[allow(clippy::too_many_arguments)]
pub fn run_gpu(
    gpu: &crate::gpu::Gpu,
    scheme: crate::solver::FixedStepScheme,
    candidates: &[Candidate],
    measured: &MeasuredTrack,
    base: &TetherParams,
    scenario: &Scenario,
    steps: &crate::scenario::batch::StepCache,
    options: &crate::gpu::BatchOptions,
) -> Result<Vec<CandidateResult>, crate::scenario::batch::BatchError> {
    use crate::gpu::{OutcomeStatus, run_batch};
    use crate::scenario::batch::{gpu_output, gpu_simulation};
    let groups = release::group_by_release(candidates);
    // Per group: its simulation, the shared experiment of a release group,
    // and the J_e of a lone candidate's held frames.
    let planned = groups
        .par_iter()
        .map(|group| {
            if let [i] = group[..] {
                let (tether, scenario) = candidates[i].experiment(base, scenario);
                let mut sim = gpu_simulation(&scenario, &tether, scheme, None, steps)?;
                sim.compare_measured = true;
                let held = held_error_m2(measured, &scenario, &sim)?;
                return Ok((sim, None, held));
            }
            let members: Vec<Candidate> = group.iter().map(|&i| candidates[i]).collect();
            let (tether, shared) = release::shared_experiment(&members, base, scenario);
            let mut sim = gpu_simulation(&shared, &tether, scheme, None, steps)?;
            sim.record_track = true;
            Ok((sim, Some(shared), 0.0))
        })
        .collect::<Result<Vec<_>, crate::solver::SolverError>>()?;
    let (sims, scoring): (Vec<GpuSimulation>, Vec<(Option<Scenario>, f64)>) = planned
        .into_iter()
        .map(|(sim, shared, held)| (sim, (shared, held)))
        .unzip();
    let mut measured_frames = Vec::new();
    for t in compared_frame_times_s(scenario) {
        for j in 0..scenario.marker_arc_lengths_m.len() {
            // A sample the measurement lacks: the shader skips it.
            measured_frames.push(
                measured
                    .get(t, j)
                    .unwrap_or([crate::gpu::MISSING_SAMPLE_M; 2]),
            );
        }
    }
    let precision = options.precision;
    let outcomes = run_batch(gpu, &sims, Some(&measured_frames), options)?;
    let mut ordered: Vec<Option<CandidateResult>> = vec![None; candidates.len()];
    for (((group, sim), (shared, held)), out) in
        groups.iter().zip(&sims).zip(&scoring).zip(&outcomes)
    {
        let status = match out.status {
            OutcomeStatus::Completed => Status::Ok,
            OutcomeStatus::Diverged { time_s } => Status::Diverged(format!(
                "state exploded on the GPU ({}) at t = {time_s} s",
                precision.name()
            )),
            OutcomeStatus::Cancelled => Status::Cancelled,
        };
        let track = match (shared, &status) {
            (Some(shared), Status::Ok) => Some(gpu_output(shared, sim, out, precision)?.track),
            _ => None,
        };
        for &i in group {
            let candidate = candidates[i];
            let j_e_m2 = (status == Status::Ok).then(|| match &track {
                Some(track) => release::member_error(&candidate, base, scenario, measured, track),
                None => out.identification_error_m2 + held,
            });
            ordered[i] = Some(CandidateResult {
                candidate,
                j_e_m2,
                status: status.clone(),
                step_s: Some(sim.step_s),
                steps: out.steps,
                gpu_layout: Some(out.layout),
            });
        }
    }
    Ok(ordered
        .into_iter()
        .map(|r| r.expect("every candidate is in one group"))
        .collect())
}

/// J_e over the compared frames at which the model is still held (at or
/// before the release), which the host scores from the initial shape.
fn held_error_m2(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    sim: &GpuSimulation,
) -> Result<f64, crate::solver::SolverError> {
    let held: Vec<f64> = compared_frame_times_s(scenario)
        .into_iter()
        .filter(|&t| scenario.model_time_s(t) <= 0.0)
        .collect();
    if held.is_empty() {
        return Ok(0.0);
    }
    let tether = crate::model::Tether::new(sim.params.clone())?;
    let shape: Vec<[f64; 2]> = scenario
        .marker_arc_lengths_m
        .iter()
        .map(|&s| tether.point(&sim.initial_q, s))
        .collect();
    Ok(held.iter().map(|&t| frame_error(measured, t, &shape)).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi2_quantile_for_two_dof() {
        // Tabulated: 5.991 at 95 %.
        assert!((chi2_two_dof_quantile(0.95) - 5.991).abs() < 1e-3);
    }

    #[test]
    fn region_and_edges_from_a_synthetic_surface() {
        let grid = Grid::parse("10", "0:1000:100", "0.6:0.9:0.1").unwrap();
        // A paraboloid with its minimum at D = 500, C_D = 0.8.
        let results: Vec<CandidateResult> = grid
            .candidates()
            .into_iter()
            .map(|c| CandidateResult {
                candidate: c,
                j_e_m2: Some(
                    1.0 + ((c.damping_pa_s - 500.0) / 100.0).powi(2) * 0.004
                        + ((c.drag_coefficient - 0.8) / 0.1).powi(2) * 0.1,
                ),
                status: Status::Ok,
                step_s: None,
                steps: 1,
                gpu_layout: None,
            })
            .collect();
        let s = summarize(&grid, &results, 1002).unwrap();
        assert_eq!(s.best.candidate.damping_pa_s, 500.0);
        // σ² = 1/1000, threshold = 1 + 0.006: D within ±100, C_D only 0.8.
        assert_eq!(s.confidence.damping_pa_s, (400.0, 600.0));
        assert!((s.confidence.drag_coefficient.0 - 0.8).abs() < 1e-12);
        assert!(!s.confidence.damping_at_grid_edge && !s.confidence.drag_at_grid_edge);
    }
}
