//! The fixed-step solvers: one simulation advanced by the explicit scheme
//! (src/solver/explicit.rs) or its semi-implicit variant
//! (src/solver/semi_implicit.rs) with a step chosen beforehand.

use super::explicit::verlet_step;
use super::semi_implicit::semi_implicit_step;
use super::{SolverError, SolverKind, TetherDynamics};

use crate::scheme::FixedStepScheme;
use crate::scheme::{expand_back, frame_due};

impl From<FixedStepScheme> for SolverKind {
    /// The solver a user names to run this scheme on the CPU.
    fn from(scheme: FixedStepScheme) -> Self {
        match scheme {
            FixedStepScheme::Explicit => SolverKind::Explicit,
            FixedStepScheme::SemiImplicit => SolverKind::SemiImplicit,
        }
    }
}

/// A fixed-step solver for one simulation. Time is kept as an integer step
/// count so that sample times (multiples of the frame interval) are hit
/// exactly, never by accumulated floating-point sums.
pub struct FixedStepSolver {
    scheme: FixedStepScheme,
    dynamics: TetherDynamics,
    q: Vec<f64>,
    v: Vec<f64>,
    a: Vec<f64>,
    scratch: Vec<f64>,
    damped: Vec<f64>,
    start_s: f64,
    step_s: f64,
    steps: u64,
}

/// How often (in steps) the state is checked for divergence between samples.
const DIVERGENCE_CHECK_INTERVAL: u64 = 256;

impl FixedStepSolver {
    pub fn new(
        scheme: FixedStepScheme,
        mut dynamics: TetherDynamics,
        mut q: Vec<f64>,
        mut v: Vec<f64>,
        start_s: f64,
        step_s: f64,
    ) -> Self {
        let a = dynamics.initial_acceleration(start_s, &mut q, &mut v);
        let n = q.len();
        Self {
            scheme,
            dynamics,
            q,
            v,
            a,
            scratch: vec![0.0; n],
            damped: vec![0.0; n],
            start_s,
            step_s,
            steps: 0,
        }
    }

    pub fn scheme(&self) -> FixedStepScheme {
        self.scheme
    }

    pub fn time(&self) -> f64 {
        self.start_s + self.steps as f64 * self.step_s
    }

    pub fn step_s(&self) -> f64 {
        self.step_s
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    pub fn positions(&self) -> &[f64] {
        &self.q
    }

    pub fn velocities(&self) -> &[f64] {
        &self.v
    }

    /// Positions and velocities at `time_s` (at or after the start, not
    /// before the step the solver is at): the solver steps to the end of
    /// the step that holds `time_s` and expands back from there
    /// ([`crate::scheme::FrameDue`]), as the GPU engine samples a frame.
    pub fn sample_at(&mut self, time_s: f64) -> Result<(Vec<f64>, Vec<f64>), SolverError> {
        if time_s <= self.start_s {
            return Ok((self.q.clone(), self.v.clone()));
        }
        let due = frame_due(time_s - self.start_s, self.step_s);
        if due.step > self.steps {
            self.advance_to(self.start_s + due.step as f64 * self.step_s)?;
        }
        let b = due.back_s;
        if b == 0.0 {
            return Ok((self.q.clone(), self.v.clone()));
        }
        let q = (0..self.q.len())
            .map(|i| expand_back(self.q[i], self.v[i], self.a[i], b))
            .collect();
        let v = self.v.iter().zip(&self.a).map(|(v, a)| v - b * a).collect();
        Ok((q, v))
    }

    /// Advances to `target_s`, which must be a whole number of steps ahead
    /// (the caller chooses steps that divide the sample interval).
    pub fn advance_to(&mut self, target_s: f64) -> Result<(), SolverError> {
        let remaining = (target_s - self.time()) / self.step_s;
        let count = remaining.round();
        debug_assert!(
            (remaining - count).abs() < 1e-6,
            "target {target_s} is not a whole number of steps {} away from {}",
            self.step_s,
            self.time()
        );
        let count = count.max(0.0) as u64;
        for i in 0..count {
            // Time as (whole steps) × step, as the GPU computes it.
            let t_end = self.start_s + (self.steps + 1) as f64 * self.step_s;
            match self.scheme {
                FixedStepScheme::Explicit => verlet_step(
                    &mut self.dynamics,
                    t_end,
                    self.step_s,
                    &mut self.q,
                    &mut self.v,
                    &mut self.a,
                    &mut self.scratch,
                ),
                FixedStepScheme::SemiImplicit => {
                    if let Err(e) = semi_implicit_step(
                        &mut self.dynamics,
                        t_end,
                        self.step_s,
                        &mut self.q,
                        &mut self.v,
                        &mut self.a,
                        &mut self.scratch,
                        &mut self.damped,
                    ) {
                        // A blown-up state fails the factorization first:
                        // report it as the divergence it is.
                        self.dynamics.check_state(t_end, &self.q, &self.v)?;
                        return Err(e);
                    }
                }
            }
            self.steps += 1;
            if (i + 1) % DIVERGENCE_CHECK_INTERVAL == 0 {
                self.dynamics.check_state(self.time(), &self.q, &self.v)?;
            }
        }
        self.dynamics.check_state(self.time(), &self.q, &self.v)
    }
}
