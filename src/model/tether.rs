//! The assembled tether: global mass matrix, generalized forces and tangents,
//! energies and material points (docs/model.md §2).
//!
//! Coordinates are node-major, q = [x_0, y_0, x'_0, y'_0, …, x_n, y_n, x'_n, y'_n],
//! 4(n+1) of them; element k owns q[4k .. 4k+8].

use super::element::{
    ElementKernel, ElementMatrix, ElementVector, internal_forces_block, internal_tangent, shape,
};
use super::params::TetherParams;
use crate::error::InputError;
use crate::linalg::{BandedMatrix, InterleavedBandedMatrix};

/// Half-bandwidth of every global matrix in node-major ordering: one element
/// couples 8 consecutive coordinates.
pub const HALF_BANDWIDTH: usize = 7;

/// Coordinates per node (x, y, x', y').
pub const NODE_DOFS: usize = 4;

/// Node 0's position (x_0, y_0) is prescribed (docs/model.md §3); these many leading
/// coordinates are not dynamic.
pub const PRESCRIBED_DOFS: usize = 2;

/// Elements per block of the force evaluation (element::internal_forces_block):
/// a wide block fills AVX-512's eight lanes, a narrow one the tail with at
/// most three elements' work wasted.
const WIDE_FORCE_BLOCK: usize = 8;
const NARROW_FORCE_BLOCK: usize = 4;

#[derive(Debug, Clone)]
pub struct Tether {
    params: TetherParams,
    kernel: ElementKernel,
    mass: BandedMatrix,
    /// The same mass matrix for its products (see `Tether::mass_times`).
    mass_interleaved: InterleavedBandedMatrix,
    gravity: Vec<f64>,
}

impl Tether {
    pub fn new(params: TetherParams) -> Result<Self, InputError> {
        params.validate()?;
        let kernel = ElementKernel::new(&params);
        let dofs = NODE_DOFS * (params.elements + 1);
        let mut mass = BandedMatrix::zeros(dofs, HALF_BANDWIDTH);
        let mut gravity = vec![0.0; dofs];
        for k in 0..params.elements {
            let base = NODE_DOFS * k;
            for i in 0..8 {
                gravity[base + i] += kernel.gravity[i];
                for j in 0..8 {
                    if kernel.mass[i][j] != 0.0 {
                        mass.add(base + i, base + j, kernel.mass[i][j]);
                    }
                }
            }
        }
        let tip = NODE_DOFS * params.elements;
        mass.add(tip, tip, params.tip_mass_kg);
        mass.add(tip + 1, tip + 1, params.tip_mass_kg);
        gravity[tip + 1] -= params.tip_mass_kg * params.gravity_m_s2;
        // Element and tip masses act alike on x and y and never couple
        // them; only a mass no validated tether has (not finite) breaks it.
        let mass_interleaved = InterleavedBandedMatrix::from_banded(&mass).ok_or_else(|| {
            InputError::new(
                "tether",
                "its mass matrix",
                "finite: a tether whose mass the model can form",
            )
        })?;
        Ok(Self {
            params,
            kernel,
            mass,
            mass_interleaved,
            gravity,
        })
    }

    pub fn params(&self) -> &TetherParams {
        &self.params
    }

    pub fn elements(&self) -> usize {
        self.params.elements
    }

    pub fn kernel(&self) -> &ElementKernel {
        &self.kernel
    }

    /// Number of coordinates, 4(n+1).
    pub fn dofs(&self) -> usize {
        NODE_DOFS * (self.params.elements + 1)
    }

    /// Each node's arc length from the pin \[m\]: the element ends, evenly
    /// spaced.
    pub fn node_arc_lengths_m(&self) -> Vec<f64> {
        let n = self.params.elements;
        (0..=n)
            .map(|k| self.params.length_m * k as f64 / n as f64)
            .collect()
    }

    /// Index of the tip's x coordinate (node n).
    pub fn tip_index(&self) -> usize {
        NODE_DOFS * self.params.elements
    }

    /// The constant global mass matrix including the tip mass.
    pub fn mass(&self) -> &BandedMatrix {
        &self.mass
    }

