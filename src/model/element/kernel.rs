//! The element's state-independent data ([`ElementKernel`]: quadrature,
//! mass, gravity, drag factor) and its internal force and tangent, the
//! forces packed over a block of elements for the CPU's vector units.

// The loops index shape functions a and directions d together (entry 2a + d),
// as the formulas do; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use multiversion::multiversion;

use super::{
    ElementMatrix, ElementVector, GAUSS_POINTS, GAUSS_WEIGHTS, GAUSS_XI, SectionConstants,
    SectionKinematics, Vec2, interpolate, section_force, section_tangent, shape, shape_x, shape_xx,
};
use crate::model::params::TetherParams;

/// Shape-function data at one quadrature point.
#[derive(Debug, Clone, Copy)]
pub struct QuadraturePoint {
    /// Gauss weight times element length (ds).
    pub weight_m: f64,
    pub s_x: [f64; 4],
    pub s_xx: [f64; 4],
}

/// Everything about an element that does not depend on its state; all elements
/// of a tether share one.
#[derive(Debug, Clone)]
pub struct ElementKernel {
    pub length_m: f64,
    pub section: SectionConstants,
    pub points: [QuadraturePoint; GAUSS_POINTS],
    pub mass: ElementMatrix,
    pub gravity: ElementVector,
    /// ½ ρ_air C_D b: drag force per (projected length · speed²).
    pub drag_factor: f64,
}

impl ElementKernel {
    pub fn new(p: &TetherParams) -> Self {
        let le = p.element_length_m();
        let points = std::array::from_fn(|q| QuadraturePoint {
            weight_m: GAUSS_WEIGHTS[q] * le,
            s_x: shape_x(GAUSS_XI[q], le),
            s_xx: shape_xx(GAUSS_XI[q], le),
        });
        let rho_a = p.mass_per_length_kg_m();
        let rho_i = if p.rotary_inertia {
            p.density_kg_m3 * p.second_moment_m4()
        } else {
            0.0
        };
        let mut mass = [[0.0; 8]; 8];
        for q in 0..GAUSS_POINTS {
            let w = GAUSS_WEIGHTS[q] * le;
            let s = shape(GAUSS_XI[q], le);
            let sx = shape_x(GAUSS_XI[q], le);
            for a in 0..4 {
                for b in 0..4 {
                    let m = w * (rho_a * s[a] * s[b] + rho_i * sx[a] * sx[b]);
                    mass[2 * a][2 * b] += m;
                    mass[2 * a + 1][2 * b + 1] += m;
                }
            }
        }
        let wg = rho_a * le * p.gravity_m_s2;
        let gravity = [
            0.0,
            -0.5 * wg,
            0.0,
            -wg * le / 12.0,
            0.0,
            -0.5 * wg,
            0.0,
            wg * le / 12.0,
        ];
        Self {
            length_m: le,
            section: SectionConstants::new(p),
            points,
            mass,
            gravity,
            drag_factor: p.drag_factor_kg_m3(),
        }
    }

    // Inlined, the element's fixed length reaches the interpolations and
    // their bounds checks go: the force evaluation ran 1.1× faster.
    #[inline]
    fn point_kinematics(
        &self,
        qp: &QuadraturePoint,
        e: &ElementVector,
        ed: &ElementVector,
    ) -> (Vec2, Vec2, Vec2, Vec2) {
        (
            interpolate(&qp.s_x, e),
            interpolate(&qp.s_xx, e),
            interpolate(&qp.s_x, ed),
            interpolate(&qp.s_xx, ed),
        )
    }

    /// Internal force F_a + F_D = ∫ (N ∂ε/∂e + M ∂κ/∂e)ᵀ ds, added into `out`.
    /// The tether evaluates it in blocks ([`internal_forces_block`]); this
    /// one-element form is the statement they are tested against, bit for
    /// bit (the independent vectors of tests/data check the tether's).
    pub fn add_internal_force(
        &self,
        e: &ElementVector,
        ed: &ElementVector,
        out: &mut ElementVector,
    ) {
        for qp in &self.points {
            let (p, c, pd, cd) = self.point_kinematics(qp, e, ed);
            let kin = SectionKinematics::new(p, c, pd, cd);
            let (fp, fc) = section_force(&kin, &self.section);
            for a in 0..4 {
                let (bx, bxx) = (qp.weight_m * qp.s_x[a], qp.weight_m * qp.s_xx[a]);
                out[2 * a] += bx * fp[0] + bxx * fc[0];
                out[2 * a + 1] += bx * fp[1] + bxx * fc[1];
            }
        }
    }

