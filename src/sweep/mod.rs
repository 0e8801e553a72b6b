//! Identification sweeps: every candidate (n, D, C_D) of a grid simulated on
//! the drop and scored by J_e against a measured track (docs/model.md §5, §6), and
//! what the J_e surface says about how well each parameter is determined.

pub mod abandon;
pub mod accuracy;
pub mod axis;
pub mod design;
pub mod grid;
pub mod joint;
pub mod parameter;
pub mod refine;
pub mod release;
pub mod shard;
pub mod validation;

use rayon::prelude::*;
use serde::Serialize;

use crate::engine::{Engine, RunHooks, Simulation};
use crate::error::InputError;
use crate::gpu::GpuLayout;
use crate::model::TetherParams;
use crate::scenario::Scenario;
use crate::scenario::batch::BatchError;
use crate::solver::ImplicitMethod;
use crate::track::MeasuredTrack;
pub use axis::{Axis, AxisValues, ScopedAxis};
pub use grid::{Candidate, Grid, ParameterValues};
pub use parameter::Parameter;
pub use shard::{Selection, Shard};

use crate::status::RunStatus;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateResult {
    pub candidate: Candidate,
    /// J_e \[m²\]; None unless `status` is ok.
    pub j_e_m2: Option<f64>,
    pub status: RunStatus,
    /// Explicit step, or None for the adaptive reference solver.
    pub step_s: Option<f64>,
    /// Steps taken.
    pub steps: u64,
    /// The GPU layout it ran in; None on the CPU.
    pub gpu_layout: Option<GpuLayout>,
    /// The reference solver's local error tolerance it ran at \[m\]; None
    /// for a fixed-step scheme.
    pub tolerance_m: Option<f64>,
    /// The reference solver's method it ran; None for a fixed-step scheme.
    pub implicit_method: Option<ImplicitMethod>,
}

impl CandidateResult {
    /// A candidate stopped before it started.
    pub fn cancelled(candidate: Candidate) -> Self {
        Self {
            candidate,
            j_e_m2: None,
            status: RunStatus::Cancelled,
            step_s: None,
            steps: 0,
            gpu_layout: None,
            tolerance_m: None,
            implicit_method: None,
        }
    }
}

/// What J_e compares: every marker of every frame but the film's first
/// (`Scenario::compared_frame_times_s`), less the samples the measurement
/// lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Compared frames × markers.
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
    let times = scenario.compared_frame_times_s();
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
    if frames == 0 {
        return Err(InputError::new(
            "measured",
            "one frame",
            "a film of two frames or more (J_e compares every frame but the first)",
        ));
    }
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

/// What candidates are scored against: the measured track, every
/// parameter the grid does not vary, and the experiment.
#[derive(Debug, Clone, Copy)]
pub struct Study<'a> {
    pub measured: &'a MeasuredTrack,
    pub base: &'a TetherParams,
    pub scenario: &'a Scenario,
}

