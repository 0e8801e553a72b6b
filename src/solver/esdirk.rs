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
//! Frames between steps come from the quintic Hermite interpolant through
//! both ends' positions, velocities and accelerations: its error is
//! O(h⁶), below the method's own O(h⁵) local error, so the step follows
//! accuracy and never shortens to land on a frame.

use super::reference::{ReferenceOptions, ReferenceStats};
use super::{NewtonWorkspace, SecondOrderSystem, SolverError, TetherDynamics, length_weights};
use crate::linalg::{BandedMatrix, BlockTridiagonalLu};
use crate::model::Tether;
use crate::model::tether::{HALF_BANDWIDTH, PRESCRIBED_DOFS};
use crate::scheme::implicit_control::{
    KEEP_BELOW, MIN_STEP_S, NewtonMonitor, NewtonVerdict, REJECTED_STEP_FACTOR, STALE_STEP_CHANGE,
    STEP_FACTOR_MAX, STEP_FACTOR_MIN, STEP_SAFETY, UNMEASURED_NEWTON_ETA,
};
use crate::scheme::{ESDIRK43, EsdirkTableau};

const STAGES: usize = EsdirkTableau::STAGES;

/// The step's power in the embedded estimate's local error (h^order: the
/// estimate's order plus one), whose root scales the step.
const ERROR_EXPONENT: f64 = 1.0 / ESDIRK43.order as f64;

/// After Newton fails, the cap on the step grows by this factor per
/// accepted step: slowly, since the cap's failure is costly (a whole
/// step's stages) and says nothing about a step slightly larger.
const NEWTON_CAP_GROWTH: f64 = 1.05;

/// A step that must be redone smaller: by `factor`, and whether Newton
/// (not the error) refused it.
#[derive(Debug, Clone, Copy)]
struct Rejected {
    factor: f64,
    newton: bool,
}

impl Rejected {
    const NEWTON: Self = Self {
        factor: REJECTED_STEP_FACTOR,
        newton: true,
    };
}

/// One end of an accepted step: what the interpolant needs.
#[derive(Debug, Clone)]
struct StepEnd {
    t: f64,
    q: Vec<f64>,
    v: Vec<f64>,
    acc: Vec<f64>,
}

