//! The fixed-step explicit scheme: velocity Verlet with a predicted velocity
//! for the velocity-dependent forces (damping, drag). Per step:
//!
//! ```text
//! v½   = vₙ + h/2 aₙ
//! qₙ₊₁ = qₙ + h v½
//! ṽ    = v½ + h/2 aₙ              (predictor, = vₙ + h aₙ)
//! aₙ₊₁ = a(tₙ₊₁, qₙ₊₁, ṽ)
//! vₙ₊₁ = v½ + h/2 aₙ₊₁
//! ```
//!
//! One force evaluation per step. Without velocity-dependent forces it is
//! exactly velocity Verlet (symplectic, second order); with them the predictor
//! error O(h²) enters multiplied by h, so it stays second order. This is the
//! scheme the GPU shaders run; the f64 code here is their reference.

use super::SecondOrderSystem;

/// Advances (q, v, a) by one step of size h, ending at `t_end`. `a` must
/// hold a(t_end − h, q, v) on entry and holds a(t_end, q, v) on exit.
/// `scratch` has the length of q. The end time is the caller's, not t + h:
/// summed times drift by an ulp, and where the pin's acceleration jumps (a
/// winch move ending exactly on a step) an ulp decides which move is taken.
pub fn verlet_step<S: SecondOrderSystem + ?Sized>(
    system: &mut S,
    t_end: f64,
    h: f64,
    q: &mut [f64],
    v: &mut [f64],
    a: &mut [f64],
    scratch: &mut [f64],
) {
    let half = 0.5 * h;
    for i in 0..q.len() {
        v[i] += half * a[i];
        q[i] += h * v[i];
        scratch[i] = v[i] + half * a[i];
    }
    system.impose(t_end, q, scratch);
    system.acceleration(t_end, q, scratch, a);
    for i in 0..q.len() {
        v[i] += half * a[i];
    }
    system.impose(t_end, q, v);
}

/// A single damped mode q̈ + 2ζω q̇ + ω² q = 0, used to find the explicit
/// scheme's stability limit by running the scheme itself.
struct ModalOscillator {
    omega: f64,
    zeta: f64,
}

impl SecondOrderSystem for ModalOscillator {
    fn dofs(&self) -> usize {
        1
    }
    fn impose(&self, _t: f64, _q: &mut [f64], _v: &mut [f64]) {}
    fn acceleration(&mut self, _t: f64, q: &[f64], v: &[f64], a: &mut [f64]) {
        a[0] = -self.omega * self.omega * q[0] - 2.0 * self.zeta * self.omega * v[0];
    }
}

/// Spectral radius of the one-step map of `verlet_step` on one mode. The
/// scheme carries the acceleration (evaluated with the predicted velocity)
/// from step to step, so its state is (q, v, a) and the map is 3×3; the
/// acceleration cannot be recomputed from (q, v) without changing the scheme.
pub fn amplification(omega: f64, zeta: f64, h: f64) -> f64 {
    let mut osc = ModalOscillator { omega, zeta };
    // In the units (q, v/ω, a/ω²) the map's entries are O(1); unscaled, they
    // span ω² and rounding alone would push |λ| of a neutral mode past 1.
    let scale = [1.0, omega, omega * omega];
    let mut map = nalgebra::Matrix3::<f64>::zeros();
    for col in 0..3 {
        let mut state = [0.0; 3];
        state[col] = scale[col];
        let (mut q, mut v, mut a, mut s) = ([state[0]], [state[1]], [state[2]], [0.0]);
        verlet_step(&mut osc, h, h, &mut q, &mut v, &mut a, &mut s);
        map.set_column(
            col,
            &nalgebra::Vector3::new(q[0] / scale[0], v[0] / scale[1], a[0] / scale[2]),
        );
    }
    map.complex_eigenvalues()
        .iter()
        .fold(0.0, |m, z| m.max(z.norm()))
}

/// The largest step for which the scheme is stable on a mode (ω, ζ): the first
/// h at which the spectral radius exceeds 1, found by bracketing and bisection
/// on the scheme's own one-step map.
pub fn stability_limit(omega: f64, zeta: f64) -> f64 {
    first_unstable_step(omega, |h| amplification(omega, zeta, h))
}

/// The first step h at which a scheme whose one-step map on a mode of
/// frequency `omega` has spectral radius `amplification(h)` turns unstable,
/// found by bracketing and bisection.
pub(crate) fn first_unstable_step(omega: f64, amplification: impl Fn(f64) -> f64) -> f64 {
    if omega <= 0.0 {
        return f64::INFINITY;
    }
    let unstable = |h: f64| amplification(h) > 1.0 + 1e-9;
    // Every mode is stable for small h; scan up in small factors so the first
    // unstable step is bracketed, not a later stable window.
    let mut lo = 1e-3 / omega;
    let mut hi = lo * 1.05;
    while !unstable(hi) {
        lo = hi;
        hi *= 1.05;
        if hi * omega > 1e3 {
            return f64::INFINITY;
        }
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if unstable(mid) { hi = mid } else { lo = mid }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undamped_limit_is_two_over_omega() {
        let h = stability_limit(1000.0, 0.0);
        assert!((h * 1000.0 - 2.0).abs() < 1e-9, "{h}");
    }

    #[test]
    fn heavily_damped_limit_is_the_real_axis_bound() {
        // For ζ ≫ 1 the fast root is λ ≈ −2ζω. The acceleration carried from
        // the previous step enters the velocity predictor, which makes the
        // scheme behave like forward Euler on that root with the bound
        // |hλ| ≤ 1 (central differences with lagged damping reach 2).
        let (omega, zeta) = (6.04e4, 12.85);
        let h = stability_limit(omega, zeta);
        let fast_root = omega * (zeta + (zeta * zeta - 1.0).sqrt());
        assert!(
            (h * fast_root - 1.0).abs() < 0.01,
            "h λ = {}",
            h * fast_root
        );
    }

    #[test]
    fn scheme_is_second_order_on_a_damped_oscillator() {
        let (omega, zeta): (f64, f64) = (7.0, 0.3);
        let exact = |t: f64| {
            let wd = omega * (1.0 - zeta * zeta).sqrt();
            (-zeta * omega * t).exp() * ((wd * t).cos() + zeta * omega / wd * (wd * t).sin())
        };
        let error = |steps: usize| {
            let h = 1.0 / steps as f64;
            let mut osc = ModalOscillator { omega, zeta };
            let (mut q, mut v, mut a, mut s) = ([1.0], [0.0], [0.0], [0.0]);
            osc.acceleration(0.0, &q, &v, &mut a);
            for i in 0..steps {
                verlet_step(
                    &mut osc,
                    (i + 1) as f64 * h,
                    h,
                    &mut q,
                    &mut v,
                    &mut a,
                    &mut s,
                );
            }
            (q[0] - exact(1.0)).abs()
        };
        let ratio = error(200) / error(400);
        assert!((ratio - 4.0).abs() < 0.2, "error ratio {ratio}");
    }
}
