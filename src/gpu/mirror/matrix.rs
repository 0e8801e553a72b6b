//! matrix.wgsl: 4×4 block algebra of the semi-implicit scheme's
//! block-tridiagonal solve.

use nalgebra::{Matrix4, Vector2, Vector4};

use super::{MirrorReal, lit};

/// matrix.wgsl's `Symmetric4`: the diagonal, then (0,1), (0,2), (0,3),
/// (1,2), then (1,3), (2,3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Symmetric4<R: MirrorReal> {
    pub diagonal: Vector4<R>,
    pub upper: Vector4<R>,
    pub upper_rest: Vector2<R>,
}

impl<R: MirrorReal> Symmetric4<R> {
    pub fn zeros() -> Self {
        Self {
            diagonal: Vector4::zeros(),
            upper: Vector4::zeros(),
            upper_rest: Vector2::zeros(),
        }
    }

    /// matrix.wgsl's `symmetric_outer_pair`: w uᵀ + x vᵀ on and above the
    /// diagonal.
    pub fn outer_pair(w: &Vector4<R>, u: &Vector4<R>, x: &Vector4<R>, v: &Vector4<R>) -> Self {
        let pick = |a: &Vector4<R>, i: [usize; 4]| Vector4::new(a[i[0]], a[i[1]], a[i[2]], a[i[3]]);
        let (rows, cols) = ([0, 0, 0, 1], [1, 2, 3, 2]);
        Self {
            diagonal: w.component_mul(u) + x.component_mul(v),
            upper: pick(w, rows).component_mul(&pick(u, cols))
                + pick(x, rows).component_mul(&pick(v, cols)),
            upper_rest: Vector2::new(w.y, w.z).component_mul(&Vector2::new(u.w, u.w))
                + Vector2::new(x.y, x.z).component_mul(&Vector2::new(v.w, v.w)),
        }
    }

    /// matrix.wgsl's `symmetric_sum`.
    pub fn sum(&self, other: &Self) -> Self {
        Self {
            diagonal: self.diagonal + other.diagonal,
            upper: self.upper + other.upper,
            upper_rest: self.upper_rest + other.upper_rest,
        }
    }

    /// matrix.wgsl's `symmetric_full`.
    pub fn full(&self) -> Matrix4<R> {
        let (d, u, r) = (&self.diagonal, &self.upper, &self.upper_rest);
        Matrix4::from_columns(&[
            Vector4::new(d.x, u.x, u.y, u.z),
            Vector4::new(u.x, d.y, u.w, r.x),
            Vector4::new(u.y, u.w, d.z, r.y),
            Vector4::new(u.z, r.x, r.y, d.w),
        ])
    }
}

/// matrix.wgsl's `outer4`.
pub fn outer4<R: MirrorReal>(u: &Vector4<R>, v: &Vector4<R>) -> Matrix4<R> {
    Matrix4::from_columns(&[u * v.x, u * v.y, u * v.z, u * v.w])
}

