//! The cost model of an adaptive stage running Radau IIA, which is not
//! built: what the GPU would spend if its adaptive stage took the
//! reference solver's fifth-order method (src/solver/radau.rs) instead of
//! generalized-α, counted before the stage is written so that the choice
//! to write it rests on numbers (`examples/radau_gpu_costs.rs`).
//!
//! The stage it prices keeps the generalized-α stage's design
//! (`shaders/step_adaptive.wgsl`: a simulation's lanes share its element
//! and node passes; factorizations and solves run from both ends, one
//! lane a side) and does Radau's work:
//! - **a Newton iteration**: the three stages' element forces in one pass
//!   (3n evaluations over the lanes); per node the three residuals, the
//!   transforms by T⁻¹ and back by T, the correction's size and the three
//!   stages' (Q, V); the real system solved from both ends by lanes 0 and 1
//!   while lanes 2 and 3 solve the complex one (with fewer than four
//!   lanes, one after the other);
//! - **a refresh**: one tangent pass at the middle stage, K and C kept
//!   apart (the error estimate needs K), then the real and the complex
//!   factorization side by side, each combining its blocks with its own
//!   coefficients;
//! - **an attempt**: the stages predicted from the last step's, and the
//!   filtered error estimate (per node e_q, e_v, M e_v and K e_q, then one
//!   more real solve).
//!
//! Complex arithmetic is counted as real flops: a product 6, a sum 2, a
//! reciprocal 6. The flops of every part are below, each from the
//! operations the CPU solver does for it.

use super::adaptive::{AdaptiveWork, StageWork};
use crate::gpu::Precision;
use crate::gpu::flops;

/// A 4×4 real matrix times a vector (16 products, 12 sums).
const REAL_MATVEC: u64 = 28;
/// A 4×4 complex matrix times a complex vector: 16 products, 12 sums.
const COMPLEX_MATVEC: u64 = 16 * 6 + 12 * 2;
/// A 4×4 complex matrix product: 64 products, 48 sums.
const COMPLEX_PRODUCT: u64 = 64 * 6 + 48 * 2;
/// A complex 4×4 inverse by cofactors, as `flops::INVERSE4` counts the
/// real one: twelve 2×2 minors (two products and a difference each), the
/// determinant (6 products, 5 sums), its reciprocal, sixteen cofactors of
/// three products, two sums and the scaling.
const COMPLEX_INVERSE4: u64 = 12 * (2 * 6 + 2) + (6 * 6 + 5 * 2) + 6 + 16 * (3 * 6 + 2 * 2 + 6);
/// A block's combination from K and C with the step's coefficients, per
/// entry: real a C + b K (two products, two sums: 4); complex μh C +
/// (μh)² K with real blocks (four products, four sums: 8).
const REAL_COMBINE_BLOCK: u64 = 16 * 4;
const COMPLEX_COMBINE_BLOCK: u64 = 16 * 8;

/// One node of a side of the real factorization: generalized-α's
/// (`flops::ADAPTIVE_FACTOR_NODE`) with its two diagonal blocks and its
/// coupling combined from K and C first.
pub const RADAU_REAL_FACTOR_NODE: u64 = flops::ADAPTIVE_FACTOR_NODE + 3 * REAL_COMBINE_BLOCK;
/// The real factorization's middle node: generalized-α's and its two
/// blocks combined.
pub const RADAU_REAL_FACTOR_MIDDLE: u64 = flops::ADAPTIVE_FACTOR_MIDDLE + 2 * REAL_COMBINE_BLOCK;
/// One node of a side of the complex factorization: its blocks combined
/// (3 of them) and summed (32), the mass added to the real part (8), L E
/// subtracted (a product and 32), the inverse and E = G U (a product).
pub const RADAU_COMPLEX_FACTOR_NODE: u64 =
    3 * COMPLEX_COMBINE_BLOCK + 32 + 8 + COMPLEX_PRODUCT + 32 + COMPLEX_INVERSE4 + COMPLEX_PRODUCT;
/// The complex middle node: its two blocks combined and summed, the mass,
/// both sides' L E and U F subtracted, the inverse.
pub const RADAU_COMPLEX_FACTOR_MIDDLE: u64 =
    2 * COMPLEX_COMBINE_BLOCK + 32 + 8 + 2 * (COMPLEX_PRODUCT + 32) + COMPLEX_INVERSE4;
