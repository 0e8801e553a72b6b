//! Deressa's two-wheeled mobile robot (chapters 3–4, docs/constrained.md
//! §3): a differential-drive platform on two wheels that roll without
//! slipping, with the parameters Sarkar, Yun and Kumar (1994) use (b, r,
//! d, m_c, m_w, I_c, I_w, I_m below). q = (x, y, θ, φ_r, φ_l): the axle's
//! midpoint, the heading and the wheel angles. The three rolling
//! constraints A(q) q̇ = 0 (no side slip; each wheel rolls) are removed by
//! their null space, q̇ = S(q) u with u = (v, ω) the forward speed and the
//! turning rate, so they hold to round-off; premultiplying the dynamics by
//! Sᵀ removes the multipliers:
//!
//! (m + 2 I_w / r²) v̇ − m_c d ω² = (τ_r + τ_l) / r,
//! (I + 2 I_w b² / r²) ω̇ + m_c d ω v = b (τ_r − τ_l) / r,
//!
//! with m = m_c + 2 m_w and I = I_c + m_c d² + 2 m_w b² + 2 I_m.
//!
//! The program motion (chapter 4): the platform's centre of mass C (a
//! distance d ahead of the axle) is to run along a circle of curvature κ
//! about the origin's (0, 1/κ) at speed v_d. Its two program constraints,
//! the distance from the circle e = |C − O| − 1/κ and the speed along it
//! w − v_d, are imposed at the acceleration level with Baumgarte-type
//! feedback, ë + K_D ė + K_P e = 0 and ẇ = −K_D (w − v_d), and the wheel
//! torques computed from the reduced dynamics; with K_P = K_D = 0 a start
//! off the circle stays off it.

use nalgebra::DVector;

use super::integrate::{Refused, Rhs};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robot {
    /// Half the distance between the wheels \[m\].
    pub half_track_m: f64,
    pub wheel_radius_m: f64,
    /// The centre of mass ahead of the axle \[m\].
    pub mass_offset_m: f64,
    pub platform_mass_kg: f64,
    pub wheel_mass_kg: f64,
    /// The platform's moment of inertia about its centre of mass.
    pub platform_inertia_kg_m2: f64,
    /// A wheel's about its axle, and about its diameter.
    pub wheel_inertia_kg_m2: f64,
    pub wheel_diameter_inertia_kg_m2: f64,
}

impl Default for Robot {
    /// Sarkar, Yun and Kumar's platform (1994).
    fn default() -> Self {
        Self {
            half_track_m: 0.75,
            wheel_radius_m: 0.15,
            mass_offset_m: 0.3,
            platform_mass_kg: 30.0,
            wheel_mass_kg: 1.0,
            platform_inertia_kg_m2: 15.625,
            wheel_inertia_kg_m2: 0.005,
            wheel_diameter_inertia_kg_m2: 0.0025,
        }
    }
}

/// The programmed circle and the feedback that holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Program {
    pub curvature_per_m: f64,
    pub speed_m_s: f64,
    pub kp_per_s2: f64,
    pub kd_per_s: f64,
}

/// The state's layout: q = (x, y, θ, φ_r, φ_l), then u = (v, ω).
pub const STATE: usize = 7;

impl Robot {
    /// The reduced mass and inertia.
    fn reduced(&self) -> (f64, f64) {
        let (b, r, d) = (self.half_track_m, self.wheel_radius_m, self.mass_offset_m);
        let m = self.platform_mass_kg + 2.0 * self.wheel_mass_kg;
        let inertia = self.platform_inertia_kg_m2
            + self.platform_mass_kg * d * d
            + 2.0 * self.wheel_mass_kg * b * b
            + 2.0 * self.wheel_diameter_inertia_kg_m2;
        (
            m + 2.0 * self.wheel_inertia_kg_m2 / (r * r),
            inertia + 2.0 * self.wheel_inertia_kg_m2 * b * b / (r * r),
        )
    }

    /// q̇ = S(q) u.
    pub fn velocities(&self, theta: f64, v: f64, omega: f64) -> [f64; 5] {
        let (b, r) = (self.half_track_m, self.wheel_radius_m);
        [
            v * theta.cos(),
            v * theta.sin(),
            omega,
            (v + b * omega) / r,
            (v - b * omega) / r,
        ]
    }

