//! The fourth-order adaptive solver: ESDIRK4(3)6L\[2\]SA (Kennedy & Carpenter
//! 2003; tableau in `scheme::ESDIRK43`) on the tether's first-order form
//! y = (q, v), y' = (v, ä), with Newton on each implicit stage's
//! accelerations and one factorization shared by all its stages.
//!
//! Why a second adaptive solver: generalized-α's local error falls as h³,
//! so each tenfold tighter tolerance costs it about 2.1× the steps; this
//! one's falls as h⁵ (its estimate's as h⁴). Identification asks for
//! tracks within a small fraction of a film's noise, where that difference
//! decides the run's cost (examples/work_precision.rs measures both).
//!
//! Stage i (i ≥ 1; stage 0 is the step's start, explicit), with
//! q̂ᵢ = qₙ + h Σⱼ₍ⱼ<ᵢ₎ aᵢⱼ Vⱼ and v̂ᵢ = vₙ + h Σⱼ₍ⱼ<ᵢ₎ aᵢⱼ Aⱼ:
//!
//! ```text
//! Vᵢ = v̂ᵢ + γh Aᵢ,   Qᵢ = q̂ᵢ + γh v̂ᵢ + (γh)² Aᵢ,   M Aᵢ = f(tₙ + cᵢh, Qᵢ, Vᵢ)
//! ```
//!
//! so Newton on Aᵢ has the matrix M + γh C + (γh)² K: the reference
//! solver's, with other scales, on the same block-tridiagonal structure.
//! The pin's rows take the prescribed motion at each stage's time. The last
//! stage is the step's end (stiffly accurate), so its Aᵢ is the end's true
//! acceleration and the next step's first stage costs nothing.
//!
//! Frames between steps come from the quintic Hermite interpolant
//! (`solver::embedded`, shared with Radau IIA), as does the step control.

use super::embedded::{EmbeddedMethod, Rejected, StepControl};
use super::reference::{ReferenceOptions, ReferenceStats};
use super::{NewtonWorkspace, SecondOrderSystem, SolverError, TetherDynamics, length_weights};
use crate::linalg::{BandedMatrix, BlockTridiagonalLu};
use crate::model::Tether;
use crate::model::tether::{HALF_BANDWIDTH, PRESCRIBED_DOFS};
use crate::scheme::implicit_control::{
    NewtonMonitor, NewtonVerdict, STALE_STEP_CHANGE, UNMEASURED_NEWTON_ETA,
};
use crate::scheme::{ESDIRK43, EsdirkTableau};

const STAGES: usize = EsdirkTableau::STAGES;

/// The step's power in the embedded estimate's local error (h^order: the
/// estimate's order plus one), whose root scales the step.
const ERROR_EXPONENT: f64 = 1.0 / ESDIRK43.order as f64;

pub struct EsdirkSolver {
    dynamics: TetherDynamics,
    control: StepControl,
    weights: Vec<f64>,
    /// Stage velocities and accelerations (all coordinates).
    stage_v: Vec<Vec<f64>>,
    stage_acc: Vec<Vec<f64>>,
    q_hat: Vec<f64>,
    v_hat: Vec<f64>,
    stage_q: Vec<f64>,
    stiffness: BandedMatrix,
    damping: BandedMatrix,
    /// The factored iteration matrix and the γh it was built for.
    iteration: Option<(BlockTridiagonalLu, f64)>,
    newton: NewtonWorkspace,
    newton_eta: f64,
}

impl EsdirkSolver {
    /// Starts at `start_s` from (q, v), the pin's rows imposed. The
    /// options' spectral radius is generalized-α's and is not used here.
    pub fn new(
        mut dynamics: TetherDynamics,
        mut q: Vec<f64>,
        mut v: Vec<f64>,
        start_s: f64,
        options: ReferenceOptions,
    ) -> Self {
        let acc = dynamics.initial_acceleration(start_s, &mut q, &mut v);
        let n = q.len();
        let weights = length_weights(dynamics.tether());
        let zeros = || vec![0.0; n];
        Self {
            control: StepControl::new(options, ERROR_EXPONENT, (start_s, q, v, acc)),
            weights,
            stage_v: (0..STAGES).map(|_| zeros()).collect(),
            stage_acc: (0..STAGES).map(|_| zeros()).collect(),
            q_hat: zeros(),
            v_hat: zeros(),
            stage_q: zeros(),
            stiffness: BandedMatrix::zeros(n, HALF_BANDWIDTH),
            damping: BandedMatrix::zeros(n, HALF_BANDWIDTH),
            iteration: None,
            newton: NewtonWorkspace::new(n),
            newton_eta: UNMEASURED_NEWTON_ETA,
            dynamics,
        }
    }

