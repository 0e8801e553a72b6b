//! Banded matrices and their LU factorisations.
//!
//! Every matrix of the tether (mass, tangent stiffness, damping, Newton
//! iteration matrix) couples only the eight coordinates of one element, so in
//! node-major ordering it is banded with half-bandwidth 7, and block
//! tridiagonal in the 4×4 blocks of the nodes. A banded LU costs O(N·w²)
//! instead of O(N³); the solvers' per-step solves use the block LU, whose
//! solve is a chain through the nodes rather than through every row.
//! nalgebra has no banded storage, hence this small module; both LUs are
//! tested against nalgebra's dense one.

use nalgebra::{Complex, ComplexField, DMatrix, Matrix4, Scalar, Vector4};

/// A complex number of f64 parts (the Radau solver's complex system).
pub type Complex64 = Complex<f64>;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum FactorError {
    #[error(
        "zero or tiny pivot {pivot:e} in row {row} of a banded LU, against a largest diagonal entry of {scale:e} (matrix singular or not diagonally dominant enough)"
    )]
    TinyPivot { row: usize, pivot: f64, scale: f64 },
}

/// A banded matrix that acts alike and separately on the two components of
/// interleaved coordinates (x₀, y₀, x₁, y₁, …): A = A_s ⊗ I₂, A_s banded.
/// The tether's mass matrix is one (the x and y coordinates of its nodes
/// and slopes never couple, and couple alike). Its product skips the
/// band's structural zeros: half the multiplications of
/// [`BandedMatrix::mul_vec`] and chains half as long, to the same sums in
/// the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct InterleavedBandedMatrix {
    scalar: BandedMatrix,
}

impl InterleavedBandedMatrix {
    /// A_s from A, or None where A is not A_s ⊗ I₂ exactly (an odd
    /// dimension, an x–y coupling, or x and y rows that differ).
    pub fn from_banded(a: &BandedMatrix) -> Option<Self> {
        if !a.dim.is_multiple_of(2) {
            return None;
        }
        let mut scalar = BandedMatrix::zeros(a.dim / 2, a.half_bandwidth / 2);
        for i in 0..a.dim {
            let lo = i.saturating_sub(a.half_bandwidth);
            for j in lo..(i + a.half_bandwidth + 1).min(a.dim) {
                let (value, s, t) = (a.get(i, j), i / 2, j / 2);
                // x rows (even) come first and fill A_s; y rows must
                // repeat them, and x–y entries be zero.
                let kept = i % 2 == j % 2 && scalar.in_band(s, t);
                if kept && i % 2 == 0 {
                    scalar.set(s, t, value);
                } else if value != if kept { scalar.get(s, t) } else { 0.0 } {
                    return None;
                }
            }
        }
        Some(Self { scalar })
    }

    /// y = A x.
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        let (w, width, dim) = (
            self.scalar.half_bandwidth,
            self.scalar.width(),
            self.scalar.dim,
        );
        assert!(x.len() >= 2 * dim && y.len() >= 2 * dim);
        // The tether's band (w = 3): interior rows of fixed length, unrolled.
        let interior = if w == 3 && dim > 2 * w {
            w..dim - w
        } else {
            0..0
        };
        for s in interior.clone() {
            let row: &[f64; 7] = self.scalar.data[s * width..(s + 1) * width]
                .try_into()
                .expect("a row of 7");
            let window: &[f64; 14] = x[2 * (s - w)..2 * (s + w + 1)]
                .try_into()
                .expect("a window of 7 pairs");
            let mut sum = [-0.0; 2];
            for (t, m) in row.iter().enumerate() {
                sum[0] += m * window[2 * t];
                sum[1] += m * window[2 * t + 1];
            }
            y[2 * s..2 * s + 2].copy_from_slice(&sum);
        }
        for (s, row) in self.scalar.data.chunks_exact(width).enumerate() {
            if interior.contains(&s) {
                continue;
            }
            let (lo, hi) = (s.saturating_sub(w), (s + w).min(dim - 1));
            // -0.0, as f64's Sum starts, so that every sum is BandedMatrix's.
            let mut sum = [-0.0; 2];
            for (m, xs) in row[lo + w - s..=hi + w - s]
                .iter()
                .zip(x[2 * lo..2 * hi + 2].chunks_exact(2))
            {
                sum[0] += m * xs[0];
                sum[1] += m * xs[1];
            }
            y[2 * s..2 * s + 2].copy_from_slice(&sum);
        }
    }
}

