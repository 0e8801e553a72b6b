//! What the higher-order implicit solvers (ESDIRK, Radau IIA) share: the
//! step control on an embedded error estimate, and frames read between
//! steps from the quintic Hermite interpolant rather than stepped onto.
//!
//! Each method only says how to take one trial step ([`EmbeddedMethod::try_step`]);
//! the loop that accepts, rejects and resizes steps is written once here,
//! so that the two methods' step counts compare like for like.

use super::reference::{ReferenceOptions, ReferenceStats};
use super::{SecondOrderSystem, SolverError, TetherDynamics};
use crate::scheme::implicit_control::{
    KEEP_BELOW, MIN_STEP_S, REJECTED_STEP_FACTOR, STEP_FACTOR_MAX, STEP_FACTOR_MIN, STEP_SAFETY,
};

/// After Newton fails, the cap on the step grows by this factor per
/// accepted step: slowly, since the cap's failure is costly (a whole
/// step's stages) and says nothing about a step slightly larger.
const NEWTON_CAP_GROWTH: f64 = 1.05;

/// A step that must be redone smaller: by `factor`, and whether Newton
/// (not the error) refused it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rejected {
    pub factor: f64,
    pub newton: bool,
}

impl Rejected {
    pub const NEWTON: Self = Self {
        factor: REJECTED_STEP_FACTOR,
        newton: true,
    };

    /// A step whose `error` exceeded `tolerance`: shrunk as the estimate's
    /// order says (`exponent` = 1/(its order + 1)).
    pub fn by_error(error: f64, tolerance: f64, exponent: f64) -> Self {
        let factor = STEP_SAFETY * (tolerance / error).powf(exponent);
        Self {
            factor: factor.clamp(STEP_FACTOR_MIN, REJECTED_STEP_FACTOR),
            newton: false,
        }
    }
}

/// One end of an accepted step: what the interpolant needs.
#[derive(Debug, Clone)]
pub(super) struct StepEnd {
    pub t: f64,
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    pub acc: Vec<f64>,
}

/// The state of an embedded method's stepping: the last accepted step's
/// two ends, the trial step's end, the next step and the statistics.
pub(super) struct StepControl {
    pub options: ReferenceOptions,
    /// The power of (tolerance / error) that scales the step: one over the
    /// estimate's order plus one.
    pub error_exponent: f64,
    /// The state now (the last accepted step's end).
    pub now: StepEnd,
    /// The last accepted step's start, for frames within it.
    pub before: Option<StepEnd>,
    /// The trial step's end.
    pub trial: StepEnd,
    pub step_s: f64,
    /// The largest step since Newton last failed: a step whose error
    /// allows it but whose stages do not converge would otherwise be
    /// retried at twice the step after every success.
    pub newton_cap_s: f64,
    pub stats: ReferenceStats,
}

impl StepControl {
    /// Starts at `start_s` from (q, v, acc).
    pub fn new(
        options: ReferenceOptions,
        error_exponent: f64,
        (start_s, q, v, acc): (f64, Vec<f64>, Vec<f64>, Vec<f64>),
    ) -> Self {
        let n = q.len();
        let zeros = || vec![0.0; n];
        Self {
            options,
            error_exponent,
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
        }
    }

    /// The trial step of size h becomes the state, its local error
    /// `error` recorded, and the next step is sized from it.
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
        self.newton_cap_s *= NEWTON_CAP_GROWTH;
        self.step_s = (h * self.step_factor(error))
            .min(self.options.max_step_s)
            .min(self.newton_cap_s.max(h));
    }

    fn reject(&mut self, h: f64, Rejected { factor, newton }: Rejected) {
        if newton {
            self.newton_cap_s = h * factor;
        }
        self.stats.rejected_steps += 1;
        self.step_s = h * factor;
    }

    /// Step growth from the embedded estimate, with a safety factor;
    /// within [1, KEEP_BELOW) the step is kept so the iteration matrix
    /// stays valid.
    fn step_factor(&self, error: f64) -> f64 {
        let f = if error > 0.0 {
            STEP_SAFETY * (self.options.tolerance_m / error).powf(self.error_exponent)
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

    /// The state at `t_s` within the last accepted step (or at the start,
    /// before any step): positions and velocities from the quintic Hermite
    /// interpolant through both ends' positions, velocities and
    /// accelerations, whose error is O(h⁶): below either method's own
    /// local error, so the step follows accuracy and never shortens to
    /// land on a frame. The pin's rows are imposed by the caller.
    ///
    /// # Panics
    /// If `t_s` lies outside that step: a caller's bug (advance first).
    pub fn interpolate(&self, t_s: f64, q: &mut [f64], v: &mut [f64]) {
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
    }
}

/// A one-step method with an embedded error estimate, stepped by
/// [`StepControl`].
pub(super) trait EmbeddedMethod {
    fn control(&self) -> &StepControl;
    fn control_mut(&mut self) -> &mut StepControl;
    fn dynamics(&self) -> &TetherDynamics;

    /// One step of size h from `control().now` into `control().trial`.
    /// Returns its error estimate (a length), or, if it must be redone
    /// smaller, by how much.
    fn try_step(&mut self, h: f64) -> Result<f64, Rejected>;

    /// Steps until the state's time reaches `target_s` or passes it (by
    /// less than a step): the frames before it can then be read with
    /// [`EmbeddedMethod::state_at`].
    fn advance_past(&mut self, target_s: f64) -> Result<(), SolverError> {
        while self.control().now.t < target_s {
            let h = self.control().step_s;
            match self.try_step(h) {
                Ok(error) => self.control_mut().accept(h, error),
                Err(rejected) => self.control_mut().reject(h, rejected),
            }
            let control = self.control();
            if control.step_s < MIN_STEP_S {
                return Err(SolverError::NewtonFailed {
                    time_s: control.now.t,
                    step_s: control.step_s,
                });
            }
        }
        let now = &self.control().now;
        self.dynamics().check_state(now.t, &now.q, &now.v)
    }

    /// The state at `t_s` within the last accepted step, the pin's rows
    /// exact ([`StepControl::interpolate`]).
    fn state_at(&self, t_s: f64, q: &mut [f64], v: &mut [f64]) {
        self.control().interpolate(t_s, q, v);
        self.dynamics().impose(t_s, q, v);
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
