//! The reference solver: generalized-α (Chung & Hulbert 1993, in the form of
//! Arnold & Brüls 2007) with Newton's method on the banded iteration matrix
//! and local error control. Implicit, so the damping stiffness that limits the
//! explicit step (docs/model.md §8) does not limit it: the step follows accuracy alone.
//!
//! Per step, with true accelerations ä and algorithmic accelerations a:
//!
//! ```text
//! M äₙ₊₁ = f(tₙ₊₁, qₙ₊₁, vₙ₊₁)
//! (1−αm) aₙ₊₁ + αm aₙ = (1−αf) äₙ₊₁ + αf äₙ
//! qₙ₊₁ = qₙ + h vₙ + h² (½−β) aₙ + h² β aₙ₊₁
//! vₙ₊₁ = vₙ + h (1−γ) aₙ + h γ aₙ₊₁
//! ```
//!
//! Error control: the local displacement error of Newmark-type schemes is
//! (β − 1/6) h³ q⃛ ≈ (β − 1/6) h² (aₙ₊₁ − aₙ) (Zienkiewicz & Xie 1991). Each
//! step's estimate, as a length (slopes weighted by l_e), must stay below the
//! tolerance, otherwise the step is redone smaller; the step grows when the
//! estimate allows. The estimates, step counts and rejections are reported.

use serde::Serialize;

use crate::error::InputError;

use super::{NewtonWorkspace, SecondOrderSystem, SolverError, TetherDynamics, length_weights};
use crate::linalg::{BandedMatrix, BlockTridiagonalLu};
use crate::model::tether::{HALF_BANDWIDTH, PRESCRIBED_DOFS};
use crate::scheme::GeneralizedAlpha;
pub use crate::scheme::ImplicitMethod;
use crate::scheme::implicit_control::{
    DIVERGING_RATE, KEEP_BELOW, MIN_STEP_S, NewtonMonitor, NewtonVerdict, REJECTED_STEP_FACTOR,
    STALE_STEP_CHANGE, STEP_FACTOR_MAX, STEP_FACTOR_MIN, STEP_SAFETY, SUBSTEP_SLACK,
    UNMEASURED_NEWTON_ETA,
};

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReferenceOptions {
    /// Largest accepted local error per step, as a length \[m\].
    pub tolerance_m: f64,
    /// Spectral radius at infinite frequency ρ∞ ∈ [0, 1]: 1 conserves energy
    /// of linear systems and damps nothing; lower values damp the unresolved
    /// stiff (heavily damped axial) modes that would otherwise ring.
    pub spectral_radius: f64,
    /// Largest step \[s\].
    pub max_step_s: f64,
    /// First trial step \[s\].
    pub initial_step_s: f64,
    /// The integrator: generalized-α (this file) or the fourth-order
    /// ESDIRK (src/solver/esdirk.rs), under the same tolerance's meaning.
    pub method: ImplicitMethod,
}

impl ReferenceOptions {
    /// The defaults, usable in constants.
    pub const DEFAULT: Self = Self {
        tolerance_m: 1e-9,
        spectral_radius: 0.8,
        max_step_s: 1e-2,
        initial_step_s: 1e-5,
        method: ImplicitMethod::GeneralizedAlpha,
    };
}

/// The tolerances a user may give \[m\]: below 1e-13 m the local error
/// estimate is the round-off of the positions (f64 resolves about 1e-16 of
/// a coordinate), so steps shrink without end; above 1e-3 m a track is no
/// simulation of the model.
pub const MIN_TOLERANCE_M: f64 = 1e-13;
pub const MAX_TOLERANCE_M: f64 = 1e-3;

