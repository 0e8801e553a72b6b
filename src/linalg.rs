//! Banded matrices and their LU factorisation.
//!
//! Every matrix of the tether (mass, tangent stiffness, damping, Newton
//! iteration matrix) couples only the eight coordinates of one element, so in
//! node-major ordering it is banded with half-bandwidth 7. A banded LU costs
//! O(N·w²) instead of O(N³) and is what makes the per-step solves of both CPU
//! solvers cheap. nalgebra has no banded storage, hence this small module; it
//! is tested against nalgebra's dense LU.

use nalgebra::DMatrix;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum FactorError {
    #[error(
        "zero or tiny pivot {pivot:e} in row {row} of a banded LU, against a largest diagonal entry of {scale:e} (matrix singular or not diagonally dominant enough)"
    )]
    TinyPivot { row: usize, pivot: f64, scale: f64 },
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
        let w = self.half_bandwidth;
        for (i, yi) in y.iter_mut().enumerate().take(self.dim) {
            let lo = i.saturating_sub(w);
            let hi = (i + w).min(self.dim - 1);
            let row = &self.data[i * self.width()..];
            let mut acc = 0.0;
            for (j, xj) in x.iter().enumerate().take(hi + 1).skip(lo) {
                acc += row[j + w - i] * xj;
            }
            *yi = acc;
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

    fn test_matrix(n: usize, w: usize) -> BandedMatrix {
        let mut m = BandedMatrix::zeros(n, w);
        for i in 0..n {
            for j in i.saturating_sub(w)..=(i + w).min(n - 1) {
                // Non-symmetric, diagonally dominant, deterministic.
                let v = ((i * 7 + j * 13) % 11) as f64 / 11.0 - 0.4;
                m.set(i, j, if i == j { 4.0 + v } else { v });
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
