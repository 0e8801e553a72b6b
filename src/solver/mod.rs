//! CPU solvers in f64: the fixed-step explicit scheme that the GPU shaders
//! run, its semi-implicit variant (damping at the end of the step, so the
//! step is bounded by elasticity alone), the implicit reference solver that
//! validates both, static equilibrium and the linearization (modes) used to
//! choose the fixed steps.

mod embedded;
pub mod equilibrium;
pub mod esdirk;
pub mod explicit;
pub mod fixed_step;
pub mod linear_model;
pub mod modal;
pub mod radau;
pub mod reference;
pub mod semi_implicit;

use std::sync::Arc;

use thiserror::Error;

use crate::error::InputError;
use crate::linalg::{BandedMatrix, BlockTridiagonalLu, FactorError};
use crate::model::tether::{NODE_DOFS, PRESCRIBED_DOFS};
use crate::model::{PinMotion, Tether};
use crate::named::{Named, display_and_parse_by_name};
use crate::scheme::FixedStepScheme;
use crate::status::RunStatus;

pub use esdirk::EsdirkSolver;
pub use fixed_step::FixedStepSolver;
pub use radau::RadauSolver;
pub use reference::{ImplicitMethod, ReferenceOptions, ReferenceSolver, ReferenceStats};

#[derive(Debug, Error)]
pub enum SolverError {
    #[error("simulation diverged at t = {time_s} s: {reason}")]
    Diverged { time_s: f64, reason: String },
    #[error(
        "Newton iteration of the reference solver failed at t = {time_s} s (step fell to {step_s:e} s)"
    )]
    NewtonFailed { time_s: f64, step_s: f64 },
    #[error(
        "static equilibrium not found: Newton's method stalled with residual {residual_n:e} N after {iterations} iterations"
    )]
    EquilibriumFailed { residual_n: f64, iterations: usize },
    #[error(transparent)]
    Factor(#[from] FactorError),
    #[error("{0} is singular")]
    Singular(&'static str),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cancelled (interrupted) before it finished")]
    Cancelled,
}

impl SolverError {
    pub fn is_divergence(&self) -> bool {
        matches!(self, SolverError::Diverged { .. })
    }

    /// How the run that failed so ended, as every engine's rows say it.
    pub fn status(&self) -> RunStatus {
        match self {
            SolverError::Diverged { time_s, reason } => RunStatus::diverged_at(*time_s, reason),
            &SolverError::NewtonFailed { time_s, step_s } => {
                RunStatus::NewtonFailed { time_s, step_s }
            }
            SolverError::Cancelled => RunStatus::Cancelled,
            other => RunStatus::diverged(other.to_string()),
        }
    }

    /// The error a run that ended so reports (a GPU run's end, as a CPU
    /// run of it would); None when it finished.
    pub fn of_status(status: &RunStatus) -> Option<Self> {
        match status {
            RunStatus::Ok => None,
            RunStatus::Diverged { time_s, reason } => Some(SolverError::Diverged {
                // Every engine's divergence knows its time; only a row read
                // back from a table does not, and none is turned back.
                time_s: time_s.unwrap_or(f64::NAN),
                reason: reason.clone(),
            }),
            &RunStatus::NewtonFailed { time_s, step_s } => {
                Some(SolverError::NewtonFailed { time_s, step_s })
            }
            RunStatus::Cancelled => Some(SolverError::Cancelled),
            // A scored batch's end, never a single run's: it has its
            // partial objective, and no error.
            RunStatus::Abandoned { .. } => None,
        }
    }
}

/// Which CPU solver advances a simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolverKind {
    /// Fixed-step explicit scheme (the GPU's scheme), step from the model.
    Explicit,
    /// Adaptive implicit generalized-α with error control.
    Reference,
    /// The explicit scheme with the material damping implicit: the step is
    /// bounded by elasticity alone, not by D n² (src/solver/semi_implicit.rs).
    #[serde(rename = "semi-implicit")]
    SemiImplicit,
}

impl SolverKind {
    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Explicit => "explicit",
            SolverKind::Reference => "reference",
            SolverKind::SemiImplicit => "semi-implicit",
        }
    }

    /// The fixed-step scheme this solver runs, or None for the adaptive
    /// reference solver.
    pub fn fixed_step_scheme(self) -> Option<FixedStepScheme> {
        match self {
            SolverKind::Explicit => Some(FixedStepScheme::Explicit),
            SolverKind::SemiImplicit => Some(FixedStepScheme::SemiImplicit),
            SolverKind::Reference => None,
        }
    }
}

