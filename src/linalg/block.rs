//! The block-tridiagonal LU of the tether's matrices, real or complex.

use nalgebra::{Complex, ComplexField, Matrix4, Scalar, Vector4};

use super::{BandedMatrix, FactorError};

/// A complex number of f64 parts (the Radau solver's complex system).
pub type Complex64 = Complex<f64>;

/// The LU of a matrix whose nonzeros couple only neighbouring blocks of four
/// rows (the tether's nodes: an element couples its two nodes' coordinates),
/// with the first `prescribed` rows and columns left out (the pinned
/// coordinates), as block Thomas factors: per block K the inverted pivot
/// block G_K = (A_KK − A_K,K−1 E_K−1)⁻¹ and E_K = G_K A_K,K+1.
///
/// The same matrix as a [`BandedLu`](super::BandedLu) of the trailing block, solved faster:
/// a banded solve is a dependency chain through every row, this one through
/// every block, each step a 4×4 product whose rows are independent.
///
/// Real (`f64`, the default) or complex (`Complex64`: the Radau IIA
/// solver's second system, M + μh C + (μh)² K with μ complex).
#[derive(Debug, Clone)]
pub struct BlockTridiagonalLu<T: Scalar = f64> {
    prescribed: usize,
    /// A_K,K−1 (zero for K = 0).
    lower: Vec<Matrix4<T>>,
    inverse_pivots: Vec<Matrix4<T>>,
    /// E_K (zero for the last block).
    upper_factors: Vec<Matrix4<T>>,
}

impl BlockTridiagonalLu<f64> {
    /// Factors `matrix` without its first `prescribed` (< 4) rows and
    /// columns. The matrix must have a multiple of 4 rows and half-bandwidth
    /// 7 (or less) aligned with the blocks; a pivot block that does not
    /// invert is reported as [`FactorError::TinyPivot`].
    pub fn factor(matrix: &BandedMatrix, prescribed: usize) -> Result<Self, FactorError> {
        check_block_tridiagonal(matrix, prescribed);
        let scale = (prescribed..matrix.dim)
            .map(|i| matrix.get(i, i).abs())
            .fold(0.0, f64::max);
        Self::from_blocks(matrix.dim / 4, prescribed, scale, |i, j| {
            matrix.data[matrix.index(i, j)]
        })
    }
}

impl BlockTridiagonalLu<Complex64> {
    /// Factors Σ wₖ Aₖ (complex weights wₖ, real matrices Aₖ of one shape,
    /// as [`BlockTridiagonalLu::factor`] takes them): M + μh C + (μh)² K
    /// without forming it.
    pub fn factor_combination(
        terms: &[(Complex64, &BandedMatrix)],
        prescribed: usize,
    ) -> Result<Self, FactorError> {
        let first = terms.first().expect("at least one term").1;
        for (_, matrix) in terms {
            assert!(matrix.dim == first.dim && matrix.half_bandwidth == first.half_bandwidth);
            check_block_tridiagonal(matrix, prescribed);
        }
        let entry = |i: usize, j: usize| {
            let at = first.index(i, j);
            terms.iter().map(|(w, m)| w * m.data[at]).sum::<Complex64>()
        };
        let scale = (prescribed..first.dim)
            .map(|i| entry(i, i).norm())
            .fold(0.0, f64::max);
        Self::from_blocks(first.dim / 4, prescribed, scale, entry)
    }
}

/// The block structure [`BlockTridiagonalLu`] needs. A caller's bug, not
/// bad input, and the semi-implicit step factors every step: the band's
/// zeros are checked in debug builds (and so in the tests) only.
fn check_block_tridiagonal(matrix: &BandedMatrix, prescribed: usize) {
    assert!(matrix.dim.is_multiple_of(4) && matrix.half_bandwidth <= 7 && prescribed < 4);
    if !cfg!(debug_assertions) {
        return;
    }
    for k in 0..(matrix.dim / 4).saturating_sub(2) {
        for i in 4 * k + 1..4 * k + 4 {
            for j in 4 * k + 8..=(i + matrix.half_bandwidth).min(matrix.dim - 1) {
                assert_eq!(matrix.get(i, j), 0.0, "({i}, {j}) couples blocks two apart");
                assert_eq!(matrix.get(j, i), 0.0, "({j}, {i}) couples blocks two apart");
            }
        }
    }
}

