//! The experiments of docs/model.md §4 and the driver that runs one simulation of
//! them with a chosen CPU solver, sampling marker tracks and the swing-up
//! objective at exact sample times.

pub mod batch;
pub mod frames;
mod memory;
pub mod path;
mod record;
mod run;
mod settings;
mod step;
mod stepper;
pub mod winch;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{InputError, require_finite, require_non_negative, require_positive};
use crate::model::{FixedPin, PinMotion, Tether};
use crate::solver::{SolverError, equilibrium};
use crate::track::Track;
pub use frames::{DeclaredFrames, Frames, median_interval_s};
pub use memory::TRACK_BYTES_PER_SAMPLE;
use memory::within_memory;
pub use path::PathMotion;
pub use run::{
    NodalStates, STATE_BYTES_PER_NODE, SimulationOutput, simulate, simulate_watched,
    simulate_with_states,
};
pub use settings::{SolverReport, SolverSettings};
pub use step::{MAX_FIXED_STEPS, explicit_step, fixed_step, validate_step, validate_step_for};
pub use winch::WinchMotion;

use crate::named::{Named, display_and_parse_by_name};

/// Which experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScenarioKind {
    /// Identification drop: released from 45°, pinned (docs/model.md §4.1).
    Drop,
    /// Swing-up: winch-driven, from the hanging equilibrium (docs/model.md §4.2).
    Swingup,
}

impl Named for ScenarioKind {
    const WHAT: &'static str = "scenario";
    const ALL: &'static [Self] = &[ScenarioKind::Drop, ScenarioKind::Swingup];

    fn name(self) -> &'static str {
        match self {
            ScenarioKind::Drop => "drop",
            ScenarioKind::Swingup => "swingup",
        }
    }

    fn help(self) -> &'static str {
        match self {
            ScenarioKind::Drop => {
                "Identification drop: released from 45°, pinned (docs/model.md §4.1)"
            }
            ScenarioKind::Swingup => {
                "Swing-up: winch-driven, from the hanging equilibrium (docs/model.md §4.2)"
            }
        }
    }
}

display_and_parse_by_name!(ScenarioKind);

/// What a drop has that a swing-up has not (docs/model.md §4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct DropSettings {
    /// The pin's position \[m\].
    pub pin_m: [f64; 2],
    /// The straight tether's angle from the hanging direction at the
    /// release \[deg\], positive toward +x.
    pub initial_angle_deg: f64,
    /// The release on the frames' clock \[s\]: a frame at time t shows the
    /// model at t − release_time_s, and one before the release the held
    /// initial shape.
    pub release_time_s: f64,
}

/// What a swing-up has that a drop has not (docs/model.md §4.2, §5).
#[derive(Debug, Clone, PartialEq)]
pub struct SwingupSettings {
    pub winch: WinchMotion,
    /// Interval at which J_a is evaluated \[s\].
    pub objective_interval_s: f64,
    /// Weights k1 \[s\] and k2 \[m/s\] of J_a.
    pub objective_weights: [f64; 2],
}

/// The experiment and its own settings.
#[derive(Debug, Clone, PartialEq)]
pub enum Experiment {
    Drop(DropSettings),
    Swingup(SwingupSettings),
}

/// Everything that defines an experiment apart from the tether itself.
/// Written and read (configs' records, output metadata) in a flat form
/// that holds the experiment's own fields only (`record.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "record::ScenarioRecord", into = "record::ScenarioRecord")]
pub struct Scenario {
    pub experiment: Experiment,
    pub frames: Frames,
    /// Arc lengths of the markers \[m\]; docs/model.md §4.1: 11 points at j L/10.
    pub marker_arc_lengths_m: Vec<f64>,
}

/// docs/model.md §4.2's default winch periods: those of the independent reference run
/// quoted in docs/model.md §8.
pub const DEFAULT_WINCH_PERIODS_S: [f64; 3] = [0.5, 0.4, 0.6];
pub const DEFAULT_WINCH_AMPLITUDE_M: f64 = 0.2;
pub const SWINGUP_TIP_MASS_KG: f64 = 0.021;