impl Named for SolverKind {
    const WHAT: &'static str = "solver";
    const ALL: &'static [Self] = &[
        SolverKind::Explicit,
        SolverKind::Reference,
        SolverKind::SemiImplicit,
    ];

    fn name(self) -> &'static str {
        SolverKind::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            SolverKind::Explicit => {
                "Fixed-step explicit scheme (the GPU's scheme), step from the model"
            }
            SolverKind::Reference => "Adaptive implicit generalized-α with error control",
            SolverKind::SemiImplicit => {
                "The explicit scheme with the material damping implicit: the step is bounded by elasticity alone, not by D n² (src/solver/semi_implicit.rs)"
            }
        }
    }
}

display_and_parse_by_name!(SolverKind);

/// A mechanical system M(q) q̈ = f(t, q, q̇) in the form the integrators need.
pub trait SecondOrderSystem {
    fn dofs(&self) -> usize;
    /// Overwrites prescribed coordinates and velocities with their values at t.
    fn impose(&self, t: f64, q: &mut [f64], v: &mut [f64]);
    /// Accelerations of all coordinates (prescribed ones included) at (t, q, v).
    fn acceleration(&mut self, t: f64, q: &[f64], v: &[f64], a: &mut [f64]);
}

/// The tether with node 0 driven by a pin motion: M_dd q̈_d = f_d − M_dr q̈_r
/// (docs/model.md §3). The dynamic mass block is factored once.
pub struct TetherDynamics {
    tether: Tether,
    motion: Arc<dyn PinMotion>,
    mass_dd: BlockTridiagonalLu,
    /// M_dr: rows d (offset by PRESCRIBED_DOFS), columns 0..2; only the band is nonzero.
    mass_dr: Vec<[f64; PRESCRIBED_DOFS]>,
    force: Vec<f64>,
}

impl TetherDynamics {
    pub fn new(tether: Tether, motion: Arc<dyn PinMotion>) -> Result<Self, SolverError> {
        let mass = tether.mass();
        let mass_dd = BlockTridiagonalLu::factor(mass, PRESCRIBED_DOFS)?;
        let band = mass.half_bandwidth();
        let mass_dr = (PRESCRIBED_DOFS..PRESCRIBED_DOFS + band)
            .take_while(|&i| i < tether.dofs())
            .map(|i| [mass.get(i, 0), mass.get(i, 1)])
            .collect();
        let dofs = tether.dofs();
        Ok(Self {
            tether,
            motion,
            mass_dd,
            mass_dr,
            force: vec![0.0; dofs],
        })
    }

    pub fn tether(&self) -> &Tether {
        &self.tether
    }

    pub fn motion(&self) -> &Arc<dyn PinMotion> {
        &self.motion
    }

    pub fn mass_dd(&self) -> &BlockTridiagonalLu {
        &self.mass_dd
    }

    /// Imposes the prescribed coordinates on (q, v) at `t` and returns the
    /// accelerations there: the state every integrator starts from.
    pub fn initial_acceleration(&mut self, t: f64, q: &mut [f64], v: &mut [f64]) -> Vec<f64> {
        self.impose(t, q, v);
        let mut a = vec![0.0; q.len()];
        self.acceleration(t, q, v, &mut a);
        a
    }

