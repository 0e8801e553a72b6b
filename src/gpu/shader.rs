//! WGSL sources. A pipeline's source is the concatenation, in this order, of
//! one precision module (`real_f32.wgsl` or `real_f64.wgsl`, which define the
//! `real` aliases), the shared modules, and the stage's own file (for the
//! step stage, `step.wgsl` in the thread layout or `step_workgroup.wgsl` in
//! the workgroup layout, whose shape is prepended as constants). Nothing else
//! is generated at run time but documented choices: the precision, and for
//! the step stage the node capacity `MAX_NODES` of its private arrays (one
//! of [`super::abi::NODE_CAPACITIES`]) and the scheme: `SEMI_IMPLICIT`,
//! `SPLIT_STRAIN` (the adaptive stage in f32, `Precision::adaptive_splits_strain`),
//! and the module that keeps the factorization's E blocks
//! (`coupling_private.wgsl`, sized by `COUPLING_NODES`) or keeps none
//! (`coupling_none.wgsl`, for the explicit scheme).

use super::Precision;
use crate::scheme::FixedStepScheme;

const REAL_F32: &str = include_str!("../../shaders/real_f32.wgsl");
const REAL_F64: &str = include_str!("../../shaders/real_f64.wgsl");
const MATRIX: &str = include_str!("../../shaders/matrix.wgsl");
const NODE_BLOCKS: &str = include_str!("../../shaders/node_blocks.wgsl");
const ELEMENT: &str = include_str!("../../shaders/element.wgsl");
const MOTION: &str = include_str!("../../shaders/motion.wgsl");
const TANGENT: &str = include_str!("../../shaders/tangent.wgsl");
const STEP_IO: &str = include_str!("../../shaders/step_io.wgsl");
const STEP: &str = include_str!("../../shaders/step.wgsl");
const STEP_WORKGROUP: &str = include_str!("../../shaders/step_workgroup.wgsl");
const COUPLING_PRIVATE: &str = include_str!("../../shaders/coupling_private.wgsl");
const COUPLING_NONE: &str = include_str!("../../shaders/coupling_none.wgsl");
const PEAK: &str = include_str!("../../shaders/peak.wgsl");
pub(crate) const STEP_ADAPTIVE: &str = include_str!("../../shaders/step_adaptive.wgsl");

/// The modules of shared functions, in the order every step stage (and a
/// test kernel) concatenates them.
const SHARED_FUNCTIONS: [&str; 4] = [MATRIX, NODE_BLOCKS, ELEMENT, MOTION];

fn precision_module(precision: Precision) -> &'static str {
    match precision {
        Precision::F32 => REAL_F32,
        Precision::F64 => REAL_F64,
    }
}

/// The source of the "step" stage of `scheme` for simulations of at most
/// `node_capacity` nodes.
pub fn step_source(precision: Precision, node_capacity: u32, scheme: FixedStepScheme) -> String {
    let semi_implicit = scheme == FixedStepScheme::SemiImplicit;
    let mut constants = format!(
        "// Nodes a simulation may have in this pipeline (src/gpu/abi.rs).\n\
         const MAX_NODES: u32 = {node_capacity}u;\n\
         // The scheme: explicit, or with the material damping implicit.\n\
         const SEMI_IMPLICIT: bool = {semi_implicit};\n\
         // element.wgsl's displacement in one real (no drift apart).\n\
         const SPLIT_STRAIN: bool = false;\n"
    );
    let coupling = if semi_implicit {
        constants += &format!(
            "// Nodes of the factorization's E blocks kept per simulation.\n\
             const COUPLING_NODES: u32 = {}u;\n",
            super::abi::coupling_nodes(node_capacity, scheme)
        );
        COUPLING_PRIVATE
    } else {
        COUPLING_NONE
    };
    [precision_module(precision), &constants]
        .into_iter()
        .chain(SHARED_FUNCTIONS)
        .chain([STEP_IO, coupling, STEP])
        .collect::<Vec<_>>()
        .join("\n")
}

/// The source of the "step" stage in the workgroup layout of `shape`
/// (step_workgroup.wgsl).
pub fn step_workgroup_source(
    precision: Precision,
    scheme: FixedStepScheme,
    shape: super::layout::WorkgroupShape,
) -> String {
    let semi_implicit = scheme == FixedStepScheme::SemiImplicit;
    let constants = format!(
        "// Node slots per simulation, simulations per workgroup and lanes per\n\
         // simulation (src/gpu/cost/), and the scheme.\n\
         const MAX_NODES: u32 = {}u;\n\
         const GROUP_SIMS: u32 = {}u;\n\
         const SIM_LANES: u32 = {}u;\n\
         const SEMI_IMPLICIT: bool = {semi_implicit};\n\
         const SPLIT_STRAIN: bool = false;\n\
         const BLOCK_NODES: u32 = {}u;\n",
        shape.nodes,
        shape.sims,
        shape.lanes,
        if semi_implicit { shape.nodes } else { 1 },
    );
    [precision_module(precision), &constants]
        .into_iter()
        .chain(SHARED_FUNCTIONS)
        .chain([STEP_IO, STEP_WORKGROUP])
        .collect::<Vec<_>>()
        .join("\n")
}