    /// The rolling constraints' residuals A(q) q̇: no side slip, the right
    /// wheel rolls, the left rolls.
    pub fn rolling_residuals(&self, theta: f64, qd: &[f64; 5]) -> [f64; 3] {
        let (b, r) = (self.half_track_m, self.wheel_radius_m);
        let (s, c) = theta.sin_cos();
        let forward = qd[0] * c + qd[1] * s;
        [
            -qd[0] * s + qd[1] * c,
            forward + b * qd[2] - r * qd[3],
            forward - b * qd[2] - r * qd[4],
        ]
    }

    /// The centre of mass of state `y`.
    pub fn centre(&self, y: &DVector<f64>) -> [f64; 2] {
        let d = self.mass_offset_m;
        [y[0] + d * y[2].cos(), y[1] + d * y[2].sin()]
    }

    /// A start `offset_m` outside the programmed circle (positive: away
    /// from its centre), heading along it at the programmed speed.
    pub fn start(&self, program: &Program, offset_m: f64) -> DVector<f64> {
        // The centre of mass at (0, −offset) below the circle's lowest
        // point (the circle's centre is (0, R)), heading +x.
        let d = self.mass_offset_m;
        let mut y = DVector::zeros(STATE);
        y[0] = -d;
        y[1] = -offset_m;
        y[5] = program.speed_m_s;
        y
    }

    /// The centre of mass's distance from the circle \[m\] (positive
    /// outside).
    pub fn tracking_error_m(&self, program: &Program, y: &DVector<f64>) -> f64 {
        let radius = 1.0 / program.curvature_per_m;
        let [x, z] = self.centre(y);
        (x * x + (z - radius).powi(2)).sqrt() - radius
    }

    /// The wheel torques (τ_r, τ_l) the program's law gives at state `y`.
    pub fn torques(&self, program: &Program, y: &DVector<f64>) -> [f64; 2] {
        let (v, omega) = (y[5], y[6]);
        let (b, r, d) = (self.half_track_m, self.wheel_radius_m, self.mass_offset_m);
        let (v_dot, omega_dot) = self.program_accelerations(program, y);
        let (m_red, i_red) = self.reduced();
        let sum = r * (m_red * v_dot - self.platform_mass_kg * d * omega * omega);
        let difference = r / b * (i_red * omega_dot + self.platform_mass_kg * d * omega * v);
        [(sum + difference) / 2.0, (sum - difference) / 2.0]
    }

    /// (v̇, ω̇) that make the centre of mass obey the program constraints.
    fn program_accelerations(&self, program: &Program, y: &DVector<f64>) -> (f64, f64) {
        let (theta, v, omega) = (y[2], y[5], y[6]);
        let d = self.mass_offset_m;
        let radius = 1.0 / program.curvature_per_m;
        let (h, perp) = ([theta.cos(), theta.sin()], [-theta.sin(), theta.cos()]);
        let [cx, cz] = self.centre(y);
        let rel = [cx, cz - radius];
        let rho = (rel[0] * rel[0] + rel[1] * rel[1]).sqrt();
        let n = [rel[0] / rho, rel[1] / rho];
        // Counter-clockwise tangent: the direction of travel.
        let t = [-n[1], n[0]];
        let velocity = [
            v * h[0] + d * omega * perp[0],
            v * h[1] + d * omega * perp[1],
        ];
        let dot = |a: [f64; 2], b: [f64; 2]| a[0] * b[0] + a[1] * b[1];
        let (radial, along) = (dot(n, velocity), dot(t, velocity));
        let speed2 = dot(velocity, velocity);
        let error = rho - radius;
        // ρ̈ = n·a + (|ċ|² − (n·ċ)²)/ρ; ẇ = t·a − (n·ċ)(t·ċ)/ρ.
        let rho_dd = -program.kd_per_s * radial - program.kp_per_s2 * error;
        let w_dot = -program.kd_per_s * (along - program.speed_m_s);
        let a_n = rho_dd - (speed2 - radial * radial) / rho;
        let a_t = w_dot + radial * along / rho;
        let accel = [a_n * n[0] + a_t * t[0], a_n * n[1] + a_t * t[1]];
        // c̈ = v̇ h + d ω̇ h⊥ − d ω² h + v ω h⊥.
        let rest = [
            accel[0] + d * omega * omega * h[0] - v * omega * perp[0],
            accel[1] + d * omega * omega * h[1] - v * omega * perp[1],
        ];
        (dot(rest, h), dot(rest, perp) / d)
    }