    /// The semi-implicit scheme's accelerations at `t`: with the Kelvin–Voigt
    /// damping taken at the end-of-step velocity `damped_v + h/2 a` (the pin's
    /// rows of `damped_v` hold its velocity at `t`) and the drag at `drag_v`,
    /// (M + h/2 C_D(q))_dd a_d = f_d(q; damped_v, drag_v) − (M + h/2 C_D)_dr a_r.
    /// C_D is assembled and factored anew: it follows the configuration.
    pub fn semi_implicit_acceleration(
        &mut self,
        t: f64,
        h: f64,
        q: &[f64],
        damped_v: &[f64],
        drag_v: &[f64],
        a: &mut [f64],
    ) -> Result<(), SolverError> {
        let acc_r = self.motion.acceleration(t);
        self.tether
            .generalized_force_split(q, damped_v, drag_v, &mut self.force);
        let mass = self.tether.mass();
        let dofs = self.tether.dofs();
        let mut system = BandedMatrix::zeros(dofs, mass.half_bandwidth());
        self.tether.material_damping(q, &mut system);
        system.scale_add(0.5 * h, mass, 1.0);
        a[..PRESCRIBED_DOFS].copy_from_slice(&acc_r);
        let ad = &mut a[PRESCRIBED_DOFS..];
        ad.copy_from_slice(&self.force[PRESCRIBED_DOFS..]);
        for (row, value) in ad.iter_mut().enumerate().take(mass.half_bandwidth()) {
            let i = PRESCRIBED_DOFS + row;
            *value -= system.get(i, 0) * acc_r[0] + system.get(i, 1) * acc_r[1];
        }
        BlockTridiagonalLu::factor(&system, PRESCRIBED_DOFS)?.solve_in_place(ad);
        Ok(())
    }

    /// The force the pin exerts on the tether at node 0 \[N\] in state (q,
    /// v) at t: the prescribed rows of M q̈ − f, with q̈ the accelerations
    /// the motion and the free coordinates have there. The tether pulls
    /// whatever carries its pin with the opposite force.
    pub fn pin_reaction(&mut self, t: f64, q: &[f64], v: &[f64]) -> [f64; 2] {
        let mut a = vec![0.0; q.len()];
        self.acceleration(t, q, v, &mut a);
        self.tether.generalized_force(q, v, &mut self.force);
        let mass = self.tether.mass();
        let reach = (mass.half_bandwidth() + 1).min(q.len());
        std::array::from_fn(|row| {
            let inertia: f64 = (0..reach).map(|j| mass.get(row, j) * a[j]).sum();
            inertia - self.force[row]
        })
    }

    /// rhs_d −= M_dr q̈_r: the inertial load of the prescribed motion.
    fn subtract_prescribed_inertia(&self, acc_r: [f64; 2], rhs_d: &mut [f64]) {
        for (row, m) in self.mass_dr.iter().enumerate() {
            rhs_d[row] -= m[0] * acc_r[0] + m[1] * acc_r[1];
        }
    }

    /// Checks that a state is finite and has not exploded: every node within
    /// 100 tether lengths of the pin, slopes below 100, speeds below 1e4 m/s.
    /// Far beyond anything physical for this tether, so only a numerically
    /// unstable run trips it.
    pub fn check_state(&self, t: f64, q: &[f64], v: &[f64]) -> Result<(), SolverError> {
        let pin = self.motion.position(t);
        let limit = 100.0 * self.tether.params().length_m;
        for (i, (node, vel)) in q.chunks(NODE_DOFS).zip(v.chunks(NODE_DOFS)).enumerate() {
            let finite = node.iter().chain(vel).all(|x| x.is_finite());
            if !finite {
                return Err(SolverError::Diverged {
                    time_s: t,
                    reason: format!("non-finite state at node {i}"),
                });
            }
            let dist = ((node[0] - pin[0]).powi(2) + (node[1] - pin[1]).powi(2)).sqrt();
            let slope = node[2].hypot(node[3]);
            let speed = vel.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            if dist > limit || slope > 100.0 || speed > 1e4 {
                return Err(SolverError::Diverged {
                    time_s: t,
                    reason: format!(
                        "state exploded at node {i} (distance from pin {dist:.3e} m, |r'| {slope:.3e}, speed {speed:.3e})"
                    ),
                });
            }
        }
        Ok(())
    }
}

impl SecondOrderSystem for TetherDynamics {
    fn dofs(&self) -> usize {
        self.tether.dofs()
    }

    fn impose(&self, t: f64, q: &mut [f64], v: &mut [f64]) {
        let (p, w) = (self.motion.position(t), self.motion.velocity(t));
        q[..PRESCRIBED_DOFS].copy_from_slice(&p);
        v[..PRESCRIBED_DOFS].copy_from_slice(&w);
    }

    fn acceleration(&mut self, t: f64, q: &[f64], v: &[f64], a: &mut [f64]) {
        let acc_r = self.motion.acceleration(t);
        self.tether.generalized_force(q, v, &mut self.force);
        a[..PRESCRIBED_DOFS].copy_from_slice(&acc_r);
        let ad = &mut a[PRESCRIBED_DOFS..];
        ad.copy_from_slice(&self.force[PRESCRIBED_DOFS..]);
        self.subtract_prescribed_inertia(acc_r, ad);
        self.mass_dd.solve_in_place(ad);
    }
}

