//! node_blocks.wgsl: a node's 4×4 blocks from the mesh's compact mass
//! matrix, and node 0's pin rows.

use nalgebra::{Matrix4, Vector4};

use super::{MirrorReal, join, lit, xy, zw};

/// node_blocks.wgsl's `coupling_transpose_times`: (kᵀ ⊗ I₂) v.
pub fn coupling_transpose_times<R: MirrorReal>(k: &Vector4<R>, v: &Vector4<R>) -> Vector4<R> {
    join(xy(v) * k.x + zw(v) * k.z, xy(v) * k.y + zw(v) * k.w)
}

/// node_blocks.wgsl's `node_mass_times`: (k ⊗ I₂) v.
pub fn node_mass_times<R: MirrorReal>(k: &Vector4<R>, v: &Vector4<R>) -> Vector4<R> {
    join(xy(v) * k.x + zw(v) * k.y, xy(v) * k.z + zw(v) * k.w)
}

/// node_blocks.wgsl's `plus_node_mass`: m + k ⊗ I₂, only the eight nonzero entries
/// added.
pub fn plus_node_mass<R: MirrorReal>(m: &Matrix4<R>, k: &Vector4<R>) -> Matrix4<R> {
    let mut out = *m;
    for c in 0..2 {
        out[(c, c)] += k.x;
        out[(c, 2 + c)] += k.y;
        out[(2 + c, c)] += k.z;
        out[(2 + c, 2 + c)] += k.w;
    }
    out
}

/// node_blocks.wgsl's `pin_rows_pivot` and `pin_rows_coupling`: rows 0 and 1 of
/// node 0's blocks made identity and zero rows.
pub fn pin_rows<R: MirrorReal>(m: &Matrix4<R>, identity: bool) -> Matrix4<R> {
    let mut out = *m;
    for r in 0..2 {
        for col in 0..4 {
            out[(r, col)] = if identity && r == col {
                lit(1.0)
            } else {
                lit(0.0)
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::super::mass_factor::MeshMass;
    use super::super::kernel::{
        FunctionKernel, check_both_precisions, random_cases, reals, uniform,
    };
    use super::*;

    #[test]
    fn kronecker_block_helpers_match_the_full_blocks() {
        let m = Matrix4::from_fn(|r, c| (r * 4 + c) as f64 - 7.5);
        let k = [2.0, -0.25, 0.5, 0.125];
        let got = plus_node_mass(&m, &Vector4::from(k));
        assert_eq!(got, m + MeshMass::block(&k));
        let v = Vector4::new(0.3, -1.1, 0.05, 2.0);
        let want = MeshMass::block(&k).transpose() * v;
        assert!(
            (coupling_transpose_times(&Vector4::from(k), &v) - want)
                .abs()
                .max()
                < 1e-15
        );
        let want = MeshMass::block(&k) * v;
        assert!((node_mass_times(&Vector4::from(k), &v) - want).abs().max() < 1e-15);
    }

    #[test]
    fn pin_rows_replace_rows_zero_and_one_only() {
        let m = Matrix4::from_fn(|r, c| (r * 4 + c) as f64 + 1.0);
        for (identity, want_01) in [(true, [1.0, 0.0]), (false, [0.0, 0.0])] {
            let got = pin_rows(&m, identity);
            assert_eq!(got.fixed_rows::<2>(2), m.fixed_rows::<2>(2));
            assert_eq!((got[(0, 0)], got[(0, 1)]), (want_01[0], want_01[1]));
            assert_eq!((got[(1, 1)], got[(1, 0)]), (want_01[0], want_01[1]));
            assert_eq!(got.fixed_view::<2, 2>(0, 2).abs().max(), 0.0);
        }
    }

    fn node_blocks_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let m = Matrix4::from_column_slice(&x[..16]);
        let k = Vector4::from_column_slice(&x[16..20]);
        let v = Vector4::from_column_slice(&x[20..24]);
        let mut out = reals(plus_node_mass(&m, &k).iter());
        out.extend(reals(coupling_transpose_times(&k, &v).iter()));
        out.extend(reals(pin_rows(&m, true).iter()));
        out.extend(reals(pin_rows(&m, false).iter()));
        out.extend(reals(node_mass_times(&k, &v).iter()));
        out
    }

    #[test]
    fn node_blocks_on_the_adapter_match_the_mirror() {
        let kernel = FunctionKernel {
            name: "plus_node_mass/coupling_transpose_times/pin_rows_pivot/pin_rows_coupling/node_mass_times",
            inputs: 24,
            outputs: 56,
            body: "fn run() {
                let m = arg4x4(0u);
                let k = arg4(16u);
                put4x4(0u, plus_node_mass(m, k));
                put4(16u, coupling_transpose_times(k, arg4(20u)));
                put4x4(20u, pin_rows_pivot(m));
                put4x4(36u, pin_rows_coupling(m));
                put4(52u, node_mass_times(k, arg4(20u)));
            }",
        };
        let cases = random_cases(3, 256, |rng| {
            (0..24).map(|_| uniform(rng, -3.0, 3.0)).collect()
        });
        check_both_precisions(
            &kernel,
            &cases,
            node_blocks_mirror::<f32>,
            node_blocks_mirror::<f64>,
            (1e-6, 1e-15),
        );
    }
}
