//! The mass matrix as the shaders solve it: block tridiagonal with one 4×4
//! block per node (half-bandwidth 7 in node-major order couples a node only
//! with its neighbours), node 0's prescribed rows replaced by identity rows
//! whose right-hand side is the pin's acceleration. Its block LU (block
//! Thomas algorithm) is computed here once per mesh in f64:
//!
//! ```text
//! D_0 = A_0,  D_k = A_k − L_k D_{k−1}⁻¹ U_{k−1}
//! forward:  y_k = G_k (f_k − B_k y_{k−1}),   G_k = D_k⁻¹, B_k = L_k
//! back:     a_k = y_k − E_k a_{k+1},          E_k = G_k U_k
//! ```
//!
//! where A, L, U are the diagonal, sub- and super-diagonal blocks. Solving
//! the modified system is exactly M_dd q̈_d = f_d − M_dr q̈_r (docs/model.md §3): the
//! identity rows give q̈_r, and L_1 carries M_dr into the dynamic rows.
//!
//! The explicit shader reads G and E per node; B_k = L_k is the same for
//! every node, the transposed coupling of [`MeshMass`], which both schemes
//! read once per dispatch.

use nalgebra::Matrix4;

use super::abi::MESH_MASS_VEC4;
use crate::linalg::{BandedMatrix, FactorError};
use crate::model::tether::{NODE_DOFS, PRESCRIBED_DOFS};

/// G, B, E of one node, column-major 4×4 each (WGSL's mat4x4 order).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFactors {
    pub inverse_pivot: [f64; 16],
    pub coupling_previous: [f64; 16],
    pub coupling_next: [f64; 16],
}

fn block(mass: &BandedMatrix, row_node: usize, col_node: usize) -> Matrix4<f64> {
    Matrix4::from_fn(|i, j| mass.get(NODE_DOFS * row_node + i, NODE_DOFS * col_node + j))
}

fn column_major(m: &Matrix4<f64>) -> [f64; 16] {
    let mut out = [0.0; 16];
    out.copy_from_slice(m.as_slice());
    out
}

/// Factors for nodes 0..=n of a mass matrix of n elements.
pub fn factor(mass: &BandedMatrix, elements: usize) -> Result<Vec<NodeFactors>, FactorError> {
    let nodes = elements + 1;
    let mut out = Vec::with_capacity(nodes);
    let mut previous_g_u = Matrix4::zeros();
    for k in 0..nodes {
        let mut a = block(mass, k, k);
        let mut u = if k + 1 < nodes {
            block(mass, k, k + 1)
        } else {
            Matrix4::zeros()
        };
        let l = if k > 0 {
            block(mass, k, k - 1)
        } else {
            Matrix4::zeros()
        };
        if k == 0 {
            for r in 0..PRESCRIBED_DOFS {
                a.row_mut(r).fill(0.0);
                a[(r, r)] = 1.0;
                u.row_mut(r).fill(0.0);
            }
        }
        let d = a - l * previous_g_u;
        let scale = d.diagonal().amax();
        let g = d.try_inverse().ok_or(FactorError::TinyPivot {
            row: NODE_DOFS * k,
            pivot: d.determinant(),
            scale,
        })?;
        let e = g * u;
        out.push(NodeFactors {
            inverse_pivot: column_major(&g),
            coupling_previous: column_major(&l),
            coupling_next: column_major(&e),
        });
        previous_g_u = e;
    }
    Ok(out)
}

/// The mass matrix of a uniform mesh as the semi-implicit shader reads it
/// (step.wgsl's `MeshMass`), in four vec4 for the whole mesh instead of two
/// 4×4 blocks per node: loading those every node and step was the largest
/// cost of that scheme on lavapipe, where a storage access whose address
/// differs per invocation costs one scalar load per lane.
///
/// Two facts make four enough. Every block is a 2×2 matrix over (position,
/// slope) times the 2×2 identity over (x, y): the element mass
/// ρ_t a ∫ SᵀS + ρ_t I ∫ S_xᵀS_x, with S = [s1 I, s2 I, s3 I, s4 I], couples
/// x only with x and y only with y, with the same weights, and the tip mass
/// adds the same amount to x and y. And the elements are equal (docs/model.md §2), so
/// every interior node has the same diagonal block and every node the same
/// coupling to the next; only the two end nodes differ (one element each, and
/// the tip mass at node n). Each 2×2 matrix is stored row-major (k00, k01,
/// k10, k11); its 4×4 block has k_ij at (2i + c, 2j + c), c = 0, 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeshMass {
    /// Node 0's diagonal block, as assembled (pin rows unmodified).
    pub first: [f64; 4],
    /// The diagonal block of nodes 1..n−1 (for n = 1, which has none, a
    /// copy of `first`).
    pub interior: [f64; 4],
    /// Node n's diagonal block, tip mass included.
    pub last: [f64; 4],
    /// The block coupling node k (rows) to node k + 1 (columns), any k < n.
    pub coupling: [f64; 4],
}

