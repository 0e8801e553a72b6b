//! Linearization about a state at rest: natural frequencies, damping ratios
//! and mode shapes of M δq̈ + C δq̇ + K δq = 0 on the dynamic coordinates, and
//! the explicit step that follows from them (docs/model.md §8).
//!
//! The modes are those of the undamped pair (K, M); each mode's damping ratio
//! is its modal damping φᵀCφ / (2ω) with φ mass-normalised. Kelvin–Voigt
//! damping on an unstressed tether is exactly proportional to the stiffness
//! (C = (D/E) K), so there the modal damping is exact; at the hanging
//! equilibrium the prestress adds a geometric stiffness that C lacks, and
//! modal damping is the usual, very close approximation.

use nalgebra::{DMatrix, SymmetricEigen};

use super::SolverError;
use super::explicit::stability_limit;
use crate::linalg::BandedMatrix;
use crate::model::Tether;
use crate::model::tether::{HALF_BANDWIDTH, PRESCRIBED_DOFS};

#[derive(Debug, Clone)]
pub struct Mode {
    pub omega_rad_s: f64,
    pub damping_ratio: f64,
    /// Mass-normalised shape over the dynamic coordinates (q minus x_0, y_0).
    pub shape: Vec<f64>,
}

/// Linearized matrices on the dynamic coordinates at (q, q̇).
pub struct Linearization {
    pub mass: DMatrix<f64>,
    pub stiffness: DMatrix<f64>,
    pub damping: DMatrix<f64>,
}

pub fn linearize(tether: &Tether, q: &[f64], qd: &[f64]) -> Linearization {
    let dofs = tether.dofs();
    let mut k = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
    let mut c = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
    tether.tangent(q, qd, &mut k, &mut c);
    Linearization {
        mass: tether.mass().trailing(PRESCRIBED_DOFS).to_dense(),
        stiffness: k.trailing(PRESCRIBED_DOFS).to_dense(),
        damping: c.trailing(PRESCRIBED_DOFS).to_dense(),
    }
}

/// All modes at a state at rest `q`, sorted by frequency.
pub fn modes(tether: &Tether, q: &[f64]) -> Result<Vec<Mode>, SolverError> {
    let lin = linearize(tether, q, &vec![0.0; tether.dofs()]);
    let chol = lin
        .mass
        .clone()
        .cholesky()
        .ok_or(SolverError::Singular("the mass matrix"))?;
    let l = chol.l();
    let l_inv = l
        .clone()
        .try_inverse()
        .expect("Cholesky factor of a positive definite matrix is invertible");
    // At rest K is symmetric up to rounding; symmetrise so the eigen solver
    // sees exactly what the physics says.
    let k_sym = (&lin.stiffness + lin.stiffness.transpose()) * 0.5;
    let reduced = &l_inv * k_sym * l_inv.transpose();
    let eig = SymmetricEigen::new(reduced);
    let mut modes: Vec<Mode> = (0..eig.eigenvalues.len())
        .map(|i| {
            let omega = eig.eigenvalues[i].max(0.0).sqrt();
            let phi = l_inv.transpose() * eig.eigenvectors.column(i);
            let modal_damping = (phi.transpose() * &lin.damping * &phi)[(0, 0)];
            let damping_ratio = if omega > 0.0 {
                modal_damping / (2.0 * omega)
            } else {
                0.0
            };
            Mode {
                omega_rad_s: omega,
                damping_ratio,
                shape: phi.iter().copied().collect(),
            }
        })
        .collect();
    modes.sort_by(|a, b| a.omega_rad_s.total_cmp(&b.omega_rad_s));
    Ok(modes)
}

/// Safety factor on the explicit stability limit. It covers what the
/// linearization at rest does not see: stiffening by tension during the
/// motion, drag, and the nonlinear strain.
pub const STEP_SAFETY: f64 = 0.9;

/// The stability limit of the explicit scheme over all modes at `q` (no
/// safety factor applied).
pub fn explicit_stability_limit(tether: &Tether, q: &[f64]) -> Result<f64, SolverError> {
    Ok(modes(tether, q)?
        .iter()
        .map(|m| stability_limit(m.omega_rad_s, m.damping_ratio))
        .fold(f64::INFINITY, f64::min))
}

/// The automatic explicit step: `STEP_SAFETY` times the stability limit,
/// rounded down so that it divides `quantum_s` (the sample interval) exactly.
pub fn automatic_step(tether: &Tether, q: &[f64], quantum_s: f64) -> Result<f64, SolverError> {
    let limit = STEP_SAFETY * explicit_stability_limit(tether, q)?;
    Ok(divide_evenly(quantum_s, limit))
}

/// The stability limit of the semi-implicit scheme over all modes at `q`
/// (no safety factor applied): 2/ω_max, whatever the damping (the scheme
/// takes the damping implicitly; `semi_implicit::stability_limit` finds
/// 2/ω on its one-step map for every damping ratio, tested there). So it
/// depends on the undamped modes only, and not on D.
pub fn semi_implicit_stability_limit(tether: &Tether, q: &[f64]) -> Result<f64, SolverError> {
    let omega_max = modes(tether, q)?
        .iter()
        .map(|m| m.omega_rad_s)
        .fold(0.0, f64::max);
    Ok(2.0 / omega_max)
}