/// A square matrix with `half_bandwidth` sub- and super-diagonals, stored row by
/// row: entry (i, j) lives at `i * (2w + 1) + (j + w - i)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BandedMatrix {
    dim: usize,
    half_bandwidth: usize,
    data: Vec<f64>,
}

impl BandedMatrix {
    pub fn zeros(dim: usize, half_bandwidth: usize) -> Self {
        Self {
            dim,
            half_bandwidth,
            data: vec![0.0; dim * (2 * half_bandwidth + 1)],
        }
    }

    pub fn half_bandwidth(&self) -> usize {
        self.half_bandwidth
    }

    fn width(&self) -> usize {
        2 * self.half_bandwidth + 1
    }

    fn in_band(&self, i: usize, j: usize) -> bool {
        i.abs_diff(j) <= self.half_bandwidth
    }

    fn index(&self, i: usize, j: usize) -> usize {
        debug_assert!(i < self.dim && j < self.dim && self.in_band(i, j));
        i * self.width() + j + self.half_bandwidth - i
    }

    pub fn get(&self, i: usize, j: usize) -> f64 {
        if self.in_band(i, j) {
            self.data[self.index(i, j)]
        } else {
            0.0
        }
    }

    /// Adds `value` at (i, j); panics (debug) if (i, j) is outside the band,
    /// which would be a bug in the assembly, not a user error.
    pub fn add(&mut self, i: usize, j: usize, value: f64) {
        let k = self.index(i, j);
        self.data[k] += value;
    }

    pub fn set(&mut self, i: usize, j: usize, value: f64) {
        let k = self.index(i, j);
        self.data[k] = value;
    }

    pub fn fill_zero(&mut self) {
        self.data.fill(0.0);
    }

    /// `self = a·self + b·other` entrywise (both must have the same shape).
    pub fn scale_add(&mut self, a: f64, other: &BandedMatrix, b: f64) {
        assert_eq!(self.dim, other.dim);
        assert_eq!(self.half_bandwidth, other.half_bandwidth);
        for (x, y) in self.data.iter_mut().zip(&other.data) {
            *x = a * *x + b * y;
        }
    }

    /// y = A x
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        let (w, width, dim) = (self.half_bandwidth, self.width(), self.dim);
        assert!(x.len() >= dim && y.len() >= dim);
        let edge_row = |i: usize| {
            let (lo, hi) = (i.saturating_sub(w), (i + w).min(dim - 1));
            let row = &self.data[i * width..];
            (lo..=hi).map(|j| row[j + w - i] * x[j]).sum::<f64>()
        };
        // Rows whose band lies wholly inside the matrix are a dot product
        // of two slices of one length, with no bounds check per entry: the
        // reference solver's n = 40 drop, whose every Newton iteration
        // forms M ä, ran 1.2x faster, to the same bits (each sum keeps its
        // order; four running sums gained 3 % more and changed the steps).
        let interior = if dim > 2 * w { w..dim - w } else { 0..0 };
        for i in (0..dim).filter(|i| !interior.contains(i)) {
            y[i] = edge_row(i);
        }
        for (i, (row, yi)) in self.data[interior.start * width..interior.end * width]
            .chunks_exact(width)
            .zip(&mut y[interior.clone()])
            .enumerate()
        {
            let window = &x[i..i + width];
            *yi = row.iter().zip(window).map(|(a, b)| a * b).sum();
        }
    }

    /// The submatrix of rows and columns `first..dim`; the band is unchanged.
    /// A row's band keeps its layout (entry (i, j) sits at j − i + w in
    /// row i's slice), so this is a copy of the rows with the columns
    /// before `first` cleared.
    pub fn trailing(&self, first: usize) -> BandedMatrix {
        let (w, width) = (self.half_bandwidth, self.width());
        let mut out = BandedMatrix {
            dim: self.dim - first,
            half_bandwidth: w,
            data: self.data[first * width..].to_vec(),
        };
        let dim = out.dim;
        for (i, row) in out.data.chunks_mut(width).enumerate() {
            // Offsets below w − i are columns left of the new first one;
            // offsets past dim − 1 − i + w, columns past the last.
            row[..w.saturating_sub(i)].fill(0.0);
            row[(dim - i + w).min(width)..].fill(0.0);
        }
        out
    }

    pub fn to_dense(&self) -> DMatrix<f64> {
        DMatrix::from_fn(self.dim, self.dim, |i, j| self.get(i, j))
    }

    /// LU factorisation without pivoting, in place of a copy. The matrices
    /// factored here (mass matrix, M + γh·C + βh²·K with small h) are
    /// dominated by the symmetric positive definite mass matrix, for which no
    /// pivoting is needed; a pivot below `1e-14 · max|diag|` is reported rather
    /// than divided by.
    pub fn factor(&self) -> Result<BandedLu, FactorError> {
        let mut lu = self.clone();
        let n = self.dim;
        let w = self.half_bandwidth;
        let scale = (0..n).map(|i| self.get(i, i).abs()).fold(0.0, f64::max);
        for k in 0..n {
            let pivot = lu.get(k, k);
            if pivot.is_nan() || pivot.abs() <= 1e-14 * scale {
                return Err(FactorError::TinyPivot {
                    row: k,
                    pivot,
                    scale,
                });
            }
            let last = (k + w).min(n - 1);
            // Rows as slices of the band (entry (i, j) at j − i + w): the
            // same operations in the same order as through get and set,
            // without their index arithmetic and band checks per entry.
            let width = lu.width();
            let (head, tail) = lu.data.split_at_mut((k + 1) * width);
            let row_k = &head[k * width + w + 1..k * width + w + 1 + (last - k)];
            for i in k + 1..=last {
                let row_i = &mut tail[(i - k - 1) * width..(i - k) * width];
                let factor = row_i[k + w - i] / pivot;
                row_i[k + w - i] = factor;
                for (x, y) in row_i[k + 1 + w - i..=last + w - i].iter_mut().zip(row_k) {
                    *x -= factor * y;
                }
            }
        }
        Ok(BandedLu { lu })
    }
}

