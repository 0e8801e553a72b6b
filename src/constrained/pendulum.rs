//! A rigid pendulum written as a constrained body: a point mass at (x, y)
//! held at the rod's length from the pin by Φ = x² + y² − L² = 0, whose
//! period has a closed form (the complete elliptic integral K), so that
//! each formulation can be checked against it.

use nalgebra::{DMatrix, DVector};

use super::Holonomic;

#[derive(Debug, Clone, Copy)]
pub struct Pendulum {
    pub length_m: f64,
    pub mass_kg: f64,
    pub gravity_m_s2: f64,
}

impl Pendulum {
    /// The quarter period \[s\] of a swing released at rest `angle_rad`
    /// from the hanging pose: √(L/g) K(sin(θ₀/2)), K by the
    /// arithmetic–geometric mean.
    pub fn quarter_period_s(&self, angle_rad: f64) -> f64 {
        let k = (angle_rad / 2.0).sin();
        let (mut a, mut b) = (1.0_f64, (1.0 - k * k).sqrt());
        while (a - b).abs() > 1e-16 * a {
            (a, b) = ((a + b) / 2.0, (a * b).sqrt());
        }
        (self.length_m / self.gravity_m_s2).sqrt() * std::f64::consts::PI / (2.0 * a)
    }

    /// The state (q, q̇) released at rest `angle_rad` from the hanging pose.
    pub fn released(&self, angle_rad: f64) -> (DVector<f64>, DVector<f64>) {
        let q = DVector::from_vec(vec![
            self.length_m * angle_rad.sin(),
            -self.length_m * angle_rad.cos(),
        ]);
        (q, DVector::zeros(2))
    }
}

impl Holonomic for Pendulum {
    fn dof(&self) -> usize {
        2
    }

    fn mass(&self, _: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::identity(2, 2) * self.mass_kg
    }

    fn forces(&self, _: &DVector<f64>, _: &DVector<f64>, _: f64) -> DVector<f64> {
        DVector::from_vec(vec![0.0, -self.mass_kg * self.gravity_m_s2])
    }

    fn constraints(&self, q: &DVector<f64>, _: f64) -> DVector<f64> {
        DVector::from_element(1, q[0] * q[0] + q[1] * q[1] - self.length_m.powi(2))
    }

    fn jacobian(&self, q: &DVector<f64>, _: f64) -> DMatrix<f64> {
        DMatrix::from_row_slice(1, 2, &[2.0 * q[0], 2.0 * q[1]])
    }

    fn constraints_t(&self, _: &DVector<f64>, _: f64) -> DVector<f64> {
        DVector::zeros(1)
    }

    fn gamma(&self, _: &DVector<f64>, qd: &DVector<f64>, _: f64) -> DVector<f64> {
        DVector::from_element(1, -2.0 * qd.norm_squared())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constrained::integrate::{Ending, Tolerances, integrate};
    use crate::constrained::{FirstOrder, Formulation, drift};

    /// Released at 60°, each formulation reaches the bottom at the closed
    /// form's quarter period, at the speed energy gives, the rod's length
    /// kept.
    #[test]
    fn each_formulation_swings_in_the_closed_forms_quarter_period() {
        let p = Pendulum {
            length_m: 0.8,
            mass_kg: 0.3,
            gravity_m_s2: 9.81,
        };
        let angle = 60f64.to_radians();
        let quarter = p.quarter_period_s(angle);
        // Small swings: 2π√(L/g) / 4.
        let small = p.quarter_period_s(1e-6);
        assert!((small - std::f64::consts::FRAC_PI_2 * (0.8f64 / 9.81).sqrt()).abs() < 1e-12);
        let (q, qd) = p.released(angle);
        let y0 = DVector::from_iterator(4, q.iter().chain(qd.iter()).copied());
        for formulation in [
            Formulation::Baumgarte {
                kp: 100.0,
                kd: 20.0,
            },
            Formulation::ModifiedLagrange {
                alpha: 10.0,
                kp: 100.0,
                kd: 20.0,
            },
        ] {
            let system = FirstOrder {
                system: &p,
                formulation,
            };
            let tol = Tolerances {
                rtol: 1e-11,
                atol: 1e-12,
                max_step_s: 0.01,
            };
            let run = integrate(&system, y0.clone(), &[0.0, quarter / 2.0, quarter], tol);
            assert_eq!(run.ending, Ending::Finished, "{formulation:?}");
            let y = run.states.last().unwrap();
            let speed = (2.0 * 9.81 * 0.8 * (1.0 - angle.cos())).sqrt();
            assert!(y[0].abs() < 1e-7, "{formulation:?}: x at T/4 = {}", y[0]);
            assert!(
                (y[2].abs() - speed).abs() < 1e-7,
                "{formulation:?}: speed {}",
                y[2]
            );
            let (q, qd) = (y.rows(0, 2).into_owned(), y.rows(2, 2).into_owned());
            let (position, velocity) = drift(&p, &q, &qd, quarter);
            assert!(
                position < 1e-9 && velocity < 1e-8,
                "{formulation:?}: {position} {velocity}"
            );
        }
    }
}