/// The automatic step of the semi-implicit scheme, chosen as the explicit
/// one is (`STEP_SAFETY`, divides `quantum_s`), from its own stability limit.
pub fn semi_implicit_step(tether: &Tether, q: &[f64], quantum_s: f64) -> Result<f64, SolverError> {
    let limit = semi_implicit_stability_limit(tether, q)?;
    Ok(divide_evenly(quantum_s, STEP_SAFETY * limit))
}

/// The largest quantum/k (k a whole number ≥ 1) not above `max_step`.
pub fn divide_evenly(quantum_s: f64, max_step: f64) -> f64 {
    let k = (quantum_s / max_step).ceil().max(1.0);
    quantum_s / k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TetherParams;

    fn straight(n: usize, damping: f64) -> (Tether, Vec<f64>) {
        let t = Tether::new(TetherParams {
            elements: n,
            damping_pa_s: damping,
            ..Default::default()
        })
        .unwrap();
        let q = t.straight_configuration([0.0, 0.0], [0.0, -1.0]);
        (t, q)
    }

    #[test]
    fn highest_frequency_and_step_limits_match_spec_table() {
        // docs/model.md §8: ω_max and the Δt limits for D = 0, 2000, 10000. Its limits
        // are those of central differences with lagged damping,
        // (2/ω)(√(1+ζ²) − ζ), which is first order in the damping force. This
        // scheme predicts the damping velocity to stay second order, and pays
        // for it on heavily damped modes: the same limit at ζ = 0, half of it
        // for ζ ≫ 1 (h |λ_fast| ≤ 1 instead of 2), 0.53 of it at ζ ≈ 1.7.
        for (n, omega_max, limits) in [
            (10, 1.60e4, [1.25e-4, 3.4e-5, 7.3e-6]),
            (20, 3.16e4, [6.3e-5, 9.2e-6, 1.9e-6]),
            (40, 6.04e4, [3.3e-5, 2.6e-6, 5.2e-7]),
        ] {
            let (t, q) = straight(n, 0.0);
            let w = modes(&t, &q).unwrap().last().unwrap().omega_rad_s;
            assert!((w / omega_max - 1.0).abs() < 0.01, "n={n}: ω_max {w}");
            for (d, table) in [0.0, 2000.0, 10000.0].into_iter().zip(limits) {
                let (t, q) = straight(n, d);
                let top = modes(&t, &q).unwrap().pop().unwrap();
                let zeta = top.damping_ratio;
                let central = 2.0 / top.omega_rad_s * ((1.0 + zeta * zeta).sqrt() - zeta);
                assert!(
                    (central / table - 1.0).abs() < 0.02,
                    "n={n} D={d}: formula {central} vs table {table}"
                );
                let h = explicit_stability_limit(&t, &q).unwrap();
                if zeta == 0.0 {
                    assert!(
                        (h / table - 1.0).abs() < 0.01,
                        "n={n} D={d}: {h} vs table {table}"
                    );
                } else {
                    let ratio = h / central;
                    assert!(
                        (0.5..0.54).contains(&ratio),
                        "n={n} D={d}: {h} vs {central}"
                    );
                }
            }
        }
    }

    #[test]
    fn semi_implicit_limit_is_the_one_step_maps_over_all_damped_modes() {
        // The closed form 2/ω_max against bisection on the scheme's one-step
        // map for every mode with its damping ratio, at D up to 10000 Pa·s
        // (ζ_max ≈ 32 at n = 10).
        for d in [0.0, 2000.0, 10000.0] {
            let (t, q) = straight(10, d);
            let by_map = modes(&t, &q)
                .unwrap()
                .iter()
                .filter(|m| m.omega_rad_s > 0.0)
                .map(|m| {
                    super::super::semi_implicit::stability_limit(m.omega_rad_s, m.damping_ratio)
                })
                .fold(f64::INFINITY, f64::min);
            let closed = semi_implicit_stability_limit(&t, &q).unwrap();
            assert!(
                (closed / by_map - 1.0).abs() < 1e-6,
                "D={d}: {closed} vs {by_map}"
            );
        }
    }

    #[test]
    fn damping_ratio_is_proportional_to_frequency_when_unstressed() {
        let (t, q) = straight(6, 2000.0);
        for m in modes(&t, &q)
            .unwrap()
            .iter()
            .filter(|m| m.omega_rad_s > 1.0)
        {
            let expected = m.omega_rad_s * 2000.0 / (2.0 * 9.4e6);
            assert!((m.damping_ratio / expected - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn divide_evenly_rounds_down() {
        assert_eq!(divide_evenly(0.04, 0.05), 0.04);
        let h = divide_evenly(1e-3, 3.4e-5);
        assert!(h <= 3.4e-5 && (1e-3 / h - (1e-3 / h).round()).abs() < 1e-9);
    }
}
