//! Static equilibrium f_d(q, 0) = 0 by Newton's method with the analytic
//! tangent stiffness (docs/model.md §4.2: the swing-up's initial state).

use super::{SolverError, length_weights};
use crate::linalg::BandedMatrix;
use crate::model::Tether;
use crate::model::tether::{HALF_BANDWIDTH, NODE_DOFS, PRESCRIBED_DOFS};

/// Newton stops when the largest correction, as a length, is below this.
const CORRECTION_TOLERANCE_M: f64 = 1e-14;
const MAX_ITERATIONS: usize = 50;

/// The equilibrium hanging from `pin`, starting from the straight, unstretched
/// tether hanging straight down. Returns all coordinates (pin included).
/// The unstretched start would not do: without tension nothing resists a
/// rigid rotation about the pin and the tangent stiffness is singular. So the
/// start carries the linear-elastic stretch of the weight below each node
/// (docs/model.md §8's exact solution for a straight hanging tether), and Newton
/// polishes it to the nonlinear strain measure.
pub fn hanging_equilibrium(tether: &Tether, pin: [f64; 2]) -> Result<Vec<f64>, SolverError> {
    let p = tether.params();
    let axial = p.youngs_modulus_pa * p.area_m2();
    let weight_per_length = p.mass_per_length_kg_m() * p.gravity_m_s2;
    let tip_weight = p.tip_mass_kg * p.gravity_m_s2;
    let le = tether.kernel().length_m;
    let mut q = tether.straight_configuration(pin, [0.0, -1.0]);
    for i in 0..=tether.elements() {
        let s = i as f64 * le;
        let strain = (weight_per_length * (p.length_m - s) + tip_weight) / axial;
        // ∫₀ˢ ε ds for ε linear in s.
        let elongation = (tip_weight + weight_per_length * p.length_m) / axial * s
            - weight_per_length / axial * s * s / 2.0;
        q[NODE_DOFS * i + 1] = pin[1] - s - elongation;
        q[NODE_DOFS * i + 3] = -(1.0 + strain);
    }
    static_equilibrium(tether, q)
}

/// Newton's method on f_d(q, 0) = 0 from `q` (whose x_0, y_0 are kept).
/// Each step is halved until the residual decreases, so a poor start cannot
/// throw the iteration away.
pub fn static_equilibrium(tether: &Tether, mut q: Vec<f64>) -> Result<Vec<f64>, SolverError> {
    let dofs = tether.dofs();
    let zero = vec![0.0; dofs];
    let weights = length_weights(tether);
    let mut k = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
    let mut c = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
    let mut f = vec![0.0; dofs];
    let residual = |q: &[f64], f: &mut Vec<f64>| {
        tether.generalized_force(q, &zero, f);
        f[PRESCRIBED_DOFS..]
            .iter()
            .fold(0.0f64, |m, x| m.max(x.abs()))
    };
    let mut norm = residual(&q, &mut f);
    for _ in 0..MAX_ITERATIONS {
        tether.tangent(&q, &zero, &mut k, &mut c);
        // K Δ = f  (K = −∂f/∂q, so q + Δ zeroes the linearized f).
        let mut delta = f[PRESCRIBED_DOFS..].to_vec();
        k.trailing(PRESCRIBED_DOFS)
            .factor()?
            .solve_in_place(&mut delta);
        let correction = delta
            .iter()
            .zip(&weights[PRESCRIBED_DOFS..])
            .fold(0.0f64, |m, (d, w)| m.max((d * w).abs()));
        let mut lambda = 1.0;
        loop {
            let mut trial = q.clone();
            for (x, d) in trial[PRESCRIBED_DOFS..].iter_mut().zip(&delta) {
                *x += lambda * d;
            }
            let trial_norm = residual(&trial, &mut f);
            if trial_norm < norm || lambda < 1e-3 || correction * lambda < CORRECTION_TOLERANCE_M {
                q = trial;
                norm = trial_norm;
                break;
            }
            lambda *= 0.5;
        }
        if correction < CORRECTION_TOLERANCE_M {
            return Ok(q);
        }
    }
    Err(SolverError::EquilibriumFailed {
        residual_n: norm,
        iterations: MAX_ITERATIONS,
    })
}
