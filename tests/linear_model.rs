//! The linearized input–output model against the nonlinear reference solver
//! and docs/model.md §8's frequencies.

use std::f64::consts::PI;
use std::sync::Arc;

use tether_sweep::model::{PinMotion, Tether, TetherParams};
use tether_sweep::solver::linear_model::LinearModel;
use tether_sweep::solver::modal::modes;
use tether_sweep::solver::{ReferenceOptions, ReferenceSolver, TetherDynamics};

/// Winch x_0(t) = amplitude · sin(ω t).
struct SineWinch {
    amplitude_m: f64,
    omega_rad_s: f64,
}

impl PinMotion for SineWinch {
    fn position(&self, t: f64) -> [f64; 2] {
        [self.amplitude_m * (self.omega_rad_s * t).sin(), 0.0]
    }
    fn velocity(&self, t: f64) -> [f64; 2] {
        [
            self.amplitude_m * self.omega_rad_s * (self.omega_rad_s * t).cos(),
            0.0,
        ]
    }
    fn acceleration(&self, t: f64) -> [f64; 2] {
        let w = self.omega_rad_s;
        [-self.amplitude_m * w * w * (w * t).sin(), 0.0]
    }
}

/// Drives the nonlinear tether with a small sinusoidal winch motion at
/// `omega` and returns (measured, predicted) complex tip-x amplitudes.
///
/// A true steady state takes several times 1/(ζω) to establish, and the
/// first (pendulum) mode is almost undamped by Kelvin–Voigt damping
/// (ζ₁ ≈ 5e-8), so the run starts *on* the linear model's steady state:
/// if the linear model is right the motion is periodic from t = 0; if not,
/// the mismatch starts a free vibration that beats against it.
fn driven_response(
    tether: &Tether,
    linear: &LinearModel,
    omega: f64,
    tip_amplitude: f64,
) -> (nalgebra::Complex<f64>, nalgebra::Complex<f64>) {
    let gain = linear.frequency_response(omega).unwrap()[0];
    let amplitude = tip_amplitude / gain.norm();
    // For x_0 = Im(ε e^{iωt}), δq = Im(ε G e^{iωt}): δq(0) = ε Im G, δq̇(0) = ε ω Re G.
    let response = linear.displacement_response(omega).unwrap();
    let mut q = linear.equilibrium.clone();
    let mut v = vec![0.0; tether.dofs()];
    for (i, g) in response.iter().enumerate() {
        q[i + 2] += amplitude * g.im;
        v[i + 2] = amplitude * omega * g.re;
    }
    let motion = Arc::new(SineWinch {
        amplitude_m: amplitude,
        omega_rad_s: omega,
    });
    let dynamics = TetherDynamics::new(tether.clone(), motion).unwrap();
    let options = ReferenceOptions {
        tolerance_m: 1e-12,
        ..Default::default()
    };
    let mut solver = ReferenceSolver::new(dynamics, q, v, 0.0, options);
    // Fourier projection of the tip's x deviation over whole periods.
    let period = 2.0 * PI / omega;
    let (samples_per_period, periods) = (64, 4);
    let tip = tether.tip_index();
    let x_eq = linear.equilibrium[tip];
    let (mut s, mut c) = (0.0, 0.0);
    for k in 1..=periods * samples_per_period {
        let t = k as f64 * period / samples_per_period as f64;
        solver.advance_to(t).unwrap();
        let dx = solver.positions()[tip] - x_eq;
        s += dx * (omega * t).sin();
        c += dx * (omega * t).cos();
    }
    let n = (periods * samples_per_period) as f64;
    // x = Im(X e^{iωt}) = Re X sin ωt + Im X cos ωt.
    (
        nalgebra::Complex::new(2.0 * s / n, 2.0 * c / n),
        gain * amplitude,
    )
}

#[test]
fn nonlinear_response_either_side_of_first_resonance_matches_the_linear_model() {
    let tether = Tether::new(TetherParams {
        elements: 6,
        damping_pa_s: 2000.0,
        tip_mass_kg: 0.021,
        ..Default::default()
    })
    .unwrap();
    let linear = LinearModel::about_hanging_equilibrium(&tether, [0.0, 0.0]).unwrap();
    let omega_1 = modes(&tether, &linear.equilibrium).unwrap()[0].omega_rad_s;
    // Just below the resonance the tip swings in phase with the winch and
    // amplified; just above, against it.
    for (detuning, in_phase) in [(0.95, true), (1.05, false)] {
        let (measured, predicted) = driven_response(&tether, &linear, detuning * omega_1, 1e-3);
        let amplitude_error = (measured.norm() / predicted.norm() - 1.0).abs();
        let phase_error = (measured / predicted).arg().abs();
        // The issue asks for 2 %; the physics allows far less: the neglected
        // terms are of order (1 mm / L)² ≈ 3e-6, and at 1e-4 the check still
        // sees an error as small as leaving out the inertial coupling m_u of
        // the winch (≈ 7e-4 here).
        assert!(
            amplitude_error < 1e-4,
            "{detuning} ω₁: amplitude {:e} vs linear {:e}",
            measured.norm(),
            predicted.norm()
        );
        assert!(
            phase_error < 1e-4,
            "{detuning} ω₁: phase off by {phase_error} rad"
        );
        assert_eq!(predicted.re > 0.0, in_phase, "{detuning} ω₁: {predicted}");
    }
}

#[test]
fn highest_frequencies_match_spec_table() {
    // docs/model.md §8: straight, unstressed, pinned tether; within 1 %.
    for (n, expected) in [(10, 1.60e4), (20, 3.16e4), (40, 6.04e4), (50, 7.31e4)] {
        let t = Tether::new(TetherParams {
            elements: n,
            ..Default::default()
        })
        .unwrap();
        let q = t.straight_configuration([0.0, 0.0], [0.0, -1.0]);
        let top = modes(&t, &q).unwrap().last().unwrap().omega_rad_s;
        assert!(
            (top / expected - 1.0).abs() < 0.01,
            "n={n}: {top} vs {expected}"
        );
    }
}