    /// ∂(F_a + F_D)/∂e and ∂(F_a + F_D)/∂ė, added into `k` and `c`.
    #[inline]
    pub fn add_internal_tangent(
        &self,
        e: &ElementVector,
        ed: &ElementVector,
        k: &mut ElementMatrix,
        c: &mut ElementMatrix,
    ) {
        for qp in &self.points {
            let (p, cc, pd, cd) = self.point_kinematics(qp, e, ed);
            let kin = SectionKinematics::new(p, cc, pd, cd);
            let (h, hv) = section_tangent(&kin, &self.section, p, pd, cd);
            // Bᵀ H B, with B mapping the element vector to (p, c): column
            // 2b+dd of B holds s_x[b] in row dd and s_xx[b] in row 2+dd.
            // H B first, one column at a time: a third of the products of
            // Bᵀ H B entry by entry.
            let (sx, sxx, w) = (&qp.s_x, &qp.s_xx, qp.weight_m);
            let times_b = |m: &[[f64; 4]; 4], b: usize, dd: usize| -> [f64; 4] {
                std::array::from_fn(|r| w * (m[r][dd] * sx[b] + m[r][2 + dd] * sxx[b]))
            };
            for b in 0..4 {
                for dd in 0..2 {
                    let (hk, hc) = (times_b(&h, b, dd), times_b(&hv, b, dd));
                    for a in 0..4 {
                        for d in 0..2 {
                            k[2 * a + d][2 * b + dd] += sx[a] * hk[d] + sxx[a] * hk[2 + d];
                            c[2 * a + d][2 * b + dd] += sx[a] * hc[d] + sxx[a] * hc[2 + d];
                        }
                    }
                }
            }
        }
    }

    /// The Kelvin–Voigt damping matrix ∂F_D/∂ė = ∫ (D a ε_e ε_eᵀ + D I κ_e κ_eᵀ) ds
    /// with ε_e = ∂ε/∂e, κ_e = ∂κ/∂e, added into `c`: the damping part of
    /// [`ElementKernel::add_internal_tangent`]'s `c` without its stiffness,
    /// for the semi-implicit scheme, which needs it every step.
    pub fn add_material_damping(&self, e: &ElementVector, c: &mut ElementMatrix) {
        let zero = [0.0; 2];
        for qp in &self.points {
            let kin = SectionKinematics::new(
                interpolate(&qp.s_x, e),
                interpolate(&qp.s_xx, e),
                zero,
                zero,
            );
            let mut strain_e = [0.0; 8];
            let mut curvature_e = [0.0; 8];
            for a in 0..4 {
                for d in 0..2 {
                    strain_e[2 * a + d] = qp.s_x[a] * kin.strain_p[d];
                    curvature_e[2 * a + d] =
                        qp.s_x[a] * kin.curvature_p[d] + qp.s_xx[a] * kin.curvature_c[d];
                }
            }
            let axial = qp.weight_m * self.section.axial_damping_n_s;
            let bending = qp.weight_m * self.section.bending_damping_n_m2_s;
            for i in 0..8 {
                for j in 0..8 {
                    c[i][j] += axial * strain_e[i] * strain_e[j]
                        + bending * curvature_e[i] * curvature_e[j];
                }
            }
        }
    }

    /// Elastic energy ½ ∫ (E a ε² + E I κ²) ds.
    pub fn strain_energy(&self, e: &ElementVector) -> f64 {
        let zero = [0.0; 8];
        self.points
            .iter()
            .map(|qp| {
                let (p, c, _, _) = self.point_kinematics(qp, e, &zero);
                let kin = SectionKinematics::new(p, c, [0.0; 2], [0.0; 2]);
                0.5 * qp.weight_m
                    * (self.section.axial_stiffness_n * kin.strain * kin.strain
                        + self.section.bending_stiffness_n_m2 * kin.curvature * kin.curvature)
            })
            .sum()
    }