/// The mass matrix is not of the shape [`MeshMass`] describes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the mass matrix's block ({row_node}, {col_node}) is not the uniform-mesh block the semi-implicit GPU scheme assumes (entry ({row}, {col}): {got:e}, expected {expected:e})"
)]
pub struct MeshMassError {
    pub row_node: usize,
    pub col_node: usize,
    pub row: usize,
    pub col: usize,
    pub got: f64,
    pub expected: f64,
}

impl MeshMass {
    /// Reads the blocks of `mass` (n = `elements`) and checks that every
    /// entry of every block is what the four 2×2 matrices say, to 1e-13 of
    /// the block's largest entry (the sums of equal element matrices may
    /// round differently in the last bit).
    pub fn from_mass(mass: &BandedMatrix, elements: usize) -> Result<Self, MeshMassError> {
        let coefficients = |m: &Matrix4<f64>| [m[(0, 0)], m[(0, 2)], m[(2, 0)], m[(2, 2)]];
        let n = elements;
        let first = coefficients(&block(mass, 0, 0));
        let out = Self {
            first,
            interior: if n > 1 {
                coefficients(&block(mass, 1, 1))
            } else {
                first
            },
            last: coefficients(&block(mass, n, n)),
            coupling: coefficients(&block(mass, 0, 1)),
        };
        for k in 0..=n {
            out.check(&block(mass, k, k), &out.diagonal(k, n), (k, k))?;
            if k < n {
                out.check(&block(mass, k, k + 1), &out.coupling_block(), (k, k + 1))?;
            }
        }
        Ok(out)
    }

    fn check(
        &self,
        got: &Matrix4<f64>,
        expected: &Matrix4<f64>,
        (row_node, col_node): (usize, usize),
    ) -> Result<(), MeshMassError> {
        let tolerance = 1e-13 * expected.amax();
        for row in 0..NODE_DOFS {
            for col in 0..NODE_DOFS {
                let (g, e) = (got[(row, col)], expected[(row, col)]);
                if (g - e).abs() > tolerance {
                    return Err(MeshMassError {
                        row_node,
                        col_node,
                        row,
                        col,
                        got: g,
                        expected: e,
                    });
                }
            }
        }
        Ok(())
    }

    /// The 4×4 block of a row-major 2×2 `k` (k ⊗ I₂ in (x, y, x', y') order).
    pub fn block(k: &[f64; 4]) -> Matrix4<f64> {
        Matrix4::from_fn(|r, c| {
            if r % 2 == c % 2 {
                k[2 * (r / 2) + c / 2]
            } else {
                0.0
            }
        })
    }

    /// The diagonal block of node `node` of `elements`.
    pub fn diagonal(&self, node: usize, elements: usize) -> Matrix4<f64> {
        Self::block(if node == 0 {
            &self.first
        } else if node == elements {
            &self.last
        } else {
            &self.interior
        })
    }

    /// The block coupling a node to the next.
    pub fn coupling_block(&self) -> Matrix4<f64> {
        Self::block(&self.coupling)
    }

    /// The four vec4 of the mesh buffer, in step.wgsl's `MeshMass` order.
    pub fn vec4s(&self) -> [[f64; 4]; MESH_MASS_VEC4] {
        [self.first, self.interior, self.last, self.coupling]
    }
}

