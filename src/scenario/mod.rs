//! The experiments of docs/model.md §4 and the driver that runs one simulation of
//! them with a chosen CPU solver, sampling marker tracks and the swing-up
//! objective at exact sample times.

pub mod batch;
pub mod winch;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{InputError, require_finite, require_non_negative, require_positive};
use crate::model::{FixedPin, PinMotion, Tether, TetherParams};
use crate::objective::SwingupObjective;
use crate::solver::modal::{automatic_step, semi_implicit_stability_limit, semi_implicit_step};
use crate::solver::reference::ReferenceStats;
use crate::solver::{
    FixedStepScheme, FixedStepSolver, ReferenceOptions, ReferenceSolver, SolverError, SolverKind,
    TetherDynamics, equilibrium,
};
use crate::track::Track;
pub use winch::WinchMotion;

/// Which experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScenarioKind {
    /// Identification drop: released from 45°, pinned (docs/model.md §4.1).
    Drop,
    /// Swing-up: winch-driven, from the hanging equilibrium (docs/model.md §4.2).
    Swingup,
}

/// Everything that defines an experiment apart from the tether itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub kind: ScenarioKind,
    /// Simulated time from the release \[s\].
    pub duration_s: f64,
    /// Interval between recorded frames \[s\]; with `frame_times_s`, the
    /// nominal one, which the automatic step divides.
    pub frame_interval_s: f64,
    /// The frames' times on the file's clock \[s\] when they are not every
    /// `frame_interval_s` from 0: a measured file's own (30 fps, jittered,
    /// uneven). Increasing, from 0 on; the last is the release plus the
    /// duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_times_s: Option<Vec<f64>>,
    /// The release on the file's clock \[s\] (docs/model.md §4.1): a frame at time t
    /// shows the model at t − release_time_s, and one before the release the
    /// held initial shape.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub release_time_s: f64,
    /// Arc lengths of the markers \[m\]; docs/model.md §4.1: 11 points at j L/10.
    pub marker_arc_lengths_m: Vec<f64>,
    /// Drop: the pin's position \[m\].
    #[serde(default)]
    pub pin_m: [f64; 2],
    /// Drop: initial angle of the straight tether from the hanging direction \[deg\].
    #[serde(default = "defaults::initial_angle_deg")]
    pub initial_angle_deg: f64,
    /// Swing-up: the winch motion.
    #[serde(default = "defaults::winch")]
    pub winch: WinchMotion,
    /// Swing-up: interval at which J_a is evaluated \[s\].
    #[serde(default = "defaults::objective_interval_s")]
    pub objective_interval_s: f64,
    /// Swing-up: weights k1 \[s\] and k2 [m/s] of J_a (docs/model.md §5).
    #[serde(default = "defaults::objective_weights")]
    pub objective_weights: [f64; 2],
}

/// The values a record leaves out for the other experiment's fields
/// ([`Scenario::record`]) read back as: the paper's.
mod defaults {
    use super::*;

    pub fn initial_angle_deg() -> f64 {
        Scenario::new(ScenarioKind::Drop, 1.0).initial_angle_deg
    }
    pub fn winch() -> WinchMotion {
        Scenario::new(ScenarioKind::Swingup, 1.0).winch
    }
    pub fn objective_interval_s() -> f64 {
        Scenario::new(ScenarioKind::Swingup, 1.0).objective_interval_s
    }
    pub fn objective_weights() -> [f64; 2] {
        Scenario::new(ScenarioKind::Swingup, 1.0).objective_weights
    }
}

/// serde: leave out a release at 0 (the paper's experiment), so that the
/// records of runs and files made before it existed read the same.
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// docs/model.md §4.2's default winch periods: those of the independent reference run
/// quoted in docs/model.md §8.
pub const DEFAULT_WINCH_PERIODS_S: [f64; 3] = [0.5, 0.4, 0.6];
pub const DEFAULT_WINCH_AMPLITUDE_M: f64 = 0.2;
pub const SWINGUP_TIP_MASS_KG: f64 = 0.021;

