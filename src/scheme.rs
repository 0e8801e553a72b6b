//! The two fixed-step time-stepping schemes. The CPU solvers
//! (src/solver/fixed_step.rs) and the GPU engine (shaders/step.wgsl) run the
//! same two, so the choice lives below both layers and neither depends on
//! the other to name it.

/// A fixed-step scheme: the explicit scheme (src/solver/explicit.rs), whose
/// step the damping of the highest axial modes bounds like D·n², or its
/// semi-implicit variant (src/solver/semi_implicit.rs), bounded by
/// elasticity alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixedStepScheme {
    Explicit,
    SemiImplicit,
}

impl FixedStepScheme {
    pub fn name(self) -> &'static str {
        match self {
            FixedStepScheme::Explicit => "explicit",
            FixedStepScheme::SemiImplicit => "semi-implicit",
        }
    }
}

/// The coefficients of generalized-α (Chung & Hulbert 1993, in the form of
/// Arnold & Brüls 2007) for a spectral radius ρ∞ at infinite frequency:
/// the adaptive implicit scheme of the CPU reference solver
/// (src/solver/reference.rs) and of the GPU (src/gpu/mirror/adaptive.rs),
/// here so that both take them, and the step control below, from one place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneralizedAlpha {
    pub alpha_m: f64,
    pub alpha_f: f64,
    pub beta: f64,
    pub gamma: f64,
}

impl GeneralizedAlpha {
    pub fn new(rho_inf: f64) -> Self {
        let alpha_m = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0);
        let alpha_f = rho_inf / (rho_inf + 1.0);
        let gamma = 0.5 + alpha_f - alpha_m;
        let beta = 0.25 * (gamma + 0.5).powi(2);
        Self {
            alpha_m,
            alpha_f,
            beta,
            gamma,
        }
    }

    /// β' = β (1−αf)/(1−αm) and γ' = γ (1−αf)/(1−αm): ∂q/∂ä and ∂v/∂ä per
    /// h², h, the scales of the tangent stiffness and damping in the Newton
    /// matrix M + γ'h C + β'h² K.
    pub fn scaled(&self) -> (f64, f64) {
        let r = (1.0 - self.alpha_f) / (1.0 - self.alpha_m);
        (self.beta * r, self.gamma * r)
    }

    /// |β − 1/6|: the local displacement error of a Newmark-type step is
    /// this times h² (aₙ₊₁ − aₙ) (Zienkiewicz & Xie 1991).
    pub fn error_constant(&self) -> f64 {
        (self.beta - 1.0 / 6.0).abs()
    }
}

/// The adaptive implicit scheme's Newton and step control, shared by its
/// CPU and GPU implementations (their reasons are in src/solver/reference.rs).
pub mod implicit_control {
    /// Newton stops after at most this many iterations per matrix.
    pub const MAX_NEWTON_ITERATIONS: u32 = 8;
    /// Newton's remaining error must be below this fraction of the tolerance.
    pub const NEWTON_TOLERANCE_FRACTION: f64 = 1e-2;
    /// A first iteration's correction must be below this fraction of the
    /// tolerance to end the iteration on a borrowed contraction rate.
    pub const FIRST_CORRECTION_FRACTION: f64 = 0.1;
    /// η where no contraction has been measured.
    pub const UNMEASURED_NEWTON_ETA: f64 = 10.0;
    /// A borrowed η below 1 is raised to this power (toward 1).
    pub const BORROWED_ETA_EXPONENT: f64 = 0.8;
    /// A contraction rate above this ends the iteration (refresh or reject).
    pub const DIVERGING_RATE: f64 = 0.5;
    /// The iteration matrix is refactored when the step changed by more
    /// than this fraction since its factorization.
    pub const STALE_STEP_CHANGE: f64 = 0.25;
    /// Below this step the solver gives up rather than creep \[s\].
    pub const MIN_STEP_S: f64 = 1e-12;
    /// A rejected step is retried at this fraction.
    pub const REJECTED_STEP_FACTOR: f64 = 0.5;
    /// Step growth: safety factor on (tolerance/error)^⅓, its bounds, and the
    /// band [1, KEEP_BELOW) in which the step is kept so that the
    /// iteration matrix stays valid.
    pub const STEP_SAFETY: f64 = 0.9;
    pub const STEP_FACTOR_MIN: f64 = 0.3;
    pub const STEP_FACTOR_MAX: f64 = 2.0;
    pub const KEEP_BELOW: f64 = 1.25;
    /// Equal substeps to a landing time are counted from remaining/step
    /// shrunk by this relative slack, so that a ratio just above a whole
    /// number by rounding does not add a substep.
    pub const SUBSTEP_SLACK: f64 = 1e-12;
}

/// Where a sampled time falls on a fixed-step grid: the step at whose end
/// the state is read, and how far before that end the time lies. A frame
/// between two steps is taken from the state at the later one by the
/// scheme's own second-order expansion, q − b q̇ + b²/2 q̈ (b = `back_s`),
/// whose error (b³/6 times the jerk, b < h) is below the scheme's own; a
/// frame on the grid has b = 0 and reads the state as it is.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FrameDue {
    /// Steps from the start (≥ 1 for a time after the start).
    pub step: u64,
    /// step × h − time, in [0, h) \[s\].
    pub back_s: f64,
}

/// The step at whose end a simulation with step `step_s` is sampled at
/// `time_s` (> 0, from its start). A time within 1e-9 of a step of the grid
/// is on it: frame times that the step divides, up to their rounding, are
/// read without expansion.
pub fn frame_due(time_s: f64, step_s: f64) -> FrameDue {
    let steps = time_s / step_s;
    let nearest = steps.round();
    if (steps - nearest).abs() < 1e-9 * nearest.max(1.0) {
        return FrameDue {
            step: nearest.max(1.0) as u64,
            back_s: 0.0,
        };
    }
    let step = steps.ceil().max(1.0);
    FrameDue {
        step: step as u64,
        back_s: (step * step_s - time_s).max(0.0),
    }
}

/// `value` at a time `back_s` before the state (`value`, `rate`,
/// `second_rate`): [`FrameDue`]'s expansion, one coordinate.
pub fn expand_back(value: f64, rate: f64, second_rate: f64, back_s: f64) -> f64 {
    value - back_s * rate + 0.5 * back_s * back_s * second_rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_on_the_grid_read_the_state_and_others_the_next_step() {
        // 0.04 s on a grid of 1e-5 s is 4000 steps, up to rounding.
        let on = frame_due(0.04, 0.04 / 4000.0);
        assert_eq!(
            on,
            FrameDue {
                step: 4000,
                back_s: 0.0
            }
        );
        let off = frame_due(1.0 / 30.0, 1e-4);
        assert_eq!(off.step, 334);
        assert!((off.back_s - (0.0334 - 1.0 / 30.0)).abs() < 1e-15);
        assert!(off.back_s > 0.0 && off.back_s < 1e-4);
        // A quadratic is expanded exactly.
        let (b, x) = (0.3, |t: f64| 1.0 + 2.0 * t - 3.0 * t * t);
        let end = 2.0;
        assert!((expand_back(x(end), 2.0 - 6.0 * end, -6.0, b) - x(end - b)).abs() < 1e-12);
    }
}
