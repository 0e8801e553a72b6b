//! Scenarios on the GPU engine: a [`Scenario`] and tether parameters turned
//! into the engine's [`GpuSimulation`] (initial state, step and sampling
//! worked out on the CPU in f64), and the engine's outcome turned back into
//! a [`SimulationOutput`].

use std::collections::HashMap;
use std::sync::Mutex;

use super::{
    Experiment, Scenario, ScenarioKind, SimulationOutput, SolverReport, SwingupSettings, Track,
    WinchMotion, fixed_step,
};
use crate::gpu::adaptive::{AdaptiveOptions, AdaptiveOutcome, Landings};
use crate::gpu::{GpuError, GpuOutcome, GpuSimulation, PinDrive, Precision};
use crate::model::{Tether, TetherParams};
use crate::objective::SwingupObjective;
use crate::scheme::FixedStepScheme;
use crate::scheme::frame_due;
use crate::solver::{ReferenceOptions, SolverError, TetherDynamics};

/// Frames that J_e compares ([`Scenario::compared_frame_times_s`]) but
/// that the model shows still held (at or before the release): the host
/// scores them, and a GPU simulation's first compared frame is the
/// measured frame after them.
pub fn held_compared_frames(scenario: &Scenario) -> usize {
    scenario
        .compared_frame_times_s()
        .into_iter()
        .filter(|&t| scenario.model_time_s(t) <= 0.0)
        .count()
}

/// Whether the film's first frame, which J_e does not compare, is one the
/// GPU simulates (the model has moved by then: a film that starts after
/// the release); a simulation that scores J_e then leaves it out of its
/// frames.
pub fn first_frame_simulated(scenario: &Scenario) -> bool {
    scenario
        .frame_times_s()
        .first()
        .is_some_and(|&t| scenario.model_time_s(t) > 0.0)
}

/// Memo of fixed steps: the step depends on the scheme, the mesh, the
/// material and the initial state, not on the drag coefficient (drag is zero
/// at rest), so a grid over C_D needs one eigen-analysis per (n, D); the
/// semi-implicit scheme's step does not depend on D either
/// (`semi_implicit_stability_limit`), so there one per n.
#[derive(Default)]
pub struct StepCache {
    steps: Mutex<HashMap<String, f64>>,
}

impl StepCache {
    fn step(
        &self,
        scenario: &Scenario,
        params: &TetherParams,
        scheme: FixedStepScheme,
        requested_s: Option<f64>,
        tether: &Tether,
        q0: &[f64],
    ) -> Result<f64, SolverError> {
        let key = format!(
            "{:?}",
            (
                TetherParams {
                    drag_coefficient: 0.0,
                    damping_pa_s: match scheme {
                        FixedStepScheme::Explicit => params.damping_pa_s,
                        FixedStepScheme::SemiImplicit => 0.0,
                    },
                    ..params.clone()
                },
                scenario.kind(),
                scenario.as_drop().map(|d| d.initial_angle_deg.to_bits()),
                scenario.sample_interval_s().to_bits(),
                scenario.step_must_divide_s().map(f64::to_bits),
                scheme,
                requested_s.map(f64::to_bits),
            )
        );
        if let Some(&h) = self.steps.lock().expect("step cache").get(&key) {
            return Ok(h);
        }
        let h = fixed_step(scheme, requested_s, tether, q0, scenario)?;
        self.steps.lock().expect("step cache").insert(key, h);
        Ok(h)
    }
}

/// The engine's description of one run of `scenario` for `params` with
/// `scheme`. `step_s` None chooses the step from the model, as the CPU does.
pub fn gpu_simulation(
    scenario: &Scenario,
    params: &TetherParams,
    scheme: FixedStepScheme,
    step_s: Option<f64>,
    steps: &StepCache,
) -> Result<GpuSimulation, SolverError> {
    scenario.validate(params.length_m)?;
    let tether = Tether::new(params.clone())?;
    let (mut q0, mut v0) = scenario.initial_state(&tether)?;
    let motion = scenario.motion();
    let mut dynamics = TetherDynamics::new(tether.clone(), motion.clone())?;
    let a0 = dynamics.initial_acceleration(0.0, &mut q0, &mut v0);
    let sample = scenario.sample_interval_s();
    let step = steps.step(scenario, params, scheme, step_s, &tether, &q0)?;
    let steps_per_sample = (sample / step).round() as u64;
    // A drop has no J_a; its GPU simulation carries the paper's weights,
    // unread.
    let objective_weights = scenario
        .as_swingup()
        .map_or(SwingupSettings::paper().objective_weights, |s| {
            s.objective_weights
        });
    let (pin_m, tangent, drive) = match &scenario.experiment {
        Experiment::Drop(drop) => (drop.pin_m, drop.direction(), PinDrive::Fixed),
        Experiment::Swingup(swingup) => {
            let WinchMotion {
                waypoints_m,
                periods_s,
                ..
            } = swingup.winch.clone();
            (
                motion.position(0.0),
                [0.0, -1.0],
                PinDrive::Winch {
                    waypoints_m,
                    periods_s,
                },
            )
        }
    };
    let tip = tether.tip_index();
    let initial_swingup_m = SwingupObjective::new(objective_weights).value(
        0.0,
        motion.position(0.0),
        [q0[tip], q0[tip + 1]],
        [v0[tip], v0[tip + 1]],
    );
    Ok(GpuSimulation {
        params: params.clone(),
        pin_m,
        tangent,
        drive,
        initial_q: q0,
        initial_v: v0,
        initial_a: a0,
        scheme,
        step_s: step,
        total_steps: match scenario.kind() {
            ScenarioKind::Drop => frame_due(scenario.duration_s(), step).step,
            ScenarioKind::Swingup => steps_per_sample * scenario.sample_count() as u64,
        },
        steps_per_sample,
        frames: scenario
            .frame_times_s()
            .into_iter()
            .map(|t| scenario.model_time_s(t))
            .filter(|&t| t > 0.0)
            .map(|t| frame_due(t, step))
            .collect(),
        marker_arc_lengths_m: scenario.marker_arc_lengths_m.clone(),
        objective_weights,
        initial_swingup_m,
        compare_measured: false,
        measured_first_frame: held_compared_frames(scenario),
        record_track: false,
        record_pin_force: false,
        abandon_above_m2: None,
    })
}