/// A block's entries: the products the factorization and the solve take,
/// nalgebra's for f64 and written out for complex numbers, where nalgebra's
/// generic product goes through `axcpy` entry by entry: written out, the
/// complex solve at n = 50 takes 2.9–3.0 µs instead of 5.7–6.3 µs
/// (`cargo bench --bench reference_solver -- kernels_n50/block`, the same
/// hour), and the real one is unchanged.
pub trait BlockEntry: ComplexField<RealField = f64> + Copy {
    fn product(a: &Matrix4<Self>, b: &Matrix4<Self>) -> Matrix4<Self>;
    fn times(a: &Matrix4<Self>, x: &Vector4<Self>) -> Vector4<Self>;
}

impl BlockEntry for f64 {
    #[inline(always)]
    fn product(a: &Matrix4<f64>, b: &Matrix4<f64>) -> Matrix4<f64> {
        *a * *b
    }

    #[inline(always)]
    fn times(a: &Matrix4<f64>, x: &Vector4<f64>) -> Vector4<f64> {
        *a * *x
    }
}

impl BlockEntry for Complex64 {
    #[inline(always)]
    fn product(a: &Matrix4<Complex64>, b: &Matrix4<Complex64>) -> Matrix4<Complex64> {
        Matrix4::from_fn(|i, j| {
            let (mut re, mut im) = (0.0, 0.0);
            for k in 0..4 {
                let (x, y) = (a[(i, k)], b[(k, j)]);
                re += x.re * y.re - x.im * y.im;
                im += x.re * y.im + x.im * y.re;
            }
            Complex64::new(re, im)
        })
    }

    #[inline(always)]
    fn times(a: &Matrix4<Complex64>, x: &Vector4<Complex64>) -> Vector4<Complex64> {
        Vector4::from_fn(|i, _| {
            let (mut re, mut im) = (0.0, 0.0);
            for k in 0..4 {
                let (m, v) = (a[(i, k)], x[k]);
                re += m.re * v.re - m.im * v.im;
                im += m.re * v.im + m.im * v.re;
            }
            Complex64::new(re, im)
        })
    }
}

impl<T: BlockEntry> BlockTridiagonalLu<T> {
    /// The factors of the matrix whose entry (i, j) is `entry(i, j)`
    /// (asked only within the blocks' band), `scale` its largest diagonal
    /// entry's size, against which a tiny pivot is refused.
    fn from_blocks(
        blocks: usize,
        prescribed: usize,
        scale: f64,
        entry: impl Fn(usize, usize) -> T,
    ) -> Result<Self, FactorError> {
        let block = |k: usize, l: usize| {
            Matrix4::from_fn(|i, j| {
                let (row, col) = (4 * k + i, 4 * l + j);
                if row < prescribed || col < prescribed {
                    // Identity rows and columns in place of the prescribed
                    // coordinates: they solve to zero and couple to nothing.
                    if row == col { T::one() } else { T::zero() }
                } else {
                    // Neighbouring blocks lie within the band.
                    entry(row, col)
                }
            })
        };
        let mut lower = Vec::with_capacity(blocks);
        let mut inverse_pivots = Vec::with_capacity(blocks);
        let mut upper_factors = Vec::with_capacity(blocks);
        for k in 0..blocks {
            let (l, mut pivot) = if k == 0 {
                (Matrix4::zeros(), block(0, 0))
            } else {
                let l = block(k, k - 1);
                (l, block(k, k) - T::product(&l, &upper_factors[k - 1]))
            };
            // This block's pivots without pivoting are the banded LU's for
            // its rows (numbered as in the trailing matrix), and a tiny one
            // is refused as there. The prescribed rows' are 1.
            let pivots = unpivoted_pivots(pivot).map(|p| p.modulus());
            let tiny = |i: &usize| pivots[*i].is_nan() || pivots[*i] <= 1e-14 * scale;
            let refused = |i: usize| FactorError::TinyPivot {
                row: 4 * k + i - prescribed,
                pivot: pivots[i],
                scale,
            };
            let rows = (4 * k).max(prescribed) - 4 * k..4;
            if let Some(i) = rows.clone().find(tiny) {
                return Err(refused(i));
            }
            // nalgebra inverts a 4×4 by cofactors: faster than through an
            // LU, and as accurate on the tether's blocks (a test in
            // src/solver/mod.rs compares both solves at n = 128).
            pivot = match pivot.try_inverse() {
                Some(inverse) => inverse,
                None => {
                    return Err(refused(
                        rows.min_by(|&a, &b| pivots[a].total_cmp(&pivots[b]))
                            .expect("a row"),
                    ));
                }
            };
            let e = if k + 1 < blocks {
                T::product(&pivot, &block(k, k + 1))
            } else {
                Matrix4::zeros()
            };
            lower.push(l);
            inverse_pivots.push(pivot);
            upper_factors.push(e);
        }
        Ok(Self {
            prescribed,
            lower,
            inverse_pivots,
            upper_factors,
        })
    }

