//! Small constrained rigid multibodies (f64, on the CPU): generalized
//! coordinates q, a mass matrix M(q), applied forces Q(q, q̇, t), and
//! constraints that keep them, docs/constrained.md. Holonomic and
//! rheonomic constraints Φ(q, t) = 0 are kept by one of two formulations
//! ([`Formulation`]):
//!
//! - **Baumgarte's stabilisation** in Deressa's modified form: the
//!   multipliers from Φ_q M⁻¹ Φ_qᵀ λ = Φ_q M⁻¹ Q − η, the constraint's
//!   acceleration replaced by η = γ − K_D Φ̇ − K_P Φ. It needs
//!   Φ_q M⁻¹ Φ_qᵀ invertible, and says where it is not
//!   ([`integrate::Refused`]: the run fails there, named, with its
//!   time).
//! - **The modified Lagrange equations** (Bayo, García de Jalón and
//!   Serna's augmented form): (M + α Φ_qᵀ Φ_q) q̈ = Q − Φ_qᵀ λ + α Φ_qᵀ η,
//!   the multipliers λ iterated (λ ← λ + α (Φ_q q̈ − η)); the matrix stays
//!   positive definite where Φ_q or M loses rank, so the run passes
//!   through a singular pose.
//!
//! Nonholonomic systems (rolling without slipping) are reduced by the
//! **null space** of their constraints, q̇ = S(q) u ([`robot`]), which
//! removes the multipliers and keeps the constraints to round-off.
//! [`integrate`] is the implicit integrator with error control they share.

pub mod arm;
pub mod integrate;
pub mod pendulum;
pub mod robot;

use nalgebra::{DMatrix, DVector};

use crate::named::Named;

use integrate::Refused;

/// A holonomic (possibly rheonomic) constrained system.
pub trait Holonomic {
    /// Generalized coordinates.
    fn dof(&self) -> usize;
    fn mass(&self, q: &DVector<f64>) -> DMatrix<f64>;
    /// Applied forces Q(q, q̇, t), the velocity-dependent ones included.
    fn forces(&self, q: &DVector<f64>, qd: &DVector<f64>, t: f64) -> DVector<f64>;
    /// Φ(q, t).
    fn constraints(&self, q: &DVector<f64>, t: f64) -> DVector<f64>;
    /// Φ_q.
    fn jacobian(&self, q: &DVector<f64>, t: f64) -> DMatrix<f64>;
    /// Φ_t.
    fn constraints_t(&self, q: &DVector<f64>, t: f64) -> DVector<f64>;
    /// γ = −(Φ_q q̇)_q q̇ − 2 Φ_qt q̇ − Φ_tt: Φ̈ = Φ_q q̈ − γ.
    fn gamma(&self, q: &DVector<f64>, qd: &DVector<f64>, t: f64) -> DVector<f64>;
}

/// How the constraints are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Formulation {
    /// Deressa's modified Baumgarte form, K_P = kp·I, K_D = kd·I.
    Baumgarte { kp: f64, kd: f64 },
    /// The modified Lagrange equations with B = α I and the same
    /// stabilisation.
    ModifiedLagrange { alpha: f64, kp: f64, kd: f64 },
}

impl Formulation {
    /// Which of the two it is, without its gains.
    pub fn kind(&self) -> FormulationKind {
        match self {
            Self::Baumgarte { .. } => FormulationKind::Baumgarte,
            Self::ModifiedLagrange { .. } => FormulationKind::ModifiedLagrange,
        }
    }

    /// Its name, as `--formulation` takes it.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// How the arm's constraints are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormulationKind {
    Baumgarte,
    ModifiedLagrange,
}

impl Named for FormulationKind {
    const WHAT: &'static str = "formulation";
    const ALL: &'static [Self] = &[Self::Baumgarte, Self::ModifiedLagrange];

    fn name(self) -> &'static str {
        match self {
            Self::Baumgarte => "baumgarte",
            Self::ModifiedLagrange => "modified-lagrange",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Self::Baumgarte => {
                "Lagrange multipliers with Baumgarte's stabilisation (needs Φ_q M⁻¹ Φ_qᵀ invertible)"
            }
            Self::ModifiedLagrange => {
                "the modified (augmented) Lagrange equations, M + α Φ_qᵀ Φ_q (passes singular poses)"
            }
        }
    }
}

impl FormulationKind {
    /// The formulation with gains K_P = `kp`·I, K_D = `kd`·I and, for the
    /// modified Lagrange form, B = `alpha`·I.
    pub fn with(self, kp: f64, kd: f64, alpha: f64) -> Formulation {
        match self {
            Self::Baumgarte => Formulation::Baumgarte { kp, kd },
            Self::ModifiedLagrange => Formulation::ModifiedLagrange { alpha, kp, kd },
        }
    }
}

