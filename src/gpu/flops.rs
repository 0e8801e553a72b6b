//! Floating-point operations per element-step of the step stage, counted
//! once, here, from `shaders/element.wgsl`, `shaders/matrix.wgsl` and
//! `shaders/step.wgsl`, for each scheme: every
//! add, subtract, multiply, divide and square root is one flop (a fused
//! multiply-add is two), comparisons and abs are free. Per element-step means
//! one element's force plus one node's drift, substitutions and velocity
//! update; a tether of n elements costs n of them per step (plus one node,
//! left out).

/// One Gauss point (`add_gauss_point`).
pub const GAUSS_POINT: u64 = 2 // 1/l_e, ξ²
    + 15 + 14 // ∂s/∂s, ∂²s/∂s² of four shape functions
    + 4 * 14 // u_x, u_xx, their rates: four 2-vectors from four nodal pairs
    + 2 + 8 + 1 + 1 + 2 // r_x, |r_x|² − 1, |r_x|², |r_x|, ε
    + 2 + 3 + 1 + 1 // ∂ε/∂p, z, 1/g, κ
    + 7 + 2 // ∂κ/∂p, ∂κ/∂c
    + 3 + 7 // ε̇, κ̇
    + 3 + 3 + 1 // N, M, w l_e
    + 8 + 3 // f_p, f_c
    + 32; // scatter into the eight element entries
/// Gravity and air drag of one element (`element_force` outside the points).
pub const GRAVITY_AND_DRAG: u64 = 6 + 6 + 4 + 4 + 4 + 9 + 9;
/// Drift and predicted velocity of one node: half-step velocity, drift,
/// predicted velocity (8 each) and displacement + drift (4). The fold of
/// the drift into the displacement, every STEPS_PER_FOLD steps, is left out.
pub const DRIFT: u64 = 3 * 8 + 4;
/// Forward substitution of one node: G times a vector (a 4×4
/// matrix-vector product, 28), the coupling to the previous node times y
/// (`coupling_transpose_times`, 12: it is a 2×2 matrix times the identity),
/// a subtraction, and completing f.
pub const FORWARD: u64 = 28 + 4 + 12 + 4;
/// Back substitution (one 4×4 product and a subtraction) and the velocity update.
pub const BACK: u64 = 28 + 4 + 8;

/// Flops per element-step of the explicit scheme.
pub const PER_ELEMENT_STEP: u64 = crate::model::element::GAUSS_POINTS as u64 * GAUSS_POINT
    + GRAVITY_AND_DRAG
    + DRIFT
    + FORWARD
    + BACK;

/// The semi-implicit scheme's damping matrix at one Gauss point
/// (`add_gauss_point` under SEMI_IMPLICIT): ε_e and κ_e by node (8 + 24),
/// the two weights (4) and the weighted vectors (16), then for the block
/// (a, b) two outer products (32), their sum and the accumulation (32), and
/// for the symmetric blocks (a, a) and (b, b) the same on their ten distinct
/// entries (`symmetric_outer_pair`, `symmetric_sum`: 40 each).
pub const GAUSS_POINT_DAMPING: u64 = 8 + 24 + 4 + 16 + 64 + 2 * 40;
/// `inverse4`: twelve 2×2 minors (36), the determinant (11), its
/// reciprocal (1), sixteen cofactors of three products and two sums, each
/// scaled (96).
pub const INVERSE4: u64 = 36 + 11 + 1 + 96;
/// A 4×4 matrix product (64 multiplies, 48 adds).
pub const MATRIX_PRODUCT: u64 = 112;
/// The semi-implicit forward sweep at one node: the pivot block (the two
/// elements' symmetric damping blocks, 10, and the mass's eight nonzero
/// entries, `plus_node_mass`) and the coupling (8), D = A − L E (a product
/// and a difference), its inverse, y = G (f − L y) (two matrix-vector
/// products and a difference) and E = G U.
pub const SEMI_IMPLICIT_FORWARD: u64 =
    10 + 8 + 8 + MATRIX_PRODUCT + 16 + INVERSE4 + 28 + 4 + 28 + MATRIX_PRODUCT;

/// Flops per element-step of the semi-implicit scheme: the explicit step's
/// element and drift work, the damping matrix, the per-step factorization,
/// and the same back substitution.
pub const SEMI_IMPLICIT_PER_ELEMENT_STEP: u64 = crate::model::element::GAUSS_POINTS as u64
    * (GAUSS_POINT + GAUSS_POINT_DAMPING)
    + GRAVITY_AND_DRAG
    + DRIFT
    + SEMI_IMPLICIT_FORWARD
    + BACK;

/// Flops per element-step of `scheme`.
pub fn per_element_step(scheme: crate::scheme::FixedStepScheme) -> u64 {
    match scheme {
        crate::scheme::FixedStepScheme::Explicit => PER_ELEMENT_STEP,
        crate::scheme::FixedStepScheme::SemiImplicit => SEMI_IMPLICIT_PER_ELEMENT_STEP,
    }
}