/// Refuses a tolerance outside [`MIN_TOLERANCE_M`]..=[`MAX_TOLERANCE_M`],
/// naming `field`.
pub fn check_tolerance_m(field: &str, tolerance_m: f64) -> Result<(), InputError> {
    if (MIN_TOLERANCE_M..=MAX_TOLERANCE_M).contains(&tolerance_m) {
        return Ok(());
    }
    Err(InputError::number(
        field,
        tolerance_m,
        format!("a length from {MIN_TOLERANCE_M:e} to {MAX_TOLERANCE_M:e} m"),
    ))
}

// Its names, for config files and messages (below `named`, `scheme`
// cannot say them).
impl crate::named::Named for ImplicitMethod {
    const WHAT: &'static str = "implicit method";
    const ALL: &'static [Self] = &[
        ImplicitMethod::GeneralizedAlpha,
        ImplicitMethod::Esdirk43,
        ImplicitMethod::Radau5,
    ];

    fn name(self) -> &'static str {
        match self {
            ImplicitMethod::GeneralizedAlpha => "generalized-alpha",
            ImplicitMethod::Esdirk43 => "esdirk43",
            ImplicitMethod::Radau5 => "radau5",
        }
    }

    fn help(self) -> &'static str {
        match self {
            ImplicitMethod::GeneralizedAlpha => "Generalized-α, second order",
            ImplicitMethod::Esdirk43 => {
                "ESDIRK4(3)6L[2]SA (Kennedy & Carpenter), fourth order, L-stable"
            }
            ImplicitMethod::Radau5 => {
                "Radau IIA, three stages solved together (Hairer & Wanner's RADAU5), fifth order, L-stable"
            }
        }
    }
}

crate::named::display_and_parse_by_name!(ImplicitMethod);

impl Default for ReferenceOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What the reference solver did; stored with its results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ReferenceStats {
    pub steps: u64,
    pub rejected_steps: u64,
    pub newton_iterations: u64,
    pub factorizations: u64,
    /// Largest local error estimate of an accepted step \[m\].
    pub max_local_error_m: f64,
    /// Sum of accepted local error estimates \[m\]: a crude bound on the
    /// global error before stability damps it.
    pub summed_local_error_m: f64,
    pub min_step_s: f64,
    pub max_step_s: f64,
}

// Newton's stopping rule (constants in scheme::implicit_control, shared
// with the GPU's adaptive scheme). Newton has converged when its remaining
// error, as a length, is estimated below NEWTON_TOLERANCE_FRACTION of the
// error tolerance. With a contraction rate θ measured from two
// corrections, the remaining error is η = θ/(1−θ) times the last
// correction (Hairer & Wanner, Solving ODEs II, §IV.8). The first
// iteration of a step has no rate of its own yet and uses the last
// converged step's η, below 1 raised to BORROWED_ETA_EXPONENT (their
// RADAU5 does the same): the iteration matrix changes little from step to
// step, and the exponent makes η grow toward 1 over steps that stop after
// one iteration, until a second iteration measures the rate afresh.
//
// A first iteration's η is borrowed, not measured: should it be wrong, the
// Newton error left behind is up to the correction itself. So a step stops
// after one iteration only if that correction is below
// FIRST_CORRECTION_FRACTION of the local error tolerance. Without this
// bound, undamped drops (D = 0), whose predictor misses the ringing axial
// modes, took four times the steps: the leftover Newton error fed the error
// estimate.
//
// UNMEASURED_NEWTON_ETA stands where no contraction has been measured (the
// first step, the first iteration after a refresh of the iteration matrix,
// a correction that did not shrink): the correction itself must then be a
// tenth of the Newton tolerance.