    /// The closed loop: the robot under the program's torques.
    pub fn closed_loop(&self, program: Program) -> ClosedLoop {
        ClosedLoop {
            robot: *self,
            program,
        }
    }
}

/// The robot driven by its program's law, as a first-order system.
pub struct ClosedLoop {
    pub robot: Robot,
    pub program: Program,
}

impl Rhs for ClosedLoop {
    fn rhs(&self, _: f64, y: &DVector<f64>) -> Result<DVector<f64>, Refused> {
        let r = &self.robot;
        let (theta, v, omega) = (y[2], y[5], y[6]);
        let [tau_r, tau_l] = r.torques(&self.program, y);
        let (b, radius, d) = (r.half_track_m, r.wheel_radius_m, r.mass_offset_m);
        let (m_red, i_red) = r.reduced();
        let v_dot = ((tau_r + tau_l) / radius + r.platform_mass_kg * d * omega * omega) / m_red;
        let omega_dot = (b * (tau_r - tau_l) / radius - r.platform_mass_kg * d * omega * v) / i_red;
        let qd = r.velocities(theta, v, omega);
        let mut dy = DVector::zeros(STATE);
        for (k, value) in qd.iter().enumerate() {
            dy[k] = *value;
        }
        dy[5] = v_dot;
        dy[6] = omega_dot;
        Ok(dy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constrained::integrate::{Ending, Tolerances, integrate};

    fn drive(
        gains: (f64, f64),
        offset_m: f64,
    ) -> (Robot, Program, crate::constrained::integrate::Trajectory) {
        let robot = Robot::default();
        let program = Program {
            curvature_per_m: 0.5,
            speed_m_s: 0.5,
            kp_per_s2: gains.0,
            kd_per_s: gains.1,
        };
        let outputs: Vec<f64> = (0..=200).map(|k| k as f64 * 0.1).collect();
        let tol = Tolerances {
            rtol: 1e-10,
            atol: 1e-12,
            max_step_s: 0.05,
        };
        let run = integrate(
            &robot.closed_loop(program),
            robot.start(&program, offset_m),
            &outputs,
            tol,
        );
        (robot, program, run)
    }

    #[test]
    fn the_rolling_constraints_hold_to_round_off() {
        let (robot, _, run) = drive((4.0, 4.0), 0.2);
        assert_eq!(run.ending, Ending::Finished);
        for y in &run.states {
            let qd = robot.velocities(y[2], y[5], y[6]);
            let residual = robot.rolling_residuals(y[2], &qd);
            assert!(residual.iter().all(|r| r.abs() < 1e-14), "{residual:?}");
        }
    }

    #[test]
    fn feedback_brings_a_start_off_the_circle_onto_it_and_none_does_not() {
        let (robot, program, run) = drive((4.0, 4.0), 0.2);
        let errors: Vec<f64> = run
            .states
            .iter()
            .map(|y| robot.tracking_error_m(&program, y))
            .collect();
        assert!((errors[0] - 0.2).abs() < 1e-12);
        // ë + 4ė + 4e = 0 from e = 0.2, ė = 0: e(t) = 0.2 (1 + 2t) e^(−2t).
        for (t, e) in run.times_s.iter().zip(&errors) {
            let exact = 0.2 * (1.0 + 2.0 * t) * (-2.0 * t).exp();
            assert!((e - exact).abs() < 1e-7, "t = {t}: {e} vs {exact}");
        }
        assert!(errors.last().unwrap().abs() < 1e-3);
        let (robot, program, open) = drive((0.0, 0.0), 0.2);
        let last = robot.tracking_error_m(&program, open.states.last().unwrap());
        assert!(
            (last - 0.2).abs() < 1e-6,
            "without feedback the offset stays: {last}"
        );
    }
}
