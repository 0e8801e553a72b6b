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

/// Which adaptive implicit integrator the reference solver runs: here,
/// below the CPU solvers and the GPU, which refuses all but one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImplicitMethod {
    /// Generalized-α, second order (src/solver/reference.rs).
    GeneralizedAlpha,
    /// ESDIRK4(3)6L\[2\]SA, fourth order with an embedded third-order
    /// estimate (src/solver/esdirk.rs).
    Esdirk43,
    /// Radau IIA, three stages, fifth order (src/solver/radau.rs).
    Radau5,
}

impl ImplicitMethod {
    /// The force evaluations one Newton iteration costs: one for the
    /// methods that solve a stage at a time, one per stage for Radau IIA,
    /// which iterates its three stages together.
    pub fn forces_per_iteration(self) -> u64 {
        match self {
            ImplicitMethod::GeneralizedAlpha | ImplicitMethod::Esdirk43 => 1,
            ImplicitMethod::Radau5 => 3,
        }
    }
}

/// An explicit-first-stage, singly diagonally implicit Runge–Kutta
/// tableau with an embedded estimate: ESDIRK4(3)6L\[2\]SA of Kennedy &
/// Carpenter (2003, the implicit half of their ARK4(3)6L\[2\]SA), order 4,
/// L-stable and stiffly accurate (the last stage is the step's end), with
/// an order-3 companion for the error. Every implicit stage has the same
/// diagonal γ, so one factorization of M + γh C + (γh)² K serves them all.
/// Here, below both solver layers, so the CPU's ESDIRK solver
/// (src/solver/esdirk.rs) and any GPU stage take one copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EsdirkTableau {
    pub gamma: f64,
    pub c: [f64; 6],
    /// Row i: the weights of stages 0..=i in stage i (lower triangle,
    /// diagonal γ for i ≥ 1, row 0 explicit).
    pub a: [[f64; 6]; 6],
    /// The embedded order-3 weights; the main weights are the last row of `a`.
    pub b_hat: [f64; 6],
    /// Order of the main weights; the embedded ones have one less.
    pub order: u32,
}

impl EsdirkTableau {
    pub const STAGES: usize = 6;

    /// The main weights (stiffly accurate: the last stage's row).
    pub fn b(&self) -> [f64; 6] {
        self.a[5]
    }

    /// b − b̂: the local error estimate is h Σ (b − b̂)ᵢ kᵢ.
    pub fn error_weights(&self) -> [f64; 6] {
        std::array::from_fn(|i| self.a[5][i] - self.b_hat[i])
    }
}

pub const ESDIRK43: EsdirkTableau = EsdirkTableau {
    gamma: 0.25,
    c: [0.0, 0.5, 83.0 / 250.0, 31.0 / 50.0, 17.0 / 20.0, 1.0],
    a: [
        [0.0; 6],
        [0.25, 0.25, 0.0, 0.0, 0.0, 0.0],
        [8611.0 / 62500.0, -1743.0 / 31250.0, 0.25, 0.0, 0.0, 0.0],
        [
            5012029.0 / 34652500.0,
            -654441.0 / 2922500.0,
            174375.0 / 388108.0,
            0.25,
            0.0,
            0.0,
        ],
        [
            15267082809.0 / 155376265600.0,
            -71443401.0 / 120774400.0,
            730878875.0 / 902184768.0,
            2285395.0 / 8070912.0,
            0.25,
            0.0,
        ],
        [
            82889.0 / 524892.0,
            0.0,
            15625.0 / 83664.0,
            69875.0 / 102672.0,
            -2260.0 / 8211.0,
            0.25,
        ],
    ],
    b_hat: [
        4586570599.0 / 29645900160.0,
        0.0,
        178811875.0 / 945068544.0,
        814220225.0 / 1159782912.0,
        -3700637.0 / 11593932.0,
        61727.0 / 225920.0,
    ],
    order: 4,
};