    /// Consistent load vectors of a uniform unit force along x and along y on
    /// the element: [½, 0, l/12, 0, ½, 0, −l/12, 0] and its y twin (docs/model.md §2).
    fn uniform_load_weights(&self) -> [f64; 4] {
        let le = self.length_m;
        [0.5, le / 12.0, 0.5, -le / 12.0]
    }

    /// Air drag Q_Dx + Q_Dy (docs/model.md §2, corrected), added into `out`.
    pub fn add_drag(&self, e: &ElementVector, ed: &ElementVector, out: &mut ElementVector) {
        if self.drag_factor == 0.0 {
            return;
        }
        let (fx, fy) = self.drag_forces(e, ed);
        let w = self.uniform_load_weights();
        for a in 0..4 {
            out[2 * a] += fx * w[a];
            out[2 * a + 1] += fy * w[a];
        }
    }

    /// (F_x, F_y) of the element: −½ ρ C_D a_y v_x|v_x|, −½ ρ C_D a_x v_y|v_y|.
    pub fn drag_forces(&self, e: &ElementVector, ed: &ElementVector) -> (f64, f64) {
        let vx = 0.5 * (ed[0] + ed[4]);
        let vy = 0.5 * (ed[1] + ed[5]);
        let proj_y = (e[1] - e[5]).abs(); // a_y / b: faces the x direction
        let proj_x = (e[0] - e[4]).abs();
        (
            -self.drag_factor * proj_y * vx * vx.abs(),
            -self.drag_factor * proj_x * vy * vy.abs(),
        )
    }

    /// ∂Q_D/∂e and ∂Q_D/∂ė, *subtracted* from `k` and `c` (which hold −∂f/∂q).
    pub fn sub_drag_tangent(
        &self,
        e: &ElementVector,
        ed: &ElementVector,
        k: &mut ElementMatrix,
        c: &mut ElementMatrix,
    ) {
        if self.drag_factor == 0.0 {
            return;
        }
        let vx = 0.5 * (ed[0] + ed[4]);
        let vy = 0.5 * (ed[1] + ed[5]);
        let dy = e[1] - e[5];
        let dx = e[0] - e[4];
        // F_x = −f |dy| v_x|v_x|: ∂/∂ẋ_k = ∂/∂ẋ_{k+1} = −f |dy| |v_x|,
        // ∂/∂y_k = −∂/∂y_{k+1} = −f sgn(dy) v_x|v_x|.
        let f = self.drag_factor;
        let dfx_dv = -f * dy.abs() * vx.abs();
        let dfx_dy = -f * dy.signum() * vx * vx.abs();
        let dfy_dv = -f * dx.abs() * vy.abs();
        let dfy_dx = -f * dx.signum() * vy * vy.abs();
        let w = self.uniform_load_weights();
        for a in 0..4 {
            let (rx, ry) = (2 * a, 2 * a + 1);
            c[rx][0] -= w[a] * dfx_dv;
            c[rx][4] -= w[a] * dfx_dv;
            k[rx][1] -= w[a] * dfx_dy;
            k[rx][5] += w[a] * dfx_dy;
            c[ry][1] -= w[a] * dfy_dv;
            c[ry][5] -= w[a] * dfy_dv;
            k[ry][0] -= w[a] * dfy_dx;
            k[ry][4] += w[a] * dfy_dx;
        }
    }
}