/// matrix.wgsl's `inverse4`: cofactors through the 2×2 minors, in the
/// shader's order.
pub fn inverse4<R: MirrorReal>(m: &Matrix4<R>) -> Matrix4<R> {
    let a = |r: usize, c: usize| m[(r, c)];
    let (a00, a01, a02, a03) = (a(0, 0), a(0, 1), a(0, 2), a(0, 3));
    let (a10, a11, a12, a13) = (a(1, 0), a(1, 1), a(1, 2), a(1, 3));
    let (a20, a21, a22, a23) = (a(2, 0), a(2, 1), a(2, 2), a(2, 3));
    let (a30, a31, a32, a33) = (a(3, 0), a(3, 1), a(3, 2), a(3, 3));
    let s0 = a00 * a11 - a10 * a01;
    let s1 = a00 * a12 - a10 * a02;
    let s2 = a00 * a13 - a10 * a03;
    let s3 = a01 * a12 - a11 * a02;
    let s4 = a01 * a13 - a11 * a03;
    let s5 = a02 * a13 - a12 * a03;
    let c5 = a22 * a33 - a32 * a23;
    let c4 = a21 * a33 - a31 * a23;
    let c3 = a21 * a32 - a31 * a22;
    let c2 = a20 * a33 - a30 * a23;
    let c1 = a20 * a32 - a30 * a22;
    let c0 = a20 * a31 - a30 * a21;
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    let r = lit::<R>(1.0) / det;
    let columns = [
        Vector4::new(
            (a11 * c5 - a12 * c4 + a13 * c3) * r,
            (-a10 * c5 + a12 * c2 - a13 * c1) * r,
            (a10 * c4 - a11 * c2 + a13 * c0) * r,
            (-a10 * c3 + a11 * c1 - a12 * c0) * r,
        ),
        Vector4::new(
            (-a01 * c5 + a02 * c4 - a03 * c3) * r,
            (a00 * c5 - a02 * c2 + a03 * c1) * r,
            (-a00 * c4 + a01 * c2 - a03 * c0) * r,
            (a00 * c3 - a01 * c1 + a02 * c0) * r,
        ),
        Vector4::new(
            (a31 * s5 - a32 * s4 + a33 * s3) * r,
            (-a30 * s5 + a32 * s2 - a33 * s1) * r,
            (a30 * s4 - a31 * s2 + a33 * s0) * r,
            (-a30 * s3 + a31 * s1 - a32 * s0) * r,
        ),
        Vector4::new(
            (-a21 * s5 + a22 * s4 - a23 * s3) * r,
            (a20 * s5 - a22 * s2 + a23 * s1) * r,
            (-a20 * s4 + a21 * s2 - a23 * s0) * r,
            (a20 * s3 - a21 * s1 + a22 * s0) * r,
        ),
    ];
    Matrix4::from_columns(&columns)
}

/// matrix.wgsl's `inverse4_column`: column `c` of [`inverse4`], the same
/// arithmetic.
pub fn inverse4_column<R: MirrorReal>(m: &Matrix4<R>, c: usize) -> Vector4<R> {
    inverse4(m).column(c).into()
}

#[cfg(test)]
mod tests {
    use super::super::kernel::{
        FunctionKernel, check_both_precisions, random_cases, reals, uniform,
    };
    use super::super::node_blocks::pin_rows;
    use super::*;

    #[test]
    fn inverse4_inverts_pivots_of_every_scale() {
        // A mass-like block (positions ~1, slopes ~l_e²) and a pin block
        // with identity rows; the shader's cofactor formula against LU.
        let le = 0.012f64;
        let scale = Vector4::new(1.0, 1.0, le, le);
        let base = Matrix4::new(
            4.0, 0.3, 0.5, -0.2, 0.3, 5.0, 0.1, 0.4, 0.5, 0.1, 3.0, 0.2, -0.2, 0.4, 0.2, 6.0,
        );
        let scaled = Matrix4::from_fn(|r, c| base[(r, c)] * scale[r] * scale[c]);
        let pinned = pin_rows(&scaled, true);
        for m in [base, scaled, pinned] {
            let want = m.try_inverse().unwrap();
            let got = inverse4(&m);
            let error = (got - want).abs().max() / want.abs().max();
            assert!(error < 1e-13, "{error:e}");
            assert!((got * m - Matrix4::identity()).abs().max() < 1e-12);
        }
    }

    #[test]
    fn outer4_is_u_v_transposed() {
        let u = Vector4::new(1.0, 2.0, 3.0, 4.0);
        let v = Vector4::new(-1.0, 0.5, 2.0, 3.0);
        assert_eq!(outer4(&u, &v), u * v.transpose());
    }

    #[test]
    fn symmetric_blocks_hold_every_entry_of_a_weighted_gram_sum() {
        // (α u uᵀ + β v vᵀ) twice accumulated, as two Gauss points do, with
        // entries of both signs and scales; every entry, both triangles.
        let u = Vector4::new(0.7, -1.3, 0.02, -0.05);
        let v = Vector4::new(-2.0, 0.4, 0.11, 0.03);
        let (alpha, beta) = (3.5, 0.25);
        let pair = Symmetric4::outer_pair(&(u * alpha), &u, &(v * beta), &v);
        let got = pair.sum(&pair).full();
        let want = (u * u.transpose() * alpha + v * v.transpose() * beta) * 2.0;
        assert!(
            (got - want).abs().max() < 1e-15 * want.abs().max(),
            "{got} vs {want}"
        );
    }