/// The outcome of a GPU run as the CPU driver reports one: the frames up to
/// the release from the initial state, the rest from the engine's track.
/// `energy_j` is empty: the engine does not read back whole states.
pub fn gpu_output(
    scenario: &Scenario,
    sim: &GpuSimulation,
    outcome: &GpuOutcome,
    precision: Precision,
) -> Result<SimulationOutput, SolverError> {
    if let Some(failure) = SolverError::of_status(&outcome.status) {
        return Err(failure);
    }
    let tether = Tether::new(sim.params.clone())?;
    let markers = &sim.marker_arc_lengths_m;
    let times_s = scenario.frame_times_s();
    let held = times_s
        .iter()
        .filter(|&&t| scenario.model_time_s(t) <= 0.0)
        .count();
    let mut positions_m: Vec<[f64; 2]> = Vec::with_capacity(times_s.len() * markers.len());
    for _ in 0..held {
        positions_m.extend(markers.iter().map(|&s| tether.point(&sim.initial_q, s)));
    }
    if let Some(track) = &outcome.track_m {
        positions_m.extend_from_slice(track);
    }
    let frames = positions_m.len() / markers.len();
    let track = Track {
        times_s: times_s[..frames.min(times_s.len())].to_vec(),
        marker_arc_lengths_m: markers.clone(),
        positions_m,
    };
    let swingup = scenario.as_swingup().map(|s| SwingupObjective {
        weights: s.objective_weights,
        j_a_min: outcome.swingup_min_m,
        t_at_min_s: outcome.swingup_time_s,
    });
    Ok(SimulationOutput {
        track,
        swingup,
        report: SolverReport::Gpu {
            scheme: sim.scheme,
            step_s: sim.step_s,
            steps: outcome.steps,
            precision,
            layout: outcome.layout,
        },
        energy_j: Vec::new(),
    })
}

/// The times the GPU's adaptive scheme lands on for `sim` of `scenario`:
/// the frames it samples (those after the release, less a first frame the
/// engine left out of a scored film: [`gpu_simulation`]'s `frames`, as
/// model times) and, for a swing-up, every J_a sample.
pub fn adaptive_landings(scenario: &Scenario, sim: &GpuSimulation) -> Landings {
    let times: Vec<f64> = scenario
        .frame_times_s()
        .into_iter()
        .map(|t| scenario.model_time_s(t))
        .filter(|&t| t > 0.0)
        .collect();
    let skipped = times.len().saturating_sub(sim.frames.len());
    Landings {
        frame_times_s: times[skipped..].to_vec(),
        samples: scenario
            .as_swingup()
            .map(|_| (scenario.sample_interval_s(), scenario.sample_count() as u64)),
    }
}

/// The reference solver's settings as the GPU's adaptive scheme takes them.
pub fn adaptive_options(reference: &ReferenceOptions) -> AdaptiveOptions {
    AdaptiveOptions {
        tolerance_m: reference.tolerance_m,
        spectral_radius: reference.spectral_radius,
        max_step_s: reference.max_step_s,
        initial_step_s: reference.initial_step_s,
    }
}

/// The GPU's adaptive outcome as the engine's scoring and [`gpu_output`]
/// read every GPU outcome (its status as it is: a Newton failure reads as
/// the reference solver's error, as on the CPU).
pub fn adaptive_as_gpu_outcome(outcome: &AdaptiveOutcome) -> GpuOutcome {
    GpuOutcome {
        status: outcome.status.clone(),
        layout: crate::gpu::GpuLayout::Workgroup,
        steps: outcome.stats.steps,
        identification_error_m2: outcome.identification_error_m2,
        swingup_min_m: outcome.swingup_min_m,
        swingup_time_s: outcome.swingup_time_s,
        track_m: outcome.track_m.clone(),
        pin_force_n: None,
    }
}

/// The report of the GPU's adaptive scheme.
pub fn adaptive_report(
    outcome: &AdaptiveOutcome,
    precision: Precision,
    tolerance_m: f64,
) -> SolverReport {
    let s = &outcome.stats;
    SolverReport::GpuAdaptive {
        precision,
        tolerance_m,
        steps: s.steps,
        rejected_steps: s.rejected_steps,
        newton_iterations: s.newton_iterations,
        factorizations: s.factorizations,
        max_local_error_m: s.max_local_error_m,
    }
}

/// A failure of a batch run: in the model or solver set-up, or on the GPU.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    Solver(#[from] SolverError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A batch scored against one measured track holds simulations of
    /// different frames or markers.
    #[error("one batch scores one film, but its simulations compare {0}")]
    MixedFilms(String),
}
