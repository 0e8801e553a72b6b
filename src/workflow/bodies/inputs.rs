//! What a user gives a constrained body's run, as given (every field
//! optional), and the request it makes: the defaults of each body, and
//! every value checked against its range with an error naming the field
//! (`feedback_gains`, `curvature`, …: the command line renames them to its
//! flags).

use std::path::PathBuf;

use super::{Body, BodyKind, BodyRequest, CarriedTether, FormulationKind};
use crate::constrained::arm::Arm;
use crate::constrained::integrate::Tolerances;
use crate::constrained::robot::{Program, Robot};
use crate::engine::{Backend, EngineOptions};
use crate::error::InputError;
use crate::model::TetherParams;
use crate::workflow::WorkflowError;

/// The modified Lagrange form's default penalty: at the arm's fold the
/// drift peaks near 1e-8 m with it (docs/constrained.md's table: 1e-5 m
/// at the thesis's α = 10).
pub const DEFAULT_ALPHA: f64 = 1000.0;
/// The default constraint feedback (K_P, K_D) of each body.
pub const ARM_GAINS: (f64, f64) = (100.0, 20.0);
pub const ROBOT_GAINS: (f64, f64) = (4.0, 4.0);

#[derive(Debug, Clone, Default)]
pub struct BodyInputs {
    /// The arm's (default: modified Lagrange).
    pub formulation: Option<FormulationKind>,
    /// K_P, K_D.
    pub feedback_gains: Option<Vec<f64>>,
    /// The modified Lagrange form's α.
    pub alpha: Option<f64>,
    /// The robot's circle \[1/m\] (default 0.5) and its start off it \[m\]
    /// (default 0.2).
    pub curvature_per_m: Option<f64>,
    pub start_offset_m: Option<f64>,
    /// Default: the arm 1 s, the robot 20 s.
    pub duration_s: Option<f64>,
    /// The integrator's relative tolerance (default 1e-10).
    pub tolerance: Option<f64>,
    /// The tether the arm carries, run by the reference solver at its
    /// default tolerance (1e-9 m), or by the GPU engine (`engine`).
    pub tether: Option<TetherParams>,
    /// Where the carried tether runs: the CPU (`auto` too) or the GPU.
    pub engine: EngineOptions,
    /// Swept parameters, `NAME=AXIS` each ([`super::BodyAxis::parse`]): the run
    /// is then a sweep, `out` its table.
    pub axes: Vec<String>,
    pub out: PathBuf,
    pub force: bool,
}

impl BodyInputs {
    /// The request of a run of `kind`; an input the body does not take is
    /// refused, named.
    pub fn request(&self, kind: BodyKind) -> Result<BodyRequest, WorkflowError> {
        let not_its = |field: &str, whose: &str| {
            WorkflowError::Usage(format!("{field} is {whose}, not this body's"))
        };
        if self.engine.backend == Backend::Gpu && self.tether.is_none() {
            return Err(WorkflowError::Usage(
                "backend gpu runs the tether an arm carries (tether); the bodies themselves run on the CPU".into(),
            ));
        }
        let tolerance = self.tolerance.unwrap_or(1e-10);
        if !(1e-14..=1e-3).contains(&tolerance) {
            return Err(InputError::number(
                "tolerance",
                tolerance,
                "a relative tolerance from 1e-14 to 1e-3",
            )
            .into());
        }
        let (body, duration_s) = match kind {
            BodyKind::Arm => {
                if self.curvature_per_m.is_some() {
                    return Err(not_its("curvature", "the robot's"));
                }
                if self.start_offset_m.is_some() {
                    return Err(not_its("start_offset_m", "the robot's"));
                }
                let (kp, kd) = self.gains(ARM_GAINS)?;
                let formulation = self
                    .formulation
                    .unwrap_or(FormulationKind::ModifiedLagrange);
                if formulation == FormulationKind::Baumgarte && self.alpha.is_some() {
                    return Err(not_its("alpha", "the modified Lagrange form's"));
                }
                let formulation = formulation.with(kp, kd, self.alpha.unwrap_or(DEFAULT_ALPHA));
                (
                    Body::Arm {
                        arm: Arm::default(),
                        formulation,
                        tether: self.tether.clone().map(|params| CarriedTether {
                            params,
                            tolerance_m: crate::solver::ReferenceOptions::DEFAULT.tolerance_m,
                        }),
                    },
                    self.duration_s.unwrap_or(1.0),
                )
            }
            BodyKind::Robot => {
                if self.tether.is_some() {
                    return Err(WorkflowError::Usage(
                        "the robot carries no tether: a tether is carried by the arm (tether)"
                            .into(),
                    ));
                }
                if self.formulation.is_some() || self.alpha.is_some() {
                    return Err(WorkflowError::Usage(
                        "formulation and alpha are the arm's: the robot's rolling constraints are kept by their null space".into(),
                    ));
                }
                let (kp, kd) = self.gains(ROBOT_GAINS)?;
                let program = Program {
                    curvature_per_m: self.curvature_per_m.unwrap_or(0.5),
                    speed_m_s: 0.5,
                    kp_per_s2: kp,
                    kd_per_s: kd,
                };
                let body = Body::Robot {
                    robot: Robot::default(),
                    program,
                    start_offset_m: self.start_offset_m.unwrap_or(0.2),
                };
                (body, self.duration_s.unwrap_or(20.0))
            }
        };
        Ok(BodyRequest {
            body,
            duration_s,
            output_interval_s: 0.01,
            tolerances: Tolerances {
                rtol: tolerance,
                atol: tolerance * 1e-2,
                max_step_s: 0.01,
            },
            out: self.out.clone(),
            force: self.force,
            engine: self.engine.clone(),
        })
    }

    fn gains(&self, default: (f64, f64)) -> Result<(f64, f64), WorkflowError> {
        match self.feedback_gains.as_deref() {
            None => Ok(default),
            Some(&[kp, kd]) => Ok((kp, kd)),
            Some(other) => Err(InputError::new(
                "feedback_gains",
                format!("{} value(s)", other.len()),
                "two numbers, KP,KD",
            )
            .into()),
        }
    }
}