/// Φ_q M⁻¹ Φ_qᵀ counts as singular below this reciprocal condition
/// number: a multiplier would be amplified past 1e10.
pub const SINGULAR_RCOND: f64 = 1e-10;
/// The modified Lagrange form's multiplier iterations, and when it stops.
const MAX_MULTIPLIER_ITERATIONS: usize = 200;
const MULTIPLIER_TOLERANCE: f64 = 1e-13;

/// The accelerations q̈ and the multipliers λ (the constraint forces are
/// −Φ_qᵀ λ) of `system` at (q, q̇, t) under `formulation`.
pub fn accelerations(
    system: &dyn Holonomic,
    formulation: Formulation,
    q: &DVector<f64>,
    qd: &DVector<f64>,
    t: f64,
) -> Result<(DVector<f64>, DVector<f64>), Refused> {
    let mass = system.mass(q);
    let forces = system.forces(q, qd, t);
    let jacobian = system.jacobian(q, t);
    let phi = system.constraints(q, t);
    let phi_dot = &jacobian * qd + system.constraints_t(q, t);
    let gamma = system.gamma(q, qd, t);
    match formulation {
        Formulation::Baumgarte { kp, kd } => {
            let eta = gamma - phi_dot * kd - phi * kp;
            let lu = mass.clone().lu();
            let m_inv_jt = lu
                .solve(&jacobian.transpose())
                .ok_or_else(|| Refused(format!("the mass matrix is singular at t = {t} s")))?;
            let m_inv_q = lu.solve(&forces).expect("factored above");
            let schur = &jacobian * &m_inv_jt;
            let rcond = reciprocal_condition(&schur);
            if rcond < SINGULAR_RCOND {
                return Err(Refused(format!(
                    "Φ_q M⁻¹ Φ_qᵀ is singular at t = {t:.6} s (reciprocal condition {rcond:.1e}): the constraint Jacobian has lost rank"
                )));
            }
            let lambda = schur
                .lu()
                .solve(&(&jacobian * &m_inv_q - eta))
                .ok_or_else(|| Refused(format!("Φ_q M⁻¹ Φ_qᵀ is singular at t = {t} s")))?;
            let qdd = m_inv_q - m_inv_jt * &lambda;
            Ok((qdd, lambda))
        }
        Formulation::ModifiedLagrange { alpha, kp, kd } => {
            let eta = gamma - phi_dot * kd - &phi * kp;
            let jt = jacobian.transpose();
            let augmented = &mass + &jt * &jacobian * alpha;
            let cholesky = augmented.cholesky().ok_or_else(|| {
                Refused(format!(
                    "M + α Φ_qᵀ Φ_q is not positive definite at t = {t} s"
                ))
            })?;
            let base = &forces + &jt * &eta * alpha;
            let mut lambda = DVector::zeros(phi.len());
            let mut qdd = cholesky.solve(&base);
            for _ in 0..MAX_MULTIPLIER_ITERATIONS {
                lambda += (&jacobian * &qdd - &eta) * alpha;
                let next = cholesky.solve(&(&base - &jt * &lambda));
                let change = (&next - &qdd).amax();
                qdd = next;
                if change <= MULTIPLIER_TOLERANCE * (1.0 + qdd.amax()) {
                    break;
                }
            }
            Ok((qdd, lambda))
        }
    }
}

/// σ_min / σ_max of a square matrix (0 for an empty or non-finite one).
fn reciprocal_condition(m: &DMatrix<f64>) -> f64 {
    if m.is_empty() || !m.iter().all(|v| v.is_finite()) {
        return 0.0;
    }
    let sv = m.clone().singular_values();
    let (min, max) = (sv.min(), sv.max());
    if max == 0.0 { 0.0 } else { min / max }
}

/// A holonomic system as a first-order one, y = (q, q̇).
pub struct FirstOrder<'a> {
    pub system: &'a dyn Holonomic,
    pub formulation: Formulation,
}

impl integrate::Rhs for FirstOrder<'_> {
    fn rhs(&self, t: f64, y: &DVector<f64>) -> Result<DVector<f64>, Refused> {
        let n = self.system.dof();
        let q = y.rows(0, n).into_owned();
        let qd = y.rows(n, n).into_owned();
        let (qdd, _) = accelerations(self.system, self.formulation, &q, &qd, t)?;
        let mut dy = DVector::zeros(2 * n);
        dy.rows_mut(0, n).copy_from(&qd);
        dy.rows_mut(n, n).copy_from(&qdd);
        Ok(dy)
    }
}

/// The drift of a holonomic system's state: |Φ|∞ and |Φ̇|∞.
pub fn drift(system: &dyn Holonomic, q: &DVector<f64>, qd: &DVector<f64>, t: f64) -> (f64, f64) {
    let phi = system.constraints(q, t);
    let phi_dot = system.jacobian(q, t) * qd + system.constraints_t(q, t);
    (phi.amax(), phi_dot.amax())
}
