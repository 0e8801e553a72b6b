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