pub struct EsdirkSolver {
    dynamics: TetherDynamics,
    options: ReferenceOptions,
    weights: Vec<f64>,
    /// The state now (the last accepted step's end).
    now: StepEnd,
    /// The last accepted step's start, for frames within it.
    before: Option<StepEnd>,
    step_s: f64,
    /// The largest step since Newton last failed: a step whose error
    /// allows it but whose stages do not converge would otherwise be
    /// retried at twice the step after every success.
    newton_cap_s: f64,
    stats: ReferenceStats,
    /// Stage velocities and accelerations (all coordinates).
    stage_v: Vec<Vec<f64>>,
    stage_acc: Vec<Vec<f64>>,
    /// The trial step's end.
    trial: StepEnd,
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
            options,
            weights,
            trial: StepEnd {
                t: start_s,
                q: zeros(),
                v: zeros(),
                acc: zeros(),
            },
            now: StepEnd {
                t: start_s,
                q,
                v,
                acc,
            },
            before: None,
            step_s: options.initial_step_s.min(options.max_step_s),
            newton_cap_s: f64::INFINITY,
            stats: ReferenceStats {
                min_step_s: f64::INFINITY,
                ..Default::default()
            },
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
        self.now.t
    }

    pub fn positions(&self) -> &[f64] {
        &self.now.q
    }

    pub fn velocities(&self) -> &[f64] {
        &self.now.v
    }

    pub fn stats(&self) -> ReferenceStats {
        self.stats
    }

    /// Steps until the state's time reaches `target_s` or passes it (by
    /// less than a step): the frames before it can then be read with
    /// [`Self::state_at`].
    pub fn advance_past(&mut self, target_s: f64) -> Result<(), SolverError> {
        while self.now.t < target_s {
            let h = self.step_s;
            match self.try_step(h) {
                Ok(error) => {
                    self.accept(h, error);
                    self.newton_cap_s *= NEWTON_CAP_GROWTH;
                    self.step_s = (h * step_factor(error, self.options.tolerance_m))
                        .min(self.options.max_step_s)
                        .min(self.newton_cap_s.max(h));
                }
                Err(Rejected { factor, newton }) => {
                    if newton {
                        self.newton_cap_s = h * factor;
                    }
                    self.stats.rejected_steps += 1;
                    self.step_s = h * factor;
                }
            }
            if self.step_s < MIN_STEP_S {
                return Err(SolverError::NewtonFailed {
                    time_s: self.now.t,
                    step_s: self.step_s,
                });
            }
        }
        self.dynamics
            .check_state(self.now.t, &self.now.q, &self.now.v)
    }

    /// The state at `t_s` within the last accepted step (or at the start,
    /// before any step): positions and velocities from the quintic Hermite
    /// interpolant, the pin's rows exact.
    ///
    /// # Panics
    /// If `t_s` lies outside that step: a caller's bug ([`Self::advance_past`]
    /// first).
    pub fn state_at(&self, t_s: f64, q: &mut [f64], v: &mut [f64]) {
        let end = &self.now;
        let Some(start) = &self.before else {
            assert!(t_s == end.t, "no step holds t = {t_s} s yet");
            q.copy_from_slice(&end.q);
            v.copy_from_slice(&end.v);
            return;
        };
        assert!(
            t_s >= start.t && t_s <= end.t,
            "t = {t_s} s lies outside the last step [{}, {}] s",
            start.t,
            end.t
        );
        let h = end.t - start.t;
        let (p, d) = quintic_hermite((t_s - start.t) / h);
        for i in 0..q.len() {
            let values = [
                start.q[i],
                h * start.v[i],
                h * h * start.acc[i],
                end.q[i],
                h * end.v[i],
                h * h * end.acc[i],
            ];
            q[i] = (0..6).map(|k| p[k] * values[k]).sum();
            v[i] = (0..6).map(|k| d[k] * values[k]).sum::<f64>() / h;
        }
        self.dynamics.impose(t_s, q, v);
    }

    fn accept(&mut self, h: f64, error: f64) {
        // The old start's vectors become the next trial's: no allocation.
        let old_before = self.before.take();
        let new_end = std::mem::replace(
            &mut self.trial,
            old_before.unwrap_or_else(|| self.now.clone()),
        );
        self.before = Some(std::mem::replace(&mut self.now, new_end));
        let s = &mut self.stats;
        s.steps += 1;
        s.max_local_error_m = s.max_local_error_m.max(error);
        s.summed_local_error_m += error;
        s.min_step_s = s.min_step_s.min(h);
        s.max_step_s = s.max_step_s.max(h);
    }

    /// Refreshes the tangent at the step's start and factors the
    /// iteration matrix for γh.
    fn refresh_at_start(&mut self, gamma_h: f64) -> bool {
        let lu = iteration_matrix(
            self.dynamics.tether(),
            (&mut self.stiffness, &mut self.damping),
            &self.now.q,
            &self.now.v,
            gamma_h,
        );
        self.keep_iteration(lu, gamma_h)
    }

    fn keep_iteration(
        &mut self,
        lu: Result<BlockTridiagonalLu, crate::linalg::FactorError>,
        gamma_h: f64,
    ) -> bool {
        self.stats.factorizations += 1;
        self.iteration = lu.ok().map(|lu| (lu, gamma_h));
        self.iteration.is_some()
    }

    /// One step of size h into `self.trial`. Returns its error estimate,
    /// or, if it must be redone smaller, the factor to shrink it by: from
    /// the estimate where the error was too large, [`REJECTED_STEP_FACTOR`]
    /// where Newton did not converge.
    fn try_step(&mut self, h: f64) -> Result<f64, Rejected> {
        let tableau = &ESDIRK43;
        let n = self.now.q.len();
        let gamma_h = tableau.gamma * h;
        self.stage_v[0].copy_from_slice(&self.now.v);
        self.stage_acc[0].copy_from_slice(&self.now.acc);
        let stale = match &self.iteration {
            Some((_, built)) => (gamma_h / built - 1.0).abs() > STALE_STEP_CHANGE,
            None => true,
        };
        if stale && !self.refresh_at_start(gamma_h) {
            return Err(Rejected::NEWTON);
        }
        for i in 1..STAGES {
            let t_i = self.now.t + tableau.c[i] * h;
            for k in 0..n {
                let (mut dq, mut dv) = (0.0, 0.0);
                for j in 0..i {
                    dq += tableau.a[i][j] * self.stage_v[j][k];
                    dv += tableau.a[i][j] * self.stage_acc[j][k];
                }
                self.q_hat[k] = self.now.q[k] + h * dq;
                self.v_hat[k] = self.now.v[k] + h * dv;
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
        self.trial.t = self.now.t + h;
        self.trial.q.copy_from_slice(&self.stage_q);
        self.trial.v.copy_from_slice(&self.stage_v[last]);
        self.trial.acc.copy_from_slice(&self.stage_acc[last]);
        let error = self.filtered_error(h);
        if !error.is_finite() {
            return Err(Rejected::NEWTON);
        }
        if error > self.options.tolerance_m {
            let factor = STEP_SAFETY * (self.options.tolerance_m / error).powf(ERROR_EXPONENT);
            return Err(Rejected {
                factor: factor.clamp(STEP_FACTOR_MIN, REJECTED_STEP_FACTOR),
                newton: false,
            });
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
        let before_t = self.before.as_ref().map(|start| start.t - self.now.t);
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
        let start_acc = self.before.as_ref().map(|start| &start.acc[..]);
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
        let n = self.now.q.len();
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
        let mut monitor = NewtonMonitor::new(self.newton_eta, self.options.tolerance_m);
        loop {
            self.stats.newton_iterations += 1;
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

/// M + γh C + (γh)² K with the tangent at (q, v), factored.
fn iteration_matrix(
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

/// Step growth from the embedded estimate (local error ∝ h⁴), with a
/// safety factor; within [1, KEEP_BELOW) the step is kept so the iteration
/// matrix stays valid.
fn step_factor(error: f64, tolerance: f64) -> f64 {
    let f = if error > 0.0 {
        STEP_SAFETY * (tolerance / error).powf(ERROR_EXPONENT)
    } else {
        STEP_FACTOR_MAX
    };
    let f = f.clamp(STEP_FACTOR_MIN, STEP_FACTOR_MAX);
    if (1.0..KEEP_BELOW).contains(&f) {
        1.0
    } else {
        f
    }
}

/// The quintic Hermite basis at s ∈ [0, 1] and its derivatives in s, for
/// the values (q₀, h v₀, h² a₀, q₁, h v₁, h² a₁).
fn quintic_hermite(s: f64) -> ([f64; 6], [f64; 6]) {
    let (s2, s3) = (s * s, s * s * s);
    let (s4, s5) = (s3 * s, s3 * s2);
    let p = [
        1.0 - 10.0 * s3 + 15.0 * s4 - 6.0 * s5,
        s - 6.0 * s3 + 8.0 * s4 - 3.0 * s5,
        0.5 * (s2 - 3.0 * s3 + 3.0 * s4 - s5),
        10.0 * s3 - 15.0 * s4 + 6.0 * s5,
        -4.0 * s3 + 7.0 * s4 - 3.0 * s5,
        0.5 * (s3 - 2.0 * s4 + s5),
    ];
    let d = [
        -30.0 * s2 + 60.0 * s3 - 30.0 * s4,
        1.0 - 18.0 * s2 + 32.0 * s3 - 15.0 * s4,
        0.5 * (2.0 * s - 9.0 * s2 + 12.0 * s3 - 5.0 * s4),
        30.0 * s2 - 60.0 * s3 + 30.0 * s4,
        -12.0 * s2 + 28.0 * s3 - 15.0 * s4,
        0.5 * (3.0 * s2 - 8.0 * s3 + 5.0 * s4),
    ];
    (p, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interpolant reproduces any quintic and its derivative: a wrong
    /// basis coefficient fails it.
    #[test]
    fn quintic_hermite_is_exact_on_quintics() {
        let poly = [0.3, -1.2, 0.7, 2.1, -0.4, 0.9];
        let x = |t: f64| poly.iter().rev().fold(0.0, |acc, c| acc * t + c);
        let dx = |t: f64| {
            (1..6)
                .rev()
                .fold(0.0, |acc, k| acc * t + k as f64 * poly[k])
        };
        let ddx = |t: f64| {
            (2..6)
                .rev()
                .fold(0.0, |acc, k| acc * t + (k * (k - 1)) as f64 * poly[k])
        };
        let (t0, h) = (0.4, 0.7);
        let t1 = t0 + h;
        let values = [
            x(t0),
            h * dx(t0),
            h * h * ddx(t0),
            x(t1),
            h * dx(t1),
            h * h * ddx(t1),
        ];
        for s in [0.0, 0.13, 0.5, 0.77, 1.0] {
            let (p, d) = quintic_hermite(s);
            let value: f64 = (0..6).map(|k| p[k] * values[k]).sum();
            let rate: f64 = (0..6).map(|k| d[k] * values[k]).sum::<f64>() / h;
            let t = t0 + s * h;
            assert!((value - x(t)).abs() < 1e-13, "s = {s}: {value} vs {}", x(t));
            assert!((rate - dx(t)).abs() < 1e-12, "s = {s}: {rate} vs {}", dx(t));
        }
    }
}