pub struct ReferenceSolver {
    dynamics: TetherDynamics,
    options: ReferenceOptions,
    coef: GeneralizedAlpha,
    weights: Vec<f64>,
    t: f64,
    q: Vec<f64>,
    v: Vec<f64>,
    /// True accelerations ä (all coordinates).
    acc: Vec<f64>,
    /// Algorithmic accelerations a.
    alg: Vec<f64>,
    /// True accelerations and step of the previous accepted step.
    previous_acc: Option<(Vec<f64>, f64)>,
    /// A rejected trial's or a replaced state's vectors, for the next
    /// trial: a step allocates nothing.
    spare: Option<Trial>,
    step_s: f64,
    stats: ReferenceStats,
    // Newton workspace.
    stiffness: BandedMatrix,
    damping: BandedMatrix,
    iteration: Option<(BlockTridiagonalLu, f64)>,
    newton: NewtonWorkspace,
    /// η = θ/(1−θ) of the last converged Newton iteration.
    newton_eta: f64,
}

struct Trial {
    q: Vec<f64>,
    v: Vec<f64>,
    acc: Vec<f64>,
    alg: Vec<f64>,
}

impl ReferenceSolver {
    pub fn new(
        mut dynamics: TetherDynamics,
        mut q: Vec<f64>,
        mut v: Vec<f64>,
        start_s: f64,
        options: ReferenceOptions,
    ) -> Self {
        let acc = dynamics.initial_acceleration(start_s, &mut q, &mut v);
        let dofs = q.len();
        let weights = length_weights(dynamics.tether());
        Self {
            coef: GeneralizedAlpha::new(options.spectral_radius),
            options,
            weights,
            t: start_s,
            alg: acc.clone(),
            previous_acc: None,
            spare: None,
            acc,
            q,
            v,
            step_s: options.initial_step_s.min(options.max_step_s),
            stats: ReferenceStats {
                min_step_s: f64::INFINITY,
                ..Default::default()
            },
            stiffness: BandedMatrix::zeros(dofs, HALF_BANDWIDTH),
            damping: BandedMatrix::zeros(dofs, HALF_BANDWIDTH),
            iteration: None,
            newton: NewtonWorkspace::new(dofs),
            newton_eta: UNMEASURED_NEWTON_ETA,
            dynamics,
        }
    }

    pub fn time(&self) -> f64 {
        self.t
    }

    pub fn positions(&self) -> &[f64] {
        &self.q
    }

    pub fn velocities(&self) -> &[f64] {
        &self.v
    }

    /// The pin's force on the tether now \[N\]
    /// ([`TetherDynamics::pin_reaction`]).
    pub fn pin_reaction(&mut self) -> [f64; 2] {
        self.dynamics.pin_reaction(self.t, &self.q, &self.v)
    }

    pub fn stats(&self) -> ReferenceStats {
        self.stats
    }

    /// Advances exactly to `target_s` with steps that land on it.
    pub fn advance_to(&mut self, target_s: f64) -> Result<(), SolverError> {
        while self.t < target_s {
            let remaining = target_s - self.t;
            // Equal substeps that end exactly on the target.
            let substeps = (remaining / self.step_s * (1.0 - SUBSTEP_SLACK))
                .ceil()
                .max(1.0);
            let h = remaining / substeps;
            match self.try_step(h)? {
                Some((trial, error)) => {
                    let last = substeps == 1.0;
                    self.accept(trial, h, error, last.then_some(target_s));
                    // Equal substeps are at least 2/3 of the nominal step
                    // unless a single short one lands on the target. Such a
                    // short step says nothing about the nominal step's error:
                    // it may shrink it, never grow it.
                    let factor = step_factor(error, self.options.tolerance_m);
                    let short_landing = h < 0.5 * self.step_s;
                    if !(short_landing && h * factor >= self.step_s) {
                        self.step_s = (h * factor).min(self.options.max_step_s);
                    }
                }
                None => {
                    self.stats.rejected_steps += 1;
                    self.step_s = h * REJECTED_STEP_FACTOR;
                }
            }
            if self.step_s < MIN_STEP_S {
                return Err(SolverError::NewtonFailed {
                    time_s: self.t,
                    step_s: self.step_s,
                });
            }
        }
        self.dynamics.check_state(self.t, &self.q, &self.v)
    }

