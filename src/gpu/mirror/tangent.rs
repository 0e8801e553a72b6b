//! tangent.wgsl: one ANCF element's part of an implicit scheme's iteration
//! matrix, stiffness_scale · K_e + damping_scale · C_e, in 4×4 node blocks.

use nalgebra::{Matrix4, Vector2, Vector4};

use super::element::{
    ElementState, GAUSS, PointKinematics, Section, element_chord, point_kinematics,
};
use super::matrix::outer4;
use super::{MirrorReal, join, lit, xy};

/// tangent.wgsl's `ElementBlocks`: rows of node a or b, columns of node a
/// or b.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElementBlocks<R: MirrorReal> {
    pub aa: Matrix4<R>,
    pub ab: Matrix4<R>,
    pub ba: Matrix4<R>,
    pub bb: Matrix4<R>,
}

impl<R: MirrorReal> ElementBlocks<R> {
    pub fn zeros() -> Self {
        Self {
            aa: Matrix4::zeros(),
            ab: Matrix4::zeros(),
            ba: Matrix4::zeros(),
            bb: Matrix4::zeros(),
        }
    }
}

/// tangent.wgsl's `node_to_section`.
fn node_to_section<R: MirrorReal>(sx_pos: R, sx_slope: R, sxx_pos: R, sxx_slope: R) -> Matrix4<R> {
    let zero = lit::<R>(0.0);
    Matrix4::from_columns(&[
        Vector4::new(sx_pos, zero, sxx_pos, zero),
        Vector4::new(zero, sx_pos, zero, sxx_pos),
        Vector4::new(sx_slope, zero, sxx_slope, zero),
        Vector4::new(zero, sx_slope, zero, sxx_slope),
    ])
}

/// tangent.wgsl's `add_gauss_point_tangent`.
#[allow(clippy::too_many_arguments)]
pub fn add_gauss_point_tangent<R: MirrorReal>(
    t: &mut ElementBlocks<R>,
    xi: R,
    weight: R,
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    s: &ElementState<R>,
    stiffness_scale: R,
    damping_scale: R,
) {
    let [zero, one, two, four, eight] = [0.0, 1.0, 2.0, 4.0, 8.0].map(lit::<R>);
    let PointKinematics {
        sx,
        sxx,
        p,
        c,
        pd,
        cd,
        g,
        stretch,
        z,
        curvature,
        strain_p,
        curvature_p,
        curvature_c,
        axial,
        moment,
    } = point_kinematics(xi, le, t0, sec, s);
    let inv_g = one / g;
    let z_p = Vector2::new(c.y, -c.x);
    let inv_stretch = one / stretch;
    let e00 = (one - p.x * p.x * inv_g) * inv_stretch;
    let e01 = -p.x * p.y * inv_g * inv_stretch;
    let e11 = (one - p.y * p.y * inv_g) * inv_stretch;
    let inv_g2 = inv_g * inv_g;
    let k00 = (-four * z_p.x * p.x - two * z + eight * curvature * p.x * p.x) * inv_g2;
    let k01 = (-two * (z_p.x * p.y + p.x * z_p.y) + eight * curvature * p.x * p.y) * inv_g2;
    let k11 = (-four * z_p.y * p.y - two * z + eight * curvature * p.y * p.y) * inv_g2;
    let m00 = -two * p.x * curvature_c.x * inv_g;
    let m01 = (one - two * p.x * curvature_c.y) * inv_g;
    let m10 = (-one - two * p.y * curvature_c.x) * inv_g;
    let m11 = -two * p.y * curvature_c.y * inv_g;
    let strain_rate_p = Vector2::new(e00 * pd.x + e01 * pd.y, e01 * pd.x + e11 * pd.y);
    let curvature_rate_p = Vector2::new(
        k00 * pd.x + k01 * pd.y + m00 * cd.x + m01 * cd.y,
        k01 * pd.x + k11 * pd.y + m10 * cd.x + m11 * cd.y,
    );
    let curvature_rate_c = Vector2::new(m00 * pd.x + m10 * pd.y, m01 * pd.x + m11 * pd.y);
    let de = join(strain_p, Vector2::zeros());
    let dk = join(curvature_p, curvature_c);
    let dn = de * sec.axial_stiffness + join(strain_rate_p, Vector2::zeros()) * sec.axial_damping;
    let dm =
        dk * sec.bending_stiffness + join(curvature_rate_p, curvature_rate_c) * sec.bending_damping;
    let n_row = dn * stiffness_scale + de * (damping_scale * sec.axial_damping);
    let m_row = dm * stiffness_scale + dk * (damping_scale * sec.bending_damping);
    let kn = stiffness_scale * axial;
    let km = stiffness_scale * moment;
    let second = Matrix4::from_columns(&[
        Vector4::new(kn * e00 + km * k00, kn * e01 + km * k01, km * m00, km * m01),
        Vector4::new(kn * e01 + km * k01, kn * e11 + km * k11, km * m10, km * m11),
        Vector4::new(km * m00, km * m10, zero, zero),
        Vector4::new(km * m01, km * m11, zero, zero),
    ]);
    let wl = weight * le;
    let w = (outer4(&de, &n_row) + outer4(&dk, &m_row) + second) * wl;
    let b_a = node_to_section(sx.x, sx.y, sxx.x, sxx.y);
    let b_b = node_to_section(sx.z, sx.w, sxx.z, sxx.w);
    let w_a = w * b_a;
    let w_b = w * b_b;
    t.aa += b_a.transpose() * w_a;
    t.ab += b_a.transpose() * w_b;
    t.ba += b_b.transpose() * w_a;
    t.bb += b_b.transpose() * w_b;
}