impl Scenario {
    /// The paper's defaults for a tether of length `length_m`.
    pub fn new(kind: ScenarioKind, length_m: f64) -> Self {
        Self {
            kind,
            duration_s: match kind {
                ScenarioKind::Drop => 2.0,
                ScenarioKind::Swingup => 3.0,
            },
            frame_interval_s: 0.04,
            frame_times_s: None,
            release_time_s: 0.0,
            marker_arc_lengths_m: (0..=10).map(|j| j as f64 * length_m / 10.0).collect(),
            pin_m: [0.0, 0.0],
            initial_angle_deg: 45.0,
            winch: WinchMotion::spec(DEFAULT_WINCH_AMPLITUDE_M, DEFAULT_WINCH_PERIODS_S),
            objective_interval_s: 1e-3,
            objective_weights: [0.01, 0.05],
        }
    }

    /// The scenario as output metadata records it: what this experiment
    /// has and nothing of the other's (a drop has no winch or J_a, a
    /// swing-up no pin, release angle or release time). It reads back as
    /// a `Scenario` with those at the paper's values.
    pub fn record(&self) -> String {
        let mut value = serde_json::to_value(self).expect("plain data serializes");
        let fields = value.as_object_mut().expect("a struct");
        let other: &[&str] = match self.kind {
            ScenarioKind::Drop => &["winch", "objective_interval_s", "objective_weights"],
            ScenarioKind::Swingup => &["pin_m", "initial_angle_deg", "release_time_s"],
        };
        for key in other {
            fields.remove(*key);
        }
        value.to_string()
    }

    /// The default tip mass of the scenario (the swing-up's 21 g body).
    pub fn default_tip_mass_kg(kind: ScenarioKind) -> f64 {
        match kind {
            ScenarioKind::Drop => 0.0,
            ScenarioKind::Swingup => SWINGUP_TIP_MASS_KG,
        }
    }

    /// The interval every solver must land on exactly: frames for the drop,
    /// J_a samples for the swing-up (frames are whole multiples of it).
    pub fn sample_interval_s(&self) -> f64 {
        match self.kind {
            ScenarioKind::Drop => self.frame_interval_s,
            ScenarioKind::Swingup => self.objective_interval_s,
        }
    }

    /// Number of sample intervals in the run.
    pub fn sample_count(&self) -> usize {
        (self.duration_s / self.sample_interval_s()).round() as usize
    }

    /// The frames' times on the file's clock \[s\]: `frame_times_s`, or
    /// every `frame_interval_s` from 0 to the release plus the duration.
    pub fn frame_times_s(&self) -> Vec<f64> {
        if let Some(times) = &self.frame_times_s {
            return times.clone();
        }
        let last = self.release_time_s + self.duration_s;
        let count = (last / self.frame_interval_s + 1e-9).floor() as usize;
        (0..=count)
            .map(|p| p as f64 * self.frame_interval_s)
            .collect()
    }

    /// The times of the frames J_e compares, on the file's clock: every
    /// frame but the film's first (docs/model.md §5). The first is the
    /// start check's, at or before the release in a film of the whole drop;
    /// leaving out the first rather than the frames up to some time makes
    /// the comparison the same wherever the file's clock starts, and the
    /// same for every value of a release-time axis.
    pub fn compared_frame_times_s(&self) -> Vec<f64> {
        self.frame_times_s().into_iter().skip(1).collect()
    }