/// The source of the adaptive implicit stage (step_adaptive.wgsl) for
/// workgroups of `shape` and generalized-α's ρ∞ `spectral_radius`: its
/// coefficients and the step control's constants prepended, each as the
/// CPU mirror rounds it to the precision (src/gpu/mirror/adaptive.rs).
pub fn step_adaptive_source(
    precision: Precision,
    shape: super::shape::AdaptiveShape,
    spectral_radius: f64,
) -> String {
    use crate::scheme::GeneralizedAlpha;
    use crate::scheme::implicit_control as control;
    let c = GeneralizedAlpha::new(spectral_radius);
    let (beta_scaled, gamma_scaled) = c.scaled();
    let (epsilon, huge) = match precision {
        Precision::F32 => (f32::EPSILON as f64, 1e38),
        Precision::F64 => (f64::EPSILON, 1e300),
    };
    let reals = [
        ("ALPHA_M", c.alpha_m),
        ("ALPHA_F", c.alpha_f),
        ("BETA", c.beta),
        ("GAMMA", c.gamma),
        ("BETA_SCALED", beta_scaled),
        ("GAMMA_SCALED", gamma_scaled),
        ("ERROR_CONSTANT", c.error_constant()),
        ("EPSILON", epsilon),
        // Above any finite value the stage meets; NaN fails `<` too.
        ("HUGE", huge),
        ("SUBSTEP_SLACK", (8.0 * epsilon).max(control::SUBSTEP_SLACK)),
        ("STALE_STEP_CHANGE", control::STALE_STEP_CHANGE),
        ("MIN_STEP_S", control::MIN_STEP_S),
        ("REJECTED_STEP_FACTOR", control::REJECTED_STEP_FACTOR),
        ("UNMEASURED_NEWTON_ETA", control::UNMEASURED_NEWTON_ETA),
        (
            "FIRST_CORRECTION_FRACTION",
            control::FIRST_CORRECTION_FRACTION,
        ),
        (
            "NEWTON_TOLERANCE_FRACTION",
            control::NEWTON_TOLERANCE_FRACTION,
        ),
        ("DIVERGING_RATE", control::DIVERGING_RATE),
        ("STEP_SAFETY", control::STEP_SAFETY),
        ("STEP_FACTOR_MIN", control::STEP_FACTOR_MIN),
        ("STEP_FACTOR_MAX", control::STEP_FACTOR_MAX),
        (
            "STEP_REACH",
            (control::STEP_FACTOR_MAX / control::STEP_SAFETY).powi(3),
        ),
        ("KEEP_BELOW", control::KEEP_BELOW),
    ];
    let mut constants = format!(
        "// Simulations per workgroup and lanes per simulation (src/gpu/adaptive/).\n\
         const GROUP_SIMS: u32 = {}u;\n\
         const SIM_LANES: u32 = {}u;\n\
         // element.wgsl's force without the semi-implicit damping blocks.\n\
         const SEMI_IMPLICIT: bool = false;\n\
         // element.wgsl's strain with the drift since the last fold apart\n\
         // (Precision::adaptive_splits_strain).\n\
         const SPLIT_STRAIN: bool = {};\n\
         // Generalized-α at rho_inf = {spectral_radius:?} and the step control\n\
         // (scheme::GeneralizedAlpha, scheme::implicit_control).\n\
         const MAX_NEWTON_ITERATIONS: u32 = {}u;\n\
         const BORROWED_ETA_EXPONENT: f32 = {:?};\n",
        shape.sims,
        shape.lanes,
        precision.adaptive_splits_strain(),
        control::MAX_NEWTON_ITERATIONS,
        control::BORROWED_ETA_EXPONENT,
    );
    for (name, value) in reals {
        constants += &format!("const {name}: real = {value:e};\n");
    }
    [precision_module(precision), &constants]
        .into_iter()
        .chain(SHARED_FUNCTIONS)
        .chain([TANGENT, STEP_IO, STEP_ADAPTIVE])
        .collect::<Vec<_>>()
        .join("\n")
}

/// The shared modules of the step stage, with the semi-implicit scheme's
/// branches on, followed by `kernel`: a test kernel that runs one shared
/// function on many inputs (`src/gpu/mirror/kernel.rs`).
#[cfg(test)]
pub(crate) fn function_test_source(precision: Precision, kernel: &str) -> String {
    [
        precision_module(precision),
        "const SEMI_IMPLICIT: bool = true;\nconst SPLIT_STRAIN: bool = true;",
    ]
    .into_iter()
    .chain(SHARED_FUNCTIONS)
    .chain([TANGENT, kernel])
    .collect::<Vec<_>>()
    .join("\n")
}

/// The source of the "peak" stage (multiply-add throughput).
pub fn peak_source(precision: Precision) -> String {
    [precision_module(precision), PEAK].join("\n")
}