/// [`ElementKernel::add_internal_force`] for `B` consecutive elements at
/// once, to the same bits: `nodes` and `node_rates` hold the coordinates
/// and velocities of their B + 1 nodes (4 each, node-major, as in the
/// tether's vectors), and element b's force is written into `out[b]`.
///
/// Every stage runs along the block's elements, b the innermost index, so
/// the compiler packs it: the interpolations to the Gauss points, the
/// section forces (a square root and nine divisions each) and the sums
/// back onto the element coordinates, each entry's sums in the one-element
/// kernel's order. Compiled for AVX2 and AVX-512 as well as SSE2, chosen
/// at run time (`multiversion`): one binary runs on any x86-64 CPU and
/// takes eight elements a vector where it can. Rust never fuses a product
/// and a sum into an FMA unless told, so every build gives the same bits.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx512dq+avx2+fma", "x86_64+avx2+fma"))]
pub fn internal_forces_block<const B: usize>(
    kernel: &ElementKernel,
    nodes: &[f64],
    node_rates: &[f64],
    out: &mut [ElementVector; B],
) {
    assert!(nodes.len() >= 4 * (B + 1) && node_rates.len() >= 4 * (B + 1));
    // Element b's entry i is nodes[4b + i]: [entry][element].
    let (mut e, mut ed) = ([[0.0; B]; 8], [[0.0; B]; 8]);
    for i in 0..8 {
        for b in 0..B {
            e[i][b] = nodes[4 * b + i];
            ed[i][b] = node_rates[4 * b + i];
        }
    }
    // [Gauss point][p_x, p_y, c_x, c_y, ṗ_x, ṗ_y, ċ_x, ċ_y][element], each
    // Σ_a s_a e_{2a+d} from 0.0, a ascending, as `interpolate` sums.
    let mut kinematics = [[[0.0; B]; 8]; GAUSS_POINTS];
    for (qp, k) in kernel.points.iter().zip(&mut kinematics) {
        let (sx, sxx) = (&qp.s_x, &qp.s_xx);
        for b in 0..B {
            let sum = |s: &[f64; 4], v: &[[f64; B]; 8], d: usize| {
                0.0 + s[0] * v[d][b] + s[1] * v[2 + d][b] + s[2] * v[4 + d][b] + s[3] * v[6 + d][b]
            };
            k[0][b] = sum(sx, &e, 0);
            k[1][b] = sum(sx, &e, 1);
            k[2][b] = sum(sxx, &e, 0);
            k[3][b] = sum(sxx, &e, 1);
            k[4][b] = sum(sx, &ed, 0);
            k[5][b] = sum(sx, &ed, 1);
            k[6][b] = sum(sxx, &ed, 0);
            k[7][b] = sum(sxx, &ed, 1);
        }
    }
    // [Gauss point][f_p,x, f_p,y, f_c,x, f_c,y][element]
    let mut forces = [[[0.0; B]; 4]; GAUSS_POINTS];
    for (k, f) in kinematics.iter().zip(&mut forces) {
        for b in 0..B {
            let kin = SectionKinematics::new(
                [k[0][b], k[1][b]],
                [k[2][b], k[3][b]],
                [k[4][b], k[5][b]],
                [k[6][b], k[7][b]],
            );
            let (fp, fc) = section_force(&kin, &kernel.section);
            [f[0][b], f[1][b], f[2][b], f[3][b]] = [fp[0], fp[1], fc[0], fc[1]];
        }
    }
    // [element coordinate][element], summed over the Gauss points in order.
    let mut sums = [[0.0; B]; 8];
    for (qp, f) in kernel.points.iter().zip(&forces) {
        for (i, sum) in sums.iter_mut().enumerate() {
            let (a, d) = (i / 2, i % 2);
            let (bx, bxx) = (qp.weight_m * qp.s_x[a], qp.weight_m * qp.s_xx[a]);
            for ((sum, fp), fc) in sum.iter_mut().zip(&f[d]).zip(&f[2 + d]) {
                *sum += bx * fp + bxx * fc;
            }
        }
    }
    for (b, out) in out.iter_mut().enumerate() {
        for i in 0..8 {
            out[i] = sums[i][b];
        }
    }
}

/// [`ElementKernel::add_internal_tangent`] compiled for AVX2 and AVX-512
/// as well as SSE2, chosen at run time, to the same bits (as
/// [`internal_forces_block`]): the reference solver's iteration matrix
/// needs it at every refresh.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx512dq+avx2+fma", "x86_64+avx2+fma"))]
pub fn internal_tangent(
    kernel: &ElementKernel,
    e: &ElementVector,
    ed: &ElementVector,
    k: &mut ElementMatrix,
    c: &mut ElementMatrix,
) {
    kernel.add_internal_tangent(e, ed, k, c);
}