    /// The release time and the frame times: a drop's release from 0 on,
    /// before its last frame; frame times increasing from 0 on, the last
    /// the release plus the duration. The swing-up keeps the winch's clock.
    fn validate_clock(&self) -> Result<(), InputError> {
        let release = self.release_time_s;
        if self.kind == ScenarioKind::Swingup {
            if release != 0.0 || self.frame_times_s.is_some() {
                return Err(InputError::new(
                    "release_time_s",
                    release,
                    "0 and frames every frame_interval_s for the swing-up (its clock is the winch's)",
                ));
            }
            return Ok(());
        }
        if !(release.is_finite() && release >= 0.0) {
            return Err(InputError::new(
                "release_time_s",
                release,
                "a time >= 0 s on the measured file's clock",
            ));
        }
        let Some(times) = &self.frame_times_s else {
            return Ok(());
        };
        let Some(&last) = times.last() else {
            return Err(InputError::new("frame_times_s", "[]", "at least one frame"));
        };
        if let Some(w) = times
            .windows(2)
            .find(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater))
        {
            return Err(InputError::new(
                "frame_times_s",
                format!("{} s after {} s", w[1], w[0]),
                "increasing times",
            ));
        }
        if !(times[0].is_finite() && times[0] >= 0.0 && last.is_finite()) {
            return Err(InputError::new(
                "frame_times_s",
                times[0],
                "finite times from 0 s on",
            ));
        }
        if release >= last {
            return Err(InputError::new(
                "release_time_s",
                release,
                format!("a time before the last frame, {last} s"),
            ));
        }
        if (last - release - self.duration_s).abs() > 1e-9 * last.max(1.0) {
            return Err(InputError::new(
                "duration_s",
                self.duration_s,
                format!("the last frame less the release, {} s", last - release),
            ));
        }
        Ok(())
    }

    /// The model time of a frame at `file_time_s`: the time since the
    /// release, 0 before it (the held initial shape).
    pub fn model_time_s(&self, file_time_s: f64) -> f64 {
        (file_time_s - self.release_time_s).max(0.0)
    }

    /// Samples between two frames.
    pub fn samples_per_frame(&self) -> usize {
        (self.frame_interval_s / self.sample_interval_s()).round() as usize
    }

    pub fn validate(&self, length_m: f64) -> Result<(), InputError> {
        // The clock first: a release at the last frame leaves no duration,
        // and says so better than the duration can.
        self.validate_clock()?;
        require_positive("duration_s", self.duration_s)?;
        require_positive("frame_interval_s", self.frame_interval_s)?;
        require_positive("objective_interval_s", self.objective_interval_s)?;
        let whole = |ratio: f64| {
            (ratio - ratio.round()).abs() < 1e-9 * ratio.max(1.0) && ratio.round() >= 1.0
        };
        if self.kind == ScenarioKind::Swingup
            && !whole(self.frame_interval_s / self.objective_interval_s)
        {
            return Err(InputError::new(
                "frame_interval_s",
                self.frame_interval_s,
                format!(
                    "a whole multiple of the objective interval {} s",
                    self.objective_interval_s
                ),
            ));
        }
        if self.frame_times_s.is_none() && !whole(self.duration_s / self.frame_interval_s) {
            return Err(InputError::new(
                "duration_s",
                self.duration_s,
                format!(
                    "a whole multiple of the frame interval {} s",
                    self.frame_interval_s
                ),
            ));
        }
        if self.marker_arc_lengths_m.is_empty() {
            return Err(InputError::new(
                "marker_arc_lengths_m",
                "[]",
                "at least one marker",
            ));
        }
        for &s in &self.marker_arc_lengths_m {
            if !(s.is_finite() && (0.0..=length_m).contains(&s)) {
                return Err(InputError::new(
                    "marker_arc_lengths_m",
                    s,
                    format!("arc lengths between 0 and the tether length {length_m} m"),
                ));
            }
        }
        require_finite("pin_m", self.pin_m[0])?;
        require_finite("pin_m", self.pin_m[1])?;
        require_finite("initial_angle_deg", self.initial_angle_deg)?;
        require_non_negative("objective weight k1", self.objective_weights[0])?;
        require_non_negative("objective weight k2", self.objective_weights[1])?;
        if self.kind == ScenarioKind::Swingup {
            self.winch.validate()?;
        }
        Ok(())
    }

    /// The prescribed motion of node 0.
    pub fn motion(&self) -> Arc<dyn PinMotion> {
        match self.kind {
            ScenarioKind::Drop => Arc::new(FixedPin(self.pin_m)),
            ScenarioKind::Swingup => Arc::new(self.winch.clone()),
        }
    }

    /// Unit direction of the drop's initial straight tether: raised by the
    /// initial angle from hanging straight down.
    pub fn drop_direction(&self) -> [f64; 2] {
        let angle = self.initial_angle_deg.to_radians();
        [angle.sin(), -angle.cos()]
    }

    /// Initial coordinates and velocities (docs/model.md §4.1, §4.2).
    pub fn initial_state(&self, tether: &Tether) -> Result<(Vec<f64>, Vec<f64>), SolverError> {
        let q = match self.kind {
            ScenarioKind::Drop => tether.straight_configuration(self.pin_m, self.drop_direction()),
            ScenarioKind::Swingup => {
                equilibrium::hanging_equilibrium(tether, self.motion().position(0.0))?
            }
        };
        Ok((q, vec![0.0; tether.dofs()]))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
/// How one simulation of a batch ended.
pub enum RunStatus {
    Ok,
    /// The simulation blew up (with the reason); it has no objective.
    Diverged(String),
    /// Interrupted (Ctrl-C) before it finished; no objective.
    Cancelled,
}

impl RunStatus {
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Diverged(_) => "diverged",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// How to solve: which CPU solver, and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SolverSettings {
    pub kind: SolverKind,
    /// Step of the fixed-step schemes (explicit, semi-implicit); None
    /// chooses it from the model (docs/model.md §8).
    pub step_s: Option<f64>,
    pub reference: ReferenceOptions,
}

impl SolverSettings {
    /// The reference solver at its default tolerance.
    pub fn reference() -> Self {
        Self {
            kind: SolverKind::Reference,
            ..Default::default()
        }
    }
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            kind: SolverKind::Explicit,
            step_s: None,
            reference: ReferenceOptions::default(),
        }
    }
}