    /// Solves A x = b in place for the non-prescribed rows (b becomes x).
    pub fn solve_in_place(&self, b: &mut [T]) {
        let p = self.prescribed;
        let blocks = self.inverse_pivots.len();
        assert_eq!(b.len() + p, 4 * blocks);
        // Block k's entries in b: rows 4k − p .. 4k + 4 − p, the first block
        // padded with zeros for the prescribed rows. Those stay zero through
        // both sweeps (their rows and columns are the identity's), so the
        // forward sweep's result can overwrite b in place.
        let load = |b: &[T], k: usize| {
            Vector4::from_fn(|i, _| (4 * k + i).checked_sub(p).map_or(T::zero(), |r| b[r]))
        };
        let store = |b: &mut [T], k: usize, x: &Vector4<T>| {
            for (i, value) in x.iter().enumerate() {
                if let Some(r) = (4 * k + i).checked_sub(p) {
                    b[r] = *value;
                }
            }
        };
        let mut previous = Vector4::zeros();
        for k in 0..blocks {
            previous = T::times(
                &self.inverse_pivots[k],
                &(load(b, k) - T::times(&self.lower[k], &previous)),
            );
            store(b, k, &previous);
        }
        let mut next = Vector4::zeros();
        for k in (0..blocks).rev() {
            next = load(b, k) - T::times(&self.upper_factors[k], &next);
            store(b, k, &next);
        }
    }
}

/// The diagonal of U in the LU of `m` without row exchanges.
fn unpivoted_pivots<T: ComplexField + Copy>(mut m: Matrix4<T>) -> [T; 4] {
    for k in 0..4 {
        for i in k + 1..4 {
            let factor = m[(i, k)] / m[(k, k)];
            for j in k + 1..4 {
                let above = m[(k, j)];
                m[(i, j)] -= factor * above;
            }
        }
    }
    [m[(0, 0)], m[(1, 1)], m[(2, 2)], m[(3, 3)]]
}

#[cfg(test)]
mod tests {
    use super::super::tests::test_entry;
    use super::*;
    use nalgebra::DMatrix;

    /// Diagonally dominant, coupling only neighbouring blocks of four rows.
    fn block_tridiagonal_matrix(blocks: usize) -> BandedMatrix {
        let n = 4 * blocks;
        let mut m = BandedMatrix::zeros(n, 7);
        for i in 0..n {
            for j in (i / 4).saturating_sub(1) * 4..((i / 4 + 2) * 4).min(n) {
                m.set(i, j, test_entry(i, j, 6.0));
            }
        }
        m
    }

    #[test]
    fn block_tridiagonal_lu_matches_the_banded_lu_of_the_trailing_block() {
        for (blocks, prescribed) in [(1, 0), (2, 2), (7, 2), (7, 0), (7, 3)] {
            let m = block_tridiagonal_matrix(blocks);
            let dim = 4 * blocks - prescribed;
            let b: Vec<f64> = (0..dim).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut blocked = b.clone();
            BlockTridiagonalLu::factor(&m, prescribed)
                .unwrap()
                .solve_in_place(&mut blocked);
            let trailing = m.trailing(prescribed);
            let dense = trailing
                .to_dense()
                .lu()
                .solve(&nalgebra::DVector::from_vec(b.clone()))
                .unwrap();
            let mut banded = b.clone();
            trailing.factor().unwrap().solve_in_place(&mut banded);
            for i in 0..dim {
                assert!(
                    (blocked[i] - dense[i]).abs() < 1e-13,
                    "{blocks} blocks, {prescribed} prescribed, row {i}: {} vs {}",
                    blocked[i],
                    dense[i]
                );
                assert!((blocked[i] - banded[i]).abs() < 1e-13);
            }
        }
    }

