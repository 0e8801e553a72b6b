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
