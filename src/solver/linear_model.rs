//! The linearized input–output model about the hanging equilibrium (Jonker,
//! van Dijk & Aarts, linearised I/O of flexible multibody systems): small
//! variations δq_d of the dynamic coordinates driven by the winch position
//! u = δx_0 through the rheonomic partition of docs/model.md §3,
//!
//! ```text
//! M δq̈ + C δq̇ + K δq = −(m_u ü + c_u u̇ + k_u u)
//! ```
//!
//! where M, C, K are the dynamic blocks of the mass matrix and of −∂f/∂q̇,
//! −∂f/∂q at the equilibrium, and m_u, c_u, k_u their columns for x_0. Air
//! drag is quadratic in the velocity, so its linearization at rest is zero:
//! only Kelvin–Voigt damping enters C. Outputs are the tip's x and y.

use nalgebra::{Complex, DMatrix, DVector};

use super::SolverError;
use super::equilibrium::hanging_equilibrium;
use super::modal::linearize;
use crate::linalg::BandedMatrix;
use crate::model::Tether;
use crate::model::tether::{HALF_BANDWIDTH, PRESCRIBED_DOFS};

/// Names of the outputs, in order.
pub const OUTPUTS: [&str; 2] = ["tip_x", "tip_y"];

#[derive(Debug, Clone)]
pub struct LinearModel {
    /// The hanging equilibrium, all coordinates [m, -].
    pub equilibrium: Vec<f64>,
    pub mass: DMatrix<f64>,
    pub damping: DMatrix<f64>,
    pub stiffness: DMatrix<f64>,
    /// Columns of the full matrices for the input coordinate x_0, dynamic rows.
    pub mass_input: DVector<f64>,
    pub damping_input: DVector<f64>,
    pub stiffness_input: DVector<f64>,
    /// Dynamic-coordinate indices of the outputs (tip x, tip y).
    pub output_indices: [usize; 2],
}

/// `points` log-spaced values from `min` to `max` inclusive.
pub fn log_spaced(min: f64, max: f64, points: usize) -> Vec<f64> {
    let (a, b) = (min.ln(), max.ln());
    (0..points)
        .map(|i| (a + (b - a) * i as f64 / (points - 1).max(1) as f64).exp())
        .collect()
}

/// A state-space model ẋ = A x + B u, y = C x + D u (u: winch position).
#[derive(Debug, Clone)]
pub struct StateSpace {
    pub a: DMatrix<f64>,
    pub b: DMatrix<f64>,
    pub c: DMatrix<f64>,
    pub d: DMatrix<f64>,
    pub state_names: Vec<String>,
}

fn singular() -> SolverError {
    SolverError::Singular("the linearized system matrix")
}

impl LinearModel {
    /// Linearizes `tether` about its equilibrium hanging from `pin`.
    pub fn about_hanging_equilibrium(tether: &Tether, pin: [f64; 2]) -> Result<Self, SolverError> {
        let q = hanging_equilibrium(tether, pin)?;
        let zero = vec![0.0; tether.dofs()];
        let lin = linearize(tether, &q, &zero);
        let dofs = tether.dofs();
        let mut k = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
        let mut c = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
        tether.tangent(&q, &zero, &mut k, &mut c);
        let column = |m: &BandedMatrix| {
            DVector::from_fn(dofs - PRESCRIBED_DOFS, |i, _| m.get(i + PRESCRIBED_DOFS, 0))
        };
        let tip = tether.tip_index() - PRESCRIBED_DOFS;
        Ok(Self {
            equilibrium: q,
            mass_input: column(tether.mass()),
            damping_input: column(&c),
            stiffness_input: column(&k),
            mass: lin.mass,
            damping: lin.damping,
            stiffness: lin.stiffness,
            output_indices: [tip, tip + 1],
        })
    }

    pub fn dynamic_dofs(&self) -> usize {
        self.mass.nrows()
    }

    /// δq_d per unit winch displacement at angular frequency ω:
    /// (K − ω²M + iωC) δq = −(k_u − ω² m_u + iω c_u).
    pub fn displacement_response(
        &self,
        omega_rad_s: f64,
    ) -> Result<DVector<Complex<f64>>, SolverError> {
        let w = omega_rad_s;
        let dynamic = DMatrix::from_fn(self.dynamic_dofs(), self.dynamic_dofs(), |i, j| {
            Complex::new(
                self.stiffness[(i, j)] - w * w * self.mass[(i, j)],
                w * self.damping[(i, j)],
            )
        });
        let load = DVector::from_fn(self.dynamic_dofs(), |i, _| {
            -Complex::new(
                self.stiffness_input[i] - w * w * self.mass_input[i],
                w * self.damping_input[i],
            )
        });
        dynamic.lu().solve(&load).ok_or_else(singular)
    }

    /// Tip x and y per unit winch displacement at ω (complex gains).
    pub fn frequency_response(&self, omega_rad_s: f64) -> Result<[Complex<f64>; 2], SolverError> {
        let r = self.displacement_response(omega_rad_s)?;
        Ok(self.output_indices.map(|i| r[i]))
    }

    /// Tip gains at each frequency of `frequencies_hz`.
    pub fn frequency_responses(
        &self,
        frequencies_hz: &[f64],
    ) -> Result<Vec<[Complex<f64>; 2]>, SolverError> {
        frequencies_hz
            .iter()
            .map(|hz| self.frequency_response(2.0 * std::f64::consts::PI * hz))
            .collect()
    }