    /// The written-out complex products are nalgebra's to the bit (the same
    /// sums in the same order), so Radau's tracks did not move when they
    /// replaced them; a reordered sum would fail here.
    #[test]
    fn written_out_complex_products_are_nalgebras_bits() {
        let entry = |i: usize, j: usize, seed: f64| {
            let x = (i * 4 + j) as f64 + seed;
            Complex64::new((1.3 * x).sin() * 1e3, (0.7 * x).cos() / 3.0)
        };
        let a = Matrix4::from_fn(|i, j| entry(i, j, 0.1));
        let b = Matrix4::from_fn(|i, j| entry(i, j, 7.3));
        let v = Vector4::from_fn(|i, _| entry(i, 0, 2.9));
        let product = <Complex64 as BlockEntry>::product(&a, &b);
        let times = <Complex64 as BlockEntry>::times(&a, &v);
        let bits = |z: Complex64| (z.re.to_bits(), z.im.to_bits());
        assert!(
            product
                .iter()
                .zip((a * b).iter())
                .all(|(x, y)| bits(*x) == bits(*y))
        );
        assert!(
            times
                .iter()
                .zip((a * v).iter())
                .all(|(x, y)| bits(*x) == bits(*y))
        );
    }

    /// The complex LU of w₀ A + w₁ B (the Radau solver's M + μh C +
    /// (μh)² K has three such terms) against nalgebra's dense complex LU.
    #[test]
    fn complex_block_lu_of_a_combination_matches_the_dense_lu() {
        let a = block_tridiagonal_matrix(6);
        let mut b = block_tridiagonal_matrix(6);
        b.scale_add(0.3, &a, 0.0);
        let weights = [Complex64::new(1.0, 0.0), Complex64::new(0.4, -0.7)];
        for prescribed in [0, 2] {
            let lu = BlockTridiagonalLu::factor_combination(
                &[(weights[0], &a), (weights[1], &b)],
                prescribed,
            )
            .unwrap();
            let dim = a.dim - prescribed;
            let rhs: Vec<Complex64> = (0..dim)
                .map(|i| Complex64::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
                .collect();
            let mut x = rhs.clone();
            lu.solve_in_place(&mut x);
            let (ta, tb) = (
                a.trailing(prescribed).to_dense(),
                b.trailing(prescribed).to_dense(),
            );
            let dense = DMatrix::from_fn(dim, dim, |i, j| {
                weights[0] * ta[(i, j)] + weights[1] * tb[(i, j)]
            });
            let expected = dense.lu().solve(&nalgebra::DVector::from_vec(rhs)).unwrap();
            for i in 0..dim {
                assert!(
                    (x[i] - expected[i]).norm() < 1e-13,
                    "row {i}: {} vs {}",
                    x[i],
                    expected[i]
                );
            }
        }
    }

    #[test]
    fn block_tridiagonal_lu_reports_a_singular_block() {
        let mut m = block_tridiagonal_matrix(3);
        // Row 6 zero: the second block's pivot block is singular; row 4 of
        // the trailing matrix, as the banded LU numbers it.
        for j in 0..12 {
            if m.in_band(6, j) {
                m.set(6, j, 0.0);
            }
        }
        assert!(matches!(
            BlockTridiagonalLu::factor(&m, 2),
            Err(FactorError::TinyPivot { row: 4, .. })
        ));
        assert!(matches!(
            m.trailing(2).factor(),
            Err(FactorError::TinyPivot { row: 4, .. })
        ));
    }

    #[test]
    #[should_panic(expected = "couples blocks two apart")]
    fn block_tridiagonal_lu_refuses_a_wider_coupling() {
        let mut m = block_tridiagonal_matrix(3);
        m.set(3, 8, 0.1);
        let _ = BlockTridiagonalLu::factor(&m, 0);
    }
}