    /// The time of the last accepted step's end.
    pub fn time(&self) -> f64 {
        self.control.now.t
    }

    pub fn positions(&self) -> &[f64] {
        &self.control.now.q
    }

    pub fn velocities(&self) -> &[f64] {
        &self.control.now.v
    }

    pub fn stats(&self) -> ReferenceStats {
        self.control.stats
    }

    /// Steps until the state's time reaches `target_s` or passes it (by
    /// less than a step): the frames before it can then be read with
    /// [`Self::state_at`].
    pub fn advance_past(&mut self, target_s: f64) -> Result<(), SolverError> {
        EmbeddedMethod::advance_past(self, target_s)
    }

    /// The state at `t_s` within the last accepted step (or at the start,
    /// before any step), from the interpolant, the pin's rows exact.
    pub fn state_at(&self, t_s: f64, q: &mut [f64], v: &mut [f64]) {
        EmbeddedMethod::state_at(self, t_s, q, v);
    }

    /// Refreshes the tangent at the step's start and factors the
    /// iteration matrix for γh.
    fn refresh_at_start(&mut self, gamma_h: f64) -> bool {
        let lu = iteration_matrix(
            self.dynamics.tether(),
            (&mut self.stiffness, &mut self.damping),
            &self.control.now.q,
            &self.control.now.v,
            gamma_h,
        );
        self.keep_iteration(lu, gamma_h)
    }

    fn keep_iteration(
        &mut self,
        lu: Result<BlockTridiagonalLu, crate::linalg::FactorError>,
        gamma_h: f64,
    ) -> bool {
        self.control.stats.factorizations += 1;
        self.iteration = lu.ok().map(|lu| (lu, gamma_h));
        self.iteration.is_some()
    }

    /// One step of size h into the trial end ([`EmbeddedMethod::try_step`]).
    fn step(&mut self, h: f64) -> Result<f64, Rejected> {
        let tableau = &ESDIRK43;
        let n = self.control.now.q.len();
        let gamma_h = tableau.gamma * h;
        self.stage_v[0].copy_from_slice(&self.control.now.v);
        self.stage_acc[0].copy_from_slice(&self.control.now.acc);
        let stale = match &self.iteration {
            Some((_, built)) => (gamma_h / built - 1.0).abs() > STALE_STEP_CHANGE,
            None => true,
        };
        if stale && !self.refresh_at_start(gamma_h) {
            return Err(Rejected::NEWTON);
        }
        for i in 1..STAGES {
            let t_i = self.control.now.t + tableau.c[i] * h;
            for k in 0..n {
                let (mut dq, mut dv) = (0.0, 0.0);
                for j in 0..i {
                    dq += tableau.a[i][j] * self.stage_v[j][k];
                    dv += tableau.a[i][j] * self.stage_acc[j][k];
                }
                self.q_hat[k] = self.control.now.q[k] + h * dq;
                self.v_hat[k] = self.control.now.v[k] + h * dv;
            }
            self.predict_stage(i, h);
            self.stage_acc[i][..PRESCRIBED_DOFS]
                .copy_from_slice(&self.dynamics.motion().acceleration(t_i));
            if !self.solve_stage(i, t_i, h) {
                return Err(Rejected::NEWTON);
            }
        }
        // The last stage is the step's end.
        let last = STAGES - 1;
        self.control.trial.t = self.control.now.t + h;
        self.control.trial.q.copy_from_slice(&self.stage_q);
        self.control.trial.v.copy_from_slice(&self.stage_v[last]);
        self.control
            .trial
            .acc
            .copy_from_slice(&self.stage_acc[last]);
        let error = self.filtered_error(h);
        if !error.is_finite() {
            return Err(Rejected::NEWTON);
        }
        let tolerance = self.control.options.tolerance_m;
        if error > tolerance {
            return Err(Rejected::by_error(error, tolerance, ERROR_EXPONENT));
        }
        Ok(error)
    }