/// What one solver run reports about itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum SolverReport {
    /// A fixed-step CPU scheme (explicit or semi-implicit).
    FixedStep {
        scheme: FixedStepScheme,
        step_s: f64,
        steps: u64,
    },
    Reference(ReferenceStats),
    /// The GPU engine.
    Gpu {
        scheme: FixedStepScheme,
        step_s: f64,
        steps: u64,
        precision: crate::gpu::Precision,
        /// The layout it ran in.
        layout: crate::gpu::GpuLayout,
    },
}

#[derive(Debug, Clone)]
pub struct SimulationOutput {
    pub track: Track,
    /// J_a,min and its time, for the swing-up.
    pub swingup: Option<SwingupObjective>,
    pub report: SolverReport,
    /// Total energy at every frame \[J\] (kinetic + elastic + gravitational).
    pub energy_j: Vec<f64>,
}

/// One sampling solver: both CPU solvers advance exactly to sample times.
enum Stepper {
    FixedStep(Box<FixedStepSolver>),
    Reference(Box<ReferenceSolver>),
}

impl Stepper {
    fn advance_to(&mut self, t: f64) -> Result<(), SolverError> {
        match self {
            Stepper::FixedStep(s) => s.advance_to(t),
            Stepper::Reference(s) => s.advance_to(t),
        }
    }
    /// The state at `t`, which may fall between a fixed step's steps
    /// ([`FixedStepSolver::sample_at`]).
    fn sample_at(&mut self, t: f64) -> Result<(Vec<f64>, Vec<f64>), SolverError> {
        match self {
            Stepper::FixedStep(s) => s.sample_at(t),
            Stepper::Reference(s) => {
                s.advance_to(t)?;
                Ok((s.positions().to_vec(), s.velocities().to_vec()))
            }
        }
    }
    fn state(&self) -> (&[f64], &[f64]) {
        match self {
            Stepper::FixedStep(s) => (s.positions(), s.velocities()),
            Stepper::Reference(s) => (s.positions(), s.velocities()),
        }
    }
    fn report(&self) -> SolverReport {
        match self {
            Stepper::FixedStep(s) => SolverReport::FixedStep {
                scheme: s.scheme(),
                step_s: s.step_s(),
                steps: s.steps(),
            },
            Stepper::Reference(s) => SolverReport::Reference(s.stats()),
        }
    }
}

/// Checks a user's explicit step: positive and a whole divisor of the sample
/// interval, so that every sample lands on a step.
pub fn validate_step(step_s: f64, sample_interval_s: f64) -> Result<(), InputError> {
    let ratio = sample_interval_s / step_s;
    if !(step_s.is_finite() && step_s > 0.0)
        || (ratio - ratio.round()).abs() > 1e-6
        || ratio.round() < 1.0
    {
        return Err(InputError::new(
            "step_s",
            step_s,
            format!(
                "a positive step that divides the sample interval {sample_interval_s} s exactly"
            ),
        ));
    }
    Ok(())
}

/// The explicit step: the user's (checked, and snapped to divide the sample
/// interval exactly) or else `automatic()`.
pub fn explicit_step(
    requested_s: Option<f64>,
    sample_interval_s: f64,
    automatic: impl FnOnce() -> Result<f64, SolverError>,
) -> Result<f64, SolverError> {
    match requested_s {
        Some(h) => {
            validate_step(h, sample_interval_s)?;
            Ok(sample_interval_s / (sample_interval_s / h).round())
        }
        None => automatic(),
    }
}