/// The three-stage Radau IIA method of order 5 (Hairer & Wanner, Solving
/// ODEs II, §IV.5 and their RADAU5): collocation at c = ((4 − √6)/10,
/// (4 + √6)/10, 1), L-stable and stiffly accurate (the last stage is the
/// step's end). Its matrix A has one real eigenvalue 1/γ and a complex
/// pair 1/(α ± iβ); with T (A's eigenvectors in real form) the three
/// stages' Newton system splits into one real and one complex system of
/// the tether's size: M + (h/γ) C + (h/γ)² K and M + μh C + (μh)² K,
/// μ = 1/(α + iβ). Here, below both solver layers, for one copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadauTableau {
    pub c: [f64; 3],
    pub a: [[f64; 3]; 3],
    /// T: A⁻¹ = T diag(γ, [[α, −β], [β, α]]) T⁻¹.
    pub t: [[f64; 3]; 3],
    pub t_inverse: [[f64; 3]; 3],
    pub gamma: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The embedded estimate's weights on the stages' increments
    /// (RADAU5's dd): err = (I − (h/γ) J)⁻¹ (h f₀ + Σ ddᵢ Zᵢ)/γ.
    pub error_weights: [f64; 3],
    pub order: u32,
    /// The order of the error estimate's local error (h^(this + 1)).
    pub estimate_order: u32,
}

/// √6, as a constant expression (Rust's `sqrt` is not const).
const SQRT_6: f64 = 2.449_489_742_783_178;