    /// Starts stage i's accelerations: linear in time through the two
    /// known accelerations nearest its time (this step's earlier stages,
    /// and the last step's start), which saves about a Newton iteration a
    /// stage over starting from the previous stage's; a quadratic through
    /// three took more iterations (BENCHMARKS.md).
    fn predict_stage(&mut self, i: usize, h: f64) {
        let c = &ESDIRK43.c;
        let t = c[i] * h;
        // Candidates by their times from the step's start; ties keep the
        // first. None: the last step's start.
        let before_t = self
            .control
            .before
            .as_ref()
            .map(|start| start.t - self.control.now.t);
        let candidates = (0..i)
            .map(|j| (Some(j), c[j] * h))
            .chain(before_t.map(|t0| (None, t0)));
        let (mut nearest, mut second) = (None::<(Option<usize>, f64)>, None);
        for candidate in candidates {
            let d = (candidate.1 - t).abs();
            if nearest.is_none_or(|n| d < (n.1 - t).abs()) {
                second = nearest;
                nearest = Some(candidate);
            } else if second.is_none_or(|s| d < (s.1 - t).abs()) {
                second = Some(candidate);
            }
        }
        let (done, rest) = self.stage_acc.split_at_mut(i);
        let start_acc = self.control.before.as_ref().map(|start| &start.acc[..]);
        let acc_of = |source: Option<usize>| source.map_or(start_acc, |j| Some(&done[j][..]));
        let (Some((j0, t0)), Some((j1, t1))) = (nearest, second) else {
            // The first step's first stage: only its start is known.
            rest[0].copy_from_slice(&done[0]);
            return;
        };
        let (a0, a1) = (
            acc_of(j0).expect("a known acceleration"),
            acc_of(j1).expect("a known acceleration"),
        );
        let (w0, w1) = ((t - t1) / (t0 - t1), (t - t0) / (t1 - t0));
        for ((p, x0), x1) in rest[0].iter_mut().zip(a0).zip(a1) {
            *p = w0 * x0 + w1 * x1;
        }
    }

    /// The local error estimate as a length: the embedded difference
    /// e = h Σ (b − b̂)ⱼ (Vⱼ, Aⱼ), filtered by (I − γh J)⁻¹ as Hairer and
    /// Wanner filter RADAU5's (Solving ODEs II, §IV.8). Unfiltered, the
    /// estimate of the stiff, heavily damped axial modes (which the
    /// L-stable method damps, and the embedded one does not) is orders
    /// above their real error and rejects step after step. In second-order
    /// form the filter is one solve with the iteration matrix:
    /// S y = M e_v − γh K e_q, x = e_q + γh y; the error is x's largest
    /// entry as a length (slopes weighted by l_e).
    fn filtered_error(&mut self, h: f64) -> f64 {
        let gamma_h = ESDIRK43.gamma * h;
        let e = ESDIRK43.error_weights();
        let n = self.control.now.q.len();
        let (e_q, e_v) = (&mut self.q_hat, &mut self.v_hat);
        for k in 0..n {
            let (mut dq, mut dv) = (0.0, 0.0);
            for ((weight, v), acc) in e.iter().zip(&self.stage_v).zip(&self.stage_acc) {
                dq += weight * v[k];
                dv += weight * acc[k];
            }
            // The pin's rows are exact: no error there.
            let free = if k < PRESCRIBED_DOFS { 0.0 } else { h };
            e_q[k] = free * dq;
            e_v[k] = free * dv;
        }
        // Newton's vectors as scratch: M e_v, K e_q, then y.
        let w = &mut self.newton;
        self.dynamics
            .tether()
            .mass_times(e_v, &mut w.mass_times_acc);
        self.stiffness.mul_vec(e_q, &mut w.force);
        for (k, r) in w.residual.iter_mut().enumerate() {
            let row = PRESCRIBED_DOFS + k;
            *r = w.mass_times_acc[row] - gamma_h * w.force[row];
        }
        let lu = &self.iteration.as_ref().expect("iteration matrix set").0;
        lu.solve_in_place(&mut w.residual);
        (0..n - PRESCRIBED_DOFS).fold(0.0f64, |m, k| {
            let row = PRESCRIBED_DOFS + k;
            m.max(((e_q[row] + gamma_h * w.residual[k]) * self.weights[row]).abs())
        })
    }

    /// Stage i's positions and velocities from its accelerations:
    /// Vᵢ = v̂ᵢ + γh Aᵢ, Qᵢ = q̂ᵢ + γh v̂ᵢ + (γh)² Aᵢ, the pin's rows imposed.
    fn stage_state(&mut self, i: usize, t_i: f64, gamma_h: f64) {
        let v = &mut self.stage_v[i];
        let rows = (self.stage_q.iter_mut().zip(v.iter_mut()))
            .zip(self.q_hat.iter().zip(&self.v_hat))
            .zip(&self.stage_acc[i]);
        for (((q, v), (q_hat, v_hat)), acc) in rows {
            *v = v_hat + gamma_h * acc;
            *q = q_hat + gamma_h * v_hat + gamma_h * gamma_h * acc;
        }
        self.dynamics.impose(t_i, &mut self.stage_q, v);
    }