/// WGSL's `sign`: 0 at 0, unlike `f64::signum`.
fn sign<R: MirrorReal>(x: R) -> R {
    if x > lit(0.0) {
        lit(1.0)
    } else if x < lit(0.0) {
        lit(-1.0)
    } else {
        lit(0.0)
    }
}

/// tangent.wgsl's `drag_block`.
#[allow(clippy::too_many_arguments)]
fn drag_block<R: MirrorReal>(
    row_slope: R,
    side: R,
    fx_v: R,
    fy_v: R,
    fx_y: R,
    fy_x: R,
    stiffness_scale: R,
    damping_scale: R,
) -> Matrix4<R> {
    let half = lit::<R>(0.5);
    let by_x = Vector2::new(damping_scale * fx_v, stiffness_scale * side * fy_x);
    let by_y = Vector2::new(stiffness_scale * side * fx_y, damping_scale * fy_v);
    Matrix4::from_columns(&[
        -join(by_x * half, by_x * row_slope),
        -join(by_y * half, by_y * row_slope),
        Vector4::zeros(),
        Vector4::zeros(),
    ])
}

/// tangent.wgsl's `element_tangent`.
#[allow(clippy::too_many_arguments)]
pub fn element_tangent<R: MirrorReal>(
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    drag_factor: R,
    s: &ElementState<R>,
    stiffness_scale: R,
    damping_scale: R,
) -> ElementBlocks<R> {
    let mut t = ElementBlocks::zeros();
    for (xi, weight) in GAUSS {
        add_gauss_point_tangent(
            &mut t,
            lit(xi),
            lit(weight),
            le,
            t0,
            sec,
            s,
            stiffness_scale,
            damping_scale,
        );
    }
    let half = lit::<R>(0.5);
    let chord = element_chord(le, t0, s);
    let vmean = (xy(&s.drag_va) + xy(&s.drag_vb)) * half;
    let fx_v = -drag_factor * chord.y.abs() * vmean.x.abs();
    let fy_v = -drag_factor * chord.x.abs() * vmean.y.abs();
    let fx_y = -drag_factor * sign(chord.y) * vmean.x * vmean.x.abs();
    let fy_x = -drag_factor * sign(chord.x) * vmean.y * vmean.y.abs();
    let slope = le / lit(12.0);
    let (one, ks, cs) = (lit::<R>(1.0), stiffness_scale, damping_scale);
    let block = |row_slope: R, side: R| drag_block(row_slope, side, fx_v, fy_v, fx_y, fy_x, ks, cs);
    t.aa += block(slope, -one);
    t.ab += block(slope, one);
    t.ba += block(-slope, -one);
    t.bb += block(-slope, one);
    t
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::super::element::tests::{
        ELEMENT_INPUTS, READ_ELEMENT, drift_summed, random_element, read_element,
    };
    use super::super::kernel::{
        FunctionKernel, check_both_precisions, random_cases, reals, uniform,
    };
    use super::*;
    use crate::model::TetherParams;
    use crate::model::element::ElementKernel;

    /// An element case of `random_element` (its index 9, the damping
    /// scale, is γ'h here) and the stiffness scale β'h², from γ'h times
    /// up to 1e-3 s: the stiffness part (E a / l_e ≈ 4e4 N/m) and the
    /// damping part (D a / l_e ≈ 20 N s/m) then weigh alike, so a slip in
    /// either shows.
    fn random_tangent_case(rng: &mut ChaCha8Rng) -> Vec<f64> {
        let mut x = random_element(rng);
        let stiffness_scale = x[9] * uniform(rng, 1e-5, 1e-3);
        x.push(stiffness_scale);
        x
    }

    const INPUTS: usize = ELEMENT_INPUTS + 1;

    fn tangent_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let e = read_element(x);
        let t = element_tangent(
            e.le,
            e.t0,
            e.sec,
            e.drag_factor,
            &e.state,
            x[ELEMENT_INPUTS],
            e.damping_scale,
        );
        [t.aa, t.ab, t.ba, t.bb]
            .iter()
            .flat_map(|m| reals(m.iter()))
            .collect()
    }

    // As element.wgsl's: the products of two 4×4 matrices add terms of
    // mixed signs, so f32 keeps its element tolerance with margin.
    const TOLERANCES: (f64, f64) = (1e-5, 1e-14);

    #[test]
    fn element_tangent_on_the_adapter_matches_the_mirror() {
        let body = format!(
            "fn run() {{ {READ_ELEMENT}
                let t = element_tangent(le, t0, sec, drag_factor, state, arg({ELEMENT_INPUTS}u), damping_scale);
                put4x4(0u, t.aa);
                put4x4(16u, t.ab);
                put4x4(32u, t.ba);
                put4x4(48u, t.bb);
            }}"
        );
        let kernel = FunctionKernel {
            name: "element_tangent",
            inputs: INPUTS,
            outputs: 64,
            body: &body,
        };
        check_both_precisions(
            &kernel,
            &random_cases(11, 256, random_tangent_case),
            tangent_mirror::<f32>,
            tangent_mirror::<f64>,
            TOLERANCES,
        );
    }

    /// The mirror in f64 against the model's K and C (ElementKernel's
    /// add_internal_tangent and sub_drag_tangent, in absolute coordinates,
    /// themselves checked against central differences of the force): the
    /// formulation, each block and both scales, on random tethers,
    /// orientations, bends, stretches and velocities. Measured: 2e-15 of
    /// the largest entry.
    #[test]
    fn tangent_mirror_is_the_models_stiffness_and_damping() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for case in 0..200 {
            let x = random_element(&mut rng);
            let params = TetherParams {
                elements: 1,
                length_m: x[0],
                youngs_modulus_pa: uniform(&mut rng, 1e6, 2e7),
                damping_pa_s: uniform(&mut rng, 0.0, 5000.0),
                drag_coefficient: uniform(&mut rng, 0.0, 1.5),
                ..TetherParams::default()
            };
            let kernel = ElementKernel::new(&params);
            let sc = kernel.section;
            let sec = Section {
                axial_stiffness: sc.axial_stiffness_n,
                axial_damping: sc.axial_damping_n_s,
                bending_stiffness: sc.bending_stiffness_n_m2,
                bending_damping: sc.bending_damping_n_m2_s,
            };
            let mut e = read_element(&x);
            // The model's displacement in one real: the drift summed in.
            drift_summed(&mut e.state);
            // The model takes one velocity for the damping and the drag.
            e.state.drag_va = e.state.damped_va;
            e.state.drag_vb = e.state.damped_vb;
            let (ks, cs) = (uniform(&mut rng, 0.0, 1e-6), uniform(&mut rng, 0.0, 1e-3));
            let t = element_tangent(e.le, e.t0, sec, kernel.drag_factor, &e.state, ks, cs);
            // Absolute coordinates: node a's reference at an arbitrary
            // point, node b's a chord l_e·t0 further.
            let origin = [uniform(&mut rng, -1.0, 1.0), uniform(&mut rng, -1.0, 1.0)];
            let (s, t0) = (&e.state, [e.t0.x, e.t0.y]);
            let absolute = |u: &Vector4<f64>, at: f64| {
                [
                    origin[0] + at * t0[0] + u.x,
                    origin[1] + at * t0[1] + u.y,
                    t0[0] + u.z,
                    t0[1] + u.w,
                ]
            };
            let mut q = [0.0; 8];
            q[..4].copy_from_slice(&absolute(&s.ua, 0.0));
            q[4..].copy_from_slice(&absolute(&s.ub, e.le));
            let mut qd = [0.0; 8];
            qd[..4].copy_from_slice(s.damped_va.as_slice());
            qd[4..].copy_from_slice(s.damped_vb.as_slice());
            let (mut k, mut c) = ([[0.0; 8]; 8], [[0.0; 8]; 8]);
            kernel.add_internal_tangent(&q, &qd, &mut k, &mut c);
            kernel.sub_drag_tangent(&q, &qd, &mut k, &mut c);
            let want = DMatrix::from_fn(8, 8, |i, j| ks * k[i][j] + cs * c[i][j]);
            let got = DMatrix::from_fn(8, 8, |i, j| {
                let block = match (i / 4, j / 4) {
                    (0, 0) => &t.aa,
                    (0, 1) => &t.ab,
                    (1, 0) => &t.ba,
                    _ => &t.bb,
                };
                block[(i % 4, j % 4)]
            });
            let scale = want.amax();
            let error = (&got - &want).amax() / scale;
            assert!(
                error < 1e-12,
                "case {case}: mirror and model differ by {error:.2e} of the largest entry \
                 {scale:.3e}\nmirror {got}\nmodel {want}"
            );
        }
    }
}