/// RADAU5's constants (radau5.f, Hairer & Wanner), their T and T⁻¹ to 20
/// digits; a test checks T⁻¹ A⁻¹ T against γ, α, β.
// The digits as published, so that a reader can compare them with
// radau5.f; f64 keeps the first 17.
#[allow(clippy::excessive_precision)]
pub const RADAU5: RadauTableau = RadauTableau {
    c: [(4.0 - SQRT_6) / 10.0, (4.0 + SQRT_6) / 10.0, 1.0],
    a: [
        [
            (88.0 - 7.0 * SQRT_6) / 360.0,
            (296.0 - 169.0 * SQRT_6) / 1800.0,
            (-2.0 + 3.0 * SQRT_6) / 225.0,
        ],
        [
            (296.0 + 169.0 * SQRT_6) / 1800.0,
            (88.0 + 7.0 * SQRT_6) / 360.0,
            (-2.0 - 3.0 * SQRT_6) / 225.0,
        ],
        [(16.0 - SQRT_6) / 36.0, (16.0 + SQRT_6) / 36.0, 1.0 / 9.0],
    ],
    t: [
        [
            9.123_239_487_089_294_279_2e-2,
            -0.141_255_295_020_954_208_43,
            -3.002_919_410_514_742_449_2e-2,
        ],
        [
            0.241_717_932_707_107_018_96,
            0.204_129_352_293_799_931_99,
            0.382_942_112_757_261_937_79,
        ],
        [0.966_048_182_615_092_936_19, 1.0, 0.0],
    ],
    t_inverse: [
        [
            4.325_579_890_063_155_351_0,
            0.339_199_251_815_809_869_54,
            0.541_770_539_935_874_871_19,
        ],
        [
            -4.178_718_591_551_904_727_3,
            -0.327_682_820_761_062_387_08,
            0.476_623_554_500_550_451_96,
        ],
        [
            -0.502_872_634_945_786_875_95,
            2.571_926_949_855_605_429_2,
            -0.596_039_204_828_224_924_97,
        ],
    ],
    gamma: 3.637_834_252_744_496,
    alpha: 2.681_082_873_627_752_3,
    beta: 3.050_430_199_247_410_5,
    error_weights: [
        -(13.0 + 7.0 * SQRT_6) / 3.0,
        (-13.0 + 7.0 * SQRT_6) / 3.0,
        -1.0 / 3.0,
    ],
    order: 5,
    estimate_order: 3,
};

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

    /// What one Newton iteration's correction says.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum NewtonVerdict {
        /// Converged, with the contraction's η = θ/(1−θ) (the next
        /// step's borrowed one).
        Converged { eta: f64 },
        /// Iterate again.
        Continue,
        /// Too slow or too many iterations: refresh the matrix or give up.
        Stuck,
        /// A correction that is not a number: the step has failed.
        Failed,
    }

    /// Newton's stopping rule, shared by the CPU's implicit methods (its
    /// reasons in src/solver/reference.rs): the remaining error, η times
    /// the last correction, below NEWTON_TOLERANCE_FRACTION of the
    /// tolerance; the first iteration on a borrowed η only if its
    /// correction is small; stuck after MAX_NEWTON_ITERATIONS or a
    /// contraction rate above a limit.
    #[derive(Debug, Clone, Copy)]
    pub struct NewtonMonitor {
        tolerance_m: f64,
        previous: f64,
        eta: f64,
        iterations: u32,
    }

    impl NewtonMonitor {
        /// A fresh iteration on the last converged iteration's η: below 1
        /// raised toward 1 (never lowered when above).
        pub fn new(borrowed_eta: f64, tolerance_m: f64) -> Self {
            let borrowed = borrowed_eta.max(f64::EPSILON);
            let eta = if borrowed < 1.0 {
                borrowed.powf(BORROWED_ETA_EXPONENT)
            } else {
                borrowed
            };
            Self {
                tolerance_m,
                previous: f64::INFINITY,
                eta,
                iterations: 0,
            }
        }

        /// Judges an iteration's correction (a length). `first_rate_limit`
        /// bounds the first measured contraction rate (the second
        /// iteration's), DIVERGING_RATE every later one.
        pub fn judge(&mut self, correction: f64, first_rate_limit: f64) -> NewtonVerdict {
            self.iterations += 1;
            if !correction.is_finite() {
                return NewtonVerdict::Failed;
            }
            let rate = correction / self.previous;
            if self.previous.is_finite() {
                self.eta = if rate < 1.0 {
                    rate / (1.0 - rate)
                } else {
                    UNMEASURED_NEWTON_ETA
                };
            }
            let trusted = self.previous.is_finite()
                || correction < FIRST_CORRECTION_FRACTION * self.tolerance_m;
            if trusted && self.eta * correction < NEWTON_TOLERANCE_FRACTION * self.tolerance_m {
                return NewtonVerdict::Converged { eta: self.eta };
            }
            self.previous = correction;
            let limit = if self.iterations <= 2 {
                first_rate_limit
            } else {
                DIVERGING_RATE
            };
            if self.iterations >= MAX_NEWTON_ITERATIONS || rate > limit {
                return NewtonVerdict::Stuck;
            }
            NewtonVerdict::Continue
        }

        /// Starts over on a refreshed matrix: nothing measured on it yet.
        pub fn restart(&mut self) {
            self.previous = f64::INFINITY;
            self.iterations = 0;
            self.eta = UNMEASURED_NEWTON_ETA;
        }
    }
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

    /// Radau IIA(5): its rows sum to c, its weights (the last row)
    /// integrate polynomials to degree 4 exactly (quadrature order 2s − 1
    /// = 5 for Radau points), each stage its c_i^k/k to degree 3 (stage
    /// order 3), and T diagonalizes A⁻¹ into γ and the pair α ± iβ: a
    /// mistyped digit fails one.
    #[test]
    fn radau_tableau_is_radau_iia_and_t_diagonalizes_it() {
        let r = RADAU5;
        for i in 0..3 {
            let row: f64 = r.a[i].iter().sum();
            assert!((row - r.c[i]).abs() < 1e-15, "row {i}");
            for k in 1..=3 {
                let integral: f64 = (0..3).map(|j| r.a[i][j] * r.c[j].powi(k - 1)).sum();
                assert!(
                    (integral - r.c[i].powi(k) / k as f64).abs() < 1e-15,
                    "stage {i}, degree {k}"
                );
            }
        }
        for k in 1..=5 {
            let b: f64 = (0..3).map(|j| r.a[2][j] * r.c[j].powi(k - 1)).sum();
            assert!((b - 1.0 / k as f64).abs() < 1e-15, "weights, degree {k}");
        }
        let a = nalgebra::Matrix3::from_fn(|i, j| r.a[i][j]);
        let t = nalgebra::Matrix3::from_fn(|i, j| r.t[i][j]);
        let t_inverse = nalgebra::Matrix3::from_fn(|i, j| r.t_inverse[i][j]);
        assert!((t * t_inverse - nalgebra::Matrix3::identity()).norm() < 1e-15);
        let lambda = t_inverse * a.try_inverse().unwrap() * t;
        let expected = nalgebra::Matrix3::new(
            r.gamma, 0.0, 0.0, 0.0, r.alpha, -r.beta, 0.0, r.beta, r.alpha,
        );
        assert!((lambda - expected).norm() < 1e-13, "{lambda}");
    }

    /// The tableau's order conditions (Butcher's, up to order 4 for b and
    /// 3 for b̂, and b̂ short of 4), its row sums and its diagonal: a
    /// mistyped coefficient fails one of them.
    #[test]
    fn esdirk_tableau_has_its_orders() {
        let t = ESDIRK43;
        let (a, c) = (t.a, t.c);
        let n = EsdirkTableau::STAGES;
        for i in 0..n {
            let row: f64 = a[i].iter().sum();
            assert!(
                (row - c[i]).abs() < 1e-15,
                "row {i} sums to {row}, c = {}",
                c[i]
            );
            if i > 0 {
                assert_eq!(a[i][i], t.gamma);
            }
        }
        let ac = |i: usize| (0..n).map(|j| a[i][j] * c[j]).sum::<f64>();
        let aac = |i: usize| (0..n).map(|j| a[i][j] * ac(j)).sum::<f64>();
        let acc = |i: usize| (0..n).map(|j| a[i][j] * c[j] * c[j]).sum::<f64>();
        let conditions = |b: [f64; 6], order: u32| {
            let sum = |f: &dyn Fn(usize) -> f64| (0..n).map(|i| b[i] * f(i)).sum::<f64>();
            let mut residuals = vec![sum(&|_| 1.0) - 1.0];
            if order >= 2 {
                residuals.push(sum(&|i| c[i]) - 0.5);
            }
            if order >= 3 {
                residuals.push(sum(&|i| c[i] * c[i]) - 1.0 / 3.0);
                residuals.push(sum(&ac) - 1.0 / 6.0);
            }
            if order >= 4 {
                residuals.push(sum(&|i| c[i].powi(3)) - 0.25);
                residuals.push(sum(&|i| c[i] * ac(i)) - 0.125);
                residuals.push(sum(&acc) - 1.0 / 12.0);
                residuals.push(sum(&aac) - 1.0 / 24.0);
            }
            residuals
        };
        for (weights, order) in [(t.b(), t.order), (t.b_hat, t.order - 1)] {
            for (k, r) in conditions(weights, order).into_iter().enumerate() {
                assert!(r.abs() < 1e-14, "order {order}, condition {k}: {r}");
            }
        }
        // b̂ is a true order-3 companion, not order 4 (else no estimate).
        let fourth = conditions(t.b_hat, 4);
        assert!(fourth[4..].iter().any(|r| r.abs() > 1e-4), "{fourth:?}");
    }

    /// The Newton monitor's verdicts: a first correction trusted on a
    /// borrowed η only when small; convergence when η times the
    /// correction is below the Newton tolerance; stuck on a rate above the
    /// limit (the first measured one's own); failed on a non-number.
    #[test]
    fn newton_monitor_judges_as_the_rule_says() {
        use implicit_control::{NewtonMonitor, NewtonVerdict};
        let tolerance = 1e-8;
        // A tiny borrowed η, but a first correction above a tenth of the
        // tolerance: not trusted; the second, contracting by 0.1, is.
        let mut m = NewtonMonitor::new(1e-6, tolerance);
        assert_eq!(m.judge(5e-9, 0.5), NewtonVerdict::Continue);
        let NewtonVerdict::Converged { eta } = m.judge(5e-10, 0.5) else {
            panic!("η = 1/9 times 5e-10 is below 1e-10")
        };
        assert!((eta - 0.1 / 0.9).abs() < 1e-15);
        // A small first correction ends it on the borrowed η.
        let mut m = NewtonMonitor::new(1e-6, tolerance);
        assert!(matches!(
            m.judge(5e-10, 0.5),
            NewtonVerdict::Converged { .. }
        ));
        // The first measured rate against its own limit, later ones 0.5.
        let mut m = NewtonMonitor::new(1e-6, tolerance);
        assert_eq!(m.judge(1e-6, 1.0), NewtonVerdict::Continue);
        assert_eq!(m.judge(0.8e-6, 1.0), NewtonVerdict::Continue);
        assert_eq!(m.judge(0.6e-6, 1.0), NewtonVerdict::Stuck);
        let mut m = NewtonMonitor::new(1e-6, tolerance);
        m.judge(1e-6, 0.5);
        assert_eq!(m.judge(0.8e-6, 0.5), NewtonVerdict::Stuck);
        m.restart();
        assert_eq!(m.judge(f64::NAN, 0.5), NewtonVerdict::Failed);
    }

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