    /// Newton on stage i's accelerations (started in `stage_acc[i]`),
    /// leaving the stage's Q, V in `stage_q`, `stage_v[i]`. A stage whose
    /// iteration contracts too slowly refreshes the tangent at its iterate,
    /// once: within a large step the tether turns enough that the tangent
    /// of its start no longer serves the later stages (the drop at 4.6 ms
    /// steps: rates 0.2–0.6 against 0.01 after a refresh), and a refresh
    /// costs far less than the step's rejection. False: the step must be
    /// redone smaller.
    fn solve_stage(&mut self, i: usize, t_i: f64, h: f64) -> bool {
        let gamma_h = ESDIRK43.gamma * h;
        // A correction d moves the stage's positions by (γh)² d and its
        // velocities by γh d; over the step, the velocity's change moves
        // positions by h γh d, four times the first (γ = ¼): Newton's error
        // is judged by the larger, or the velocities' error feeds the next
        // steps' positions unseen.
        let to_length = h * gamma_h;
        let mut refreshed = false;
        let mut monitor = NewtonMonitor::new(self.newton_eta, self.control.options.tolerance_m);
        loop {
            self.control.stats.newton_iterations += 1;
            self.stage_state(i, t_i, gamma_h);
            let lu = &self.iteration.as_ref().expect("iteration matrix set").0;
            let corrections = self.newton.correction(
                self.dynamics.tether(),
                lu,
                (&self.stage_q, &self.stage_v[i], &self.stage_acc[i]),
            );
            let mut correction = 0.0f64;
            for (k, d) in corrections.iter().enumerate() {
                let row = PRESCRIBED_DOFS + k;
                self.stage_acc[i][row] += d;
                correction = correction.max((to_length * d * self.weights[row]).abs());
            }
            // The first measured rate compares the second correction with
            // the first, which carries the predictor's error in a
            // nonlinear regime: on the drop it often reads 0.4–0.6 and
            // the next 0.01 (the iteration was fine). Only a growing
            // correction ends it there.
            match monitor.judge(correction, 1.0) {
                NewtonVerdict::Converged { eta } => {
                    self.newton_eta = eta;
                    // The stage's Q, V at the converged accelerations.
                    self.stage_state(i, t_i, gamma_h);
                    return true;
                }
                NewtonVerdict::Continue => {}
                NewtonVerdict::Failed => return false,
                NewtonVerdict::Stuck if refreshed => return false,
                NewtonVerdict::Stuck => {
                    // A stale tangent, not the step, may be the problem:
                    // refresh at this stage's iterate.
                    let lu = iteration_matrix(
                        self.dynamics.tether(),
                        (&mut self.stiffness, &mut self.damping),
                        &self.stage_q,
                        &self.stage_v[i],
                        gamma_h,
                    );
                    if !self.keep_iteration(lu, gamma_h) {
                        return false;
                    }
                    refreshed = true;
                    monitor.restart();
                }
            }
        }
    }
}

/// M + γh C + (γh)² K with the tangent at (q, v), factored (K and C
/// left in `stiffness` and `damping`).
pub(super) fn iteration_matrix(
    tether: &Tether,
    (stiffness, damping): (&mut BandedMatrix, &mut BandedMatrix),
    q: &[f64],
    v: &[f64],
    gamma_h: f64,
) -> Result<BlockTridiagonalLu, crate::linalg::FactorError> {
    tether.tangent(q, v, stiffness, damping);
    let mut s = tether.mass().clone();
    s.scale_add(1.0, stiffness, gamma_h * gamma_h);
    s.scale_add(1.0, damping, gamma_h);
    BlockTridiagonalLu::factor(&s, PRESCRIBED_DOFS)
}

impl EmbeddedMethod for EsdirkSolver {
    fn control(&self) -> &StepControl {
        &self.control
    }

    fn control_mut(&mut self) -> &mut StepControl {
        &mut self.control
    }

    fn dynamics(&self) -> &TetherDynamics {
        &self.dynamics
    }

    fn try_step(&mut self, h: f64) -> Result<f64, Rejected> {
        self.step(h)
    }
}