/// L (unit lower) and U packed in one band, as `BandedMatrix::factor` leaves them.
#[derive(Debug, Clone)]
pub struct BandedLu {
    lu: BandedMatrix,
}

impl BandedLu {
    /// Solves A x = b in place (b becomes x).
    pub fn solve_in_place(&self, b: &mut [f64]) {
        let n = self.lu.dim;
        let w = self.lu.half_bandwidth;
        let width = self.lu.width();
        let data = &self.lu.data;
        for i in 0..n {
            let lo = i.saturating_sub(w);
            let row = &data[i * width..];
            let mut acc = b[i];
            for (j, bj) in b.iter().enumerate().take(i).skip(lo) {
                acc -= row[j + w - i] * bj;
            }
            b[i] = acc;
        }
        for i in (0..n).rev() {
            let hi = (i + w).min(n - 1);
            let row = &data[i * width..];
            let mut acc = b[i];
            for (j, bj) in b.iter().enumerate().take(hi + 1).skip(i + 1) {
                acc -= row[j + w - i] * bj;
            }
            b[i] = acc / row[w];
        }
    }
}

/// The LU of a matrix whose nonzeros couple only neighbouring blocks of four
/// rows (the tether's nodes: an element couples its two nodes' coordinates),
/// with the first `prescribed` rows and columns left out (the pinned
/// coordinates), as block Thomas factors: per block K the inverted pivot
/// block G_K = (A_KK − A_K,K−1 E_K−1)⁻¹ and E_K = G_K A_K,K+1.
///
/// The same matrix as a [`BandedLu`] of the trailing block, solved faster:
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

