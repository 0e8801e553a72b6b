//! One simulation run on the CPU's solvers: its marker track sampled at
//! the experiment's frames (and, on request, its nodal state), the
//! swing-up's objective at every sample.

use super::stepper::Stepper;
use super::{Scenario, ScenarioKind, SolverReport, SolverSettings};
use crate::model::{Tether, TetherParams};
use crate::objective::SwingupObjective;
use crate::solver::{SolverError, TetherDynamics};
use crate::track::Track;

#[derive(Debug, Clone)]
pub struct SimulationOutput {
    pub track: Track,
    /// J_a,min and its time, for the swing-up.
    pub swingup: Option<SwingupObjective>,
    pub report: SolverReport,
    /// Total energy at every frame \[J\] (kinetic + elastic + gravitational).
    pub energy_j: Vec<f64>,
}

/// The bytes a nodal state holds per frame and node: its eight
/// coordinates and velocities (f64), and as much again for the table's
/// columns (its time, node, arc length and those eight).
pub const STATE_BYTES_PER_NODE: u64 = 8 * 8 + 11 * 8;

/// A run's nodal state at each recorded frame: each node's absolute
/// coordinates (position x, y and slope ∂x/∂s, ∂y/∂s) and their rates,
/// in the model's frame (docs/model.md §2), node after node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodalStates {
    pub times_s: Vec<f64>,
    /// Each node's arc length \[m\].
    pub node_arc_lengths_m: Vec<f64>,
    /// Per frame, the tether's coordinates q (4 per node: x, y \[m\],
    /// ∂x/∂s, ∂y/∂s \[1\]) and velocities v (their rates, per second).
    pub q: Vec<Vec<f64>>,
    pub v: Vec<Vec<f64>>,
}

/// Runs one simulation of `scenario` for `params` with `settings`.
pub fn simulate(
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
) -> Result<SimulationOutput, SolverError> {
    simulate_watched(scenario, params, settings, &mut |_, _| false).map(|(out, _)| out)
}

/// [`simulate`], showing each recorded frame (its time and its markers'
/// positions) to `stop`, which ends the run after that frame by answering
/// true: the track then ends there, and the flag returned is set.
pub fn simulate_watched(
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
    stop: &mut dyn FnMut(f64, &[[f64; 2]]) -> bool,
) -> Result<(SimulationOutput, bool), SolverError> {
    simulate_observed(scenario, params, settings, &mut |t, markers, _, _| {
        stop(t, markers)
    })
}

/// [`simulate`] with the nodal state at every frame kept
/// ([`Scenario::check_state_memory`] bounds it; its caller checks).
pub fn simulate_with_states(
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
) -> Result<(SimulationOutput, NodalStates), SolverError> {
    let mut states = NodalStates {
        node_arc_lengths_m: Tether::new(params.clone())?.node_arc_lengths_m(),
        ..NodalStates::default()
    };
    let (output, _) = simulate_observed(scenario, params, settings, &mut |t, _, q, v| {
        states.times_s.push(t);
        states.q.push(q.to_vec());
        states.v.push(v.to_vec());
        false
    })?;
    Ok((output, states))
}

/// What sees each recorded frame: its time, markers, q and v; true ends
/// the run there.
type FrameObserver<'a> = dyn FnMut(f64, &[[f64; 2]], &[f64], &[f64]) -> bool + 'a;

/// [`simulate_watched`], each recorded frame shown with its state to
/// `stop`.
fn simulate_observed(
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
    stop: &mut FrameObserver<'_>,
) -> Result<(SimulationOutput, bool), SolverError> {
    scenario.validate(params.length_m)?;
    let tether = Tether::new(params.clone())?;
    let (q0, v0) = scenario.initial_state(&tether)?;
    let dynamics = TetherDynamics::new(tether.clone(), scenario.motion())?;
    let sample = scenario.sample_interval_s();
    let held = (q0.clone(), v0.clone());
    let start = (dynamics, q0, v0);
    let mut stepper = Stepper::new(settings, start, &tether, scenario)?;
    let markers = &scenario.marker_arc_lengths_m;
    let mut track = Track {
        times_s: Vec::new(),
        marker_arc_lengths_m: markers.clone(),
        positions_m: Vec::new(),
    };
    let mut energy = Vec::new();
    let mut objective = scenario
        .as_swingup()
        .map(|s| SwingupObjective::new(s.objective_weights));
    let mut record = |t: f64, q: &[f64], v: &[f64]| {
        track.times_s.push(t);
        track
            .positions_m
            .extend(markers.iter().map(|&s| tether.point(q, s)));
        energy.push(tether.total_energy(q, v));
        let frame = track.positions_m.len() - markers.len();
        stop(t, &track.positions_m[frame..], q, v)
    };
    let mut stopped = false;
    if scenario.kind() == ScenarioKind::Drop {
        // Frames at the file's times: held before the release, sampled
        // within a step after it.
        for t in scenario.frame_times_s() {
            let model_t = scenario.model_time_s(t);
            let (q, v) = if model_t > 0.0 {
                stepper.sample_at(model_t)?
            } else {
                held.clone()
            };
            if record(t, &q, &v) {
                stopped = true;
                break;
            }
        }
        let output = SimulationOutput {
            track,
            swingup: None,
            report: stepper.report(),
            energy_j: energy,
        };
        return Ok((output, stopped));
    }
    let motion = scenario.motion();
    let samples_per_frame = scenario.samples_per_frame();
    for sample_index in 0..=scenario.sample_count() {
        let t = sample_index as f64 * sample;
        if sample_index > 0 {
            stepper.advance_to(t)?;
        }
        let (q, v) = stepper.state();
        if let Some(obj) = objective.as_mut() {
            let tip = tether.tip_index();
            obj.observe(
                t,
                motion.position(t),
                [q[tip], q[tip + 1]],
                [v[tip], v[tip + 1]],
            );
        }
        if sample_index % samples_per_frame == 0 && record(t, q, v) {
            stopped = true;
            break;
        }
    }
    let output = SimulationOutput {
        track,
        swingup: objective,
        report: stepper.report(),
        energy_j: energy,
    };
    Ok((output, stopped))
}