    /// y = M x, to the bits of `mass().mul_vec` in half its time: the
    /// reference solver forms M ä in every Newton iteration.
    pub fn mass_times(&self, x: &[f64], y: &mut [f64]) {
        self.mass_interleaved.mul_vec(x, y);
    }

    /// Constant gravity load Q (tip mass included).
    pub fn gravity(&self) -> &[f64] {
        &self.gravity
    }

    /// Element k's coordinates (or velocities) of the global vector `v`, as
    /// an array: its fixed length lets the element kernels, the hot loop
    /// of every force evaluation, go without bounds checks.
    fn element_vector(v: &[f64], k: usize) -> &ElementVector {
        v[NODE_DOFS * k..NODE_DOFS * k + 8]
            .try_into()
            .expect("a range of 8 coordinates")
    }

    /// f = Q − F_a − F_D + Q_D over all coordinates (docs/model.md §2, eq. 24's right side).
    pub fn generalized_force(&self, q: &[f64], qd: &[f64], f: &mut [f64]) {
        self.generalized_force_split(q, qd, qd, f);
    }

    /// As [`Tether::generalized_force`], with the Kelvin–Voigt damping F_D
    /// taken at the velocities `damped_qd` and the drag Q_D at `drag_qd`
    /// (the semi-implicit scheme evaluates them at different velocities).
    pub fn generalized_force_split(
        &self,
        q: &[f64],
        damped_qd: &[f64],
        drag_qd: &[f64],
        f: &mut [f64],
    ) {
        f.copy_from_slice(&self.gravity);
        let elements = self.params.elements;
        let mut first = 0;
        while first < elements {
            first += if elements - first >= WIDE_FORCE_BLOCK {
                self.add_block_forces::<WIDE_FORCE_BLOCK>(first, q, damped_qd, drag_qd, f)
            } else {
                self.add_block_forces::<NARROW_FORCE_BLOCK>(first, q, damped_qd, drag_qd, f)
            };
        }
    }

    /// Adds −F_a − F_D + Q_D of the `B` elements from `first` into `f` and
    /// returns `B`. A block past the last element is padded with copies of
    /// the last node; the padding's forces are dropped.
    fn add_block_forces<const B: usize>(
        &self,
        first: usize,
        q: &[f64],
        damped_qd: &[f64],
        drag_qd: &[f64],
        f: &mut [f64],
    ) -> usize {
        let elements = self.params.elements;
        let mut fe = [[0.0; 8]; B];
        let span = NODE_DOFS * first..NODE_DOFS * (first + B + 1);
        if span.end <= q.len() {
            internal_forces_block(&self.kernel, &q[span.clone()], &damped_qd[span], &mut fe);
        } else {
            // Past the last node, the last node again: finite, and dropped.
            let padded = |v: &[f64]| -> [f64; NODE_DOFS * (WIDE_FORCE_BLOCK + 1)] {
                let last = &v[v.len() - NODE_DOFS..];
                std::array::from_fn(|i| {
                    let i = i + span.start;
                    v.get(i).copied().unwrap_or(last[i % NODE_DOFS])
                })
            };
            assert!(B <= WIDE_FORCE_BLOCK);
            internal_forces_block(&self.kernel, &padded(q), &padded(damped_qd), &mut fe);
        }
        for (b, fe) in fe.iter_mut().enumerate().take(elements - first) {
            let k = first + b;
            for v in fe.iter_mut() {
                *v = -*v;
            }
            self.kernel.add_drag(
                Self::element_vector(q, k),
                Self::element_vector(drag_qd, k),
                fe,
            );
            for (i, v) in fe.iter().enumerate() {
                f[NODE_DOFS * k + i] += v;
            }
        }
        B
    }