/// One node of a side of the complex solve: generalized-α's three
/// matrix-vector products and two differences (`flops::ADAPTIVE_SOLVE_NODE`)
/// in complex arithmetic.
pub const RADAU_COMPLEX_SOLVE_NODE: u64 = 3 * COMPLEX_MATVEC + 2 * 8;
/// The complex middle node's correction (`flops::ADAPTIVE_SOLVE_MIDDLE` in
/// complex arithmetic).
pub const RADAU_COMPLEX_SOLVE_MIDDLE: u64 = 2 * (COMPLEX_MATVEC + 8) + COMPLEX_MATVEC;
/// One node's share of a Newton iteration outside the solves: three
/// residuals f − M A (each as generalized-α's: 4 + 36 + 12), the
/// transforms of its four rows by T⁻¹ and T (two 3×3 times 3-vectors, 15
/// flops, for each row), the corrections added to the three accelerations
/// (12), the correction's size (per stage and row: Σ aᵢⱼ dⱼ and Σ (A²)ᵢⱼ dⱼ,
/// 5 each, scaled by h² and weighted, 4) and the three stages' Q and V
/// (per stage and row the two sums, 10; V = v + h ΔV, 2; Q = q + cᵢh v +
/// h² ΔQ, 4).
pub const RADAU_NEWTON_NODE: u64 = 3 * 52 + 2 * 4 * 15 + 12 + 3 * 4 * (10 + 4) + 3 * 4 * 16;
/// One node's share of an attempt outside Newton: the prediction (per
/// stage and row a cubic through four values, 7) and the stages' Q and V
/// from it (3 × 4 × 16), then the error estimate: the stages' increments
/// weighted (per row 2 × 3 × 3), e_q and e_v (2 × 3 per row), M e_v (12),
/// K e_q (three blocks times vectors and their sum, 3 × 28 + 8),
/// M e_v − g K e_q (8), and e_q + g y weighted (4 × 4).
pub const RADAU_ATTEMPT_NODE: u64 =
    3 * 4 * 7 + 3 * 4 * 16 + 4 * (2 * 3 * 3) + 4 * (2 * 3) + 12 + (3 * REAL_MATVEC + 8) + 8 + 4 * 4;

/// Barriers a Radau stage would pass per attempt outside Newton's rounds:
/// the prediction, the flags' uniform load, the error's node pass, its
/// solve's two sweeps, the error's size, the landing.
pub const RADAU_BARRIERS_PER_ATTEMPT: f64 = 7.0;
/// ... per Newton round: generalized-α's seven (one force pass for the
/// three stages, the residuals and transforms, two solve sweeps run by
/// both systems' lanes at once, the update, the round's end, the flags).
pub const RADAU_BARRIERS_PER_ROUND: f64 = super::ADAPTIVE_BARRIERS_PER_ROUND;
/// ... per refresh: the tangent pass, both factorizations' sides, their
/// middles.
pub const RADAU_BARRIERS_PER_REFRESH: f64 = super::ADAPTIVE_BARRIERS_PER_FACTORING;

/// What one simulation of Radau IIA does, as the reference solver counts
/// it (`ReferenceStats` of an `implicit_method = "radau5"` run).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RadauWork {
    pub elements: usize,
    /// Attempted steps: accepted and rejected.
    pub attempts: f64,
    pub newton_iterations: f64,
    /// Tangents taken, each factored twice (real and complex).
    pub refreshes: f64,
}

impl RadauWork {
    /// One run's counts, as [`AdaptiveWork::counted`] takes them (`steps`:
    /// accepted and rejected), its factorizations two to a refresh.
    pub fn counted(
        elements: usize,
        steps: (u64, u64),
        newton_iterations: u64,
        factorizations: u64,
    ) -> Self {
        let w = AdaptiveWork::counted(elements, steps, newton_iterations, factorizations);
        Self {
            elements,
            attempts: w.attempts,
            newton_iterations: w.newton_iterations,
            refreshes: w.factorizations / 2.0,
        }
    }