impl Scenario {
    /// The paper's defaults for a tether of length `length_m`.
    pub fn new(kind: ScenarioKind, length_m: f64) -> Self {
        let (experiment, duration_s) = match kind {
            ScenarioKind::Drop => (Experiment::Drop(DropSettings::paper()), 2.0),
            ScenarioKind::Swingup => (Experiment::Swingup(SwingupSettings::paper()), 3.0),
        };
        Self {
            experiment,
            frames: Frames::every(0.04, duration_s),
            // At the length, not a rounding past it (0.11 · 10 / 10 is
            // 0.11000000000000001).
            marker_arc_lengths_m: (0..=10)
                .map(|j| (j as f64 * length_m / 10.0).min(length_m))
                .collect(),
        }
    }

    /// A filmed drop: the paper's drop seen at the film's `times_s`,
    /// released at `release_time_s` on its clock.
    pub fn film(times_s: Vec<f64>, release_time_s: f64, length_m: f64) -> Self {
        let mut scenario =
            Self::new(ScenarioKind::Drop, length_m).with_frames(Frames::film(times_s));
        if let Experiment::Drop(drop) = &mut scenario.experiment {
            drop.release_time_s = release_time_s;
        }
        scenario
    }

    /// The same experiment seen at other frames.
    pub fn with_frames(self, frames: Frames) -> Self {
        Self { frames, ..self }
    }

    /// The same experiment for `duration_s` from the release, a frame
    /// every interval as now.
    pub fn with_duration_s(self, duration_s: f64) -> Self {
        let interval_s = self.frame_interval_s();
        self.with_frames(Frames::every(interval_s, duration_s))
    }

    /// The same experiment with other markers.
    pub fn with_markers(self, marker_arc_lengths_m: Vec<f64>) -> Self {
        Self {
            marker_arc_lengths_m,
            ..self
        }
    }

    pub fn kind(&self) -> ScenarioKind {
        match self.experiment {
            Experiment::Drop(_) => ScenarioKind::Drop,
            Experiment::Swingup(_) => ScenarioKind::Swingup,
        }
    }

    /// The drop's own settings; None for a swing-up.
    pub fn as_drop(&self) -> Option<&DropSettings> {
        match &self.experiment {
            Experiment::Drop(drop) => Some(drop),
            Experiment::Swingup(_) => None,
        }
    }

    pub fn as_drop_mut(&mut self) -> Option<&mut DropSettings> {
        match &mut self.experiment {
            Experiment::Drop(drop) => Some(drop),
            Experiment::Swingup(_) => None,
        }
    }

    /// The swing-up's own settings; None for a drop.
    pub fn as_swingup(&self) -> Option<&SwingupSettings> {
        match &self.experiment {
            Experiment::Swingup(swingup) => Some(swingup),
            Experiment::Drop(_) => None,
        }
    }

    pub fn as_swingup_mut(&mut self) -> Option<&mut SwingupSettings> {
        match &mut self.experiment {
            Experiment::Swingup(swingup) => Some(swingup),
            Experiment::Drop(_) => None,
        }
    }

    /// The release on the frames' clock \[s\]; the swing-up's clock is
    /// the winch's, which starts at its 0.
    pub fn release_time_s(&self) -> f64 {
        self.as_drop().map_or(0.0, |d| d.release_time_s)
    }

    /// Moves a drop's release to `release_time_s`; frames every interval
    /// keep their last frame ([`Frames::with_release_moved`]).
    pub fn set_release_time_s(&mut self, release_time_s: f64) {
        let from_s = self.release_time_s();
        if let Experiment::Drop(drop) = &mut self.experiment {
            drop.release_time_s = release_time_s;
            self.frames = self
                .frames
                .clone()
                .with_release_moved(from_s, release_time_s);
        }
    }

    /// Where node 0 is at the start \[m\]: the drop's pin, the swing-up
    /// winch's first position.
    pub fn pin_m(&self) -> [f64; 2] {
        self.motion().position(0.0)
    }

    /// Simulated time from the release to the last frame \[s\].
    pub fn duration_s(&self) -> f64 {
        self.frames.duration_s(self.release_time_s())
    }

    /// The interval between frames \[s\] (a film's typical one).
    pub fn frame_interval_s(&self) -> f64 {
        self.frames.interval_s()
    }

