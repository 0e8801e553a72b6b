//! Deressa's two-link arm (Example 2.1, docs/constrained.md §2): links of
//! L₁ = 1 m and L₂ = 0.5 m, masses 2m and m (uniform rods: our reading;
//! the example gives no inertias), in the vertical plane under gravity.
//! Its end point P is held by two rheonomic constraints on the horizontal
//! line y = 0.5 m, moving at constant speed v in −x: Φ = P(q) − (x₀ − v t,
//! 0.5). At x = 0 the arm is folded (q₁ = π/2, q₂ = ±π) and the
//! constraint Jacobian loses rank.
//!
//! q = (q₁, q₂): the first link's angle from +x and the second's relative
//! to the first.

use nalgebra::{DMatrix, DVector};

use super::Holonomic;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arm {
    pub link1_m: f64,
    pub link2_m: f64,
    /// m: the first link weighs 2m, the second m.
    pub mass_kg: f64,
    pub gravity_m_s2: f64,
    /// The line the end point follows.
    pub line_y_m: f64,
    pub speed_m_s: f64,
    /// The first link's angle at the start; the end point starts on the
    /// line, the elbow below it.
    pub start_angle_rad: f64,
}

impl Default for Arm {
    /// Example 2.1 as reconstructed (docs/constrained.md): m = 1 kg, v =
    /// 0.6 m/s, the first link at 80°, which gives the thesis's starting
    /// joint rates 0.358620 and −0.867745 rad/s to 5e-6.
    fn default() -> Self {
        Self {
            link1_m: 1.0,
            link2_m: 0.5,
            mass_kg: 1.0,
            gravity_m_s2: 9.81,
            line_y_m: 0.5,
            speed_m_s: 0.6,
            start_angle_rad: 80f64.to_radians(),
        }
    }
}

impl Arm {
    /// The end point of pose q.
    pub fn tip(&self, q: &DVector<f64>) -> [f64; 2] {
        let (a, b) = (q[0], q[0] + q[1]);
        [
            self.link1_m * a.cos() + self.link2_m * b.cos(),
            self.link1_m * a.sin() + self.link2_m * b.sin(),
        ]
    }

    /// The start: the pose with the first link at `start_angle_rad` and
    /// the end point on the line (the elbow below), the joint rates that
    /// move the end point at −v along it, and x₀.
    pub fn start(&self) -> (DVector<f64>, DVector<f64>, f64) {
        let q = self.start_pose();
        let jacobian = self.jacobian(&q, 0.0);
        let rates = jacobian
            .lu()
            .solve(&DVector::from_vec(vec![-self.speed_m_s, 0.0]))
            .unwrap_or_else(|| DVector::zeros(2));
        (q, rates, self.x0())
    }

    /// The starting pose alone: no factorization, as the constraints ask
    /// for x₀ at every evaluation.
    fn start_pose(&self) -> DVector<f64> {
        let q1 = self.start_angle_rad;
        let sin12 = (self.line_y_m - self.link1_m * q1.sin()) / self.link2_m;
        let absolute = sin12.clamp(-1.0, 1.0).asin();
        DVector::from_vec(vec![q1, absolute - q1])
    }

    /// The end point's x at the start.
    fn x0(&self) -> f64 {
        self.tip(&self.start_pose())[0]
    }

    /// The time the end point reaches x = 0, the folded pose.
    pub fn fold_time_s(&self) -> f64 {
        self.x0() / self.speed_m_s
    }

    /// Link masses, centres and inertias about them (uniform rods).
    fn links(&self) -> [(f64, f64, f64, f64); 2] {
        let (m1, m2) = (2.0 * self.mass_kg, self.mass_kg);
        let (l1, l2) = (self.link1_m, self.link2_m);
        [
            (m1, l1, l1 / 2.0, m1 * l1 * l1 / 12.0),
            (m2, l2, l2 / 2.0, m2 * l2 * l2 / 12.0),
        ]
    }
}

impl Holonomic for Arm {
    fn dof(&self) -> usize {
        2
    }

    fn mass(&self, q: &DVector<f64>) -> DMatrix<f64> {
        let [(m1, l1, c1, i1), (m2, _, c2, i2)] = self.links();
        let cos2 = q[1].cos();
        let m11 = i1 + i2 + m1 * c1 * c1 + m2 * (l1 * l1 + c2 * c2 + 2.0 * l1 * c2 * cos2);
        let m12 = i2 + m2 * (c2 * c2 + l1 * c2 * cos2);
        let m22 = i2 + m2 * c2 * c2;
        DMatrix::from_row_slice(2, 2, &[m11, m12, m12, m22])
    }

    /// Gravity and the velocity terms, with the sign of applied forces.
    fn forces(&self, q: &DVector<f64>, qd: &DVector<f64>, _: f64) -> DVector<f64> {
        let [(m1, l1, c1, _), (m2, _, c2, _)] = self.links();
        let g = self.gravity_m_s2;
        let h = m2 * l1 * c2 * q[1].sin();
        let coriolis = [
            -h * (2.0 * qd[0] * qd[1] + qd[1] * qd[1]),
            h * qd[0] * qd[0],
        ];
        let cos12 = (q[0] + q[1]).cos();
        let gravity = [
            (m1 * c1 + m2 * l1) * g * q[0].cos() + m2 * c2 * g * cos12,
            m2 * c2 * g * cos12,
        ];
        DVector::from_vec(vec![-coriolis[0] - gravity[0], -coriolis[1] - gravity[1]])
    }

