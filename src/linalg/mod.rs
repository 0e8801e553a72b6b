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

mod block;

pub use block::{BlockTridiagonalLu, Complex64};
use nalgebra::DMatrix;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry (i, j) of the test matrices: non-symmetric, deterministic, and
    /// with `diagonal` added on the diagonal.
    pub(super) fn test_entry(i: usize, j: usize, diagonal: f64) -> f64 {
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

    #[test]
    fn singular_matrix_reports_its_pivot() {
        let m = BandedMatrix::zeros(4, 1);
        assert!(matches!(
            m.factor(),
            Err(FactorError::TinyPivot { row: 0, .. })
        ));
    }
}