/// Runs `candidates` on `engine` and scores them against `study`. Its `base` gives every
/// parameter the grid does not vary. Candidates that differ only in the
/// release time share one simulation ([`release`]) of every value of the
/// grid's `release_axis` ([`Grid::release_axis`]), whose kept track the
/// host scores for each, so that a row's numbers do not depend on how the
/// work was cut; without a release axis a candidate alone is scored by
/// the engine (on the GPU, on the device), and abandoned past its n's
/// bound in `abandon` ([`abandon`]; a shared simulation runs to the end).
/// Results come back in the order of `candidates`; `hooks.progress`
/// counts candidates.
pub fn run(
    engine: &Engine,
    candidates: &[Candidate],
    Study {
        measured,
        base,
        scenario,
    }: Study<'_>,
    release_axis: Option<&[f64]>,
    abandon: Option<&abandon::AbandonBounds>,
    hooks: RunHooks<'_>,
) -> Result<Vec<CandidateResult>, BatchError> {
    let mut groups = release::group_by_release(candidates);
    // Simulations likely to be abandoned beside each other, so that those
    // sharing a workgroup end together (no number depends on the order).
    if let Some(bounds) = abandon.filter(|_| groups.iter().all(|g| g.len() == 1)) {
        let alone: Vec<Candidate> = groups.iter().map(|g| candidates[g[0]]).collect();
        let order = bounds.schedule(&alone);
        groups = order.into_iter().map(|k| groups[k].clone()).collect();
    }
    let simulations: Vec<Simulation> = groups
        .par_iter()
        .map(|group| {
            let (params, scenario) = match (release_axis, &group[..]) {
                (None, &[i]) => candidates[i].experiment(base, scenario),
                _ => {
                    let members: Vec<Candidate> = group.iter().map(|&i| candidates[i]).collect();
                    let whole = release::whole_group(&members, release_axis);
                    release::shared_experiment(&whole, base, scenario)
                }
            };
            let keep_track = release_axis.is_some() || group.len() > 1;
            Simulation {
                scenario,
                params,
                keep_track,
                abandon_above_m2: abandon
                    .filter(|_| !keep_track)
                    .and_then(|a| a.of(&candidates[group[0]])),
            }
        })
        .collect();
    let total = candidates.len() as u64;
    let in_candidates = |done: u64, of: u64| {
        if let Some(report) = hooks.progress {
            report(
                (total as u128 * done as u128 / of.max(1) as u128) as u64,
                total,
            );
        }
    };
    let outcomes = engine.run(
        &simulations,
        Some(measured),
        RunHooks {
            progress: hooks
                .progress
                .map(|_| &in_candidates as &(dyn Fn(u64, u64) + Sync)),
            ..hooks
        },
    )?;
    let mut ordered: Vec<Option<CandidateResult>> = vec![None; candidates.len()];
    for (group, outcome) in groups.iter().zip(outcomes) {
        for &i in group {
            let candidate = candidates[i];
            let j_e_m2 = match &outcome.output {
                Some(shared) => Some(release::member_error(
                    &candidate,
                    base,
                    scenario,
                    measured,
                    &shared.track,
                )),
                None => outcome.j_e_m2,
            };
            ordered[i] = Some(CandidateResult {
                candidate,
                j_e_m2,
                status: outcome.status.clone(),
                step_s: outcome.step_s,
                steps: outcome.steps,
                gpu_layout: outcome.layout,
                tolerance_m: engine.tolerance_m(),
                implicit_method: engine.implicit_method(),
            });
        }
    }
    Ok(ordered
        .into_iter()
        .map(|r| r.expect("every candidate is in one group"))
        .collect())
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

/// The confidence level of the grid's region and the refined parameters'
/// profile intervals.
pub const CONFIDENCE_LEVEL: f64 = 0.95;

/// The χ² distribution's quantile with `dof` degrees of freedom at
/// probability `p` in (0, 1).
pub fn chi2_quantile(dof: usize, p: f64) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    ChiSquared::new(dof as f64)
        .expect("a positive number of degrees of freedom")
        .inverse_cdf(p)
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
        .elements()
        .into_iter()
        .filter_map(|n| {
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
    let threshold = j_min + sigma2 * chi2_quantile(2, CONFIDENCE_LEVEL);
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
            damping_at_grid_edge: at_edge(damping, grid.values(Axis::Damping).unwrap_or(&[])),
            drag_at_grid_edge: at_edge(drag, grid.values(Axis::Drag).unwrap_or(&[])),
            parameters: grid
                .parameters()
                .map(|(p, values)| {
                    let range = range(&|c| c.parameters.get(p).unwrap_or(f64::NAN));
                    ParameterRange {
                        parameter: p,
                        range,
                        at_grid_edge: at_edge(range, values),
                    }
                })
                .collect(),
        },
        best,
        best_per_elements,
        diverged: results.iter().filter(|r| r.status.failed()).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi2_quantiles_are_the_tabulated_ones() {
        // Tabulated: 3.841 (1 dof) and 5.991 (2 dof) at 95 %, 6.635 at 99 %
        // for 1; and for 2 dof the closed form −2 ln(1 − p).
        assert!((chi2_quantile(1, 0.95) - 3.841).abs() < 1e-3);
        assert!((chi2_quantile(1, 0.99) - 6.635).abs() < 1e-3);
        assert!((chi2_quantile(2, 0.95) - 5.991).abs() < 1e-3);
        for p in [0.5, 0.9, 0.999] {
            assert!((chi2_quantile(2, p) + 2.0 * (1.0 - p).ln()).abs() < 1e-9);
        }
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
                status: RunStatus::Ok,
                step_s: None,
                steps: 1,
                gpu_layout: None,
                tolerance_m: None,
                implicit_method: None,
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
