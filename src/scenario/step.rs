//! A fixed-step scheme's step: the user's, checked against the sample
//! interval, the scheme's stability and the step count, or the model's.

use super::Scenario;
use crate::error::{InputError, require_positive};
use crate::model::Tether;
use crate::scheme::FixedStepScheme;
use crate::solver::SolverError;
use crate::solver::modal::{automatic_step, semi_implicit_stability_limit, semi_implicit_step};

/// Checks a user's explicit step: positive and a whole divisor of the sample
/// interval, so that every sample lands on a step.
pub fn validate_step(step_s: f64, sample_interval_s: f64) -> Result<(), InputError> {
    let ratio = sample_interval_s / step_s;
    if !(step_s.is_finite() && step_s > 0.0)
        || (ratio - ratio.round()).abs() > 1e-6
        || ratio.round() < 1.0
    {
        return Err(InputError::new(
            "step_s",
            step_s,
            format!(
                "a positive step that divides the sample interval {sample_interval_s} s exactly"
            ),
        ));
    }
    Ok(())
}

/// Checks a user's step for `scenario`: one that divides its sample
/// interval where samples must land on steps
/// ([`Scenario::step_must_divide_s`]), any positive one for a film.
pub fn validate_step_for(step_s: f64, scenario: &Scenario) -> Result<(), InputError> {
    match scenario.step_must_divide_s() {
        Some(interval_s) => validate_step(step_s, interval_s),
        None => require_positive("step_s", step_s),
    }
}

/// The explicit step: the user's (checked, and snapped to divide the
/// interval `must_divide_s` exactly where there is one) or else
/// `automatic()`.
pub fn explicit_step(
    requested_s: Option<f64>,
    must_divide_s: Option<f64>,
    automatic: impl FnOnce() -> Result<f64, SolverError>,
) -> Result<f64, SolverError> {
    match (requested_s, must_divide_s) {
        (Some(h), Some(interval_s)) => {
            validate_step(h, interval_s)?;
            Ok(interval_s / (interval_s / h).round())
        }
        (Some(h), None) => {
            require_positive("step_s", h)?;
            Ok(h)
        }
        (None, _) => automatic(),
    }
}

/// The step of a fixed-step scheme for `scenario` on a tether starting at
/// `q0`: the user's (checked and snapped as [`explicit_step`] does) or
/// else the automatic one from the model's modes, which divides the
/// sample interval (a film's typical one).
pub fn fixed_step(
    scheme: FixedStepScheme,
    requested_s: Option<f64>,
    tether: &Tether,
    q0: &[f64],
    scenario: &Scenario,
) -> Result<f64, SolverError> {
    let sample_interval_s = scenario.sample_interval_s();
    let step = explicit_step(
        requested_s,
        scenario.step_must_divide_s(),
        || match scheme {
            FixedStepScheme::Explicit => automatic_step(tether, q0, sample_interval_s),
            FixedStepScheme::SemiImplicit => semi_implicit_step(tether, q0, sample_interval_s),
        },
    )?;
    if scheme == FixedStepScheme::SemiImplicit && requested_s.is_some() {
        // Beyond its limit this scheme does not blow up: the implicit
        // damping holds the unstable axial modes to a bounded, wrong
        // oscillation (n = 6, D = 2000: the tip 3 cm off after 2 s at 1.015
        // times the limit). So a user's step is held to it.
        let limit = semi_implicit_stability_limit(tether, q0)?;
        if step > limit {
            return Err(InputError::new(
                "step_s",
                step,
                format!(
                    "at most {limit:.4e} s for the semi-implicit scheme on this tether (its stability limit 2/ω_max; beyond it the scheme does not diverge but goes wrong), or no step for the automatic one"
                ),
            )
            .into());
        }
    }
    let steps = scenario.duration_s() / step;
    if steps > MAX_FIXED_STEPS as f64 {
        return Err(InputError::new(
            "step_s",
            step,
            format!(
                "at least {:.4e} s: a fixed-step run takes at most {MAX_FIXED_STEPS} steps, and this one lasts {} s",
                scenario.duration_s() / MAX_FIXED_STEPS as f64,
                scenario.duration_s()
            ),
        )
        .into());
    }
    Ok(step)
}

/// Steps a fixed-step run takes at most: a billion, where a mistyped step
/// (1e-30 s) would run silently for ever; within the GPU's 32-bit step
/// counter, and 39 times the automatic explicit step's count for the
/// paper's stiffest drop (n = 80, D = 10,000 Pa·s: a step of 7.87e-8 s,
/// 2.5e7 steps in 2 s; `simulate --solver explicit --elements 80
/// --damping 10000`, 2026-11-27).
pub const MAX_FIXED_STEPS: u64 = 1_000_000_000;