/// Flops per invocation of the peak stage: 16 fma on vec4 per iteration.
pub const PEAK_PER_INVOCATION: u64 = 2048 * 16 * 4 * 2;

/// One element's own work in a step of `scheme`: its Gauss points (with the
/// damping matrix, semi-implicit), gravity and drag. In the workgroup
/// layout these run in parallel, one element per lane.
pub fn element(scheme: crate::scheme::FixedStepScheme) -> u64 {
    let point = match scheme {
        crate::scheme::FixedStepScheme::Explicit => GAUSS_POINT,
        crate::scheme::FixedStepScheme::SemiImplicit => GAUSS_POINT + GAUSS_POINT_DAMPING,
    };
    crate::model::element::GAUSS_POINTS as u64 * point + GRAVITY_AND_DRAG
}

/// One node's share of the block-tridiagonal solve of `scheme`: its forward
/// substitution (semi-implicit: with the pivot's factorization) and its
/// back substitution, without the velocity update. In the workgroup layout
/// this is the serial chain of a step, node after node.
pub fn node_solve(scheme: crate::scheme::FixedStepScheme) -> u64 {
    let forward = match scheme {
        crate::scheme::FixedStepScheme::Explicit => FORWARD,
        crate::scheme::FixedStepScheme::SemiImplicit => SEMI_IMPLICIT_FORWARD,
    };
    forward + BACK - VELOCITY_UPDATE
}

/// One node of the semi-implicit solve as the workgroup layout shares it
/// over four lanes (step_workgroup.wgsl's `forward_shared`), on the longest
/// lane: the pivot's and the coupling's mass entries (8 + 8, by every lane;
/// the two elements' damping blocks were summed in the element passes, and
/// are counted in [`element`]'s lanes' work there),
/// a column of D = A − L E (28 + 4), a column of the inverse (the twelve
/// minors 36, the determinant 11 and its reciprocal 1, four cofactors of
/// three products and two sums, scaled, 24), then lane 0's
/// y = G (f − L y) (28 + 4 + 28; the other lanes' column of E = G U, 28, is
/// shorter), and the back substitution, which stays on one lane
/// (28 + 4).
pub const SHARED_SEMI_IMPLICIT_NODE_SOLVE: u64 = 16 + 32 + 72 + 60 + 32;

/// The velocity update of one node (v½ + h/2 a: a product and a sum per
/// coordinate), part of [`BACK`].
pub const VELOCITY_UPDATE: u64 = 8;

/// One node's drift and velocity update, the part of a step the workgroup
/// layout spreads over the lanes besides the elements.
pub const NODE_UPDATE: u64 = DRIFT + VELOCITY_UPDATE;

/// The Gauss point's kinematics (element.wgsl's `point_kinematics`, shared
/// by the force and the tangent): 1/l_e and ξ² (2), the shape functions'
/// derivatives (15 + 14), r_x, r_xx and their rates (4 × 14), p, |r_x|² − 1,
/// g, |r_x|, ε and ∂ε/∂p (2 + 8 + 6), z, 1/g, κ (5), ∂κ/∂p, ∂κ/∂c (9),
/// ε̇, κ̇ (10), N, M (6).
pub const POINT_KINEMATICS: u64 = 2 + 29 + 56 + 2 + 8 + 6 + 5 + 9 + 10 + 6;

/// tangent.wgsl's `add_gauss_point_tangent` beyond the kinematics: 1/g,
/// 1/|r_x| (2), ∂²ε/∂p² (11), 1/g² and ∂²κ/∂p² (1 + 27), ∂²κ/∂p∂c (14), the
/// rates' derivatives (26), dN, dM (24) and the scaled rows (26), k N, k M
/// (2), the symmetric second-derivative block (13), w l_e (1), the two
/// outer products, their sum and scaling (80), W B_a and W B_b (two 4×4
/// products, 224) and the four blocks B_Xᵀ W B_Y accumulated (4 × 128).
pub const GAUSS_POINT_TANGENT: u64 = POINT_KINEMATICS
    + 2
    + 11
    + 28
    + 14
    + 26
    + 24
    + 26
    + 2
    + 13
    + 1
    + 80
    + 2 * MATRIX_PRODUCT
    + 4 * (MATRIX_PRODUCT + 16);