    fn accept(&mut self, trial: Trial, h: f64, error: f64, exact_end: Option<f64>) {
        let acc = std::mem::replace(&mut self.acc, trial.acc);
        let oldest_acc = self.previous_acc.replace((acc, h)).map(|(acc, _)| acc);
        self.spare = Some(Trial {
            q: std::mem::replace(&mut self.q, trial.q),
            v: std::mem::replace(&mut self.v, trial.v),
            acc: oldest_acc.unwrap_or_else(|| vec![0.0; self.q.len()]),
            alg: std::mem::replace(&mut self.alg, trial.alg),
        });
        self.t = exact_end.unwrap_or(self.t + h);
        let s = &mut self.stats;
        s.steps += 1;
        s.max_local_error_m = s.max_local_error_m.max(error);
        s.summed_local_error_m += error;
        s.min_step_s = s.min_step_s.min(h);
        s.max_step_s = s.max_step_s.max(h);
    }

    /// Refreshes the Newton iteration matrix S = M_dd + β'h² K_dd + γ'h C_dd at
    /// the given state.
    fn refresh_iteration_matrix(
        &mut self,
        q: &[f64],
        v: &[f64],
        h: f64,
    ) -> Result<(), SolverError> {
        let (bp, gp) = self.coef.scaled();
        self.dynamics
            .tether()
            .tangent(q, v, &mut self.stiffness, &mut self.damping);
        let mut s = self.dynamics.tether().mass().clone();
        s.scale_add(1.0, &self.stiffness, bp * h * h);
        s.scale_add(1.0, &self.damping, gp * h);
        self.iteration = Some((BlockTridiagonalLu::factor(&s, PRESCRIBED_DOFS)?, h));
        self.stats.factorizations += 1;
        Ok(())
    }

    /// One step of size h. Returns the converged trial and its error
    /// estimate, or None if the step must be redone smaller (too large an
    /// error, or Newton not converging).
    fn try_step(&mut self, h: f64) -> Result<Option<(Trial, f64)>, SolverError> {
        let n = self.q.len();
        let mut trial = self.predict(h);
        let stale = match &self.iteration {
            Some((_, h_lu)) => (h / h_lu - 1.0).abs() > STALE_STEP_CHANGE,
            None => true,
        };
        if stale
            && self
                .refresh_iteration_matrix(&trial.q, &trial.v, h)
                .is_err()
        {
            self.iteration = None;
            self.spare = Some(trial);
            return Ok(None);
        }
        if !self.newton(&mut trial, h, stale) {
            self.spare = Some(trial);
            return Ok(None);
        }
        let error = self.coef.error_constant()
            * h
            * h
            * (PRESCRIBED_DOFS..n).fold(0.0f64, |m, i| {
                m.max(((trial.alg[i] - self.alg[i]) * self.weights[i]).abs())
            });
        if error > self.options.tolerance_m {
            self.spare = Some(trial);
            return Ok(None);
        }
        Ok(Some((trial, error)))
    }

    /// The step's starting iterate: äₙ₊₁ predicted, q and v from it by the
    /// generalized-α update, the prescribed end imposed at t + h.
    fn predict(&mut self, h: f64) -> Trial {
        let c = &self.coef;
        let (alpha_m, alpha_f, beta, gamma) = (c.alpha_m, c.alpha_f, c.beta, c.gamma);
        let t1 = self.t + h;
        let n = self.q.len();
        // Predictor: äₙ₊₁ extrapolated linearly from the last two steps
        // (saves about one Newton iteration per step on smooth motion).
        // Every entry of the trial is written below.
        let mut trial = self.spare.take().unwrap_or_else(|| Trial {
            q: vec![0.0; n],
            v: vec![0.0; n],
            acc: vec![0.0; n],
            alg: vec![0.0; n],
        });
        match &self.previous_acc {
            Some((acc, h_prev)) => {
                let r = h / h_prev;
                for ((predicted, a), a0) in trial.acc.iter_mut().zip(&self.acc).zip(acc) {
                    *predicted = a + r * (a - a0);
                }
            }
            None => trial.acc.copy_from_slice(&self.acc),
        }
        let acc_r = self.dynamics.motion().acceleration(t1);
        trial.acc[..PRESCRIBED_DOFS].copy_from_slice(&acc_r);
        for i in 0..n {
            trial.alg[i] = ((1.0 - alpha_f) * trial.acc[i] + alpha_f * self.acc[i]
                - alpha_m * self.alg[i])
                / (1.0 - alpha_m);
            trial.q[i] = self.q[i]
                + h * self.v[i]
                + h * h * ((0.5 - beta) * self.alg[i] + beta * trial.alg[i]);
            trial.v[i] = self.v[i] + h * ((1.0 - gamma) * self.alg[i] + gamma * trial.alg[i]);
        }
        self.dynamics.impose(t1, &mut trial.q, &mut trial.v);
        trial
    }