/// Solves the modified system with the factors, in f64: the reference for the
/// shader's forward and back substitution. `rhs` holds f per node with the
/// pin's acceleration in node 0's first two entries.
pub fn solve(factors: &[NodeFactors], rhs: &[[f64; 4]]) -> Vec<[f64; 4]> {
    let m = |a: &[f64; 16]| Matrix4::from_column_slice(a);
    let v = |x: &[f64; 4]| nalgebra::Vector4::from_column_slice(x);
    let mut y = Vec::with_capacity(rhs.len());
    let mut prev = nalgebra::Vector4::zeros();
    for (f, r) in factors.iter().zip(rhs) {
        let yk = m(&f.inverse_pivot) * (v(r) - m(&f.coupling_previous) * prev);
        y.push(yk);
        prev = yk;
    }
    let mut a = vec![[0.0; 4]; rhs.len()];
    let mut next = nalgebra::Vector4::zeros();
    for k in (0..rhs.len()).rev() {
        let ak = y[k] - m(&factors[k].coupling_next) * next;
        a[k] = [ak[0], ak[1], ak[2], ak[3]];
        next = ak;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Tether, TetherParams};

    #[test]
    fn block_solve_equals_the_partitioned_banded_solve() {
        for (n, tip) in [(1, 0.0), (3, 0.021), (12, 0.0)] {
            let tether = Tether::new(TetherParams {
                elements: n,
                tip_mass_kg: tip,
                ..Default::default()
            })
            .unwrap();
            let mass = tether.mass();
            let factors = factor(mass, n).unwrap();
            let dofs = tether.dofs();
            // A right-hand side with every entry different, and a pin acceleration.
            let f: Vec<f64> = (0..dofs).map(|i| ((i * 7 + 3) % 11) as f64 - 5.0).collect();
            let acc_r = [0.7, -1.3];
            let mut rhs: Vec<[f64; 4]> = f
                .chunks(NODE_DOFS)
                .map(|c| [c[0], c[1], c[2], c[3]])
                .collect();
            rhs[0][0] = acc_r[0];
            rhs[0][1] = acc_r[1];
            let a = solve(&factors, &rhs);
            // Reference: M_dd a_d = f_d − M_dr a_r with the banded LU.
            let mut ad: Vec<f64> = f[PRESCRIBED_DOFS..].to_vec();
            for (i, r) in ad.iter_mut().enumerate() {
                let row = i + PRESCRIBED_DOFS;
                *r -= mass.get(row, 0) * acc_r[0] + mass.get(row, 1) * acc_r[1];
            }
            mass.trailing(PRESCRIBED_DOFS)
                .factor()
                .unwrap()
                .solve_in_place(&mut ad);
            let flat: Vec<f64> = a.iter().flatten().copied().collect();
            assert_eq!(&flat[..2], &acc_r);
            let scale = ad.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for (got, want) in flat[PRESCRIBED_DOFS..].iter().zip(&ad) {
                assert!((got - want).abs() < 1e-10 * scale, "n={n}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn mesh_mass_rebuilds_every_block_of_the_assembled_matrix() {
        for (n, tip, rotary) in [
            (1, 0.0, true),
            (2, 0.021, true),
            (7, 0.021, false),
            (40, 0.0, true),
        ] {
            let tether = Tether::new(TetherParams {
                elements: n,
                tip_mass_kg: tip,
                rotary_inertia: rotary,
                ..Default::default()
            })
            .unwrap();
            let mass = tether.mass();
            let compact = MeshMass::from_mass(mass, n).unwrap();
            // Every entry of the band, against the blocks rebuilt from the
            // four 2×2 matrices (zero outside neighbouring nodes).
            let dofs = tether.dofs();
            for row in 0..dofs {
                for col in row.saturating_sub(7)..(row + 8).min(dofs) {
                    let (rn, cn) = (row / NODE_DOFS, col / NODE_DOFS);
                    let rebuilt = if rn == cn {
                        compact.diagonal(rn, n)
                    } else if cn == rn + 1 {
                        compact.coupling_block()
                    } else if rn == cn + 1 {
                        compact.coupling_block().transpose()
                    } else {
                        Matrix4::zeros()
                    };
                    let want = mass.get(row, col);
                    let got = rebuilt[(row % NODE_DOFS, col % NODE_DOFS)];
                    assert!(
                        (got - want).abs() <= 1e-13 * want.abs().max(1e-12),
                        "n={n} ({row}, {col}): {got:e} vs {want:e}"
                    );
                }
            }
            // The tip mass sits on node n's translational diagonal only.
            let tip_share = compact.last[0] - compact.first[0];
            assert!(
                (tip_share - tip).abs() < 1e-12,
                "n={n}: {tip_share} vs {tip}"
            );
        }
    }

    #[test]
    fn a_non_uniform_mass_matrix_is_refused() {
        let tether = Tether::new(TetherParams {
            elements: 4,
            ..Default::default()
        })
        .unwrap();
        let mut mass = tether.mass().clone();
        // Node 2's y position entry, as if its element were longer.
        let entry = mass.get(9, 9);
        mass.set(9, 9, entry * 1.01);
        let err = MeshMass::from_mass(&mass, 4).unwrap_err();
        assert_eq!((err.row_node, err.col_node, err.row, err.col), (2, 2, 1, 1));
    }
}
