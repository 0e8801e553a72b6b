//! The fifth-order adaptive solver: Radau IIA with three stages (Hairer &
//! Wanner's RADAU5; tableau in `scheme::RADAU5`) on the tether's
//! first-order form y = (q, v), y' = (v, ä), with simplified Newton on
//! the three stages' accelerations together.
//!
//! Why a third implicit method: ESDIRK (src/solver/esdirk.rs) takes far
//! fewer steps than generalized-α but solves its five stages one after the
//! other, each by its own Newton iterations, so at identification's
//! tolerances it evaluates the forces as often. Radau IIA's three stages
//! are solved at once: each Newton iteration evaluates the forces at the
//! three stages (independent evaluations, which a GPU can spread over its
//! lanes) and solves one real and one complex system, and its local error
//! falls as h⁶.
//!
//! With stage accelerations Aⱼ and A the Radau matrix,
//!
//! ```text
//! Vᵢ = vₙ + h Σⱼ aᵢⱼ Aⱼ,   Qᵢ = qₙ + h cᵢ vₙ + h² Σⱼ (A²)ᵢⱼ Aⱼ,   M Aᵢ = f(tₙ + cᵢh, Qᵢ, Vᵢ)
//! ```
//!
//! Newton's matrix I ⊗ M + h A ⊗ C + h² A² ⊗ K splits, with A = T Λ T⁻¹,
//! into M + (h/γ) C + (h/γ)² K (real) and M + μh C + (μh)² K (complex, μ =
//! 1/(α + iβ)): the other solvers' block-tridiagonal structure, factored
//! once per tangent and reused across steps while the step stays within
//! [`STALE_STEP_CHANGE`] and Newton contracts fast (`FRESH_TANGENT_ETA`).
//! The pin's rows take the prescribed motion at
//! each stage's time. The last stage is the step's end (stiffly accurate),
//! its A₃ the end's true acceleration, so frames come from the quintic
//! Hermite interpolant (`solver::embedded`).

use nalgebra::Matrix3;

use super::embedded::{EmbeddedMethod, Rejected, StepControl};
use super::esdirk::iteration_matrix;
use super::reference::{ReferenceOptions, ReferenceStats};
use super::{SecondOrderSystem, SolverError, TetherDynamics, length_weights};
use crate::linalg::{BandedMatrix, BlockTridiagonalLu, Complex64};
use crate::model::tether::{HALF_BANDWIDTH, PRESCRIBED_DOFS};
use crate::scheme::RADAU5;
use crate::scheme::implicit_control::{
    NewtonMonitor, NewtonVerdict, STALE_STEP_CHANGE, UNMEASURED_NEWTON_ETA,
};

const STAGES: usize = 3;

/// The power of (tolerance / error) that scales the step: the estimate's
/// local error falls as h^(3 + 1).
const ERROR_EXPONENT: f64 = 1.0 / (RADAU5.estimate_order + 1) as f64;

/// A step starts on a fresh tangent when the last step's Newton iteration
/// contracted with η = θ/(1 − θ) above this (θ ≈ 0.03). RADAU5 refreshes
/// its Jacobian unless θ < 0.001; on the paper's drop (n = 20, 40; D = 0,
/// 2000) this rule cost 1.0–1.4× less wall time than refreshing only when
/// Newton stalls, at equal error (examples/work_precision.rs): about two
/// factorizations a step buy two fewer iterations, six force evaluations.
const FRESH_TANGENT_ETA: f64 = 0.03;

/// Radau's Newton iteration stops at RADAU5's 3 % of the tolerance where
/// the other methods ask 1 % (`implicit_control::NEWTON_TOLERANCE_FRACTION`):
/// 3–8 % less wall time at the same tolerances in `examples/method_rule.rs`
/// (6–12 % fewer force evaluations in `work_precision`), its errors still
/// within its error law (at most 2× larger where they were already 20–100
/// times below what the rule asked).
const NEWTON_STOP_LOOSENING: f64 = 3.0;

/// The factored real and complex Newton matrices, and the step they were
/// built for.
struct Iteration {
    real: BlockTridiagonalLu,
    complex: BlockTridiagonalLu<Complex64>,
    step_s: f64,
}