    /// Newton's iteration on the step's residual from `trial`, refreshing
    /// the iteration matrix once where a stale one (not `fresh`) may be why
    /// it does not converge. False: the step must be redone smaller.
    fn newton(&mut self, trial: &mut Trial, h: f64, fresh: bool) -> bool {
        let (alpha_m, alpha_f) = (self.coef.alpha_m, self.coef.alpha_f);
        let (bp, gp) = self.coef.scaled();
        let n = self.q.len();
        let mut refreshed = fresh;
        let mut monitor = NewtonMonitor::new(self.newton_eta, self.options.tolerance_m);
        loop {
            self.stats.newton_iterations += 1;
            let lu = &self.iteration.as_ref().expect("iteration matrix set").0;
            let corrections = self.newton.correction(
                self.dynamics.tether(),
                lu,
                (&trial.q, &trial.v, &trial.acc),
            );
            let dynamic = PRESCRIBED_DOFS..n;
            let mut correction = 0.0f64;
            // The coefficients once per iteration, as the products were
            // grouped (left to right) when written per entry: same bits.
            let (to_alg, to_q, to_v) = ((1.0 - alpha_f) / (1.0 - alpha_m), bp * h * h, gp * h);
            let updated = (trial.acc[dynamic.clone()].iter_mut())
                .zip(&mut trial.alg[dynamic.clone()])
                .zip(&mut trial.q[dynamic.clone()])
                .zip(&mut trial.v[dynamic.clone()])
                .zip(&self.weights[dynamic]);
            for (d, ((((acc, alg), q), v), weight)) in corrections.iter().zip(updated) {
                *acc += d;
                *alg += to_alg * d;
                *q += to_q * d;
                *v += to_v * d;
                correction = correction.max((to_q * d * weight).abs());
            }
            match monitor.judge(correction, DIVERGING_RATE) {
                NewtonVerdict::Converged { eta } => {
                    self.newton_eta = eta;
                    return true;
                }
                NewtonVerdict::Continue => {}
                NewtonVerdict::Failed => return false,
                NewtonVerdict::Stuck if refreshed => return false,
                NewtonVerdict::Stuck => {
                    // A stale matrix, not the step, may be the problem:
                    // refresh at the current iterate and carry on.
                    // A tangent at a wild iterate may not factor: then
                    // the step, not the run, has failed.
                    if self
                        .refresh_iteration_matrix(&trial.q, &trial.v, h)
                        .is_err()
                    {
                        self.iteration = None;
                        return false;
                    }
                    refreshed = true;
                    monitor.restart();
                }
            }
        }
    }
}

/// Step growth from the error estimate (local error ∝ h³), with a safety
/// factor; within [1, KEEP_BELOW) the step is kept so the iteration matrix
/// stays valid.
fn step_factor(error: f64, tolerance: f64) -> f64 {
    let f = if error > 0.0 {
        STEP_SAFETY * (tolerance / error).cbrt()
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