/// The step of a fixed-step scheme for a tether starting at `q0`: the
/// user's (checked and snapped as [`explicit_step`] does) or else the
/// automatic one from the model's modes.
pub fn fixed_step(
    scheme: FixedStepScheme,
    requested_s: Option<f64>,
    tether: &Tether,
    q0: &[f64],
    sample_interval_s: f64,
) -> Result<f64, SolverError> {
    let step = explicit_step(requested_s, sample_interval_s, || match scheme {
        FixedStepScheme::Explicit => automatic_step(tether, q0, sample_interval_s),
        FixedStepScheme::SemiImplicit => semi_implicit_step(tether, q0, sample_interval_s),
    })?;
    if scheme == FixedStepScheme::SemiImplicit && requested_s.is_some() {
        // Beyond its limit this scheme does not blow up: the implicit
        // damping holds the unstable axial modes to a bounded, wrong
        // oscillation (n = 6, D = 2000: the tip 3 cm off after 2 s at 1.015
        // times the limit). So a user's step is held to it.
        let limit = semi_implicit_stability_limit(tether, q0)?;
        if step > limit {
            return Err(InputError::new(
                "step_s",
                step,
                format!(
                    "at most {limit:.4e} s for the semi-implicit scheme on this tether (its stability limit 2/ω_max; beyond it the scheme does not diverge but goes wrong), or no step for the automatic one"
                ),
            )
            .into());
        }
    }
    Ok(step)
}

/// Runs one simulation of `scenario` for `params` with `settings`.
pub fn simulate(
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
) -> Result<SimulationOutput, SolverError> {
    scenario.validate(params.length_m)?;
    let tether = Tether::new(params.clone())?;
    let (q0, v0) = scenario.initial_state(&tether)?;
    let dynamics = TetherDynamics::new(tether.clone(), scenario.motion())?;
    let sample = scenario.sample_interval_s();
    let held = (q0.clone(), v0.clone());
    let mut stepper = match settings.kind.fixed_step_scheme() {
        Some(scheme) => {
            let step = fixed_step(scheme, settings.step_s, &tether, &q0, sample)?;
            Stepper::FixedStep(Box::new(FixedStepSolver::new(
                scheme, dynamics, q0, v0, 0.0, step,
            )))
        }
        None => Stepper::Reference(Box::new(ReferenceSolver::new(
            dynamics,
            q0,
            v0,
            0.0,
            settings.reference,
        ))),
    };
    let markers = &scenario.marker_arc_lengths_m;
    let mut track = Track {
        times_s: Vec::new(),
        marker_arc_lengths_m: markers.clone(),
        positions_m: Vec::new(),
    };
    let mut energy = Vec::new();
    let mut objective = (scenario.kind == ScenarioKind::Swingup)
        .then(|| SwingupObjective::new(scenario.objective_weights));
    let mut record = |t: f64, q: &[f64], v: &[f64]| {
        track.times_s.push(t);
        track
            .positions_m
            .extend(markers.iter().map(|&s| tether.point(q, s)));
        energy.push(tether.total_energy(q, v));
    };
    if scenario.kind == ScenarioKind::Drop {
        // Frames at the file's times: held before the release, sampled
        // within a step after it.
        for t in scenario.frame_times_s() {
            let model_t = scenario.model_time_s(t);
            let (q, v) = if model_t > 0.0 {
                stepper.sample_at(model_t)?
            } else {
                held.clone()
            };
            record(t, &q, &v);
        }
        return Ok(SimulationOutput {
            track,
            swingup: None,
            report: stepper.report(),
            energy_j: energy,
        });
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
        if sample_index % samples_per_frame == 0 {
            record(t, q, v);
        }
    }
    Ok(SimulationOutput {
        track,
        swingup: objective,
        report: stepper.report(),
        energy_j: energy,
    })
}

#[cfg(test)]
mod record_tests {
    use super::*;

    #[test]
    fn a_record_holds_its_own_experiments_fields_and_reads_back() {
        for (kind, absent, present) in [
            (ScenarioKind::Drop, "winch", "pin_m"),
            (ScenarioKind::Swingup, "pin_m", "winch"),
        ] {
            let scenario = Scenario {
                duration_s: 1.5,
                ..Scenario::new(kind, 0.6)
            };
            let record = scenario.record();
            let value: serde_json::Value = serde_json::from_str(&record).unwrap();
            assert!(value.get(absent).is_none(), "{kind:?}: {record}");
            assert!(value.get(present).is_some(), "{kind:?}: {record}");
            let back: Scenario = serde_json::from_str(&record).unwrap();
            assert_eq!(back, scenario, "{kind:?}");
        }
        let drop = Scenario::new(ScenarioKind::Drop, 0.6).record();
        assert!(!drop.contains("objective"), "{drop}");
    }
}