/// The drag's blocks (`element_tangent` after the points): the chord and
/// mean velocity (10), the four derivatives (12), l_e/12 (1), four
/// `drag_block`s (4 × 14) accumulated (4 × 16).
pub const DRAG_TANGENT: u64 = 10 + 12 + 1 + 4 * 14 + 4 * 16;
/// What SPLIT_STRAIN (the adaptive stage's in f32) adds to a Gauss point:
/// the drift's d_x and d_xx (2 × 14), added to r_x and u_xx (4), and
/// 2 r_x·d_x + |d_x|² added to |r_x|² − 1 (9).
pub const SPLIT_STRAIN_POINT: u64 = 2 * 14 + 4 + 9;
/// ... and to an element's chord (`element_chord`).
pub const SPLIT_STRAIN_CHORD: u64 = 4;
/// One element in the adaptive stage's tangent pass (`tangent_element`)
/// in `precision`: its five points and the drag, β'h² and γ'h (3), its two
/// mass couplings (2 × 8), and where it splits the strain
/// ([`super::Precision::adaptive_splits_strain`]) the split's.
pub fn adaptive_tangent_element(precision: super::Precision) -> u64 {
    crate::model::element::GAUSS_POINTS as u64 * GAUSS_POINT_TANGENT
        + DRAG_TANGENT
        + 3
        + 16
        + split_strain_element(precision)
}

/// One element in the force pass (`force_element`) in `precision`: the
/// explicit scheme's element force, and the split's where it splits the
/// strain.
pub fn adaptive_force_element(precision: super::Precision) -> u64 {
    crate::model::element::GAUSS_POINTS as u64 * GAUSS_POINT
        + GRAVITY_AND_DRAG
        + split_strain_element(precision)
}

/// What splitting the strain adds to one element's pass in `precision`.
fn split_strain_element(precision: super::Precision) -> u64 {
    if precision.adaptive_splits_strain() {
        crate::model::element::GAUSS_POINTS as u64 * SPLIT_STRAIN_POINT + SPLIT_STRAIN_CHORD
    } else {
        0
    }
}

/// One node of a side of the factorization from both ends (`factor_side`):
/// its two elements' blocks summed (16), the pivot's mass (8), L E (a 4×4
/// product) subtracted (16), the inverse and E = G U (from the tip: U F, H
/// and F = H L, as many).
pub const ADAPTIVE_FACTOR_NODE: u64 = 16 + 8 + MATRIX_PRODUCT + 16 + INVERSE4 + MATRIX_PRODUCT;
/// The middle node's pivot (`factor_middle`): its elements' blocks and its
/// mass, both sides' L E and U F subtracted, the inverse.
pub const ADAPTIVE_FACTOR_MIDDLE: u64 = 16 + 8 + 2 * (MATRIX_PRODUCT + 16) + INVERSE4;
/// One node of a side of the solve (`forward_side`, `back_side`): forward
/// L y, the difference and G times it (28 + 4 + 28), back E x and the
/// difference (28 + 4).
pub const ADAPTIVE_SOLVE_NODE: u64 = 28 + 4 + 28 + 28 + 4;
/// The middle node's correction, which each side's lane works out: both
/// sides' couplings times their sweeps and the differences (2 × (28 + 4)),
/// G times it (28).
pub const ADAPTIVE_SOLVE_MIDDLE: u64 = 2 * (28 + 4) + 28;
/// One node's residual and Newton update (`residual_node`: its two
/// elements' forces summed, 4, three mass products, 3 × 12, their sums and
/// the subtraction, 12; `update_node`: the four trial vectors, 4 + 8 + 10 +
/// 9, and the correction's weighted size, 10).
pub const ADAPTIVE_NEWTON_NODE: u64 = 4 + 36 + 12 + 4 + 8 + 10 + 9 + 10;
/// One node's share of an attempted step outside Newton: the prediction
/// (`predict_node`: the step ratio and extrapolated acceleration, 13; the
/// algorithmic acceleration, 25; drift, 29; velocity, 20) and the error
/// estimate's difference (8).
pub const ADAPTIVE_ATTEMPT_NODE: u64 = 13 + 25 + 29 + 20 + 8;

#[cfg(test)]
mod tests {
    #[test]
    fn the_parts_add_up_to_the_element_step() {
        use super::*;
        use crate::scheme::FixedStepScheme;
        for scheme in [FixedStepScheme::Explicit, FixedStepScheme::SemiImplicit] {
            assert_eq!(
                element(scheme) + node_solve(scheme) + NODE_UPDATE,
                per_element_step(scheme),
                "{scheme:?}"
            );
        }
    }

    #[test]
    fn the_kinematics_are_the_force_points_work_without_its_scatter() {
        use super::*;
        // w l_e (1), f_p and f_c (8 + 3) and the scatter (32) are the
        // force's own.
        assert_eq!(POINT_KINEMATICS + 1 + 11 + 32, GAUSS_POINT);
    }

    #[test]
    fn peak_count_matches_every_variant_of_its_shader() {
        let src = include_str!("../../shaders/peak.wgsl");
        assert!(src.contains("const PEAK_ITERATIONS: u32 = 2048u;"));
        let loops: Vec<&str> = src
            .split("i++) {")
            .skip(1)
            .map(|rest| rest.split('}').next().unwrap())
            .collect();
        assert_eq!(loops.len(), super::super::device::PeakChains::ALL.len());
        for body in loops {
            assert_eq!(body.matches("fma(").count(), 16, "{body}");
        }
    }
}