    /// Tangent stiffness K = −∂f/∂q and damping C = −∂f/∂q̇ (both banded).
    pub fn tangent(
        &self,
        q: &[f64],
        qd: &[f64],
        stiffness: &mut BandedMatrix,
        damping: &mut BandedMatrix,
    ) {
        stiffness.fill_zero();
        damping.fill_zero();
        let mut ke: ElementMatrix;
        let mut ce: ElementMatrix;
        for k in 0..self.params.elements {
            ke = [[0.0; 8]; 8];
            ce = [[0.0; 8]; 8];
            let (e, ed) = (Self::element_vector(q, k), Self::element_vector(qd, k));
            internal_tangent(&self.kernel, e, ed, &mut ke, &mut ce);
            self.kernel.sub_drag_tangent(e, ed, &mut ke, &mut ce);
            let base = NODE_DOFS * k;
            for i in 0..8 {
                for j in 0..8 {
                    stiffness.add(base + i, base + j, ke[i][j]);
                    damping.add(base + i, base + j, ce[i][j]);
                }
            }
        }
    }

    /// The Kelvin–Voigt damping matrix C_D(q) = ∂F_D/∂q̇ (banded). F_D is
    /// linear in q̇ (ε̇ = ∂ε/∂q · q̇, κ̇ likewise), so F_D = C_D(q) q̇ exactly.
    pub fn material_damping(&self, q: &[f64], damping: &mut BandedMatrix) {
        damping.fill_zero();
        for k in 0..self.params.elements {
            let mut ce: ElementMatrix = [[0.0; 8]; 8];
            self.kernel
                .add_material_damping(Self::element_vector(q, k), &mut ce);
            let base = NODE_DOFS * k;
            for (i, row) in ce.iter().enumerate() {
                for (j, value) in row.iter().enumerate() {
                    damping.add(base + i, base + j, *value);
                }
            }
        }
    }

    pub fn kinetic_energy(&self, qd: &[f64]) -> f64 {
        let mut mv = vec![0.0; qd.len()];
        self.mass_times(qd, &mut mv);
        0.5 * qd.iter().zip(&mv).map(|(a, b)| a * b).sum::<f64>()
    }

    pub fn strain_energy(&self, q: &[f64]) -> f64 {
        (0..self.params.elements)
            .map(|k| self.kernel.strain_energy(Self::element_vector(q, k)))
            .sum()
    }

    /// Gravitational potential. The consistent gravity load is exact (it is
    /// ∫ Sᵀ ds times the weight per length), so V = −Q·q.
    pub fn gravity_potential(&self, q: &[f64]) -> f64 {
        -self.gravity.iter().zip(q).map(|(g, x)| g * x).sum::<f64>()
    }

    pub fn total_energy(&self, q: &[f64], qd: &[f64]) -> f64 {
        self.kinetic_energy(qd) + self.strain_energy(q) + self.gravity_potential(q)
    }

    /// Position of the material point at arc length `s_m` (clamped to [0, L]),
    /// interpolated with the shape functions of the element that holds it.
    pub fn point(&self, q: &[f64], s_m: f64) -> [f64; 2] {
        let (k, xi) = self.locate(s_m);
        let s = shape(xi, self.kernel.length_m);
        super::element::interpolate(&s, Self::element_vector(q, k))
    }

    /// Element index and local coordinate ξ ∈ [0, 1] of arc length `s_m`.
    pub fn locate(&self, s_m: f64) -> (usize, f64) {
        let n = self.params.elements;
        let u = (s_m / self.kernel.length_m).clamp(0.0, n as f64);
        let k = (u.floor() as usize).min(n - 1);
        (k, u - k as f64)
    }

    /// The straight, unstretched tether from `origin` along unit `direction`,
    /// at rest: r_i = origin + i l_e d, r'_i = d.
    pub fn straight_configuration(&self, origin: [f64; 2], direction: [f64; 2]) -> Vec<f64> {
        straight_configuration(
            self.params.elements,
            self.kernel.length_m,
            origin,
            direction,
        )
    }
}

