//! One run of a constrained body (`simulate --scenario arm|robot`,
//! docs/constrained.md): Deressa's arm on its line under one formulation,
//! or the mobile robot on its programmed circle; its table (every output
//! time: coordinates, rates, torques, the drift or the tracking error),
//! its figure, and a report of how it ended. A formulation that fails (the
//! Baumgarte form at the arm's folded pose) writes the run up to there and
//! ends with exit code 3, naming the time.

mod arm;
mod carried;
mod inputs;
mod robot;
mod sweep;

use std::path::PathBuf;

use crate::constrained::Formulation;
pub use crate::constrained::FormulationKind;
use crate::constrained::arm::Arm;
use crate::constrained::integrate::{Ending, Tolerances, Trajectory};
use crate::constrained::robot::{Program, Robot};
use crate::engine::EngineOptions;
use crate::error::InputError;
use crate::metadata;
use crate::workflow::WorkflowError;

pub use carried::{
    CARRIED_MARKERS, CarriedTether, GPU_SCHEME, PULL_SAMPLES_PER_OUTPUT, TetherRun, gpu_simulation,
    path_simulation, program_path, run_tether, run_tethers,
};
pub use inputs::{ARM_GAINS, BodyInputs, DEFAULT_ALPHA, ROBOT_GAINS};
pub use sweep::{BodyAxis, BodyParameter, BodySweepReport, MAX_BODY_CANDIDATES, sweep};

/// Which body, and how it is run.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Arm {
        arm: Arm,
        formulation: Formulation,
        /// The tether its end point carries, if any.
        tether: Option<CarriedTether>,
    },
    Robot {
        robot: Robot,
        program: Program,
        start_offset_m: f64,
    },
}

#[derive(Debug, Clone)]
pub struct BodyRequest {
    pub body: Body,
    pub duration_s: f64,
    /// The table's time step \[s\].
    pub output_interval_s: f64,
    pub tolerances: Tolerances,
    /// The table (`.parquet`); its figure beside it (same stem).
    pub out: PathBuf,
    pub force: bool,
    /// Where a carried tether runs (the bodies themselves run on the CPU).
    pub engine: EngineOptions,
}

/// How the run went.
#[derive(Debug, Clone)]
pub struct BodyReport {
    pub body: BodyKind,
    /// The arm's (the robot has one way).
    pub formulation: Option<FormulationKind>,
    pub rows: usize,
    pub ending: Ending,
    /// Largest |Φ| \[m\] and |Φ̇| \[m/s\] over the outputs (the arm).
    pub max_drift_m: Option<f64>,
    pub max_drift_rate_m_s: Option<f64>,
    /// The largest and the last tracking error \[m\], and the first time
    /// after which it stays under 1 mm (the robot).
    pub max_tracking_error_m: Option<f64>,
    pub final_tracking_error_m: Option<f64>,
    pub settled_at_s: Option<f64>,
    /// The carried tether's largest pull on the end point \[N\], and
    /// what ran the tether, in words.
    pub max_pull_n: Option<f64>,
    pub tether_solver: Option<String>,
    pub steps: usize,
    pub evaluations: usize,
    pub out: PathBuf,
}

/// A tracking error this small counts as on the path.
pub const SETTLED_M: f64 = 1e-3;

impl BodyRequest {
    /// The table is Parquet, and replaces an earlier one only by --force.
    fn check_output(&self) -> Result<(), WorkflowError> {
        if self.out.extension().is_none_or(|e| e != "parquet") {
            return Err(InputError::new(
                "out",
                self.out.display(),
                "a .parquet file (its figure is written beside it)",
            )
            .into());
        }
        if self.out.exists() && !self.force {
            return Err(WorkflowError::Usage(format!(
                "{} exists: give --force to replace it",
                self.out.display()
            )));
        }
        Ok(())
    }

