//! What the adaptive stage is asked and what it answers: its settings and
//! landings, the tolerances and method it accepts, its counts and each
//! simulation's outcome.

use crate::error::InputError;
use crate::gpu::Precision;
use crate::scheme::ImplicitMethod;
use crate::status::RunStatus;

/// The scheme's settings: the reference solver's `ReferenceOptions`
/// (src/solver/reference.rs), which this layer cannot name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveOptions {
    /// Largest accepted local error per step, as a length \[m\].
    pub tolerance_m: f64,
    /// Generalized-α's ρ∞.
    pub spectral_radius: f64,
    pub max_step_s: f64,
    pub initial_step_s: f64,
}

/// The times a simulation lands on: its frames (model time, after its
/// release; as many as the simulation's frames) and, for a swing-up, J_a
/// every `interval_s`, `count` times.
#[derive(Debug, Clone, PartialEq)]
pub struct Landings {
    pub frame_times_s: Vec<f64>,
    pub samples: Option<(f64, u64)>,
}

/// The smallest tolerance the scheme takes in f32 \[m\]: below it Newton's
/// corrections and the error estimate read f32's rounding, steps are
/// rejected by the hundred and the step count grows (at n = 50, 1.4× the
/// f64 steps at 5e-8 m and 2.8× at 1e-8; tests/mirror.rs, docs/gpu.md).
pub const F32_TOLERANCE_FLOOR_M: f64 = 1e-7;

/// The tolerance \[m\] of a first pass in f32 (identify's scouting pass,
/// whose candidates near the best are re-run at the data's tolerance) on
/// tethers of up to `elements` elements, where looser than the job's.
/// It was set where f32 took at most about half again f64's attempted
/// steps while the strain was formed from the displacement and the drift
/// summed (at 1e-7 m, 1.4× at n = 10 and 5.3× at n = 50). With them apart
/// ([`Precision::adaptive_splits_strain`]) f32 takes 1.02–1.17× f64's
/// attempts at 1e-7 m to n = 50, 1.47× at n = 120 (`cargo run --release
/// --example f32_floor`, BENCHMARKS.md), so this is no longer f32's
/// limit: it stays because a looser first pass costs re-runs, not
/// answers (the default grid: the same best, region and refined values,
/// 81 candidates re-run instead of 50), and on lavapipe f32's first pass
/// takes 16–17 s at 1e-6 m against 36 s at 1e-7 m (f64's 29 s).
pub fn f32_first_pass_tolerance_m(elements: usize) -> f64 {
    match elements {
        0..=10 => 1e-7,
        11..=30 => 5e-7,
        _ => 1e-6,
    }
}

/// Refuses a tolerance that `precision` cannot deliver.
pub fn check_tolerance(precision: Precision, tolerance_m: f64) -> Result<(), InputError> {
    if precision == Precision::F32 && tolerance_m < F32_TOLERANCE_FLOOR_M {
        return Err(InputError::new(
            "tolerance_m",
            tolerance_m,
            format!(
                "at least {F32_TOLERANCE_FLOOR_M:e} m for the GPU's reference solver in f32 \
                 (its rounding floor; --tolerance, or --precision f64 for less)"
            ),
        ));
    }
    Ok(())
}

/// Refuses an implicit method the adaptive stage does not run: it runs
/// generalized-α only (`implicit_method`; the CPU runs both).
pub fn check_method(method: ImplicitMethod) -> Result<(), InputError> {
    if method == ImplicitMethod::GeneralizedAlpha {
        return Ok(());
    }
    Err(InputError::new(
        "implicit_method",
        method,
        "generalized-alpha on the GPU (its adaptive stage runs no other; \
         the CPU's reference solver runs esdirk43)",
    ))
}

/// Whether a frame or sample at `a` is observed at a landing at `b`: a
/// frame time and a sample time that differ by rounding are one landing.
pub fn same_landing(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

/// The most frames that one landing observes.
pub fn frames_per_landing(landings: &Landings) -> u64 {
    let (mut most, mut run, mut last) = (1u64, 0u64, f64::NAN);
    for &t in &landings.frame_times_s {
        run = if same_landing(t, last) { run + 1 } else { 1 };
        most = most.max(run);
        last = t;
    }
    most
}

/// What the scheme did, as the reference solver counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AdaptiveStats {
    pub steps: u64,
    pub rejected_steps: u64,
    pub newton_iterations: u64,
    pub factorizations: u64,
    /// Largest local error estimate of an accepted step \[m\].
    pub max_local_error_m: f64,
}

/// One simulation's outcome: the engine's objectives and track, and the
/// scheme's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveOutcome {
    pub status: RunStatus,
    pub stats: AdaptiveStats,
    /// J_e \[m²\] over its frames (when compared).
    pub identification_error_m2: f64,
    /// J_a,min \[m\] and its time \[s\].
    pub swingup_min_m: f64,
    pub swingup_time_s: f64,
    /// Marker positions of its frames, frame-major, when recorded.
    pub track_m: Option<Vec<[f64; 2]>>,
}
