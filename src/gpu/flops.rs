//! Floating-point operations per element-step of the step stage, counted
//! once, here, from `shaders/element.wgsl` and `shaders/step.wgsl`: every
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
/// Forward substitution of one node: two 4×4 matrix-vector products (28
/// each), a subtraction, and completing f.
pub const FORWARD: u64 = 28 + 4 + 28 + 4;
/// Back substitution (one 4×4 product and a subtraction) and the velocity update.
pub const BACK: u64 = 28 + 4 + 8;

/// Flops per element-step.
pub const PER_ELEMENT_STEP: u64 = crate::model::element::GAUSS_POINTS as u64 * GAUSS_POINT
    + GRAVITY_AND_DRAG
    + DRIFT
    + FORWARD
    + BACK;

/// Flops per invocation of the peak stage: 16 fma on vec4 per iteration.
pub const PEAK_PER_INVOCATION: u64 = 2048 * 16 * 4 * 2;

#[cfg(test)]
mod tests {
    #[test]
    fn peak_count_matches_its_shader() {
        let src = include_str!("../../shaders/peak.wgsl");
        assert!(src.contains("const PEAK_ITERATIONS: u32 = 2048u;"));
        let body = src
            .split("i++) {")
            .nth(1)
            .unwrap()
            .split('}')
            .next()
            .unwrap();
        assert_eq!(body.matches("fma(").count(), 16);
    }
}
