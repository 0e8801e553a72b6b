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
//! the modified system is exactly M_dd q̈_d = f_d − M_dr q̈_r (SPEC §3): the
//! identity rows give q̈_r, and L_1 carries M_dr into the dynamic rows.

use nalgebra::Matrix4;

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

/// The mass matrix's blocks of nodes 0..=n as the semi-implicit shader
/// reads them: the diagonal block and the block coupling to the next node
/// (zero at the tip), column-major, as assembled (pin rows unmodified). That
/// scheme adds h/2 C_D(q) and factors the sum itself, every step.
pub fn node_blocks(mass: &BandedMatrix, elements: usize) -> Vec<[[f64; 16]; 2]> {
    let nodes = elements + 1;
    (0..nodes)
        .map(|k| {
            let next = if k + 1 < nodes {
                block(mass, k, k + 1)
            } else {
                Matrix4::zeros()
            };
            [column_major(&block(mass, k, k)), column_major(&next)]
        })
        .collect()
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
}
