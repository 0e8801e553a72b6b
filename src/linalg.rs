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
    pub fn trailing(&self, first: usize) -> BandedMatrix {
        let dim = self.dim - first;
        let mut out = BandedMatrix::zeros(dim, self.half_bandwidth);
        for i in 0..dim {
            let lo = i.saturating_sub(self.half_bandwidth);
            let hi = (i + self.half_bandwidth).min(dim - 1);
            for j in lo..=hi {
                out.set(i, j, self.get(i + first, j + first));
            }
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
            for i in k + 1..=last {
                let factor = lu.get(i, k) / pivot;
                lu.set(i, k, factor);
                for j in k + 1..=last {
                    let v = lu.get(i, j) - factor * lu.get(k, j);
                    lu.set(i, j, v);
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
        let t = m.trailing(2);
        let dense = m.to_dense();
        let sub = dense.view((2, 2), (10, 10));
        assert_eq!(t.to_dense(), sub.into_owned());
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