    fn constraints(&self, q: &DVector<f64>, t: f64) -> DVector<f64> {
        let [x, y] = self.tip(q);
        DVector::from_vec(vec![
            x - (self.x0() - self.speed_m_s * t),
            y - self.line_y_m,
        ])
    }

    fn jacobian(&self, q: &DVector<f64>, _: f64) -> DMatrix<f64> {
        let (a, b) = (q[0], q[0] + q[1]);
        let (l1, l2) = (self.link1_m, self.link2_m);
        DMatrix::from_row_slice(
            2,
            2,
            &[
                -l1 * a.sin() - l2 * b.sin(),
                -l2 * b.sin(),
                l1 * a.cos() + l2 * b.cos(),
                l2 * b.cos(),
            ],
        )
    }

    fn constraints_t(&self, _: &DVector<f64>, _: f64) -> DVector<f64> {
        DVector::from_vec(vec![self.speed_m_s, 0.0])
    }

    fn gamma(&self, q: &DVector<f64>, qd: &DVector<f64>, _: f64) -> DVector<f64> {
        let (a, b) = (q[0], q[0] + q[1]);
        let (w1, w12) = (qd[0], qd[0] + qd[1]);
        let (l1, l2) = (self.link1_m, self.link2_m);
        DVector::from_vec(vec![
            l1 * a.cos() * w1 * w1 + l2 * b.cos() * w12 * w12,
            l1 * a.sin() * w1 * w1 + l2 * b.sin() * w12 * w12,
        ])
    }
}

/// The arm with a force at its end point given as a function of time
/// (the tether's pull): Q gains J(q)ᵀ F(t), J the end point's Jacobian,
/// which is the constraints' Φ_q.
pub struct Loaded<'a> {
    pub arm: &'a Arm,
    pub tip_force_n: &'a dyn Fn(f64) -> [f64; 2],
}

impl Holonomic for Loaded<'_> {
    fn dof(&self) -> usize {
        self.arm.dof()
    }
    fn mass(&self, q: &DVector<f64>) -> DMatrix<f64> {
        self.arm.mass(q)
    }
    fn forces(&self, q: &DVector<f64>, qd: &DVector<f64>, t: f64) -> DVector<f64> {
        let load = DVector::from_vec((self.tip_force_n)(t).to_vec());
        self.arm.forces(q, qd, t) + self.arm.jacobian(q, t).transpose() * load
    }
    fn constraints(&self, q: &DVector<f64>, t: f64) -> DVector<f64> {
        self.arm.constraints(q, t)
    }
    fn jacobian(&self, q: &DVector<f64>, t: f64) -> DMatrix<f64> {
        self.arm.jacobian(q, t)
    }
    fn constraints_t(&self, q: &DVector<f64>, t: f64) -> DVector<f64> {
        self.arm.constraints_t(q, t)
    }
    fn gamma(&self, q: &DVector<f64>, qd: &DVector<f64>, t: f64) -> DVector<f64> {
        self.arm.gamma(q, qd, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reconstructed_start_gives_the_theses_joint_rates() {
        let arm = Arm::default();
        let (q, rates, x0) = arm.start();
        assert!((rates[0] - 0.358620).abs() < 5e-6, "{rates}");
        assert!((rates[1] + 0.867745).abs() < 5e-6, "{rates}");
        assert!((x0 - 0.29594).abs() < 1e-4, "{x0}");
        assert!((arm.tip(&q)[1] - 0.5).abs() < 1e-15);
        assert!(arm.constraints(&q, 0.0).amax() < 1e-15);
    }

    /// The analytic Jacobian and γ against finite differences of Φ.
    #[test]
    fn the_jacobian_and_gamma_are_phis_derivatives() {
        let arm = Arm::default();
        let q = DVector::from_vec(vec![1.1, -2.3]);
        let qd = DVector::from_vec(vec![0.7, -1.3]);
        let h = 1e-6;
        let j = arm.jacobian(&q, 0.0);
        for k in 0..2 {
            let mut plus = q.clone();
            plus[k] += h;
            let mut minus = q.clone();
            minus[k] -= h;
            let column = (arm.constraints(&plus, 0.0) - arm.constraints(&minus, 0.0)) / (2.0 * h);
            assert!((column - j.column(k)).amax() < 1e-8);
        }
        // Φ̈ along q(t) = q + qd t (q̈ = 0) is −γ.
        let phi = |t: f64| arm.constraints(&(&q + &qd * t), 0.0);
        let second = (phi(h * 100.0) - phi(0.0) * 2.0 + phi(-h * 100.0)) / (h * 100.0).powi(2);
        assert!((second + arm.gamma(&q, &qd, 0.0)).amax() < 1e-5);
    }
}