/// The straight, unstretched tether of `elements` elements of length `le`
/// from `origin` along unit `direction`: r_i = origin + i l_e d, r'_i = d.
pub fn straight_configuration(
    elements: usize,
    le: f64,
    origin: [f64; 2],
    direction: [f64; 2],
) -> Vec<f64> {
    let mut q = vec![0.0; NODE_DOFS * (elements + 1)];
    for (i, node) in q.chunks_mut(NODE_DOFS).enumerate() {
        let s = i as f64 * le;
        node[0] = origin[0] + s * direction[0];
        node[1] = origin[1] + s * direction[1];
        node[2] = direction[0];
        node[3] = direction[1];
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_force_is_the_element_by_element_sum_at_every_count() {
        // Counts below, at and past the wide block, with narrow and padded
        // tails: each element's force in its place, nothing from a repeat.
        for elements in [1, 3, 4, 5, 8, 9, 13, 20] {
            let t = Tether::new(TetherParams {
                elements,
                damping_pa_s: 1500.0,
                drag_coefficient: 0.8,
                ..Default::default()
            })
            .unwrap();
            let wobble = |i: usize, scale: f64| scale * ((i * 7 % 11) as f64 / 11.0 - 0.5);
            let q: Vec<f64> = t
                .straight_configuration([0.0, 0.0], [0.6, -0.8])
                .iter()
                .enumerate()
                .map(|(i, x)| x + wobble(i, 0.01))
                .collect();
            let qd: Vec<f64> = (0..q.len()).map(|i| wobble(i + 3, 1.0)).collect();
            let mut f = vec![f64::NAN; q.len()];
            t.generalized_force(&q, &qd, &mut f);
            let mut expected = t.gravity().to_vec();
            for k in 0..elements {
                let (e, ed) = (
                    Tether::element_vector(&q, k),
                    Tether::element_vector(&qd, k),
                );
                let mut fe = [0.0; 8];
                t.kernel().add_internal_force(e, ed, &mut fe);
                let mut drag = [0.0; 8];
                t.kernel().add_drag(e, ed, &mut drag);
                for i in 0..8 {
                    expected[NODE_DOFS * k + i] += -fe[i] + drag[i];
                }
            }
            for (i, (got, want)) in f.iter().zip(&expected).enumerate() {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{elements} elements, coordinate {i}"
                );
            }
        }
    }

    #[test]
    fn straight_unstretched_tether_has_no_internal_force() {
        let t = Tether::new(TetherParams {
            elements: 5,
            gravity_m_s2: 0.0,
            damping_pa_s: 1000.0,
            ..Default::default()
        })
        .unwrap();
        let q = t.straight_configuration([0.1, 0.2], [0.6, -0.8]);
        let mut f = vec![0.0; t.dofs()];
        t.generalized_force(&q, &vec![0.0; t.dofs()], &mut f);
        assert!(f.iter().all(|v| v.abs() < 1e-12), "{f:?}");
        assert!(t.strain_energy(&q).abs() < 1e-20);
    }

    #[test]
    fn rigid_translation_and_rotation_rates_cause_no_damping_force() {
        // Kelvin–Voigt damping acts on strain rates only: a rigid motion,
        // even a spinning one, must not be damped.
        let t = Tether::new(TetherParams {
            elements: 4,
            gravity_m_s2: 0.0,
            damping_pa_s: 5000.0,
            ..Default::default()
        })
        .unwrap();
        let q = t.straight_configuration([0.0, 0.0], [0.6, -0.8]);
        let omega = 2.0;
        let mut qd = vec![0.0; t.dofs()];
        for i in 0..=t.elements() {
            let (x, y, xs, ys) = (q[4 * i], q[4 * i + 1], q[4 * i + 2], q[4 * i + 3]);
            qd[4 * i] = 0.3 - omega * y;
            qd[4 * i + 1] = -0.1 + omega * x;
            qd[4 * i + 2] = -omega * ys;
            qd[4 * i + 3] = omega * xs;
        }
        let mut f = vec![0.0; t.dofs()];
        t.generalized_force(&q, &qd, &mut f);
        assert!(f.iter().all(|v| v.abs() < 1e-9), "{f:?}");
    }

    #[test]
    fn markers_interpolate_nodes_and_straight_lines() {
        let t = Tether::new(TetherParams {
            elements: 3,
            ..Default::default()
        })
        .unwrap();
        let d = [0.6, -0.8];
        let q = t.straight_configuration([1.0, 2.0], d);
        for s in [0.0, 0.05, 0.2, 0.33, 0.6] {
            let r = t.point(&q, s);
            assert!((r[0] - (1.0 + s * d[0])).abs() < 1e-15);
            assert!((r[1] - (2.0 + s * d[1])).abs() < 1e-15);
        }
    }
}