/// Newton's vectors for the tether's implicit methods (generalized-α and
/// ESDIRK), and the one computation they share.
pub(crate) struct NewtonWorkspace {
    pub force: Vec<f64>,
    pub mass_times_acc: Vec<f64>,
    /// The residual, then the correction, on the dynamic coordinates.
    pub residual: Vec<f64>,
}

impl NewtonWorkspace {
    pub fn new(dofs: usize) -> Self {
        Self {
            force: vec![0.0; dofs],
            mass_times_acc: vec![0.0; dofs],
            residual: vec![0.0; dofs - PRESCRIBED_DOFS],
        }
    }

    /// Newton's correction S⁻¹ r_d, r_d = f_d − (M a)_d at (q, v), with
    /// `lu` the factored iteration matrix S. `acc` holds the pin's
    /// prescribed accelerations in its first entries, so M a carries
    /// M_dr a_r too.
    pub fn correction(
        &mut self,
        tether: &Tether,
        lu: &BlockTridiagonalLu,
        (q, v, acc): (&[f64], &[f64], &[f64]),
    ) -> &[f64] {
        tether.generalized_force(q, v, &mut self.force);
        tether.mass_times(acc, &mut self.mass_times_acc);
        let dynamic = PRESCRIBED_DOFS..q.len();
        for ((r, f), ma) in self
            .residual
            .iter_mut()
            .zip(&self.force[dynamic.clone()])
            .zip(&self.mass_times_acc[dynamic])
        {
            *r = f - ma;
        }
        lu.solve_in_place(&mut self.residual);
        &self.residual
    }
}

/// Weights that turn coordinate errors into lengths: 1 for positions, l_e for
/// slopes (a slope error δ moves points of the element by about l_e δ).
pub fn length_weights(tether: &Tether) -> Vec<f64> {
    let le = tether.kernel().length_m;
    (0..tether.dofs())
        .map(|i| if i % NODE_DOFS < 2 { 1.0 } else { le })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TetherParams;

    /// The solvers' block LU (explicit 4×4 inverses) against the banded LU
    /// (row by row) on the matrices they factor: the mass matrix and a
    /// Newton iteration matrix of a bent, moving tether, whose slope
    /// coordinates are l_e² smaller in the mass and make the blocks the
    /// least well conditioned at the finest mesh.
    #[test]
    fn block_lu_solves_the_tethers_matrices_as_the_banded_lu_does() {
        for elements in [1, 10, 128] {
            let tether = Tether::new(TetherParams {
                elements,
                damping_pa_s: 2000.0,
                drag_coefficient: 0.8,
                ..Default::default()
            })
            .unwrap();
            let dofs = tether.dofs();
            let q: Vec<f64> = (0..dofs)
                .map(|i| {
                    let node = (i / 4) as f64 / elements as f64;
                    [0.4 * node, -0.45 * node, 0.7, -0.7 + 0.1 * node][i % 4]
                })
                .collect();
            let v: Vec<f64> = (0..dofs).map(|i| (0.3 * i as f64).cos()).collect();
            let mut stiffness = BandedMatrix::zeros(dofs, tether.mass().half_bandwidth());
            let mut damping = stiffness.clone();
            tether.tangent(&q, &v, &mut stiffness, &mut damping);
            let mut iteration = tether.mass().clone();
            iteration.scale_add(1.0, &stiffness, 1e-7);
            iteration.scale_add(1.0, &damping, 1e-3);
            for matrix in [tether.mass(), &iteration] {
                let rhs: Vec<f64> = v[PRESCRIBED_DOFS..].to_vec();
                let mut banded = rhs.clone();
                matrix
                    .trailing(PRESCRIBED_DOFS)
                    .factor()
                    .unwrap()
                    .solve_in_place(&mut banded);
                let mut blocked = rhs;
                BlockTridiagonalLu::factor(matrix, PRESCRIBED_DOFS)
                    .unwrap()
                    .solve_in_place(&mut blocked);
                let scale = banded.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                for (i, (a, b)) in banded.iter().zip(&blocked).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-12 * scale,
                        "n = {elements}, row {i}: {a} vs {b} (scale {scale})"
                    );
                }
            }
        }
    }
}