impl<T: ComplexField<RealField = f64> + Copy> BlockTridiagonalLu<T> {
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
                (l, block(k, k) - l * upper_factors[k - 1])
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
                pivot * block(k, k + 1)
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
            previous = self.inverse_pivots[k] * (load(b, k) - self.lower[k] * previous);
            store(b, k, &previous);
        }
        let mut next = Vector4::zeros();
        for k in (0..blocks).rev() {
            next = load(b, k) - self.upper_factors[k] * next;
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
    use super::*;

    /// Entry (i, j) of the test matrices: non-symmetric, deterministic, and
    /// with `diagonal` added on the diagonal.
    fn test_entry(i: usize, j: usize, diagonal: f64) -> f64 {
        let v = ((i * 7 + j * 13) % 11) as f64 / 11.0 - 0.4;
        if i == j { diagonal + v } else { v }
    }

    fn test_matrix(n: usize, w: usize) -> BandedMatrix {
        let mut m = BandedMatrix::zeros(n, w);
        for i in 0..n {
            for j in i.saturating_sub(w)..=(i + w).min(n - 1) {
                m.set(i, j, test_entry(i, j, 4.0));
            }
        }
        m
    }

    #[test]
    fn banded_lu_matches_dense_lu() {
        let (n, w) = (23, 7);
        let m = test_matrix(n, w);
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut x = b.clone();
        m.factor().unwrap().solve_in_place(&mut x);
        let dense = m
            .to_dense()
            .lu()
            .solve(&nalgebra::DVector::from_vec(b.clone()))
            .unwrap();
        for i in 0..n {
            assert!(
                (x[i] - dense[i]).abs() < 1e-13,
                "row {i}: {} vs {}",
                x[i],
                dense[i]
            );
        }
        // And the product reproduces b.
        let mut y = vec![0.0; n];
        m.mul_vec(&x, &mut y);
        for i in 0..n {
            assert!((y[i] - b[i]).abs() < 1e-13);
        }
    }

    #[test]
    fn product_is_the_dense_product_at_every_size() {
        // Sizes with no interior row (dim ≤ 2w), one, and many.
        for (n, w) in [(1, 3), (5, 3), (6, 3), (7, 3), (8, 3), (40, 7), (164, 7)] {
            let m = test_matrix(n, w);
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.61).cos()).collect();
            let mut y = vec![f64::NAN; n];
            m.mul_vec(&x, &mut y);
            let dense = m.to_dense() * nalgebra::DVector::from_vec(x);
            for i in 0..n {
                assert!(
                    (y[i] - dense[i]).abs() <= 1e-14 * dense[i].abs().max(1.0),
                    "n = {n}, w = {w}, row {i}: {} vs {}",
                    y[i],
                    dense[i]
                );
            }
        }
    }

    /// A_s ⊗ I₂ as a banded matrix of half-bandwidth 2w + 1, A_s the test
    /// matrix of size n and half-bandwidth w.
    fn interleaved_test_matrix(n: usize, w: usize) -> BandedMatrix {
        let scalar = test_matrix(n, w);
        let mut m = BandedMatrix::zeros(2 * n, 2 * w + 1);
        for i in 0..2 * n {
            for j in i.saturating_sub(2 * w + 1)..=(i + 2 * w + 1).min(2 * n - 1) {
                if i % 2 == j % 2 {
                    m.set(i, j, scalar.get(i / 2, j / 2));
                }
            }
        }
        m
    }

    #[test]
    fn interleaved_product_has_the_banded_products_bits() {
        // The tether's shape (w = 3 → 7) at sizes with no interior row,
        // one, and many.
        for n in [1, 3, 4, 7, 8, 21, 82] {
            let m = interleaved_test_matrix(n, 3);
            let interleaved = InterleavedBandedMatrix::from_banded(&m).expect("A_s ⊗ I₂");
            let x: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.61).cos() * 1e3).collect();
            let (mut y, mut expected) = (vec![f64::NAN; 2 * n], vec![f64::NAN; 2 * n]);
            interleaved.mul_vec(&x, &mut y);
            m.mul_vec(&x, &mut expected);
            for i in 0..2 * n {
                assert_eq!(y[i].to_bits(), expected[i].to_bits(), "n = {n}, row {i}");
            }
        }
    }

    #[test]
    fn interleaved_form_refuses_what_is_not_a_kronecker_product() {
        let m = interleaved_test_matrix(8, 3);
        let mut coupled = m.clone();
        coupled.set(4, 7, 1e-3);
        assert_eq!(InterleavedBandedMatrix::from_banded(&coupled), None);
        let mut unlike = m.clone();
        unlike.add(5, 5, 1e-3);
        assert_eq!(InterleavedBandedMatrix::from_banded(&unlike), None);
        assert_eq!(
            InterleavedBandedMatrix::from_banded(&test_matrix(7, 3)),
            None
        );
    }

    #[test]
    fn trailing_submatrix_is_the_lower_right_block() {
        let m = test_matrix(12, 3);
        for first in [1, 2, 5] {
            let t = m.trailing(first);
            let dense = m.to_dense();
            let sub = dense.view((first, first), (12 - first, 12 - first));
            assert_eq!(t.to_dense(), sub.into_owned());
            // The storage too, outside the matrix included: entry by entry
            // into a zero band, as the copy was first written.
            let mut expected = BandedMatrix::zeros(12 - first, 3);
            for i in 0..12 - first {
                for j in i.saturating_sub(3)..=(i + 3).min(12 - first - 1) {
                    expected.set(i, j, m.get(i + first, j + first));
                }
            }
            assert_eq!(t, expected, "first = {first}");
        }
    }

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

    #[test]
    fn singular_matrix_reports_its_pivot() {
        let m = BandedMatrix::zeros(4, 1);
        assert!(matches!(
            m.factor(),
            Err(FactorError::TinyPivot { row: 0, .. })
        ));
    }
}