    /// A state-space realization from winch position u to the tip's x and y.
    /// The transfer function is proper but not strictly proper (the winch's
    /// inertial coupling reaches the outputs at once), so D ≠ 0. With
    /// a = K M⁻¹ m_u − k_u and b = C M⁻¹ m_u − c_u, the states
    /// x₁ = δq + M⁻¹ m_u u and x₂ = ẋ₁ − M⁻¹ b u obey
    ///
    /// ```text
    /// ẋ₁ = x₂ + M⁻¹ b u
    /// ẋ₂ = −M⁻¹K x₁ − M⁻¹C x₂ + M⁻¹ (a − C M⁻¹ b) u
    /// y  = E x₁ − E M⁻¹ m_u u
    /// ```
    ///
    /// (substitute into M δq̈ + C δq̇ + K δq = −(m_u ü + c_u u̇ + k_u u): the
    /// ü and u̇ terms cancel), E picking the tip's x and y.
    pub fn state_space(&self) -> Result<StateSpace, SolverError> {
        let n = self.dynamic_dofs();
        let m_inv = self.mass.clone().try_inverse().ok_or_else(singular)?;
        let m_inv_mu = &m_inv * &self.mass_input;
        let a_in = &self.stiffness * &m_inv_mu - &self.stiffness_input;
        let b_in = &self.damping * &m_inv_mu - &self.damping_input;
        let m_inv_b = &m_inv * &b_in;
        let size = 2 * n;
        let mut a = DMatrix::zeros(size, size);
        a.view_mut((0, n), (n, n)).fill_with_identity();
        a.view_mut((n, 0), (n, n))
            .copy_from(&(-(&m_inv * &self.stiffness)));
        a.view_mut((n, n), (n, n))
            .copy_from(&(-(&m_inv * &self.damping)));
        let mut b = DMatrix::zeros(size, 1);
        b.view_mut((0, 0), (n, 1)).copy_from(&m_inv_b);
        b.view_mut((n, 0), (n, 1))
            .copy_from(&(&m_inv * (a_in - &self.damping * &m_inv_b)));
        let mut c = DMatrix::zeros(2, size);
        let mut d = DMatrix::zeros(2, 1);
        for (row, &i) in self.output_indices.iter().enumerate() {
            c[(row, i)] = 1.0;
            d[(row, 0)] = -m_inv_mu[i];
        }
        let mut state_names: Vec<String> = (0..n).map(|i| format!("x1_{i}")).collect();
        state_names.extend((0..n).map(|i| format!("x2_{i}")));
        Ok(StateSpace {
            a,
            b,
            c,
            d,
            state_names,
        })
    }
}

impl StateSpace {
    /// C (iωI − A)⁻¹ B + D: outputs per unit winch position.
    pub fn frequency_response(&self, omega_rad_s: f64) -> Result<Vec<Complex<f64>>, SolverError> {
        let n = self.a.nrows();
        let shifted = DMatrix::from_fn(n, n, |i, j| {
            let diag = if i == j {
                Complex::new(0.0, omega_rad_s)
            } else {
                Complex::new(0.0, 0.0)
            };
            diag - Complex::new(self.a[(i, j)], 0.0)
        });
        let b = self.b.map(|v| Complex::new(v, 0.0));
        let x = shifted.lu().solve(&b).ok_or_else(singular)?;
        let c = self.c.map(|v| Complex::new(v, 0.0));
        let y = c * x;
        Ok((0..self.c.nrows())
            .map(|i| y[(i, 0)] + self.d[(i, 0)])
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TetherParams;

    fn model(n: usize) -> LinearModel {
        let t = Tether::new(TetherParams {
            elements: n,
            damping_pa_s: 2000.0,
            drag_coefficient: 0.8,
            tip_mass_kg: 0.021,
            ..Default::default()
        })
        .unwrap();
        LinearModel::about_hanging_equilibrium(&t, [0.0, 0.0]).unwrap()
    }

    #[test]
    fn slow_winch_motion_carries_the_tip_one_to_one() {
        let m = model(6);
        let [x, y] = m.frequency_response(1e-3).unwrap();
        assert!((x.re - 1.0).abs() < 1e-5 && x.im.abs() < 1e-5, "{x}");
        assert!(y.norm() < 1e-6, "{y}");
        // The quasi-static influence T of the winch (K T = −k_u) is a rigid
        // translation in x.
        let t = m
            .stiffness
            .clone()
            .lu()
            .solve(&(-&m.stiffness_input))
            .unwrap();
        for (i, v) in t.iter().enumerate() {
            let expected = if (i + PRESCRIBED_DOFS).is_multiple_of(4) {
                1.0
            } else {
                0.0
            };
            assert!((v - expected).abs() < 1e-9, "T[{i}] = {v}");
        }
    }

    #[test]
    fn state_space_agrees_with_the_second_order_form() {
        let m = model(4);
        let ss = m.state_space().unwrap();
        for omega in [1e-3, 0.5, 4.0, 4.9, 30.0, 300.0, 3e4] {
            let direct = m.frequency_response(omega).unwrap();
            let via_ss = ss.frequency_response(omega).unwrap();
            for k in 0..2 {
                let from_ss = via_ss[k];
                assert!(
                    (from_ss - direct[k]).norm() < 1e-6 * (1.0 + direct[k].norm()),
                    "ω={omega} output {k}: {from_ss} vs {}",
                    direct[k]
                );
            }
        }
    }
}
