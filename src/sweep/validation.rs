//! Validation built into a sweep: a few candidates re-run on the f64
//! reference solver and compared with what the sweep's engine computed.

use serde::Serialize;

use super::{CandidateResult, Summary};
use crate::model::TetherParams;
use crate::objective::identification_error;
use crate::scenario::batch::BatchError;
use crate::scenario::{Scenario, SimulationOutput, SolverSettings, simulate};
use crate::track::MeasuredTrack;
use crate::track::Track;

/// Largest marker deviation accepted between the sweep's engine and the
/// reference solver \[m\]: a fifth of the shipped dataset's 0.5 mm noise, so
/// that engine error cannot pass for a change of fit.
pub const DEFAULT_MARKER_TOLERANCE_M: f64 = 1e-4;
/// Largest relative J_e deviation accepted.
pub const DEFAULT_J_E_TOLERANCE: f64 = 1e-2;

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ValidatedCandidate {
    pub elements: usize,
    pub damping_pa_s: f64,
    pub drag_coefficient: f64,
    /// Its values on the grid's parameter axes, by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parameters: std::collections::BTreeMap<String, f64>,
    pub j_e_sweep_m2: f64,
    pub j_e_reference_m2: f64,
    /// |J_e,sweep − J_e,reference| / max(J_e,reference, P·tol²), P the
    /// compared marker positions and tol the marker tolerance.
    pub j_e_relative_deviation: f64,
    pub max_marker_deviation_m: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Validation {
    pub candidates: Vec<ValidatedCandidate>,
    pub max_j_e_relative_deviation: f64,
    pub max_marker_deviation_m: f64,
    pub marker_tolerance_m: f64,
    pub j_e_tolerance: f64,
    pub passed: bool,
}

/// The candidates to check: the best, then the best of each other n, up to
/// `count` in all.
pub fn pick(summary: &Summary, count: usize) -> Vec<CandidateResult> {
    let mut picked = vec![summary.best.clone()];
    for r in &summary.best_per_elements {
        if picked.len() >= count {
            break;
        }
        if r.candidate != summary.best.candidate {
            picked.push(r.clone());
        }
    }
    picked.truncate(count);
    picked
}

fn max_distance(a: &Track, b: &Track) -> f64 {
    a.positions_m
        .iter()
        .zip(&b.positions_m)
        .map(|(p, q)| (p[0] - q[0]).hypot(p[1] - q[1]))
        .fold(0.0, f64::max)
}

/// Re-runs each of `picked` on the CPU's reference solver and on the
/// sweep's engine (`rerun`, which must record the track) and compares J_e
/// and every marker. Returns the validation and the reference output of
/// each. A fixed-step engine (`same_scheme` None) is compared with the
/// reference solver at its default tolerance, its J_e as the sweep's table
/// has it. The GPU's reference solver (`same_scheme`: its settings) is
/// compared with the CPU's at those same settings, fresh run against fresh
/// run: what is checked is the engine, not the tolerance (the confirmation
/// at the data's tolerance sees to that, and re-runs the rows near the
/// best on the CPU).
pub fn validate(
    picked: &[CandidateResult],
    (base, scenario, measured): (&TetherParams, &Scenario, &MeasuredTrack),
    same_scheme: Option<&SolverSettings>,
    rerun: &(dyn Fn(&TetherParams, &Scenario) -> Result<SimulationOutput, BatchError> + Sync),
    marker_tolerance_m: f64,
    j_e_tolerance: f64,
) -> Result<(Validation, Vec<SimulationOutput>), BatchError> {
    use rayon::prelude::*;
    let runs = picked
        .par_iter()
        .map(|r| {
            let (params, scenario) = r.candidate.experiment(base, scenario);
            let settings = same_scheme
                .copied()
                .unwrap_or_else(SolverSettings::reference);
            let reference = simulate(&scenario, &params, &settings)?;
            let engine = rerun(&params, &scenario)?;
            Ok((reference, engine))
        })
        .collect::<Result<Vec<_>, BatchError>>()?;
    let mut candidates = Vec::new();
    let mut references = Vec::new();
    for (r, (reference, engine)) in picked.iter().zip(runs) {
        let j_reference = identification_error(measured, &reference.track);
        let j_sweep = match same_scheme {
            Some(_) => identification_error(measured, &engine.track),
            None => r.j_e_m2.expect("picked candidates finished"),
        };
        // Relative to J_e, but never to less than what marker differences at
        // the marker tolerance make of it: near a noise-free truth J_e is
        // ~1e-13 m², where any relative comparison is noise and the marker
        // check is the one that speaks.
        let points = reference.track.positions_m.len() - reference.track.markers();
        let j_floor = points as f64 * marker_tolerance_m * marker_tolerance_m;
        candidates.push(ValidatedCandidate {
            elements: r.candidate.elements,
            damping_pa_s: r.candidate.damping_pa_s,
            drag_coefficient: r.candidate.drag_coefficient,
            parameters: r
                .candidate
                .parameters
                .iter()
                .map(|(p, v)| (p.name().to_string(), v))
                .collect(),
            j_e_sweep_m2: j_sweep,
            j_e_reference_m2: j_reference,
            j_e_relative_deviation: (j_sweep - j_reference).abs() / j_reference.max(j_floor),
            max_marker_deviation_m: max_distance(&engine.track, &reference.track),
        });
        references.push(reference);
    }
    let max_j = candidates
        .iter()
        .map(|c| c.j_e_relative_deviation)
        .fold(0.0, f64::max);
    let max_marker = candidates
        .iter()
        .map(|c| c.max_marker_deviation_m)
        .fold(0.0, f64::max);
    Ok((
        Validation {
            candidates,
            max_j_e_relative_deviation: max_j,
            max_marker_deviation_m: max_marker,
            marker_tolerance_m,
            j_e_tolerance,
            passed: max_j <= j_e_tolerance && max_marker <= marker_tolerance_m,
        },
        references,
    ))
}