pub struct RadauSolver {
    dynamics: TetherDynamics,
    control: StepControl,
    weights: Vec<f64>,
    /// A² (Qᵢ's weights on the stage accelerations, over h²).
    a_squared: [[f64; 3]; 3],
    /// The stages' accelerations, positions and velocities (all
    /// coordinates).
    stage_acc: [Vec<f64>; STAGES],
    stage_q: [Vec<f64>; STAGES],
    stage_v: [Vec<f64>; STAGES],
    /// The last accepted step's stage accelerations and its size: the
    /// next step's predictor.
    accepted_acc: [Vec<f64>; STAGES],
    accepted_step_s: Option<f64>,
    /// Newton's residuals (dynamic rows), transformed by T⁻¹ and solved
    /// in place; the complex system's right side.
    residual: [Vec<f64>; STAGES],
    complex_rhs: Vec<Complex64>,
    force: Vec<f64>,
    mass_times: Vec<f64>,
    stiffness: BandedMatrix,
    damping: BandedMatrix,
    iteration: Option<Iteration>,
    newton_eta: f64,
}

impl RadauSolver {
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
        let stages = || std::array::from_fn(|_| zeros());
        let a = Matrix3::from_fn(|i, j| RADAU5.a[i][j]);
        let a2 = a * a;
        Self {
            control: StepControl::new(options, ERROR_EXPONENT, (start_s, q, v, acc)),
            weights,
            a_squared: std::array::from_fn(|i| std::array::from_fn(|j| a2[(i, j)])),
            stage_acc: stages(),
            stage_q: stages(),
            stage_v: stages(),
            accepted_acc: stages(),
            accepted_step_s: None,
            residual: std::array::from_fn(|_| vec![0.0; n - PRESCRIBED_DOFS]),
            complex_rhs: vec![Complex64::default(); n - PRESCRIBED_DOFS],
            force: zeros(),
            mass_times: zeros(),
            stiffness: BandedMatrix::zeros(n, HALF_BANDWIDTH),
            damping: BandedMatrix::zeros(n, HALF_BANDWIDTH),
            iteration: None,
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

    /// The tangent at the middle stage's (Q, V) and both Newton matrices
    /// factored for step h. False: a matrix did not factor (the step must
    /// be redone smaller).
    fn refresh(&mut self, h: f64) -> bool {
        let (q, v) = (&self.stage_q[1], &self.stage_v[1]);
        let tether = self.dynamics.tether();
        let real = iteration_matrix(
            tether,
            (&mut self.stiffness, &mut self.damping),
            q,
            v,
            h / RADAU5.gamma,
        );
        let mu_h = h / Complex64::new(RADAU5.alpha, RADAU5.beta);
        let one = Complex64::new(1.0, 0.0);
        let complex = BlockTridiagonalLu::factor_combination(
            &[
                (one, tether.mass()),
                (mu_h, &self.damping),
                (mu_h * mu_h, &self.stiffness),
            ],
            PRESCRIBED_DOFS,
        );
        self.control.stats.factorizations += 2;
        self.iteration = match (real, complex) {
            (Ok(real), Ok(complex)) => Some(Iteration {
                real,
                complex,
                step_s: h,
            }),
            _ => None,
        };
        self.iteration.is_some()
    }

    /// One step of size h into the trial end ([`EmbeddedMethod::try_step`]).
    fn step(&mut self, h: f64) -> Result<f64, Rejected> {
        let stale = match &self.iteration {
            Some(built) => (h / built.step_s - 1.0).abs() > STALE_STEP_CHANGE,
            None => true,
        };
        self.predict(h);
        for i in 0..STAGES {
            let t_i = self.control.now.t + RADAU5.c[i] * h;
            self.stage_acc[i][..PRESCRIBED_DOFS]
                .copy_from_slice(&self.dynamics.motion().acceleration(t_i));
        }
        // A fresh tangent where the last step's Newton contracted slowly,
        // taken at the predicted middle stage: over a step of several
        // milliseconds the swinging tether's tangent at the step's start
        // no longer contracts the three stages fast.
        if stale || self.newton_eta > FRESH_TANGENT_ETA {
            self.stage_states(h);
            if !self.refresh(h) {
                return Err(Rejected::NEWTON);
            }
        }
        if !self.solve_stages(h) {
            return Err(Rejected::NEWTON);
        }
        let last = STAGES - 1;
        let trial = &mut self.control.trial;
        trial.t = self.control.now.t + h;
        trial.q.copy_from_slice(&self.stage_q[last]);
        trial.v.copy_from_slice(&self.stage_v[last]);
        trial.acc.copy_from_slice(&self.stage_acc[last]);
        let error = self.filtered_error(h);
        if !error.is_finite() {
            return Err(Rejected::NEWTON);
        }
        let tolerance = self.control.options.tolerance_m;
        if error > tolerance {
            return Err(Rejected::by_error(error, tolerance, ERROR_EXPONENT));
        }
        // Accepted (the step control accepts every estimate it is given):
        // its stages predict the next step's.
        for (kept, acc) in self.accepted_acc.iter_mut().zip(&self.stage_acc) {
            kept.copy_from_slice(acc);
        }
        self.accepted_step_s = Some(h);
        Ok(error)
    }

    /// Starts the stages' accelerations on the cubic through the last
    /// step's start and its three stages (RADAU5 extrapolates its
    /// collocation polynomial so), or at the start's acceleration on the
    /// first step.
    fn predict(&mut self, h: f64) {
        let (Some(h_last), Some(before)) = (self.accepted_step_s, &self.control.before) else {
            for acc in &mut self.stage_acc {
                acc.copy_from_slice(&self.control.now.acc);
            }
            return;
        };
        let c = RADAU5.c;
        let nodes = [0.0, c[0], c[1], c[2]];
        let known = [
            &before.acc,
            &self.accepted_acc[0],
            &self.accepted_acc[1],
            &self.accepted_acc[2],
        ];
        for (i, acc) in self.stage_acc.iter_mut().enumerate() {
            // The stage's time in units of the last step, from its start.
            let s = 1.0 + c[i] * h / h_last;
            let lagrange: [f64; 4] = std::array::from_fn(|j| {
                (0..4)
                    .filter(|&m| m != j)
                    .map(|m| (s - nodes[m]) / (nodes[j] - nodes[m]))
                    .product()
            });
            for (k, value) in acc.iter_mut().enumerate() {
                *value = (0..4).map(|j| lagrange[j] * known[j][k]).sum();
            }
        }
    }

    /// Every stage's Q, V from the accelerations, the pin's rows imposed.
    fn stage_states(&mut self, h: f64) {
        let now = &self.control.now;
        for i in 0..STAGES {
            let (a, a2) = (RADAU5.a[i], self.a_squared[i]);
            let c_h = RADAU5.c[i] * h;
            for k in 0..now.q.len() {
                let acc = [
                    self.stage_acc[0][k],
                    self.stage_acc[1][k],
                    self.stage_acc[2][k],
                ];
                let (mut dv, mut dq) = (0.0, 0.0);
                for j in 0..STAGES {
                    dv += a[j] * acc[j];
                    dq += a2[j] * acc[j];
                }
                self.stage_v[i][k] = now.v[k] + h * dv;
                self.stage_q[i][k] = now.q[k] + c_h * now.v[k] + h * h * dq;
            }
            let t_i = now.t + c_h;
            self.dynamics
                .impose(t_i, &mut self.stage_q[i], &mut self.stage_v[i]);
        }
    }

    /// Simplified Newton on the three stages' accelerations together.
    /// An iteration that contracts too slowly refreshes the tangent at the
    /// middle stage's iterate, once. False: the step must be redone
    /// smaller.
    fn solve_stages(&mut self, h: f64) -> bool {
        let mut refreshed = false;
        let mut monitor = NewtonMonitor::new(
            self.newton_eta,
            NEWTON_STOP_LOOSENING * self.control.options.tolerance_m,
        );
        loop {
            self.control.stats.newton_iterations += 1;
            self.stage_states(h);
            let correction = self.newton_correction(h);
            match monitor.judge(correction, 1.0) {
                NewtonVerdict::Converged { eta } => {
                    self.newton_eta = eta;
                    self.stage_states(h);
                    return true;
                }
                NewtonVerdict::Continue => {}
                NewtonVerdict::Failed => return false,
                NewtonVerdict::Stuck if refreshed => return false,
                NewtonVerdict::Stuck => {
                    self.stage_states(h);
                    if !self.refresh(h) {
                        return false;
                    }
                    refreshed = true;
                    monitor.restart();
                }
            }
        }
    }

    /// One simplified Newton iteration: the stages' residuals
    /// Rᵢ = fᵢ − M Aᵢ (three force evaluations), transformed by T⁻¹, the
    /// real and complex systems solved, transformed back by T and added to
    /// the accelerations. Returns the correction's size as a length: its
    /// largest move of a stage's positions, or of its velocities over the
    /// step (which feeds the next steps' positions unseen otherwise).
    fn newton_correction(&mut self, h: f64) -> f64 {
        let tether = self.dynamics.tether();
        let dynamic = PRESCRIBED_DOFS..self.force.len();
        for i in 0..STAGES {
            tether.generalized_force(&self.stage_q[i], &self.stage_v[i], &mut self.force);
            tether.mass_times(&self.stage_acc[i], &mut self.mass_times);
            for ((r, f), ma) in self.residual[i]
                .iter_mut()
                .zip(&self.force[dynamic.clone()])
                .zip(&self.mass_times[dynamic.clone()])
            {
                *r = f - ma;
            }
        }
        let (t, t_inverse) = (RADAU5.t, RADAU5.t_inverse);
        let [r0, r1, r2] = &mut self.residual;
        for k in 0..r0.len() {
            let r = [r0[k], r1[k], r2[k]];
            let g = t_inverse.map(|row| row[0] * r[0] + row[1] * r[1] + row[2] * r[2]);
            r0[k] = g[0];
            self.complex_rhs[k] = Complex64::new(g[1], g[2]);
        }
        let iteration = self.iteration.as_ref().expect("iteration matrices set");
        iteration.real.solve_in_place(r0);
        iteration.complex.solve_in_place(&mut self.complex_rhs);
        let mut largest = 0.0f64;
        for (k, (&real, complex)) in r0.iter().zip(&self.complex_rhs).enumerate() {
            let x = [real, complex.re, complex.im];
            let d = t.map(|row| row[0] * x[0] + row[1] * x[1] + row[2] * x[2]);
            let row = PRESCRIBED_DOFS + k;
            for (acc, dj) in self.stage_acc.iter_mut().zip(d) {
                acc[row] += dj;
            }
            for (a, a2) in RADAU5.a.iter().zip(&self.a_squared) {
                let dv: f64 = (0..STAGES).map(|j| a[j] * d[j]).sum();
                let dq: f64 = (0..STAGES).map(|j| a2[j] * d[j]).sum();
                largest =
                    largest.max((h * h * dq).abs().max((h * h * dv).abs()) * self.weights[row]);
            }
        }
        largest
    }

    /// The local error estimate as a length: RADAU5's embedded estimate
    /// e = (h f₀ + Σ ddᵢ Zᵢ)/γ over the stages' increments Zᵢ = Yᵢ − yₙ,
    /// filtered by (I − (h/γ) J)⁻¹ as Hairer and Wanner filter it (in
    /// second-order form one solve with the real Newton matrix: S y =
    /// M e_v − g K e_q, x = e_q + g y, g = h/γ), its largest position
    /// entry as a length (slopes weighted by l_e).
    fn filtered_error(&mut self, h: f64) -> f64 {
        let (gamma, dd) = (RADAU5.gamma, RADAU5.error_weights);
        let g = h / gamma;
        let now = &self.control.now;
        let n = now.q.len();
        // Scratch: the force and mass vectors hold e_q and e_v.
        let (e_q, e_v) = (&mut self.force, &mut self.mass_times);
        for k in 0..n {
            // The pin's rows are exact: no error there.
            if k < PRESCRIBED_DOFS {
                (e_q[k], e_v[k]) = (0.0, 0.0);
                continue;
            }
            let (mut zq, mut zv) = (0.0, 0.0);
            for ((weight, q), v) in dd.iter().zip(&self.stage_q).zip(&self.stage_v) {
                zq += weight * (q[k] - now.q[k]);
                zv += weight * (v[k] - now.v[k]);
            }
            e_q[k] = (h * now.v[k] + zq) / gamma;
            e_v[k] = (h * now.acc[k] + zv) / gamma;
        }
        // Stage 0's vectors as scratch for M e_v and K e_q; the residual's
        // first row for y.
        let (m_ev, k_eq) = (&mut self.stage_q[0], &mut self.stage_v[0]);
        self.dynamics.tether().mass_times(e_v, m_ev);
        self.stiffness.mul_vec(e_q, k_eq);
        let y = &mut self.residual[0];
        for (k, value) in y.iter_mut().enumerate() {
            let row = PRESCRIBED_DOFS + k;
            *value = m_ev[row] - g * k_eq[row];
        }
        let iteration = self.iteration.as_ref().expect("iteration matrices set");
        iteration.real.solve_in_place(y);
        (0..n - PRESCRIBED_DOFS).fold(0.0f64, |m, k| {
            let row = PRESCRIBED_DOFS + k;
            m.max(((e_q[row] + g * y[k]) * self.weights[row]).abs())
        })
    }
}

impl EmbeddedMethod for RadauSolver {
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