    /// Diagonally dominant 4×4 matrices with entries of both signs: the
    /// pivots inverse4 sees are symmetric positive definite, but the
    /// cofactor formula is checked on general ones, every entry distinct.
    fn random_pivots(seed: u64) -> Vec<Vec<f64>> {
        random_cases(seed, 256, |rng| {
            let mut m: Vec<f64> = (0..16).map(|_| uniform(rng, -1.0, 1.0)).collect();
            for d in 0..4 {
                m[5 * d] += 4.0 * m[5 * d].signum();
            }
            m
        })
    }

    fn inverse_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        reals(inverse4(&Matrix4::from_column_slice(x)).iter())
    }

    #[test]
    fn inverse4_on_the_adapter_matches_the_mirror() {
        let kernel = FunctionKernel {
            name: "inverse4",
            inputs: 16,
            outputs: 16,
            body: "fn run() { put4x4(0u, inverse4(arg4x4(0u))); }",
        };
        check_both_precisions(
            &kernel,
            &random_pivots(1),
            inverse_mirror::<f32>,
            inverse_mirror::<f64>,
            (1e-5, 1e-13),
        );
    }

    fn inverse_columns_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let m = Matrix4::from_column_slice(x);
        (0..4)
            .flat_map(|c| reals(inverse4_column(&m, c).iter()))
            .collect()
    }

    #[test]
    fn inverse4_column_on_the_adapter_is_inverse4s_column() {
        // Each column alone, as four lanes form them, against the mirror:
        // the same arithmetic as the whole inverse, so the same tolerance.
        let kernel = FunctionKernel {
            name: "inverse4_column",
            inputs: 16,
            outputs: 16,
            body: "fn run() {
                let m = arg4x4(0u);
                for (var c = 0u; c < 4u; c++) {
                    put4(4u * c, inverse4_column(m, c));
                }
            }",
        };
        check_both_precisions(
            &kernel,
            &random_pivots(9),
            inverse_columns_mirror::<f32>,
            inverse_columns_mirror::<f64>,
            (1e-5, 1e-13),
        );
    }

    fn symmetric_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let v = |k: usize| Vector4::from_column_slice(&x[k..k + 4]);
        let first = Symmetric4::outer_pair(&v(0), &v(4), &v(8), &v(12));
        let second = Symmetric4::outer_pair(&v(16), &v(20), &v(24), &v(28));
        let mut out = reals(first.sum(&second).full().iter());
        out.extend(reals(outer4(&v(0), &v(28)).iter()));
        out
    }

    #[test]
    fn damping_blocks_on_the_adapter_match_the_mirror() {
        // symmetric_outer_pair, symmetric_sum and symmetric_full as
        // element.wgsl accumulates a node's damping block, and outer4 as it
        // accumulates the coupling block.
        let kernel = FunctionKernel {
            name: "symmetric_outer_pair/symmetric_sum/symmetric_full/outer4",
            inputs: 32,
            outputs: 32,
            body: "fn run() {
                let first = symmetric_outer_pair(arg4(0u), arg4(4u), arg4(8u), arg4(12u));
                let second = symmetric_outer_pair(arg4(16u), arg4(20u), arg4(24u), arg4(28u));
                put4x4(0u, symmetric_full(symmetric_sum(first, second)));
                put4x4(16u, outer4(arg4(0u), arg4(28u)));
            }",
        };
        let cases = random_cases(2, 256, |rng| {
            (0..32).map(|_| uniform(rng, -2.0, 2.0)).collect()
        });
        check_both_precisions(
            &kernel,
            &cases,
            symmetric_mirror::<f32>,
            symmetric_mirror::<f64>,
            (1e-6, 1e-15),
        );
    }
}
