//! The semi-implicit scheme: the explicit scheme with its Kelvin–Voigt
//! damping force taken at the end of the step, so that the damping of the
//! highest axial modes, which bounds the explicit step like D n² (docs/model.md §8),
//! no longer bounds this one. Per step:
//!
//! ```text
//! v½   = vₙ + h/2 aₙ
//! qₙ₊₁ = qₙ + h v½
//! ṽ    = v½ + h/2 aₙ                      (predictor, for the drag only)
//! M aₙ₊₁ = f(qₙ₊₁) − C_D(qₙ₊₁) vₙ₊₁ + Q_D(qₙ₊₁, ṽ),   vₙ₊₁ = v½ + h/2 aₙ₊₁
//! ```
//!
//! The damping force F_D = C_D(q) q̇ is linear in the velocities, so the
//! implicit part is one linear solve with M + h/2 C_D(qₙ₊₁) per step, no
//! Newton iteration. Over a step the damping enters as the trapezoidal mean
//! of its start and end values: second order, and on one mode
//! q̈ + 2ζω q̇ + ω² q = 0 stable for h ω < 2 whatever ζ (tests below), which
//! is the undamped limit of the explicit scheme.

use super::explicit::first_unstable_step;
use super::{SecondOrderSystem, SolverError, TetherDynamics};

/// One step of the scheme, ending at `t_end`. `a` holds the accelerations of
/// the previous step on entry and of this one on exit; `predicted` and
/// `damped` are scratch of the length of q.
#[allow(clippy::too_many_arguments)]
pub fn semi_implicit_step(
    dynamics: &mut TetherDynamics,
    t_end: f64,
    h: f64,
    q: &mut [f64],
    v: &mut [f64],
    a: &mut [f64],
    predicted: &mut [f64],
    damped: &mut [f64],
) -> Result<(), SolverError> {
    let half = 0.5 * h;
    for i in 0..q.len() {
        v[i] += half * a[i];
        q[i] += h * v[i];
        predicted[i] = v[i] + half * a[i];
    }
    damped.copy_from_slice(v);
    dynamics.impose(t_end, q, predicted);
    dynamics.impose(t_end, q, damped);
    dynamics.semi_implicit_acceleration(t_end, h, q, damped, predicted, a)?;
    for i in 0..q.len() {
        v[i] += half * a[i];
    }
    dynamics.impose(t_end, q, v);
    Ok(())
}

/// Spectral radius of the scheme's one-step map on one mode
/// q̈ + 2ζω q̇ + ω² q = 0, in the state (q, v, a) the scheme carries.
pub fn amplification(omega: f64, zeta: f64, h: f64) -> f64 {
    let (w2, c, half) = (omega * omega, 2.0 * zeta * omega, 0.5 * h);
    let scale = [1.0, omega, w2];
    let mut map = nalgebra::Matrix3::<f64>::zeros();
    for col in 0..3 {
        let mut state = [0.0; 3];
        state[col] = scale[col];
        let [q, v, a] = state;
        let v_half = v + half * a;
        let q1 = q + h * v_half;
        // (1 + h/2 c) a₁ = −ω² q₁ − c v½
        let a1 = (-w2 * q1 - c * v_half) / (1.0 + half * c);
        let v1 = v_half + half * a1;
        map.set_column(
            col,
            &nalgebra::Vector3::new(q1 / scale[0], v1 / scale[1], a1 / scale[2]),
        );
    }
    map.complex_eigenvalues()
        .iter()
        .fold(0.0, |m, z| m.max(z.norm()))
}

/// The largest stable step on a mode (ω, ζ), by bisection on the one-step map.
pub fn stability_limit(omega: f64, zeta: f64) -> f64 {
    first_unstable_step(omega, |h| amplification(omega, zeta, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_two_over_omega_whatever_the_damping() {
        for zeta in [0.0, 0.3, 1.0, 12.85, 1e3] {
            let h = stability_limit(1000.0, zeta);
            assert!(
                (h * 1000.0 - 2.0).abs() < 1e-6,
                "ζ = {zeta}: h ω = {}",
                h * 1000.0
            );
        }
        // The explicit scheme's limit for the same heavily damped mode is
        // 1/λ_fast, 26 times smaller.
        let explicit = super::super::explicit::stability_limit(6.04e4, 12.85);
        let semi = stability_limit(6.04e4, 12.85);
        assert!(semi / explicit > 25.0, "{}", semi / explicit);
    }

    #[test]
    fn scheme_is_second_order_on_a_damped_oscillator() {
        let (omega, zeta): (f64, f64) = (7.0, 0.3);
        let wd = omega * (1.0 - zeta * zeta).sqrt();
        let exact = (-zeta * omega).exp() * (wd.cos() + zeta * omega / wd * wd.sin());
        let error = |steps: usize| {
            let h = 1.0 / steps as f64;
            let (w2, c, half) = (omega * omega, 2.0 * zeta * omega, 0.5 * h);
            let (mut q, mut v) = (1.0, 0.0);
            let mut a = -w2 * q;
            for _ in 0..steps {
                let v_half = v + half * a;
                q += h * v_half;
                a = (-w2 * q - c * v_half) / (1.0 + half * c);
                v = v_half + half * a;
            }
            (q - exact).abs()
        };
        let ratio = error(200) / error(400);
        assert!((ratio - 4.0).abs() < 0.2, "error ratio {ratio}");
    }
}