    /// Nodes of a side of the factorizations and solves from both ends,
    /// and the middle node's corrections on the longest lane: with two
    /// lanes a system or more, ⌈n/2⌉ nodes and one; with one, both sides
    /// and the middle once for each.
    fn sides(&self, lanes_per_system: u32) -> (f64, f64) {
        let n = self.elements as u64;
        if lanes_per_system >= 2 {
            (n.div_ceil(2) as f64, 1.0)
        } else {
            (n as f64, 2.0)
        }
    }

    /// The serial flops of one real and one complex solve, and of one
    /// refresh's two factorizations, with `lanes` lanes: side by side from
    /// four lanes, else one after the other.
    fn serial_parts(&self, lanes: u32) -> (f64, f64) {
        let together = lanes >= 4;
        let (side, middle) = self.sides(if together { 2 } else { lanes });
        let real_solve =
            side * flops::ADAPTIVE_SOLVE_NODE as f64 + middle * flops::ADAPTIVE_SOLVE_MIDDLE as f64;
        let complex_solve =
            side * RADAU_COMPLEX_SOLVE_NODE as f64 + middle * RADAU_COMPLEX_SOLVE_MIDDLE as f64;
        let real_factor = side * RADAU_REAL_FACTOR_NODE as f64 + RADAU_REAL_FACTOR_MIDDLE as f64;
        let complex_factor =
            side * RADAU_COMPLEX_FACTOR_NODE as f64 + RADAU_COMPLEX_FACTOR_MIDDLE as f64;
        let both = |a: f64, b: f64| if together { a.max(b) } else { a + b };
        (
            both(real_solve, complex_solve),
            both(real_factor, complex_factor),
        )
    }

    /// The error estimate's real solve on the longest lane.
    fn error_solve(&self, lanes: u32) -> f64 {
        let (side, middle) = self.sides(lanes);
        side * flops::ADAPTIVE_SOLVE_NODE as f64 + middle * flops::ADAPTIVE_SOLVE_MIDDLE as f64
    }
}

impl StageWork for RadauWork {
    fn chain_flops(&self, lanes: u32, precision: Precision) -> f64 {
        let lanes_u = lanes.max(1) as usize;
        let n = self.elements;
        let per_lane = |count: usize| count.div_ceil(lanes_u) as f64;
        let attempt = per_lane(n + 1) * RADAU_ATTEMPT_NODE as f64;
        let newton = per_lane(3 * n) * flops::adaptive_force_element(precision) as f64
            + per_lane(n + 1) * RADAU_NEWTON_NODE as f64;
        let refresh = per_lane(n) * flops::adaptive_tangent_element(precision) as f64;
        self.attempts * attempt
            + self.newton_iterations * newton
            + self.refreshes * refresh
            + self.serial_flops(lanes)
    }

    fn serial_flops(&self, lanes: u32) -> f64 {
        let (solve, factor) = self.serial_parts(lanes);
        self.attempts * self.error_solve(lanes)
            + self.newton_iterations * solve
            + self.refreshes * factor
    }

    fn barriers(&self) -> f64 {
        RADAU_BARRIERS_PER_ATTEMPT * self.attempts
            + RADAU_BARRIERS_PER_ROUND * self.newton_iterations
            + RADAU_BARRIERS_PER_REFRESH * self.refreshes
    }

    fn elements(&self) -> usize {
        self.elements
    }
}