    /// The scenario as output metadata records it: what this experiment
    /// has and nothing of the other's (a drop has no winch or J_a, a
    /// swing-up no pin, release angle or release time), and its frames
    /// as they were given (an interval and a duration, or the times).
    pub fn record(&self) -> String {
        serde_json::to_string(self).expect("plain data serializes")
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
        match &self.experiment {
            Experiment::Drop(_) => self.frame_interval_s(),
            Experiment::Swingup(s) => s.objective_interval_s,
        }
    }

    /// The interval a user's fixed step must divide, so that every sample
    /// lands on a step: the frames' (or J_a's) when they come every
    /// interval; None for a film, whose frames are read between steps.
    pub fn step_must_divide_s(&self) -> Option<f64> {
        match self.frames {
            Frames::At { .. } => None,
            Frames::Every { .. } => Some(self.sample_interval_s()),
        }
    }

    /// Number of sample intervals in the run.
    pub fn sample_count(&self) -> usize {
        (self.duration_s() / self.sample_interval_s()).round() as usize
    }

    /// The frames' times on the clock \[s\].
    pub fn frame_times_s(&self) -> Vec<f64> {
        self.frames.times_s(self.release_time_s())
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

    /// The model time of a frame at `file_time_s`: the time since the
    /// release, 0 before it (the held initial shape).
    pub fn model_time_s(&self, file_time_s: f64) -> f64 {
        (file_time_s - self.release_time_s()).max(0.0)
    }

    /// Samples between two frames.
    pub fn samples_per_frame(&self) -> usize {
        (self.frame_interval_s() / self.sample_interval_s()).round() as usize
    }

    pub fn validate(&self, length_m: f64) -> Result<(), InputError> {
        match &self.experiment {
            Experiment::Drop(drop) => {
                // The clock first: a release at the last frame leaves no
                // duration, and says so better than the duration can.
                let release = drop.release_time_s;
                if !(release.is_finite() && release >= 0.0) {
                    return Err(InputError::new(
                        "release_time_s",
                        release,
                        "a time >= 0 s on the measured file's clock",
                    ));
                }
                self.frames.validate(release)?;
                drop.validate()?;
            }
            Experiment::Swingup(swingup) => {
                if let Frames::At { .. } = self.frames {
                    return Err(InputError::new(
                        "frame_times_s",
                        "given",
                        "frames every frame_interval_s for the swing-up (its clock is the winch's)",
                    ));
                }
                self.frames.validate(0.0)?;
                swingup.validate(self.frame_interval_s())?;
            }
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
        Ok(())
    }

    /// A track of every frame and marker must fit the machine, with room
    /// for the run's copies: each bound alone (a million frames, a thousand
    /// markers) would, but not both at once. Checked once per job, where
    /// its request is checked and before any track is allocated (not per
    /// simulation: the memory available moves, and a row must not depend
    /// on when it ran), against a quarter of the memory available then
    /// (`/proc/meminfo`; 4 GiB taken where that cannot be read).
    pub fn check_track_memory(&self) -> Result<(), InputError> {
        let (frames, markers) = (self.frame_count(), self.marker_arc_lengths_m.len() as u64);
        within_memory(
            ("frames × markers", format!("{frames} × {markers}")),
            (
                "a track",
                frames.saturating_mul(markers),
                TRACK_BYTES_PER_SAMPLE,
                "a frame and marker",
            ),
            "fewer markers",
        )
    }

    /// The frames the run records.
    fn frame_count(&self) -> u64 {
        match &self.frames {
            Frames::Every {
                interval_s,
                duration_s,
            } => (duration_s / interval_s).round() as u64 + 1,
            Frames::At { times_s, .. } => times_s.len() as u64,
        }
    }

    /// Refuses a run whose nodal state at every frame ([`NodalStates`],
    /// for a tether of `nodes` nodes, and its table) would not fit the
    /// budget [`Self::check_track_memory`] holds a track to.
    pub fn check_state_memory(&self, nodes: usize) -> Result<(), InputError> {
        let (frames, nodes) = (self.frame_count(), nodes as u64);
        within_memory(
            ("state", format!("{frames} frames × {nodes} nodes")),
            (
                "a nodal state",
                frames.saturating_mul(nodes),
                STATE_BYTES_PER_NODE,
                "a frame and node",
            ),
            "fewer elements",
        )
    }

    /// The prescribed motion of node 0.
    pub fn motion(&self) -> Arc<dyn PinMotion> {
        match &self.experiment {
            Experiment::Drop(drop) => Arc::new(FixedPin(drop.pin_m)),
            Experiment::Swingup(swingup) => Arc::new(swingup.winch.clone()),
        }
    }

    /// Initial coordinates and velocities (docs/model.md §4.1, §4.2).
    pub fn initial_state(&self, tether: &Tether) -> Result<(Vec<f64>, Vec<f64>), SolverError> {
        let q = match &self.experiment {
            Experiment::Drop(drop) => tether.straight_configuration(drop.pin_m, drop.direction()),
            Experiment::Swingup(_) => {
                equilibrium::hanging_equilibrium(tether, self.motion().position(0.0))?
            }
        };
        Ok((q, vec![0.0; tether.dofs()]))
    }
}

impl DropSettings {
    /// The paper's: pinned at the origin, released from 45° at t = 0.
    pub fn paper() -> Self {
        Self {
            pin_m: [0.0, 0.0],
            initial_angle_deg: 45.0,
            release_time_s: 0.0,
        }
    }

    /// Unit direction of the initial straight tether: raised by the
    /// initial angle from hanging straight down.
    pub fn direction(&self) -> [f64; 2] {
        let angle = self.initial_angle_deg.to_radians();
        [angle.sin(), -angle.cos()]
    }

    fn validate(&self) -> Result<(), InputError> {
        require_finite("pin_m", self.pin_m[0])?;
        require_finite("pin_m", self.pin_m[1])?;
        // A turn and more is a typo, not a release (999 for 99).
        if !(-180.0..=180.0).contains(&self.initial_angle_deg) {
            return Err(InputError::new(
                "initial_angle_deg",
                self.initial_angle_deg,
                "an angle from -180 to 180 degrees",
            ));
        }
        Ok(())
    }
}

impl SwingupSettings {
    /// The paper's winch (docs/model.md §4.2) and J_a (§5).
    pub fn paper() -> Self {
        Self {
            winch: WinchMotion::spec(DEFAULT_WINCH_AMPLITUDE_M, DEFAULT_WINCH_PERIODS_S),
            objective_interval_s: 1e-3,
            objective_weights: [0.01, 0.05],
        }
    }

    /// Checks the settings, with frames every `frame_interval_s`: a whole
    /// number of J_a samples apart, so that each frame is a sample.
    fn validate(&self, frame_interval_s: f64) -> Result<(), InputError> {
        require_positive("objective_interval_s", self.objective_interval_s)?;
        if !frames::whole_multiple(frame_interval_s, self.objective_interval_s) {
            return Err(InputError::new(
                "frame_interval_s",
                frame_interval_s,
                format!(
                    "a whole multiple of the objective interval {} s",
                    self.objective_interval_s
                ),
            ));
        }
        require_non_negative("objective weight k1", self.objective_weights[0])?;
        require_non_negative("objective weight k2", self.objective_weights[1])?;
        self.winch.validate()
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;

    #[test]
    fn a_release_angle_beyond_a_half_turn_is_refused() {
        for (angle, ok) in [(45.0, true), (-180.0, true), (180.0, true), (999.0, false)] {
            let mut drop = Scenario::new(ScenarioKind::Drop, 0.6);
            drop.as_drop_mut().unwrap().initial_angle_deg = angle;
            let checked = drop.validate(0.6);
            assert_eq!(checked.is_ok(), ok, "{angle}: {checked:?}");
        }
        let mut drop = Scenario::new(ScenarioKind::Drop, 0.6);
        drop.as_drop_mut().unwrap().initial_angle_deg = f64::NAN;
        let e = drop.validate(0.6).unwrap_err().to_string();
        assert!(
            e.contains("initial_angle_deg") && e.contains("-180 to 180"),
            "{e}"
        );
    }

    #[test]
    fn a_track_beyond_the_machines_memory_is_refused_before_it_is_made() {
        // A million frames (each bound's largest) of ten thousand markers:
        // 320 GB, beyond a quarter of any machine this runs on.
        let mut drop = Scenario::new(ScenarioKind::Drop, 0.6);
        drop.frames = Frames::Every {
            interval_s: 1e-3,
            duration_s: 999.0,
        };
        drop.marker_arc_lengths_m = (0..10_000).map(|j| 0.6 * j as f64 / 9_999.0).collect();
        let e = drop.check_track_memory().unwrap_err().to_string();
        assert!(
            e.contains("frames × markers = 999001 × 10000") && e.contains("available memory"),
            "{e}"
        );
        // The default drop's track is a few kilobytes.
        let default = Scenario::new(ScenarioKind::Drop, 0.6);
        assert!(default.check_track_memory().is_ok());
        // Its nodal state at n = 10,000 (a million frames): 1.5 TB.
        let e = drop.check_state_memory(10_001).unwrap_err().to_string();
        assert!(
            e.contains("state = 999001 frames × 10001 nodes") && e.contains("fewer elements"),
            "{e}"
        );
        assert!(default.check_state_memory(51).is_ok());
    }

    #[test]
    fn a_record_holds_its_own_experiments_fields_and_reads_back() {
        for (kind, absent, present) in [
            (ScenarioKind::Drop, "winch", "pin_m"),
            (ScenarioKind::Swingup, "pin_m", "winch"),
        ] {
            let scenario = Scenario::new(kind, 0.6).with_duration_s(1.5);
            let record = scenario.record();
            let value: serde_json::Value = serde_json::from_str(&record).unwrap();
            assert!(value.get(absent).is_none(), "{kind:?}: {record}");
            assert!(value.get(present).is_some(), "{kind:?}: {record}");
            assert!(value.get("frame_times_s").is_none(), "{kind:?}: {record}");
            let back: Scenario = serde_json::from_str(&record).unwrap();
            assert_eq!(back, scenario, "{kind:?}");
        }
        let drop = Scenario::new(ScenarioKind::Drop, 0.6).record();
        assert!(!drop.contains("objective"), "{drop}");
        // A film's frames are its times: no interval or duration beside them.
        let film = Scenario::film(vec![0.0, 0.03, 0.07], 0.01, 0.6);
        let record = film.record();
        assert!(!record.contains("duration_s"), "{record}");
        assert_eq!(serde_json::from_str::<Scenario>(&record).unwrap(), film);
    }

    #[test]
    fn a_record_from_before_the_frames_type_reads_as_it_was_meant() {
        // Written with every field, a film's times beside the interval and
        // duration they made meaningless.
        let old = r#"{"kind":"drop","duration_s":0.06,"frame_interval_s":0.04,"frame_times_s":[0.0,0.03,0.07],"release_time_s":0.01,"marker_arc_lengths_m":[0.0,0.6],"pin_m":[0.0,0.0],"initial_angle_deg":45.0,"winch":{"waypoints_m":[0.0,-0.2,0.2,0.0],"periods_s":[0.5,0.4,0.6],"height_m":0.0},"objective_interval_s":0.001,"objective_weights":[0.01,0.05]}"#;
        let read: Scenario = serde_json::from_str(old).unwrap();
        assert_eq!(read.frames, Frames::film(vec![0.0, 0.03, 0.07]));
        assert_eq!(read.release_time_s(), 0.01);
        assert_eq!(read.kind(), ScenarioKind::Drop);
    }

    #[test]
    fn the_default_markers_lie_on_every_tether_length() {
        // Every millimetre to 2 m, then decades to the longest tether.
        let lengths = (1..=2000)
            .map(|mm| mm as f64 * 1e-3)
            .chain([0.11, 0.21, 0.42, 0.49, 3.3, 7.7, 11.0, 99.9, 1000.0]);
        for length_m in lengths {
            for kind in [ScenarioKind::Drop, ScenarioKind::Swingup] {
                let s = Scenario::new(kind, length_m);
                assert!(
                    s.marker_arc_lengths_m
                        .iter()
                        .all(|&a| (0.0..=length_m).contains(&a)),
                    "{length_m} m: {:?}",
                    s.marker_arc_lengths_m
                );
                s.validate(length_m).unwrap();
            }
        }
    }
}
