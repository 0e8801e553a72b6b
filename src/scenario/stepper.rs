//! The CPU solver a simulation samples: one interface over the fixed-step
//! schemes and the two adaptive implicit methods.

use super::{Scenario, SolverReport, SolverSettings, fixed_step};
use crate::model::Tether;
use crate::scheme::ImplicitMethod;
use crate::solver::{
    EsdirkSolver, FixedStepSolver, RadauSolver, ReferenceSolver, SolverError, TetherDynamics,
};

/// One sampling solver: the fixed-step schemes and generalized-α advance
/// exactly to sample times, ESDIRK past them (reading them from its
/// interpolant).
pub(super) enum Stepper {
    FixedStep(Box<FixedStepSolver>),
    Reference(Box<ReferenceSolver>),
    /// The fourth-order solver steps past each sample and reads it from
    /// its interpolant: the state last sampled.
    Esdirk(Box<EsdirkSolver>, (Vec<f64>, Vec<f64>)),
    /// Radau IIA, sampled as ESDIRK is.
    Radau(Box<RadauSolver>, (Vec<f64>, Vec<f64>)),
}

impl Stepper {
    /// The solver `settings` choose, at the start (t = 0) given.
    pub(super) fn new(
        settings: &SolverSettings,
        (dynamics, q0, v0): (TetherDynamics, Vec<f64>, Vec<f64>),
        tether: &Tether,
        scenario: &Scenario,
    ) -> Result<Self, SolverError> {
        let reference = settings.reference;
        Ok(match settings.kind.fixed_step_scheme() {
            Some(scheme) => {
                let step = fixed_step(scheme, settings.step_s, tether, &q0, scenario)?;
                Stepper::FixedStep(Box::new(FixedStepSolver::new(
                    scheme, dynamics, q0, v0, 0.0, step,
                )))
            }
            None => match reference.method {
                ImplicitMethod::GeneralizedAlpha => Stepper::Reference(Box::new(
                    ReferenceSolver::new(dynamics, q0, v0, 0.0, reference),
                )),
                ImplicitMethod::Esdirk43 => {
                    let solver = EsdirkSolver::new(dynamics, q0, v0, 0.0, reference);
                    let start = (solver.positions().to_vec(), solver.velocities().to_vec());
                    Stepper::Esdirk(Box::new(solver), start)
                }
                ImplicitMethod::Radau5 => {
                    let solver = RadauSolver::new(dynamics, q0, v0, 0.0, reference);
                    let start = (solver.positions().to_vec(), solver.velocities().to_vec());
                    Stepper::Radau(Box::new(solver), start)
                }
            },
        })
    }

    pub(super) fn advance_to(&mut self, t: f64) -> Result<(), SolverError> {
        match self {
            Stepper::FixedStep(s) => s.advance_to(t),
            Stepper::Reference(s) => s.advance_to(t),
            Stepper::Esdirk(s, sampled) => {
                s.advance_past(t)?;
                s.state_at(t, &mut sampled.0, &mut sampled.1);
                Ok(())
            }
            Stepper::Radau(s, sampled) => {
                s.advance_past(t)?;
                s.state_at(t, &mut sampled.0, &mut sampled.1);
                Ok(())
            }
        }
    }
    /// The state at `t`, which may fall between a fixed step's steps
    /// ([`FixedStepSolver::sample_at`]).
    pub(super) fn sample_at(&mut self, t: f64) -> Result<(Vec<f64>, Vec<f64>), SolverError> {
        match self {
            Stepper::FixedStep(s) => s.sample_at(t),
            Stepper::Reference(s) => {
                s.advance_to(t)?;
                Ok((s.positions().to_vec(), s.velocities().to_vec()))
            }
            Stepper::Esdirk(..) | Stepper::Radau(..) => {
                self.advance_to(t)?;
                let (q, v) = self.state();
                Ok((q.to_vec(), v.to_vec()))
            }
        }
    }
    pub(super) fn state(&self) -> (&[f64], &[f64]) {
        match self {
            Stepper::FixedStep(s) => (s.positions(), s.velocities()),
            Stepper::Reference(s) => (s.positions(), s.velocities()),
            Stepper::Esdirk(_, (q, v)) | Stepper::Radau(_, (q, v)) => (q, v),
        }
    }
    pub(super) fn report(&self) -> SolverReport {
        match self {
            Stepper::FixedStep(s) => SolverReport::FixedStep {
                scheme: s.scheme(),
                step_s: s.step_s(),
                steps: s.steps(),
            },
            Stepper::Reference(s) => SolverReport::Reference(s.stats()),
            Stepper::Esdirk(s, _) => SolverReport::Reference(s.stats()),
            Stepper::Radau(s, _) => SolverReport::Reference(s.stats()),
        }
    }
}