/// A Radau step's flops over generalized-α's, per part, on the longest
/// lane of a filled workgroup: how much heavier each Newton iteration,
/// refresh and attempt is (the counts' ratio decides the rest).
pub fn heavier_than_generalized_alpha(
    elements: usize,
    lanes: u32,
    precision: Precision,
) -> [f64; 3] {
    let one = |attempts, newton_iterations, factorizations| {
        let alpha = AdaptiveWork {
            elements,
            attempts,
            newton_iterations,
            factorizations,
        };
        let radau = RadauWork {
            elements,
            attempts,
            newton_iterations,
            refreshes: factorizations,
        };
        radau.chain_flops(lanes, precision) / alpha.chain_flops(lanes, precision)
    };
    [one(0.0, 1.0, 0.0), one(0.0, 0.0, 1.0), one(1.0, 0.0, 0.0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_parts_cost_about_four_real_ones() {
        // A complex product is four real ones and two sums: the complex
        // counts sit between 4 and 4.6 times the real ones they mirror.
        let ratio = |complex: u64, real: u64| complex as f64 / real as f64;
        for (name, r) in [
            ("matvec", ratio(COMPLEX_MATVEC, REAL_MATVEC)),
            ("product", ratio(COMPLEX_PRODUCT, flops::MATRIX_PRODUCT)),
            ("inverse", ratio(COMPLEX_INVERSE4, flops::INVERSE4)),
            (
                "solve node",
                ratio(RADAU_COMPLEX_SOLVE_NODE, flops::ADAPTIVE_SOLVE_NODE),
            ),
        ] {
            assert!((4.0..=4.7).contains(&r), "{name}: {r}");
        }
    }

    #[test]
    fn counts_take_a_refresh_per_two_factorizations() {
        let w = RadauWork::counted(20, (280, 20), 1200, 500);
        assert_eq!(
            (w.attempts, w.newton_iterations, w.refreshes),
            (300.0, 1200.0, 250.0)
        );
    }

    #[test]
    fn four_lanes_solve_both_systems_at_once() {
        let w = RadauWork {
            elements: 40,
            attempts: 0.0,
            newton_iterations: 1.0,
            refreshes: 0.0,
        };
        // With four lanes the complex solve alone is the serial part; with
        // two, the real one is added to it; with one, both run over every
        // node.
        let complex = 20.0 * RADAU_COMPLEX_SOLVE_NODE as f64 + RADAU_COMPLEX_SOLVE_MIDDLE as f64;
        let real = 20.0 * flops::ADAPTIVE_SOLVE_NODE as f64 + flops::ADAPTIVE_SOLVE_MIDDLE as f64;
        assert_eq!(w.serial_flops(4), complex);
        assert_eq!(w.serial_flops(2), complex + real);
        assert_eq!(
            w.serial_flops(1),
            40.0 * (RADAU_COMPLEX_SOLVE_NODE + flops::ADAPTIVE_SOLVE_NODE) as f64
                + 2.0 * (RADAU_COMPLEX_SOLVE_MIDDLE + flops::ADAPTIVE_SOLVE_MIDDLE) as f64
        );
        // The force pass spreads its 3n elements: 64 lanes take two each
        // at n = 40, where one lane takes all 120.
        let force = flops::adaptive_force_element(Precision::F64) as f64;
        let spread = w.chain_flops(64, Precision::F64) - w.serial_flops(64);
        assert_eq!(spread, 2.0 * force + RADAU_NEWTON_NODE as f64);
        let alone = w.chain_flops(1, Precision::F64) - w.serial_flops(1);
        assert_eq!(alone, 120.0 * force + 41.0 * RADAU_NEWTON_NODE as f64);
    }

    #[test]
    fn a_radau_iteration_is_several_generalized_alpha_ones() {
        // At n = 40 on 64 lanes, the complex solve makes an iteration 3-6
        // times heavier on the chain, a refresh 3-6 times (the complex
        // factorization), an attempt more (its error solve and stages).
        let [iteration, refresh, attempt] = heavier_than_generalized_alpha(40, 64, Precision::F64);
        assert!((3.0..6.0).contains(&iteration), "{iteration}");
        assert!((3.0..6.0).contains(&refresh), "{refresh}");
        assert!(attempt > iteration, "{attempt}");
    }

    #[test]
    fn the_estimate_uses_the_shared_formula() {
        use super::super::{AdaptiveRates, GpuRates, adaptive_seconds_at};
        let rates = AdaptiveRates::flops_only(
            GpuRates {
                invocation_gflops: 1.0,
                device_gflops: 1e6,
            },
            32,
            Precision::F64,
        );
        let w = RadauWork {
            elements: 20,
            attempts: 300.0,
            newton_iterations: 1200.0,
            refreshes: 250.0,
        };
        // One simulation: its chain alone.
        let lone = adaptive_seconds_at(&[w], rates, 16);
        assert_eq!(lone, w.chain_flops(16, Precision::F64) / 1e9);
        // A million: the filled device.
        let many = adaptive_seconds_at(&vec![w; 1_000_000], rates, 16);
        let filled = super::super::adaptive_filled_flops(&w, 16, 32, Precision::F64);
        assert!((many - 1e6 * filled / 1e15).abs() < 1e-9 * many, "{many}");
    }
}