    pub(super) fn check(&self) -> Result<(), WorkflowError> {
        in_range(
            "duration",
            self.duration_s,
            1e-3,
            3600.0,
            "a duration from 0.001 to 3600 s",
        )?;
        in_range(
            "output_interval_s",
            self.output_interval_s,
            1e-4,
            self.duration_s,
            "an interval from 0.0001 s to the duration",
        )?;
        if (self.duration_s / self.output_interval_s) > 1e6 {
            return Err(InputError::number(
                "output_interval_s",
                self.output_interval_s,
                "at most a million output times in the run",
            )
            .into());
        }
        self.check_output()?;
        match &self.body {
            Body::Arm {
                arm,
                formulation,
                tether,
            } => {
                if let Some(tether) = tether {
                    tether.check()?;
                }
                in_range(
                    "speed_m_s",
                    arm.speed_m_s,
                    1e-3,
                    100.0,
                    "a speed from 0.001 to 100 m/s",
                )?;
                let (kp, kd, alpha) = match *formulation {
                    Formulation::Baumgarte { kp, kd } => (kp, kd, 1.0),
                    Formulation::ModifiedLagrange { alpha, kp, kd } => (kp, kd, alpha),
                };
                in_range("feedback_gains", kp, 0.0, 1e8, "K_P from 0 to 1e8 1/s²")?;
                in_range("feedback_gains", kd, 0.0, 1e4, "K_D from 0 to 1e4 1/s")?;
                in_range("alpha", alpha, 1e-6, 1e8, "a penalty from 1e-6 to 1e8")?;
            }
            Body::Robot {
                program,
                start_offset_m,
                ..
            } => {
                in_range(
                    "curvature",
                    program.curvature_per_m,
                    1e-3,
                    100.0,
                    "a curvature from 0.001 to 100 1/m",
                )?;
                in_range(
                    "speed_m_s",
                    program.speed_m_s,
                    1e-3,
                    100.0,
                    "a speed from 0.001 to 100 m/s",
                )?;
                in_range(
                    "kp",
                    program.kp_per_s2,
                    0.0,
                    1e6,
                    "a gain from 0 to 1e6 1/s²",
                )?;
                in_range(
                    "feedback_gains",
                    program.kd_per_s,
                    0.0,
                    1e3,
                    "K_D from 0 to 1e3 1/s",
                )?;
                let radius = 1.0 / program.curvature_per_m;
                in_range(
                    "start_offset_m",
                    *start_offset_m,
                    -0.5 * radius,
                    radius,
                    "an offset within half the circle's radius inside to one radius outside",
                )?;
            }
        }
        Ok(())
    }

    pub(super) fn outputs(&self) -> Vec<f64> {
        let count = (self.duration_s / self.output_interval_s).round() as usize;
        (0..=count)
            .map(|k| (k as f64 * self.output_interval_s).min(self.duration_s))
            .collect()
    }
}

/// What [`execute`] did: one run, or a sweep.
#[derive(Debug, Clone)]
pub enum BodyOutcome {
    Run(BodyReport),
    Sweep(BodySweepReport),
}

/// The job `inputs` ask for: the sweep over their axes, or the one run.
/// A swept value's error names its axis (`axis kp_per_s2`).
pub fn execute(inputs: &BodyInputs, kind: BodyKind) -> Result<BodyOutcome, WorkflowError> {
    let request = inputs.request(kind)?;
    if inputs.axes.is_empty() {
        return run(&request).map(BodyOutcome::Run);
    }
    let axes = inputs
        .axes
        .iter()
        .map(|text| BodyAxis::parse(text, &request.body))
        .collect::<Result<Vec<_>, _>>()?;
    sweep(&request, &axes).map(BodyOutcome::Sweep)
}

/// `v` within lo..=hi, or an error naming `name` and saying `what`.
fn in_range(name: &str, v: f64, lo: f64, hi: f64, what: &str) -> Result<(), WorkflowError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(InputError::number(name, v, what.to_string()).into())
    }
}

/// Runs the body and writes its table and figure.
pub fn run(request: &BodyRequest) -> Result<BodyReport, WorkflowError> {
    request.check()?;
    let outputs = request.outputs();
    match &request.body {
        Body::Arm {
            arm,
            formulation,
            tether,
        } => arm::run(request, arm, *formulation, tether.as_ref(), &outputs),
        Body::Robot {
            robot,
            program,
            start_offset_m,
        } => robot::run(request, robot, program, *start_offset_m, &outputs),
    }
}

fn body_metadata(
    run: &Trajectory,
    body: &str,
    formulation: Option<&str>,
) -> std::collections::BTreeMap<String, String> {
    let mut m = metadata::base();
    let status = match &run.ending {
        Ending::Finished => serde_json::json!({"status": "finished"}),
        Ending::Failed { t_s, reason } => {
            serde_json::json!({"status": "failed", "failed_at_s": t_s, "reason": reason})
        }
    };
    m.insert(
        "tether_sweep.run".into(),
        serde_json::json!({
            "body": body, "formulation": formulation, "ending": status,
            "steps": run.steps, "rejected": run.rejected, "evaluations": run.evaluations,
            "integrator": "SDIRK4 (Hairer–Wanner, γ = 1/4) with embedded order 3",
        })
        .to_string(),
    );
    m
}

/// The constrained bodies `simulate` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Arm,
    Robot,
}

impl crate::named::Named for BodyKind {
    const WHAT: &'static str = "scenario";
    const ALL: &'static [Self] = &[Self::Arm, Self::Robot];

    fn name(self) -> &'static str {
        match self {
            Self::Arm => "arm",
            Self::Robot => "robot",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Self::Arm => {
                "Deressa's two-link arm, its end point driven along y = 0.5 m through the folded pose (docs/constrained.md)"
            }
            Self::Robot => {
                "a two-wheeled mobile robot on a programmed circle, rolling without slipping (docs/constrained.md)"
            }
        }
    }
}
